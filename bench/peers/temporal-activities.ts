/**
 * Activities of the plain Temporal systems (bench/peers/temporal-workflows.ts): a ledger step (one POST under
 * the given key) and a simulated model turn that sleeps the latency `npm run bench:scale` draws for it.
 */
import { simulatedModelMs, type SimulatedModelSeed } from '../scale-model';
import { postEffect } from './peer-ledger';

/** The activities a plain Temporal run calls. */
export interface PlainTemporalActivities {
  /** One effect at the ledger under `key`. */
  ledgerStep(key: string): Promise<void>;
  /** Sleeps the simulated model latency of turn `turn` of run `runId` (the same draw as the engine's model). */
  simulatedModel(runId: string, turn: number): Promise<void>;
}

/** The activities, bound to a ledger and to the seed of the simulated model. */
export function plainTemporalActivities(ledgerUrl: string, seed: SimulatedModelSeed = 0): PlainTemporalActivities {
  return {
    ledgerStep: (key) => postEffect(ledgerUrl, key),
    simulatedModel: (runId, turn) => new Promise((resolve) => setTimeout(resolve, simulatedModelMs(seed, runId, turn))),
  };
}
