import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Custom search attributes the engine sets on agent runs. A server must know them before a run starts:
 * the dev server started by durable-tools registers them; on your own cluster run
 * `temporal operator search-attribute create --name DurableRunStatus --type Keyword` and
 * `temporal operator search-attribute create --name DurableAwaitingApproval --type KeywordList`.
 */
export const SEARCH_ATTRIBUTES = {
  /** running | completed | failed | compensated | compensation_failed | cancelled */
  runStatus: defineSearchAttributeKey('DurableRunStatus', 'KEYWORD'),
  /**
   * The tools whose calls wait for a human decision right now (absent when none):
   * `DurableAwaitingApproval = "pay"` finds the runs waiting on `pay`, `DurableAwaitingApproval IS NOT NULL` all.
   */
  awaitingApproval: defineSearchAttributeKey('DurableAwaitingApproval', 'KEYWORD_LIST'),
} as const;

/** `Name=Type` pairs for `temporal server start-dev --search-attribute`. */
export const SEARCH_ATTRIBUTE_FLAGS = ['DurableRunStatus=Keyword', 'DurableAwaitingApproval=KeywordList'] as const;
