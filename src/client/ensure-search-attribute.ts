import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** A custom search attribute the engine writes, and what is lost without it (said in the warning). */
export interface EngineSearchAttribute {
  name: string;
  type: 'Keyword' | 'KeywordList';
  /** The sentence of the warning saying what goes wrong while the attribute is missing. */
  consequence: string;
}

const INDEXED_TYPES = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
} as const;

/** The command that registers a search attribute on a server, as an operator types it. */
export function registerSearchAttributeCommand(
  attribute: EngineSearchAttribute,
  address: string,
  namespace: string,
): string {
  return (
    `temporal operator search-attribute create --name ${attribute.name} --type ${attribute.type} ` +
    `--address ${address} --namespace ${namespace}`
  );
}

/** Whether an address points at this machine, where the engine may register search attributes itself. */
export function isLocalAddress(address: string): boolean {
  const host = address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

const known = new WeakMap<Client, Map<string, Promise<boolean>>>();
const warned = new Set<string>();

/**
 * Makes sure the server knows `attribute`, once per client and attribute: true when it does. On a local server
 * (127.0.0.1, localhost) a missing attribute is registered; elsewhere — or when registration is refused — the
 * runs go on without it and one loud warning (once per attribute, address and namespace) gives the command to
 * fix it.
 */
export function ensureSearchAttribute(
  client: Client,
  address: string,
  attribute: EngineSearchAttribute,
  warn: (message: string) => void = (message) => process.emitWarning(message, 'DurableToolsWarning'),
): Promise<boolean> {
  const perClient = known.get(client) ?? new Map<string, Promise<boolean>>();
  known.set(client, perClient);
  let answer = perClient.get(attribute.name);
  if (!answer) {
    answer = checkOrRegister(client, address, attribute, warn);
    perClient.set(attribute.name, answer);
  }
  return answer;
}

async function checkOrRegister(
  client: Client,
  address: string,
  attribute: EngineSearchAttribute,
  warn: (message: string) => void,
): Promise<boolean> {
  const namespace = client.options.namespace;
  const operator = client.connection.operatorService;
  let problem: string;
  try {
    const listed = await operator.listSearchAttributes({ namespace });
    if (attribute.name in (listed.customAttributes ?? {})) return true;
    if (!isLocalAddress(address)) {
      problem = 'it is not registered on this server';
    } else {
      await operator.addSearchAttributes({
        namespace,
        searchAttributes: { [attribute.name]: INDEXED_TYPES[attribute.type] },
      });
      return true;
    }
  } catch (error) {
    problem = `it could not be checked or registered (${error instanceof Error ? error.message : String(error)})`;
  }
  const key = `${attribute.name}@${address}/${namespace}`;
  if (!warned.has(key)) {
    warned.add(key);
    warn(
      `\n*** durable-tools: the ${attribute.name} search attribute is missing on ${address} (namespace ${namespace}): ${problem}.\n` +
        `*** ${attribute.consequence} Fix it once with:\n` +
        `***   ${registerSearchAttributeCommand(attribute, address, namespace)}\n`,
    );
  }
  return false;
}
