/**
 * The workflows of the plain Temporal systems of `npm run bench:peers` and `npm run bench:scale`: hand-written
 * Temporal, with local or regular activities and the SDK's default retry policy, no idempotency store and no
 * reconcile: the floor a Temporal workflow gives.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { PlainTemporalActivities } from './temporal-activities';

/** How a plain Temporal run calls its activities. */
export type PlainActivityKind = 'local' | 'regular';

const TIMEOUTS = { startToCloseTimeout: '10 seconds' } as const;
const local = proxyLocalActivities<PlainTemporalActivities>(TIMEOUTS);
const regular = proxyActivities<PlainTemporalActivities>(TIMEOUTS);

/** bench:peers: `steps` sequential ledger steps under `<run id>/<step>`; returns the number of steps done. */
export async function plainLedgerRun(runId: string, steps: number, kind: PlainActivityKind): Promise<number> {
  const activities = kind === 'local' ? local : regular;
  for (let step = 1; step <= steps; step++) await activities.ledgerStep(`${runId}/${step}`);
  return steps;
}

/**
 * bench:scale's floor: a hand-written agent loop of `turns` turns, each a simulated model call (sleeps the
 * turn's drawn latency) then a ledger step, and a last model call for the final answer.
 */
export async function plainAgentRun(runId: string, turns: number, kind: PlainActivityKind): Promise<number> {
  const activities = kind === 'local' ? local : regular;
  for (let turn = 1; turn <= turns; turn++) {
    await activities.simulatedModel(runId, turn);
    await activities.ledgerStep(`${runId}/${turn}`);
  }
  await activities.simulatedModel(runId, turns + 1);
  return turns;
}
