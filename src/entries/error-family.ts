/**
 * The error family, exported by the root, `durable-tools/client` and `durable-tools/worker` alike: the base
 * class every durable-tools error extends, with a machine-readable `code`, the `errors` namespace holding every
 * error class a durable-tools function throws (see `error-classes.ts`), and the codes of a tool's failure.
 *
 * Why a namespace: user code reads the `code` (`error instanceof DurableToolsError && error.code === ...`),
 * as it does for every error of the package; an `instanceof` of one class still works, as
 * `error instanceof errors.McpConfigError`, without twenty classes and twenty code unions among an entry's names.
 *
 * Not an entry of its own: `durable-tools`, `/client` and `/worker` re-export it.
 *
 * @packageDocumentation
 */

// The error base class of every error durable-tools throws
export { DurableToolsError } from '../contract/durable-tools-error';
// Every error class by name, with its codes (`errors.McpConfigError`, `errors.McpConfigErrorCode`)
export * as errors from './error-classes';
// The codes of a tool's failure: what a tool throws with, and what a run's observation of it carries
export type { ToolErrorCode } from '../contract/activity-protocol';
