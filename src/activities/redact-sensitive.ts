import { ApplicationFailure } from '@temporalio/common';
import { redactDeep, redactText } from '../contract/sensitive-arguments';
import type { ToolLogger } from '../tools/tool-context';

/**
 * A failure leaving a tool activity, with the call's sensitive values (see `tools/sensitive-arguments`) removed
 * from its message and details: failure messages are stored in Temporal's history in clear even with payload
 * encryption, and the model reads the details as its observation. Anything else is returned as it is.
 */
export function redactFailure(error: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0 || !(error instanceof ApplicationFailure)) return error;
  const redacted = new ApplicationFailure(
    redactText(error.message, secrets),
    error.type,
    error.nonRetryable,
    redactDeep(error.details, secrets),
    error.cause,
    error.nextRetryDelay,
    error.category,
  );
  redacted.stack = redactText(error.stack ?? '', secrets);
  return redacted;
}

/** A logger that writes the call's sensitive values as `[redacted]`, in messages and attributes alike. */
export function redactingLogger(log: ToolLogger, secrets: readonly string[]): ToolLogger {
  if (secrets.length === 0) return log;
  const wrap =
    (level: keyof ToolLogger) =>
    (message: string, attributes?: Record<string, unknown>): void =>
      log[level](redactText(message, secrets), attributes === undefined ? undefined : redactDeep(attributes, secrets));
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
