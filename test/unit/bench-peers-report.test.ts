import {
  formatMedianPeersLine,
  formatPeersLine,
  formatRatio,
  percentile,
  tallyLedger,
  type PeersSummary,
} from '../../bench/peers/peers-report';

describe('the ledger tally of bench:peers', () => {
  test('a key with more than one effect is one duplicate, whatever the number of extra effects', () => {
    const counts = new Map([
      ['a/1', 1],
      ['a/2', 3],
      ['b/1', 2],
    ]);
    expect(tallyLedger(counts, ['a', 'b'], 2)).toEqual({ effects: 6, duplicates: 2, missing: 1 });
  });

  test('an expected step with no effect is missing, and a run with no effect at all misses every step', () => {
    const counts = new Map([['a/wf-run/1', 1]]);
    expect(tallyLedger(counts, ['a', 'c'], 3)).toEqual({ effects: 1, duplicates: 0, missing: 5 });
  });

  test('keys of other runs are not counted', () => {
    const counts = new Map([
      ['a/1', 1],
      ['other/1', 5],
      ['ab/1', 2],
    ]);
    expect(tallyLedger(counts, ['a'], 1)).toEqual({ effects: 1, duplicates: 0, missing: 0 });
  });
});

describe('the figures of bench:peers', () => {
  test('a ratio has two decimals and reads ours over theirs', () => {
    expect(formatRatio(30, 12)).toBe('x2.50');
    expect(formatRatio(15, 150)).toBe('x0.10');
  });

  test('a ratio without both figures is x?', () => {
    expect(formatRatio(Number.NaN, 12)).toBe('x?');
    expect(formatRatio(12, 0)).toBe('x?');
  });

  test('the 95th percentile is the nearest rank', () => {
    expect(percentile([5, 1, 4, 2, 3], 95)).toBe(5);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 95)).toBe(19);
    expect(percentile([], 95)).toBeNaN();
  });

  test('the last line gives latency, throughput and duplicates against both peers and plain Temporal', () => {
    expect(
      formatPeersLine({
        msPerStep: { ours: 36, restate: 12, dbos: 18, temporal: 9 },
        stepsPerSecond: { ours: 30, restate: 150, dbos: 100, temporal: 60 },
        duplicates: { ours: 0, restate: 36, dbos: 50 },
      }),
    ).toBe(
      'peers: latency x3.00 of restate, x2.00 of dbos, x4.00 of temporal; ' +
        'throughput x0.20 of restate, x0.30 of dbos, x0.50 of temporal; duplicates 0/36/50',
    );
  });

  test('the last line shows ? for a peer the run left out (PEERS_ONLY)', () => {
    expect(
      formatPeersLine({
        msPerStep: { ours: 6, restate: Number.NaN, dbos: Number.NaN, temporal: Number.NaN },
        stepsPerSecond: { ours: 300, restate: Number.NaN, dbos: Number.NaN, temporal: Number.NaN },
        duplicates: { ours: 0, restate: Number.NEGATIVE_INFINITY, dbos: Number.NEGATIVE_INFINITY },
      }),
    ).toMatch(/; duplicates 0\/\?\/\?$/);
  });
});

describe('the judged line of several full bench:peers runs', () => {
  const run = (ours: number, restate: number, dupOurs = 0): PeersSummary => ({
    msPerStep: { ours, restate, dbos: 10, temporal: 20 },
    stepsPerSecond: { ours: 100, restate: 200, dbos: 100, temporal: 50 },
    duplicates: { ours: dupOurs, restate: 12, dbos: 30 },
  });

  test('each ratio is the median of that ratio over the runs, not a ratio of medians', () => {
    // Ratios of latency to restate: 2.0, 1.2, 1.5 -> median 1.5 (a ratio of medians would give 6/5 = 1.2).
    const line = formatMedianPeersLine([run(8, 4), run(6, 5), run(9, 6)]);
    expect(line).toMatch(/^peers \(median of 3 full runs\): latency x1\.50 of restate, /);
  });

  test('duplicates are the most any run had, so one bad run is not hidden by the median', () => {
    expect(formatMedianPeersLine([run(5, 5), run(5, 5, 2), run(5, 5)])).toMatch(/; duplicates 2\/12\/30$/);
  });

  test('a peer left out of every run reads x? and ?', () => {
    const left: PeersSummary = {
      msPerStep: { ours: 6, restate: Number.NaN, dbos: Number.NaN, temporal: 9 },
      stepsPerSecond: { ours: 300, restate: Number.NaN, dbos: Number.NaN, temporal: 150 },
      duplicates: { ours: 0, restate: Number.NEGATIVE_INFINITY, dbos: Number.NEGATIVE_INFINITY },
    };
    expect(formatMedianPeersLine([left, left])).toBe(
      'peers (median of 2 full runs): latency x? of restate, x? of dbos, x0.67 of temporal; ' +
        'throughput x? of restate, x? of dbos, x2.00 of temporal; duplicates 0/?/?',
    );
  });
});
