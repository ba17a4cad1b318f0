import { PAYLOAD_LIMITS } from '../contract/payload-limits';
import { sensitiveArguments } from '../contract/sensitive-arguments';
import type { ToolCatalogEntry } from '../contract/tool-catalog-entry';
import { argumentBytes, recordedArguments } from './run-budget';

/**
 * One call's arguments, prepared once when its step opens and passed along to every stop of the step (the
 * record, the size check, the compensation, the activity's summary, the observation's redaction), so that
 * arguments sent as text are parsed once and measured once.
 */
export interface PreparedCall {
  /** What the model sent: what the tool activity gets. */
  raw: unknown;
  /** {@link argumentBytes} of `raw`. */
  bytes: number;
  /** Values of the fields the tool's schema marks sensitive, longest first (none for an unknown tool). */
  secrets: string[];
  /** The arguments with their sensitive fields redacted: `raw` itself when there are none. */
  redacted: unknown;
  /** The redacted arguments as the step record keeps them (shortened when long). */
  recorded: unknown;
}

/** Prepares a call's arguments for the tool it names (`undefined`: a tool the run does not know). */
export function prepareCall(raw: unknown, entry: ToolCatalogEntry | undefined): PreparedCall {
  const { secrets, redacted } = entry ? sensitiveArguments(raw, entry.inputSchema) : { secrets: [], redacted: raw };
  const bytes = argumentBytes(raw);
  const recordedBytes = redacted === raw ? bytes : argumentBytes(redacted);
  return {
    raw,
    bytes,
    secrets,
    redacted,
    recorded: recordedArguments(redacted, PAYLOAD_LIMITS.recordedArgumentChars, recordedBytes),
  };
}
