/**
 * No log line carries a Temporal task token. The SDK attaches the task token of the running activity to every
 * activity log line (`ctx.log`, "Activity started / completed") as the `taskToken` attribute, and to a few
 * worker lines of its own (`task`, `taskEncoded`: the whole activity task, arguments included). With the token
 * and access to the Temporal API anyone can complete, fail or heartbeat that activity — for an async-job call,
 * that is answering the job in the downstream's place. Logs travel further than the stores (terminals, log
 * shippers, tickets), so the token stays out of them.
 */
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** Log attributes that carry a task token (or a whole task) and are never written. */
export const SECRET_LOG_ATTRIBUTES: readonly string[] = ['taskToken', 'base64TaskToken', 'task', 'taskEncoded'];

function withoutSecrets(meta: LogMetadata | undefined): LogMetadata | undefined {
  if (meta === undefined || !SECRET_LOG_ATTRIBUTES.some((key) => Object.hasOwn(meta, key))) return meta;
  const kept: LogMetadata = {};
  for (const [key, value] of Object.entries(meta)) if (!SECRET_LOG_ATTRIBUTES.includes(key)) kept[key] = value;
  return kept;
}

/**
 * The activity interceptor `createWorker` installs first (outermost): the attributes Temporal attaches to every
 * activity log line lose the task token; everything else (workflow id, activity type, attempt) stays.
 */
export const withoutTaskTokenInActivityLogs: ActivityInterceptorsFactory = () => ({
  outbound: {
    getLogAttributes: (input, next) => withoutSecrets(next(input)) as Record<string, unknown>,
  },
});

/**
 * A Temporal runtime logger that drops the attributes of {@link SECRET_LOG_ATTRIBUTES} before `inner` writes a
 * line: covers the worker's own lines that bypass the activity interceptors (trace lines about starting and
 * cancelling activities, and the error line about an activity task that could not start, which carries the
 * whole task). The command line installs its runtime with it; install yours with it too:
 * `Runtime.install({ logger: privateRuntimeLogger(new DefaultLogger('INFO')) })`.
 *
 * @example
 * ```ts
 * import { DefaultLogger, Runtime } from '@temporalio/worker';
 * Runtime.install({ logger: privateRuntimeLogger(new DefaultLogger('INFO')) });
 * ```
 */
export function privateRuntimeLogger(inner: Logger): Logger {
  return {
    log: (level: LogLevel, message: string, meta?: LogMetadata) => inner.log(level, message, withoutSecrets(meta)),
    trace: (message: string, meta?: LogMetadata) => inner.trace(message, withoutSecrets(meta)),
    debug: (message: string, meta?: LogMetadata) => inner.debug(message, withoutSecrets(meta)),
    info: (message: string, meta?: LogMetadata) => inner.info(message, withoutSecrets(meta)),
    warn: (message: string, meta?: LogMetadata) => inner.warn(message, withoutSecrets(meta)),
    error: (message: string, meta?: LogMetadata) => inner.error(message, withoutSecrets(meta)),
  };
}
