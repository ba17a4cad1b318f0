/**
 * The whole machine's CPU for `npm run bench:scale`'s bound: the busy and total time of all cores, from the
 * first line of `/proc/stat`, so that a phase can say how many cores were busy and how many of them were the
 * worker's, the Temporal server's and everything else's (the bench's own process, other work on the machine).
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** One reading of `/proc/stat`'s `cpu` line, in clock ticks summed over every core. */
export interface MachineCpuReading {
  busyTicks: number;
  totalTicks: number;
}

/** Reads the `cpu` line of `/proc/stat`: busy is everything but idle and iowait. Zeros where there is none. */
export function readMachineCpu(): MachineCpuReading {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((sum, t) => sum + t, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busyTicks: total - idle, totalTicks: total };
  } catch {
    return { busyTicks: 0, totalTicks: 0 };
  }
}

/** How many of the machine's cores were busy on average between two readings (0 when none elapsed). */
export function busyCoresBetween(before: MachineCpuReading, after: MachineCpuReading, cores = cpus().length): number {
  const total = after.totalTicks - before.totalTicks;
  return total > 0 ? ((after.busyTicks - before.busyTicks) / total) * cores : 0;
}
