import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from './search-attributes';

/** The command that registers the run-status search attribute on a server, as an operator types it. */
export function registerStatusAttributeCommand(address: string, namespace: string): string {
  return (
    `temporal operator search-attribute create --name ${SEARCH_ATTRIBUTES.runStatus.name} --type Keyword ` +
    `--address ${address} --namespace ${namespace}`
  );
}

/** Whether an address points at this machine, where the engine may register search attributes itself. */
export function isLocalAddress(address: string): boolean {
  const host = address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

const warned = new Set<string>();
const known = new WeakMap<Client, Promise<boolean>>();

/**
 * Makes sure the server knows `DurableRunStatus`, once per client: true when it does. On a local server
 * (127.0.0.1, localhost) a missing attribute is registered; elsewhere — or when registration is refused — the
 * runs go on without it and one loud warning (once per address and namespace) gives the command to fix it.
 */
export function ensureStatusSearchAttribute(
  client: Client,
  address: string,
  warn: (message: string) => void = (message) => process.emitWarning(message, 'DurableToolsWarning'),
): Promise<boolean> {
  let answer = known.get(client);
  if (!answer) {
    answer = checkOrRegister(client, address, warn);
    known.set(client, answer);
  }
  return answer;
}

async function checkOrRegister(client: Client, address: string, warn: (message: string) => void): Promise<boolean> {
  const namespace = client.options.namespace;
  const name = SEARCH_ATTRIBUTES.runStatus.name;
  const operator = client.connection.operatorService;
  let problem: string;
  try {
    const listed = await operator.listSearchAttributes({ namespace });
    if (name in (listed.customAttributes ?? {})) return true;
    if (!isLocalAddress(address)) {
      problem = 'it is not registered on this server';
    } else {
      await operator.addSearchAttributes({
        namespace,
        searchAttributes: { [name]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD },
      });
      return true;
    }
  } catch (error) {
    problem = `it could not be checked or registered (${error instanceof Error ? error.message : String(error)})`;
  }
  const key = `${address}/${namespace}`;
  if (!warned.has(key)) {
    warned.add(key);
    warn(
      `\n*** durable-tools: the ${name} search attribute is missing on ${address} (namespace ${namespace}): ${problem}.\n` +
        `*** Runs will not carry their status for 'temporal workflow list --query' and the UI's filters. Fix it once with:\n` +
        `***   ${registerStatusAttributeCommand(address, namespace)}\n`,
    );
  }
  return false;
}
