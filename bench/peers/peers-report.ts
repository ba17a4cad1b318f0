/**
 * The pure parts of `npm run bench:peers`: counting a ledger's effects per key, ratios, percentiles and the
 * report's last line. No I/O, so they are unit-tested (test/unit/bench-peers-report.test.ts).
 */

/** What a ledger saw for a set of runs. */
export interface LedgerTally {
  /** Effects recorded under the runs' keys. */
  effects: number;
  /** Keys that received more than one effect. */
  duplicates: number;
  /** Expected steps (runs × steps) with no effect at all. */
  missing: number;
}

/**
 * Counts the effects of `runIds` in `countsByKey` (key → number of effects). A key belongs to run R when it
 * starts with `R/` (every system's key is `<run id>/.../<step>`); each run expects `stepsPerRun` distinct keys.
 */
export function tallyLedger(
  countsByKey: ReadonlyMap<string, number>,
  runIds: readonly string[],
  stepsPerRun: number,
): LedgerTally {
  const keysPerRun = new Map<string, number>(runIds.map((id) => [id, 0]));
  let effects = 0;
  let duplicates = 0;
  for (const [key, count] of countsByKey) {
    const runId = key.slice(0, key.indexOf('/'));
    const seen = keysPerRun.get(runId);
    if (seen === undefined || count === 0) continue;
    keysPerRun.set(runId, seen + 1);
    effects += count;
    if (count > 1) duplicates += 1;
  }
  let missing = 0;
  for (const distinct of keysPerRun.values()) missing += Math.max(0, stepsPerRun - distinct);
  return { effects, duplicates, missing };
}

/** The `p`-th percentile (0–100, nearest rank) of a list; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** `ours / theirs` with two decimals (`x1.25`), or `x?` when either side is missing or zero. */
export function formatRatio(ours: number, theirs: number): string {
  if (!Number.isFinite(ours) || !Number.isFinite(theirs) || theirs === 0) return 'x?';
  return `x${(ours / theirs).toFixed(2)}`;
}

/** The figures the last line compares: durable-tools against the best variant of each peer. */
export interface PeersSummary {
  /** `temporal`: plain Temporal with local activities (the floor). */
  msPerStep: { ours: number; restate: number; dbos: number; temporal: number };
  stepsPerSecond: { ours: number; restate: number; dbos: number; temporal: number };
  /** Duplicate keys in each system's crash round. */
  duplicates: { ours: number; restate: number; dbos: number };
}

/**
 * The report's last line: `peers: latency xA of restate, xB of dbos, xC of temporal; throughput xD of restate,
 * xE of dbos, xF of temporal; duplicates D/R/B`. Latency ratios above 1 mean durable-tools is slower; throughput
 * ratios below 1 mean it does less.
 */
export function formatPeersLine(summary: PeersSummary): string {
  const { msPerStep: ms, stepsPerSecond: rate, duplicates: dup } = summary;
  const against = (ours: number, of: { restate: number; dbos: number; temporal: number }): string =>
    `${formatRatio(ours, of.restate)} of restate, ${formatRatio(ours, of.dbos)} of dbos, ` +
    `${formatRatio(ours, of.temporal)} of temporal`;
  return (
    `peers: latency ${against(ms.ours, ms)}; throughput ${against(rate.ours, rate)}; ` +
    `duplicates ${countOf(dup.ours)}/${countOf(dup.restate)}/${countOf(dup.dbos)}`
  );
}

/** A count of the last line; `?` for a system the run left out (`PEERS_ONLY`), as for its ratios. */
function countOf(n: number): string {
  return Number.isFinite(n) ? String(n) : '?';
}

/** The middle value (the mean of the two middle ones for an even count), ignoring NaN; NaN when none. */
function middle(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

/**
 * The judged line over several full runs (`--runs N`): `peers (median of N full runs): latency xA of restate, …;
 * throughput …; duplicates D/R/B`. Each ratio is the median of that ratio over the runs (each run's own ratio,
 * measured side by side in that run); duplicates are the most any run had, per system.
 */
export function formatMedianPeersLine(summaries: readonly PeersSummary[]): string {
  const ratio = (pick: (s: PeersSummary) => [number, number]): string => {
    const values = summaries.map((s) => {
      const [ours, theirs] = pick(s);
      return Number.isFinite(ours) && Number.isFinite(theirs) && theirs !== 0 ? ours / theirs : Number.NaN;
    });
    const m = middle(values);
    return Number.isFinite(m) ? `x${m.toFixed(2)}` : 'x?';
  };
  const against = (of: 'msPerStep' | 'stepsPerSecond'): string =>
    (['restate', 'dbos', 'temporal'] as const)
      .map((peer) => `${ratio((s) => [s[of].ours, s[of][peer]])} of ${peer}`)
      .join(', ');
  const most = (who: 'ours' | 'restate' | 'dbos'): string =>
    countOf(Math.max(...summaries.map((s) => s.duplicates[who])));
  return (
    `peers (median of ${summaries.length} full runs): latency ${against('msPerStep')}; ` +
    `throughput ${against('stepsPerSecond')}; duplicates ${most('ours')}/${most('restate')}/${most('dbos')}`
  );
}
