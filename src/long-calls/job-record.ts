/**
 * The record of an async job, kept in the worker's transcript store under `job:<idempotency key>`: what was
 * submitted, the callback's secret, and which attempt waits for the callback now (its task token). Shared by
 * the tool activity (which writes it) and the callback helper (which reads it and completes the call).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { PayloadStore } from '../stores/transcripts/claim-check';

/** One async job, as stored. */
export interface JobRecord {
  v: 1;
  tool: string;
  idempotencyKey: string;
  /** The run that owns the call (`ToolContext.runKey`). */
  runId: string;
  /** Random secret of the callback token (base64url); the same for every attempt. */
  secret: string;
  /** `submitting` until the downstream accepted the job, `submitted` after, `done` once a callback completed it. */
  status: 'submitting' | 'submitted' | 'done';
  jobId?: string;
  submittedAt?: number;
  /** Task token (base64) of the attempt waiting for the callback, and its attempt number. */
  taskToken?: string;
  attempt?: number;
  completedAt?: number;
  /** When the record may expire (epoch ms): the job's deadline plus {@link JOB_RECORD_KEPT_AFTER_DEADLINE_MS}. */
  keepUntil?: number;
}

/** How long a job record is kept after the job's deadline, so a late callback gets a clear answer. */
export const JOB_RECORD_KEPT_AFTER_DEADLINE_MS = 7 * 24 * 3_600_000;

/** Handle of a call's job record in the transcript store. */
export function jobRecordHandle(idempotencyKey: string): string {
  return `job:${idempotencyKey}`;
}

/** A new record for a call about to submit, with a fresh callback secret, kept past the job's deadline. */
export function newJobRecord(tool: string, idempotencyKey: string, runId: string, deadlineMs: number): JobRecord {
  return {
    v: 1,
    tool,
    idempotencyKey,
    runId,
    secret: randomBytes(24).toString('base64url'),
    status: 'submitting',
    keepUntil: Date.now() + deadlineMs + JOB_RECORD_KEPT_AFTER_DEADLINE_MS,
  };
}

/** The call's job record, or undefined (none, another run's, or not a record). */
export async function readJobRecord(
  store: PayloadStore,
  idempotencyKey: string,
  runId?: string,
): Promise<JobRecord | undefined> {
  const payload = await store.getPayload(jobRecordHandle(idempotencyKey));
  if (!payload || (runId !== undefined && payload.runId !== runId)) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(payload.text);
  } catch {
    return undefined;
  }
  return isJobRecord(record) && record.idempotencyKey === idempotencyKey ? record : undefined;
}

export async function writeJobRecord(store: PayloadStore, record: JobRecord): Promise<void> {
  await store.putPayload(jobRecordHandle(record.idempotencyKey), {
    runId: record.runId,
    text: JSON.stringify(record),
    ...(record.keepUntil !== undefined ? { expiresAt: record.keepUntil } : {}),
  });
}

/** The callback token of a call: its idempotency key and its secret, base64url, joined by a dot. */
export function callbackTokenOf(record: JobRecord): string {
  return `${Buffer.from(record.idempotencyKey, 'utf8').toString('base64url')}.${record.secret}`;
}

/** The key and secret of a callback token, or undefined when it is not one. */
export function parseCallbackToken(token: unknown): { idempotencyKey: string; secret: string } | undefined {
  if (typeof token !== 'string' || token.length > 4_096) return undefined;
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{32})$/.exec(token);
  if (!match) return undefined;
  const idempotencyKey = Buffer.from(match[1]!, 'base64url').toString('utf8');
  return idempotencyKey.length > 0 ? { idempotencyKey, secret: match[2]! } : undefined;
}

/** Constant-time comparison of a presented secret with the record's. */
export function secretMatches(record: JobRecord, secret: string): boolean {
  const a = Buffer.from(record.secret, 'utf8');
  const b = Buffer.from(secret, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function isJobRecord(value: unknown): value is JobRecord {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Partial<JobRecord>;
  return (
    record.v === 1 &&
    typeof record.tool === 'string' &&
    typeof record.idempotencyKey === 'string' &&
    typeof record.runId === 'string' &&
    typeof record.secret === 'string' &&
    (record.status === 'submitting' || record.status === 'submitted' || record.status === 'done')
  );
}
