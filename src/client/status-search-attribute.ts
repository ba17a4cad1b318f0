import type { Client } from '@temporalio/client';
import {
  ensureSearchAttribute,
  registerSearchAttributeCommand,
  type EngineSearchAttribute,
} from './ensure-search-attribute';
import { SEARCH_ATTRIBUTES } from '../contract/search-attributes';

const RUN_STATUS: EngineSearchAttribute = {
  name: SEARCH_ATTRIBUTES.runStatus.name,
  type: 'Keyword',
  consequence: "Runs will not carry their status for 'temporal workflow list --query' and the UI's filters.",
};

/** The command that registers the run-status search attribute on a server, as an operator types it. */
export function registerStatusAttributeCommand(address: string, namespace: string): string {
  return registerSearchAttributeCommand(RUN_STATUS, address, namespace);
}

/**
 * Makes sure the server knows `DurableRunStatus`, once per client: true when it does. On a local server
 * (127.0.0.1, localhost) a missing attribute is registered; elsewhere — or when registration is refused — the
 * runs go on without it and one loud warning (once per address and namespace) gives the command to fix it.
 */
export function ensureStatusSearchAttribute(
  client: Client,
  address: string,
  warn?: (message: string) => void,
): Promise<boolean> {
  return ensureSearchAttribute(client, address, RUN_STATUS, warn);
}
