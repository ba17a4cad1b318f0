import { bundleWorkflowCode } from '@temporalio/worker';
import { join, relative, sep } from 'node:path';

const REPO = join(__dirname, '..', '..');

/** The files a workflow bundle was built from, as its inline source map lists them (repository-relative). */
function bundledSources(code: string): string[] {
  const match = /sourceMappingURL=data:application\/json;(?:charset=utf-8;)?base64,([A-Za-z0-9+/=]+)/.exec(code);
  if (!match) throw new Error('The workflow bundle has no inline source map.');
  const map = JSON.parse(Buffer.from(match[1]!, 'base64').toString('utf8')) as { sources: string[] };
  return map.sources.map((source) =>
    relative(REPO, source.replace(/^webpack:\/\/\//, ''))
      .split(sep)
      .join('/'),
  );
}

const silent = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

describe('the workflow bundle', () => {
  let sources: string[];

  beforeAll(async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../src/workflows'),
      logger: silent,
    });
    sources = bundledSources(code);
  });

  it('contains files of src/workflows and src/contract only, of all of src/', () => {
    const fromSrc = sources.filter((source) => source.startsWith('src/'));
    expect(fromSrc.length).toBeGreaterThan(10);
    expect(fromSrc.filter((source) => !/^src\/(workflows|contract)\//.test(source))).toEqual([]);
  });

  it('contains no package but the workflow-safe ones', () => {
    const packages = new Set(
      sources
        .filter((source) => source.startsWith('node_modules/'))
        .map((source) =>
          source
            .split('/')
            .slice(1, source.split('/')[1]!.startsWith('@') ? 3 : 2)
            .join('/'),
        ),
    );
    // ms, long and nexus-rpc come with @temporalio/common and @temporalio/workflow.
    const allowed = ['@temporalio/workflow', '@temporalio/common', '@opentelemetry/api', 'nexus-rpc', 'ms', 'long'];
    expect([...packages].filter((name) => !allowed.includes(name))).toEqual([]);
  });
});

describe('a workflow bundle of a user’s own workflows that import durable-tools/workflow', () => {
  let sources: string[];

  beforeAll(async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../support/own-workflows'),
      logger: silent,
    });
    sources = bundledSources(code);
  });

  it('contains the workflow entry and files of src/workflows and src/contract only, of all of src/', () => {
    const fromSrc = sources.filter((source) => source.startsWith('src/'));
    expect(fromSrc).toContain('src/entries/workflow.ts');
    expect(
      fromSrc.filter((source) => !/^src\/(workflows|contract)\/|^src\/entries\/workflow\.ts$/.test(source)),
    ).toEqual([]);
  });

  it('contains neither zod nor the tools the workflows type their calls with', () => {
    expect(sources.filter((source) => /node_modules\/zod\/|own-workflow-tools/.test(source))).toEqual([]);
  });
});
