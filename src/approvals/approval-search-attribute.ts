import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../search-attributes';
import { isLocalAddress } from '../status-search-attribute';

const known = new WeakMap<Client, Promise<boolean>>();
const warned = new Set<string>();

/**
 * Makes sure the server knows `DurableAwaitingApproval` (KeywordList), once per client: true when it does. On a
 * local server a missing attribute is registered; elsewhere the runs go on without it (the `pending` listing
 * then finds nothing) and one warning gives the command that registers it.
 */
export function ensureApprovalSearchAttribute(
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
  const name = SEARCH_ATTRIBUTES.awaitingApproval.name;
  const operator = client.connection.operatorService;
  try {
    const listed = await operator.listSearchAttributes({ namespace });
    if (name in (listed.customAttributes ?? {})) return true;
    if (isLocalAddress(address)) {
      await operator.addSearchAttributes({
        namespace,
        searchAttributes: { [name]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST },
      });
      return true;
    }
  } catch {
    // fall through to the warning
  }
  const key = `${address}/${namespace}`;
  if (!warned.has(key)) {
    warned.add(key);
    warn(
      `durable-tools: the ${name} search attribute is missing on ${address} (namespace ${namespace}); runs waiting ` +
        `for approval will not show in 'pending'. Register it once with: temporal operator search-attribute create ` +
        `--name ${name} --type KeywordList --address ${address} --namespace ${namespace}`,
    );
  }
  return false;
}
