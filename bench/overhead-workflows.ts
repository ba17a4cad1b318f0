/**
 * Workflows of the tool-call overhead benchmark: the same loop of activity calls, to a bare activity doing
 * nothing (with or without the UI summary the engine sets on every tool call) or to a no-op tool through the
 * durable-tools wrapper (read-only; with effects and no key store; with effects and the SQLite or Postgres key
 * store).
 */
import { scheduleActivity, scheduleLocalActivity, workflowInfo } from '@temporalio/workflow';

/** What a loop calls. */
export type OverheadMode =
  'bare' | 'bareSummary' | 'readOnly' | 'readOnlyLocal' | 'effectsNoStore' | 'effectsSqlite' | 'effectsPostgres';

/** Every mode, in the order the report prints them. */
export const OVERHEAD_MODES: readonly OverheadMode[] = [
  'bare',
  'bareSummary',
  'readOnly',
  'readOnlyLocal',
  'effectsNoStore',
  'effectsSqlite',
  'effectsPostgres',
];

/** Activity type of each wrapped mode (one tool per store, registered by the bench worker). */
export const OVERHEAD_TOOL_NAMES: Readonly<Record<Exclude<OverheadMode, 'bare' | 'bareSummary'>, string>> = {
  readOnly: 'noop_read',
  readOnlyLocal: 'noop_read',
  effectsNoStore: 'noop_write_nostore',
  effectsSqlite: 'noop_write_sqlite',
  effectsPostgres: 'noop_write_postgres',
};

const OPTIONS = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } } as const;

function call(mode: OverheadMode, i: number): Promise<unknown> {
  if (mode === 'bare') return scheduleActivity('bareNoop', [{ n: i }], OPTIONS);
  // The same bare activity with the UI summary the engine gives every tool call (what the summary alone costs).
  if (mode === 'bareSummary') return scheduleActivity('bareNoop', [{ n: i }], { ...OPTIONS, summary: summary(i) });
  const name = OVERHEAD_TOOL_NAMES[mode];
  const input = { arguments: { n: i }, idempotencyKey: `${workflowInfo().workflowId}/${i}`, stepId: i };
  if (mode === 'readOnlyLocal') return scheduleLocalActivity(name, [input], OPTIONS);
  return scheduleActivity(name, [input], { ...OPTIONS, summary: summary(i, name) });
}

/** The summary the engine would give the call (`<tool> <arguments>`). */
function summary(i: number, tool = OVERHEAD_TOOL_NAMES.effectsSqlite): string {
  return `${tool} {"n":${i}}`;
}

/** Calls the activity `count` times, one after another. */
export async function sequentialCalls(mode: OverheadMode, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) await call(mode, i);
}
