import type { ParsedValues } from './args';
import { CliUsageError, type CliContext } from './command';

/** The environment variable of `--workflow-stack-traces`: `on` or `off` (also `1`/`0`, `true`/`false`). */
export const STACK_TRACES_ENV = 'DURABLE_TOOLS_WORKFLOW_STACK_TRACES';

/** The option spec of `--workflow-stack-traces`. */
export const STACK_TRACES_OPTION_SPEC = { 'workflow-stack-traces': { type: 'boolean' } } as const;

/** `--workflow-stack-traces` in a subcommand's help. */
export const STACK_TRACES_OPTION_HELP = `  --workflow-stack-traces  answer the Temporal UI's "Stack Trace" tab (the __stack_trace query) of runs
                  on this worker (also ${STACK_TRACES_ENV}=on); off by default: it costs ~12% of a
                  short fast-path run (docs/benchmarks.md, "Stack traces of workflow promises")`;

const ON = new Set(['on', '1', 'true', 'yes']);
const OFF = new Set(['off', '0', 'false', 'no', '']);

/** Whether the worker's workflow threads keep per-promise stack traces: the flag, else the environment. */
export function stackTracesOption(values: ParsedValues, context: CliContext): boolean {
  if (values['workflow-stack-traces'] === true) return true;
  const raw = context.env[STACK_TRACES_ENV];
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (ON.has(value)) return true;
  if (OFF.has(value)) return false;
  throw new CliUsageError(`${STACK_TRACES_ENV} must be on or off (got ${JSON.stringify(raw)}).`);
}
