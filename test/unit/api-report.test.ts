/**
 * The public API as checked in: `api/*.api.md` hold what each entry exports (written by `npm run api:report`),
 * every public name is listed in exactly one entry file, the root entry is the tool-authoring list, the worker
 * entry stays small, errors are grouped in one namespace, and each audience's entry has what it needs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiReports, ENTRY_LIST_FILES, listedNames, publicApi } from '../support/api-report';

const REPO = join(__dirname, '..', '..');

let api: ReturnType<typeof publicApi>;
beforeAll(() => {
  api = publicApi();
}, 120_000);

const names = (entry: string): string[] => (api[entry] ?? []).map((exported) => exported.name);

test('each checked-in API report in api/ is what the sources export (run npm run api:report after an API change)', () => {
  for (const { path, text } of apiReports()) {
    let checkedIn: string;
    try {
      checkedIn = readFileSync(join(REPO, path), 'utf8');
    } catch {
      throw new Error(`${path} is missing: run npm run api:report and commit api/`);
    }
    if (checkedIn !== text) {
      throw new Error(`${path} differs from what the sources export: run npm run api:report and commit api/`);
    }
  }
}, 120_000);

test('every public name is listed in exactly one entry file', () => {
  const listedIn = new Map<string, string[]>();
  for (const file of ENTRY_LIST_FILES)
    for (const name of listedNames(file)) listedIn.set(name, [...(listedIn.get(name) ?? []), file]);
  const twice = [...listedIn].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files}`);
  expect(twice).toEqual([]);
  expect(listedIn.size).toBeGreaterThan(100);
});

test('the root entry is the tool-authoring list and the error family, all of which the worker entry has too', () => {
  expect(listedNames('src/index.ts')).toEqual([]);
  const authoring = [...listedNames('src/entries/tools.ts'), ...listedNames('src/entries/error-family.ts')];
  expect(names('durable-tools').sort()).toEqual([...authoring].sort());
  expect(names('durable-tools')).toEqual(expect.arrayContaining(['defineTool', 'TransientToolError', 'errors']));
  expect(names('durable-tools/worker')).toEqual(expect.arrayContaining(authoring));
  expect(names('durable-tools')).not.toContain('createWorker');
  expect(names('durable-tools')).not.toContain('startAgentRun');
});

test('the worker entry lists at most 100 names', () => {
  expect(names('durable-tools/worker').length).toBeLessThanOrEqual(100);
});

test('the client and worker entries both export the shared list and the error family', () => {
  for (const name of [...listedNames('src/entries/common.ts'), ...listedNames('src/entries/error-family.ts')]) {
    expect(names('durable-tools/client')).toContain(name);
    expect(names('durable-tools/worker')).toContain(name);
  }
  expect(listedNames('src/entries/error-family.ts')).toEqual(['DurableToolsError', 'errors', 'ToolErrorCode']);
});

test('no entry lists an error class but the base class, the errors a tool throws and the testing ones: the rest are in errors', () => {
  const thrownByTools = ['TransientToolError', 'PermanentToolError', 'RateLimitedToolError', 'HttpStatusError'];
  const testing = ['TemporalCliError', 'ScriptedTurnsError'];
  for (const entry of Object.keys(api)) {
    const classes = (api[entry] ?? []).filter((name) => name.kind === 'class' && /Error$/.test(name.name));
    const outside = classes.map((name) => name.name).filter((name) => ![...thrownByTools, ...testing].includes(name));
    expect(outside.filter((name) => name !== 'DurableToolsError')).toEqual([]);
  }
  const errors = api['durable-tools/worker']?.find((name) => name.name === 'errors');
  expect(errors?.kind).toBe('namespace');
  expect(errors?.members?.map((member) => member.name)).toEqual(
    expect.arrayContaining(['McpConfigError', 'McpConfigErrorCode', 'IdempotencyStoreError', 'AgentRunStartError']),
  );
});

test('the worker entry has everything an MCP worker uses: createMcpHost, withMcpTools and the MCP server', () => {
  expect(names('durable-tools/worker')).toEqual(
    expect.arrayContaining([
      'createWorker',
      'createMcpHost',
      'withMcpTools',
      'McpHost',
      'loadMcpConfigFile',
      'createDurableMcpServer',
      'startMcpHttpListener',
    ]),
  );
});

test('the workflow entry has the calls, the saga, the agent loop and the typed failure, and nothing of a worker', () => {
  expect(names('durable-tools/workflow')).toEqual(
    expect.arrayContaining([
      'callTool',
      'proxyTools',
      'withSaga',
      'runAgent',
      'agentRun',
      'ToolCallFailure',
      'toolFailureOf',
    ]),
  );
  expect(names('durable-tools/workflow').filter((name) => /Worker|Store$|^create|^defineTool$/.test(name))).toEqual([]);
});

test('no entry exports the engine internals', () => {
  const internals = ['runMcpCommand', 'MCP_COMMAND_USAGE', 'AgentRunCarryOver', 'McpClientPool', 'TemporalTaskStore'];
  for (const entry of Object.keys(api)) expect(names(entry).filter((name) => internals.includes(name))).toEqual([]);
  expect(names('durable-tools').filter((name) => /^decideRetry$|Activities$|^getRunStateQuery$/.test(name))).toEqual(
    [],
  );
});
