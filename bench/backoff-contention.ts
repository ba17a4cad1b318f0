/**
 * Re-runs the contention simulation of Marc Brooker, "Exponential Backoff And Jitter" (AWS Architecture
 * Blog, 2015), against this project's backoff.
 *
 * Model (as in the post's simulator): one database row with a version number and N clients that each
 * want to update it once with optimistic concurrency. One attempt of a client is
 *   read (request → server reads the version → response) then
 *   conditional write (request → server writes only if the version is still the one read → response).
 * A write that finds a newer version fails; the client sleeps for its backoff and starts a new
 * attempt with a fresh read. Every message takes |Normal(10 ms, 2 ms)| to cross the network. Base 5 ms,
 * cap 2000 ms. "Calls" counts writes reaching the server; "time" is when the last client finished.
 * Both are averaged over 100 trials. Discrete-event simulation in virtual time: nothing sleeps.
 *
 * Attempt numbering: Brooker's simulator sleeps base·2^n after the n-th failure; the engine's
 * `computeBackoffDelay` uses base·2^(n−1) (the first retry waits up to `initialDelayMs`). The
 * exponential row and the "Brooker's exponent" full-jitter row follow Brooker, so they compare with the
 * published figures; the engine rows call `computeBackoffDelay` exactly as `decideRetry` does, and the
 * last line compares the engine's default.
 *
 * Run: `npm run bench:backoff`. Prints; asserts nothing.
 */
import { computeBackoffDelay } from '../src/failures/backoff';
import { createSeededRandom } from '../src/failures/seeded-random';

const SIMULATION = {
  trials: 100,
  clientCounts: [50, 100],
  networkMeanMs: 10,
  networkSdMs: 2,
  baseMs: 5,
  capMs: 2000,
  seed: 20150304,
} as const;

/** The published re-run figures at N = 100 (REFERENCE.md). */
const REFERENCE_N100: Readonly<Record<string, { calls: number; timeMs: number }>> = {
  'no backoff': { calls: 2423, timeMs: 2036 },
  'exponential, no jitter': { calls: 1848, timeMs: 63_024 },
  "full jitter, Brooker's exponent": { calls: 797, timeMs: 4990 },
};

/** A client's backoff: `failures` is how many attempts have failed so far (≥ 1); `previous` the last sleep. */
type BackoffPolicy = (failures: number, previous: number, random: () => number) => number;

const POLICIES: ReadonlyArray<{ name: string; backoff: BackoffPolicy }> = [
  { name: 'no backoff', backoff: () => 0 },
  {
    name: 'exponential, no jitter',
    backoff: (failures) => Math.min(SIMULATION.capMs, SIMULATION.baseMs * 2 ** failures),
  },
  {
    name: 'full jitter (engine default)',
    backoff: (failures, _previous, random) =>
      computeBackoffDelay(
        { attempt: failures, initialDelayMs: SIMULATION.baseMs, maxDelayMs: SIMULATION.capMs, jitter: 'full' },
        random,
      ),
  },
  {
    // Brooker's exponent (base·2^n after the n-th failure): the row comparable to his published figure.
    name: "full jitter, Brooker's exponent",
    backoff: (failures, _previous, random) =>
      computeBackoffDelay(
        { attempt: failures + 1, initialDelayMs: SIMULATION.baseMs, maxDelayMs: SIMULATION.capMs, jitter: 'full' },
        random,
      ),
  },
  {
    name: 'decorrelated jitter (engine)',
    backoff: (failures, previous, random) =>
      computeBackoffDelay(
        {
          attempt: failures,
          initialDelayMs: SIMULATION.baseMs,
          maxDelayMs: SIMULATION.capMs,
          jitter: 'decorrelated',
          previousDelayMs: previous,
        },
        random,
      ),
  },
];

const ENGINE_POLICY = 'full jitter (engine default)';

/** A min-heap of events ordered by time, then by insertion order (deterministic ties). */
class EventQueue<T> {
  private readonly heap: Array<{ at: number; seq: number; event: T }> = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(at: number, event: T): void {
    const heap = this.heap;
    heap.push({ at, seq: this.seq++, event });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): { at: number; event: T } | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < heap.length && this.less(l, smallest)) smallest = l;
        if (r < heap.length && this.less(r, smallest)) smallest = r;
        if (smallest === i) break;
        this.swap(i, smallest);
        i = smallest;
      }
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const t = this.heap[a]!;
    this.heap[a] = this.heap[b]!;
    this.heap[b] = t;
  }
}

