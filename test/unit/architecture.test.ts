import { join, relative, sep } from 'node:path';
import { fileEdges, folderCycles, folderEdges, folderOf } from '../support/source-graph';
import { runtimeClosure } from '../support/module-graph';

const SRC = join(__dirname, '..', '..', 'src');

/**
 * The layers of src/, ground floor first (docs/architecture.md). A folder imports only from folders of lower
 * layers; folders of one layer do not import each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['contract'],
  ['failures', 'guard', 'net', 'stores'],
  ['stores/idempotency'],
  ['stores/transcripts', 'stores/audit', 'stores/streams'],
  ['tools', 'model', 'telemetry', 'encryption'],
  ['long-calls'],
  ['activities'],
  ['workflows'],
  ['client'],
  ['dev-server'],
  ['mcp/client'],
  ['runtime'],
  ['mcp/server'],
  ['cli'],
  ['entries'],
  ['(entry)'],
];

const layerOf = (folder: string): number => LAYERS.findIndex((layer) => layer.includes(folder));

describe('the folder layout of src/', () => {
  const edges = folderEdges(SRC);

  it('has no import cycle between folders', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('places every folder in a layer', () => {
    const folders = new Set(edges.flatMap(({ from, to }) => [from, to]));
    expect([...folders].filter((folder) => layerOf(folder) < 0)).toEqual([]);
  });

  it('has no import from a folder to one of its own or a higher layer (no back-arrow)', () => {
    const backArrows = edges.filter(({ from, to }) => layerOf(to) >= layerOf(from)).flatMap(({ files }) => files);
    expect(backArrows).toEqual([]);
  });

  it('puts top-level files in the entry layer and nested folders in their own', () => {
    expect(folderOf('index.ts')).toBe('(entry)');
    expect(folderOf('mcp/server/mcp-server.ts')).toBe('mcp/server');
    expect(folderOf('stores/claim-check.ts')).toBe('stores');
    expect(folderOf('workflows/saga.ts')).toBe('workflows');
  });
});

describe('the files of src/workflows', () => {
  const edges = fileEdges(SRC, 'workflows');

  it('have no import cycle, type-only imports counted (shared types live in run-types.ts)', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('are read with their type-only imports', () => {
    // run-loop.ts imports nothing but types from run-types.ts.
    expect(edges.map(({ from, to }) => `${from} -> ${to}`)).toContain('run-loop.ts -> run-types.ts');
  });
});

describe('the durable-tools/workflow entry', () => {
  const { files, packages } = runtimeClosure(join(SRC, 'entries', 'workflow.ts'));

  it('reaches at run time only src/workflows and src/contract (what a workflow bundle may hold)', () => {
    const outside = [...files]
      .map((file) => relative(SRC, file).split(sep).join('/'))
      .filter((file) => file !== 'entries/workflow.ts' && !/^(workflows|contract)\//.test(file));
    expect(files.size).toBeGreaterThan(10);
    expect(outside).toEqual([]);
  });

  it('imports at run time no package but the workflow-safe ones', () => {
    const allowed = ['@temporalio/workflow', '@temporalio/common', '@opentelemetry/api'];
    expect([...packages].filter((name) => !allowed.includes(name))).toEqual([]);
  });
});

describe('the source graph reader', () => {
  it('reports a cycle between two folders', () => {
    const cycles = folderCycles([
      { from: 'a', to: 'b', files: ['a/x.ts -> b/y.ts'] },
      { from: 'b', to: 'a', files: ['b/y.ts -> a/z.ts'] },
      { from: 'b', to: 'c', files: ['b/y.ts -> c/w.ts'] },
    ]);
    expect(cycles).toEqual([['a', 'b']]);
  });
});
