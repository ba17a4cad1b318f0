/**
 * DurableRunStatus on a server that lacks it (a namespace created without it on the test server): registered
 * when the server is local, otherwise one loud warning per server and namespace that gives the fix command.
 */
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { randomUUID } from 'node:crypto';
import { SEARCH_ATTRIBUTES } from '../../src/contract/search-attributes';
import { ensureStatusSearchAttribute, registerStatusAttributeCommand } from '../../src/client/status-search-attribute';
import { startAgentRun } from '../../src/client/agent-run-client';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';
import { waitFor } from '../support/wait-for';

const NAME = SEARCH_ATTRIBUTES.runStatus.name;
let connection: Connection;

/** A new namespace on the test server, usable once this resolves; it has no custom search attributes. */
async function freshNamespace(): Promise<string> {
  const namespace = `status-${randomUUID().slice(0, 8)}`;
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
  await waitFor(`namespace ${namespace}`, () => connection.workflowService.describeNamespace({ namespace }));
  return namespace;
}

async function registered(namespace: string): Promise<boolean> {
  const listed = await connection.operatorService.listSearchAttributes({ namespace });
  return NAME in (listed.customAttributes ?? {});
}

beforeAll(async () => {
  connection = await Connection.connect({ address: testServer().address });
});
afterAll(async () => {
  await connection?.close();
});

test('on a local server a missing DurableRunStatus is registered, without a warning', async () => {
  const namespace = await freshNamespace();
  expect(await registered(namespace)).toBe(false);
  const warnings: string[] = [];
  const client = new Client({ connection, namespace });
  await expect(ensureStatusSearchAttribute(client, testServer().address, (w) => warnings.push(w))).resolves.toBe(true);
  await waitFor(`${NAME} on ${namespace}`, () => registered(namespace));
  expect(warnings).toEqual([]);
});

test('on a remote server a missing DurableRunStatus gives one loud warning with the fix command', async () => {
  const namespace = await freshNamespace();
  const remote = 'temporal.example.com:7233'; // the address the settings name; the connection is the test server's
  const warnings: string[] = [];
  const warn = (w: string) => warnings.push(w);
  await expect(ensureStatusSearchAttribute(new Client({ connection, namespace }), remote, warn)).resolves.toBe(false);
  await expect(ensureStatusSearchAttribute(new Client({ connection, namespace }), remote, warn)).resolves.toBe(false);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain(`*** durable-tools: the ${NAME} search attribute is missing on ${remote}`);
  expect(warnings[0]).toContain(registerStatusAttributeCommand(remote, namespace));
  expect(await registered(namespace)).toBe(false);
});

test('a run started with trackStatusSearchAttribute false carries no DurableRunStatus, where the server has it', async () => {
  const client = new Client({ connection, namespace: testServer().namespace });
  await expect(ensureStatusSearchAttribute(client, testServer().address)).resolves.toBe(true);
  const input = { goal: 'Nothing', model: { provider: 'scripted', script: [], finalText: 'Done.' } } as const;
  const taskQueue = uniqueTaskQueue('untracked-status'); // no worker polls it: the run stays as it started

  const untracked = await startAgentRun(client, { ...input, trackStatusSearchAttribute: false }, { taskQueue });
  const tracked = await startAgentRun(client, input, { taskQueue });

  try {
    expect((await untracked.describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTES.runStatus)).toBeUndefined();
    expect((await tracked.describe()).typedSearchAttributes.get(SEARCH_ATTRIBUTES.runStatus)).toBe('running');
  } finally {
    await untracked.terminate('test over');
    await tracked.terminate('test over');
  }
});
