/**
 * The base class of every error durable-tools throws: one `instanceof` check catches them all, and every one
 * carries a machine-readable `code` (each subclass narrows it to its own union of codes), the error it wraps
 * as `cause` when there is one, and its class name as `name`.
 *
 * Failures that cross Temporal's wire (a tool's failure in a run's history, a run that failed) are Temporal
 * `ApplicationFailure`s whose `type` is the code: a client catches those as Temporal failures, not as this class.
 *
 * @example
 * ```ts
 * import { DurableToolsError } from 'durable-tools/client';
 *
 * try {
 *   await startAgentRun(client, input);
 * } catch (error) {
 *   if (error instanceof DurableToolsError) console.error(`${error.name} ${error.code}: ${error.message}`);
 *   else throw error;
 * }
 * ```
 */
export class DurableToolsError<Code extends string = string> extends Error {
  /** The class name of the error (`ToolDefinitionError`, `McpConfigError`, ...). */
  override name: string;
  /** What went wrong, as a stable machine-readable code; each subclass lists its own. */
  readonly code: Code;

  /**
   * @param message what went wrong, for a person.
   * @param code the machine-readable code.
   * @param options `cause`: the error this one wraps.
   */
  constructor(message: string, code: Code, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}
