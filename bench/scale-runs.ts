/**
 * Driving the runs of one phase of `npm run bench:scale`: starts them as they arrive (spread over a ramp, at most
 * {@link START_CONCURRENCY} start calls at once), follows each run's steps at the ledger (the first effect of each key, in order; a
 * second effect under a key is a duplicate), awaits each result, and samples the worker's RSS against the
 * runs in flight once a second, logging progress every {@link PROGRESS_EVERY_MS}.
 */
import type { PeerLedger } from './peers/peer-ledger';
import type { ScaleWorkerProcess } from './scale-worker-process';

/** Start calls in flight at once. */
export const START_CONCURRENCY = 50;
/** How often a phase prints its progress, ms. */
export const PROGRESS_EVERY_MS = 5_000;

/** What the ledger and the client saw of one run. */
export interface RunTrack {
  id: string;
  startedAt: number;
  /** When the start call returned. */
  acceptedAt?: number;
  /** First effect of each of its keys, in order. */
  effectsAt: number[];
  keys: Set<string>;
  duplicates: number;
  /** Set once its result is in: undefined while running. */
  ok?: boolean;
  error?: string;
}

/** How a phase starts one run and checks its result. */
export interface RunDriver {
  /**
   * Starts run `id`; resolves with a function that awaits its result: `true` when it is the expected one, else
   * what it was instead.
   */
  start(id: string): Promise<() => Promise<true | string>>;
  /** Effects a run makes before it counts as no longer in flight (its last step). */
  steps: number;
}

/** The most runs in flight at a sample of the phase, and the highest worker RSS of any sample. */
export interface PeakSample {
  inFlight: number;
  rssKb: number;
}

/** Follows the ledger's effects of the runs in `tracks` (keys `<run id>/...`); returns the unsubscribe. */
export function followLedger(ledger: PeerLedger, tracks: Map<string, RunTrack>): () => void {
  return ledger.onEffect((key) => {
    const track = tracks.get(key.slice(0, key.indexOf('/')));
    if (!track) return;
    if (track.keys.has(key)) {
      track.duplicates += 1;
      return;
    }
    track.keys.add(key);
    track.effectsAt.push(performance.now());
  });
}

/** Runs `work` over `items`, at most `concurrency` at once. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

/**
 * When run `index` of `count` arrives, ms after the phase's start: the arrivals spread evenly over `rampMs`
 * (0: all at once).
 */
export function arrivalMs(index: number, count: number, rampMs: number): number {
  return count > 1 && rampMs > 0 ? (index * rampMs) / count : 0;
}

/**
 * Starts every run of `ids` and awaits them all; the tracks say what happened. `rampMs`: the runs arrive evenly
 * over this long (an open-loop ramp, as users arrive), each run's time counted from its arrival even when the
 * start calls lag behind; 0 starts them all at once.
 */
export async function driveRuns(
  ids: readonly string[],
  driver: RunDriver,
  ledger: PeerLedger,
  watch: { worker: ScaleWorkerProcess; log: (line: string) => void; label: string },
  rampMs = 0,
): Promise<{ tracks: Map<string, RunTrack>; peak: PeakSample }> {
  const tracks = new Map<string, RunTrack>();
  const unsubscribe = followLedger(ledger, tracks);
  const results: Array<Promise<void>> = [];
  const sampler = sampleInFlight(tracks, driver.steps, ids.length, watch);
  const t0 = performance.now();
  const index = new Map(ids.map((id, i) => [id, i]));
  try {
    await pool(ids, START_CONCURRENCY, async (id) => {
      const arrival = t0 + arrivalMs(index.get(id)!, ids.length, rampMs);
      const wait = arrival - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const track: RunTrack = { id, startedAt: arrival, effectsAt: [], keys: new Set(), duplicates: 0 };
      tracks.set(id, track);
      const settle = (ok: boolean, error?: string): void => {
        track.ok = ok;
        if (error) track.error = error;
      };
      try {
        const result = await driver.start(id);
        track.acceptedAt = performance.now();
        results.push(
          result().then(
            (outcome) => (outcome === true ? settle(true) : settle(false, outcome)),
            (e: unknown) => settle(false, describeError(e)),
          ),
        );
      } catch (error) {
        settle(false, String(error));
      }
    });
    await Promise.all(results);
  } finally {
    unsubscribe();
    sampler.stop();
  }
  return { tracks, peak: sampler.peak };
}

/** Samples RSS and runs in flight every second, and logs progress. */
function sampleInFlight(
  tracks: Map<string, RunTrack>,
  steps: number,
  total: number,
  watch: { worker: ScaleWorkerProcess; log: (line: string) => void; label: string },
): { peak: PeakSample; stop(): void } {
  const peak: PeakSample = { inFlight: 0, rssKb: 0 };
  let lastLog = performance.now();
  const timer = setInterval(() => {
    let inFlight = 0;
    let done = 0;
    let effects = 0;
    for (const track of tracks.values()) {
      effects += track.effectsAt.length;
      if (track.ok !== undefined) done += 1;
      else if (track.effectsAt.length < steps) inFlight += 1;
    }
    const rssKb = watch.worker.rssKb();
    peak.inFlight = Math.max(peak.inFlight, inFlight);
    peak.rssKb = Math.max(peak.rssKb, rssKb);
    if (performance.now() - lastLog < PROGRESS_EVERY_MS) return;
    lastLog = performance.now();
    watch.log(
      `${watch.label}: ${tracks.size}/${total} started, ${inFlight} in flight, ${done} done, ${effects} steps, ` +
        `worker RSS ${(rssKb / 1024).toFixed(0)} MB`,
    );
  }, 1_000);
  return { peak, stop: () => clearInterval(timer) };
}

/** The failed runs' reasons, the most frequent first, each with its count: `3 × failed after 4 steps: …`. */
export function failureReasons(tracks: Iterable<RunTrack>, most = 5): string[] {
  const counts = new Map<string, number>();
  for (const track of tracks) {
    if (track.ok === true) continue;
    const reason = (track.error ?? 'no result').slice(0, 300);
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, most)
    .map(([reason, n]) => `${n} × ${reason}`);
}

/** An error as a failure reason: its message, and its cause's gRPC code and details when it has them. */
function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; details?: unknown } } | undefined)?.cause;
  const grpc = typeof cause?.code === 'number' ? ` (gRPC ${cause.code}: ${String(cause.details)})` : '';
  return `${String(error)}${grpc}`;
}
