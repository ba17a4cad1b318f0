import { z } from 'zod';
import type { ToolContract } from './define-tool';

/**
 * The input schema of an undo tool for `forward`: the forward call's input, its output when known, and
 * its idempotency key. The engine fills it in when it compensates.
 *
 * @example
 * ```ts
 * const cancelFlight = defineTool({
 *   name: 'cancel_flight',
 *   input: compensationInput(bookFlightContract),
 *   output: z.object({ cancelled: z.boolean() }),
 *   ...
 * }).implement(async ({ originalKey }) => airline.cancelByKey(originalKey));
 * ```
 */
export function compensationInput<I extends z.ZodType, O extends z.ZodType>(forward: ToolContract<I, O>) {
  return z.object({
    originalInput: forward.spec.input,
    originalOutput: forward.spec.output.optional(),
    originalKey: z.string(),
  });
}
