/**
 * Workflows of the dev-server tuning benchmark: sequential bare activities, sequential short timers and
 * sequential local activities, so each server configuration's per-operation latency can be compared.
 */
import { proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';

interface BareActivities {
  bareNoop(input: unknown): Promise<unknown>;
}

const { bareNoop } = proxyActivities<BareActivities>({ startToCloseTimeout: '10 seconds' });
const local = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '10 seconds' });

/** `count` bare activities, one after another. */
export async function sequentialActivities(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await bareNoop(i);
}

/** `count` timers of `ms` milliseconds, one after another. */
export async function sequentialTimers(count: number, ms: number): Promise<void> {
  for (let i = 0; i < count; i++) await sleep(ms);
}

/** `count` local activities, one after another. */
export async function sequentialLocalActivities(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await local.bareNoop(i);
}
