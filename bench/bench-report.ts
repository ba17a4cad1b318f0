import { cpus, loadavg } from 'node:os';

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The machine a figure was measured on: CPU model and count. */
export function machineLine(): string {
  const list = cpus();
  return `${list.length} × ${list[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
}

/** Collects the 1-minute load average during a benchmark, to print next to its figures. */
export class LoadSampler {
  private readonly samples: number[] = [];
  sample(): number {
    const load = loadavg()[0] ?? 0;
    this.samples.push(load);
    return load;
  }
  /** `min–max` of the samples taken. */
  range(): string {
    if (this.samples.length === 0) this.sample();
    return `${Math.min(...this.samples).toFixed(1)}–${Math.max(...this.samples).toFixed(1)}`;
  }
}

/** Rotates `items` by `round`, so each configuration goes first equally often across rounds. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
