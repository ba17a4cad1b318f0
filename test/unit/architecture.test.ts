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
  ['stores/idempotency', 'stores/limits'],
  ['stores/transcripts', 'stores/audit', 'stores/streams'],
  ['tools', 'model', 'telemetry', 'encryption'],
  ['long-calls', 'agents'],
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

/** The fast path's modules (docs/fast-path.md): local turns, fused steps, chained turns, the first step. */
const FAST_PATH = [
  'fast-path.ts',
  'fast-path-calls.ts',
  'fast-path-turns.ts',
  'fast-path-model-turn.ts',
  'fused-step.ts',
  'first-fused-step.ts',
  'fused-clearance.ts',
  'fused-step-plan.ts',
  'fused-chain-plan.ts',
  'local-qualification.ts',
];

/**
 * Where a generation chooses its turn source and call executor: the one module that knows both paths. Every other
 * module of src/workflows but the fast path's is the regular path (run-types.ts, the types they share, included).
 */
const GENERATION = ['run-loop.ts'];

describe('the regular path of src/workflows', () => {
  const edges = fileEdges(SRC, 'workflows');
  const modules = new Set(edges.flatMap(({ from, to }) => [from, to]));
  const regular = [...modules].filter((file) => !FAST_PATH.includes(file) && !GENERATION.includes(file));

  it('imports nothing from the fast path (type-only imports counted)', () => {
    const intoFastPath = edges.filter(({ from, to }) => regular.includes(from) && FAST_PATH.includes(to));
    expect(intoFastPath.flatMap(({ files }) => files)).toEqual([]);
  });

  it('holds the run loop, its turns and its tool steps; the fast path is the modules named here', () => {
    const core = ['agent-run.ts', 'run-turn.ts', 'run-calls.ts', 'tool-step.ts', 'run-types.ts', 'background-calls.ts'];
    expect(core.filter((file) => !regular.includes(file))).toEqual([]);
    expect([...FAST_PATH, ...GENERATION].filter((file) => !modules.has(file))).toEqual([]);
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
