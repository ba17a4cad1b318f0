/**
 * The simulated model of `npm run bench:scale`: each turn of a run takes a latency drawn from
 * {@link SIMULATED_MODEL_MS} by a seeded hash of (seed, run id, turn), so the engine and the plain Temporal floor
 * sleep exactly the same time for the same run and turn, and a run repeated with the same seed is the same.
 */

/** The seed of the draws (`--seed`). */
export type SimulatedModelSeed = number;

/** Bounds of a simulated model turn, ms. */
export const SIMULATED_MODEL_MS = { min: 500, max: 3_000 } as const;

/** FNV-1a of a string, 32 bits. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** mulberry32's output for one 32-bit state: a number in [0, 1). */
function mulberry32(state: number): number {
  let t = (state + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
}

/**
 * The simulated latency (ms, an integer in [500, 3000]) of turn `turn` (1-based) of run `runId`. Runs are
 * named by their index (`scale-<phase>-<i>`), so the same index draws the same latencies on both systems.
 */
export function simulatedModelMs(seed: SimulatedModelSeed, runId: string, turn: number): number {
  const index = runId.slice(runId.lastIndexOf('-') + 1);
  const r = mulberry32(fnv1a(`${seed}/${index}/${turn}`));
  return Math.round(SIMULATED_MODEL_MS.min + r * (SIMULATED_MODEL_MS.max - SIMULATED_MODEL_MS.min));
}
