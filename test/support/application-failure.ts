import { ApplicationFailure } from '@temporalio/common';

/** The `ApplicationFailure` that `promise` rejects with; throws if it resolves or rejects with anything else. */
export async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  return error;
}