/** |Normal(mean, sd)| by Box–Muller, as Brooker's `abs(random.normalvariate(mean, sd))`. */
function networkDelay(random: () => number): number {
  const u1 = 1 - random(); // (0, 1]: log never sees 0
  const u2 = random();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.abs(SIMULATION.networkMeanMs + SIMULATION.networkSdMs * z);
}

type Event =
  | { type: 'read-arrives'; client: number }
  | { type: 'read-reply'; client: number; version: number }
  | { type: 'write-arrives'; client: number; version: number }
  | { type: 'write-reply'; client: number; ok: boolean };

/** One trial: returns the number of writes and the completion time, in virtual milliseconds. */
function runTrial(clients: number, backoff: BackoffPolicy, random: () => number): { calls: number; timeMs: number } {
  const queue = new EventQueue<Event>();
  const failures = new Array<number>(clients).fill(0);
  const previousSleep = new Array<number>(clients).fill(SIMULATION.baseMs);
  let version = 0;
  let calls = 0;
  let now = 0;

  for (let client = 0; client < clients; client++) queue.push(networkDelay(random), { type: 'read-arrives', client });

  for (let next = queue.pop(); next; next = queue.pop()) {
    now = next.at;
    const e = next.event;
    switch (e.type) {
      case 'read-arrives':
        queue.push(now + networkDelay(random), { type: 'read-reply', client: e.client, version });
        break;
      case 'read-reply':
        queue.push(now + networkDelay(random), { type: 'write-arrives', client: e.client, version: e.version });
        break;
      case 'write-arrives': {
        calls++;
        const ok = e.version === version;
        if (ok) version++;
        queue.push(now + networkDelay(random), { type: 'write-reply', client: e.client, ok });
        break;
      }
      case 'write-reply':
        if (!e.ok) {
          const n = (failures[e.client] = (failures[e.client] ?? 0) + 1);
          const sleep = backoff(n, previousSleep[e.client] ?? SIMULATION.baseMs, random);
          previousSleep[e.client] = sleep;
          queue.push(now + sleep + networkDelay(random), { type: 'read-arrives', client: e.client });
        }
        break;
    }
  }
  return { calls, timeMs: now };
}

function simulate(clients: number, backoff: BackoffPolicy, seed: number): { calls: number; timeMs: number } {
  const random = createSeededRandom(seed);
  let calls = 0;
  let timeMs = 0;
  for (let trial = 0; trial < SIMULATION.trials; trial++) {
    const result = runTrial(clients, backoff, random);
    calls += result.calls;
    timeMs += result.timeMs;
  }
  return { calls: calls / SIMULATION.trials, timeMs: timeMs / SIMULATION.trials };
}

function main(): void {
  const started = performance.now();
  const results = new Map<string, { calls: number; timeMs: number }>();
  const rows: string[][] = [];
  for (const clients of SIMULATION.clientCounts) {
    POLICIES.forEach((policy, index) => {
      const result = simulate(clients, policy.backoff, SIMULATION.seed + clients * 10 + index);
      results.set(`${clients}/${policy.name}`, result);
      const reference = clients === 100 ? REFERENCE_N100[policy.name] : undefined;
      rows.push([
        String(clients),
        policy.name,
        Math.round(result.calls).toLocaleString('en-US'),
        Math.round(result.timeMs).toLocaleString('en-US'),
        reference ? `${reference.calls.toLocaleString('en-US')} / ${reference.timeMs.toLocaleString('en-US')}` : '',
      ]);
    });
  }

  const header = ['N', 'strategy', 'calls', 'time (ms)', 'reference calls / ms'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i >= 2 && i <= 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  console.log(
    `Brooker OCC contention: ${SIMULATION.trials} trials, network |N(${SIMULATION.networkMeanMs}, ${SIMULATION.networkSdMs})| ms, base ${SIMULATION.baseMs} ms, cap ${SIMULATION.capMs} ms, means per trial (virtual time)`,
  );
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
  console.log(`(simulated in ${((performance.now() - started) / 1000).toFixed(1)} s of real time)`);

  const none = results.get('100/no backoff')!;
  const expo = results.get('100/exponential, no jitter')!;
  const engine = results.get(`100/${ENGINE_POLICY}`)!;
  console.log(
    `backoff at N=100: calls x${(engine.calls / none.calls).toFixed(2)} of no-backoff, completion time x${(engine.timeMs / expo.timeMs).toFixed(2)} of exponential-no-jitter`,
  );
}

main();
