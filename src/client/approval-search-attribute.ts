import type { Client } from '@temporalio/client';
import { ensureSearchAttribute, type EngineSearchAttribute } from './ensure-search-attribute';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';

const AWAITING_APPROVAL: EngineSearchAttribute = {
  name: SEARCH_ATTRIBUTES.awaitingApproval.name,
  type: 'KeywordList',
  consequence: "Runs waiting for approval will not show in 'pending'.",
};

/**
 * Makes sure the server knows `DurableAwaitingApproval` (KeywordList), once per client: true when it does. On a
 * local server a missing attribute is registered; elsewhere the runs go on without it (the `pending` listing
 * then finds nothing) and one warning gives the command that registers it.
 */
export function ensureApprovalSearchAttribute(
  client: Client,
  address: string,
  warn?: (message: string) => void,
): Promise<boolean> {
  return ensureSearchAttribute(client, address, AWAITING_APPROVAL, warn);
}
