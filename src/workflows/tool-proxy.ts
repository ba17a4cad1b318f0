import type { z } from 'zod';
import type { Tool, ToolContract } from '../tools/define-tool';
import { callTool, type CallToolOptions } from './call-tool';

/*
 * The typed face of `callTool`. The types come from the worker's tool definitions through a type-only import
 * (`import type { tools } from './tools'`): nothing of the tools, zod or the worker enters the workflow bundle.
 */

/** A tool made by `defineTool(...).implement(...)`, or its contract alone. */
export type AnyTool = Tool<z.ZodType, z.ZodType, string> | ToolContract<z.ZodType, z.ZodType, string>;

/** The tools a type describes: the elements of an array or tuple, or the values of a record (or module). */
export type ToolsOf<T> = Extract<T extends readonly unknown[] ? T[number] : T[keyof T], AnyTool>;

/** The contract of a tool or contract. */
type ContractOf<X> = X extends Tool<infer I, infer O, infer N> ? ToolContract<I, O, N> : X;

/** The name of a tool, as a literal type when `defineTool` was given a literal. */
export type ToolNameOf<X> = ContractOf<X> extends ToolContract<z.ZodType, z.ZodType, infer N> ? N : never;

/** What a call of the tool takes: its input schema's input type (before validation on the worker). */
export type ToolInputOf<X> = ContractOf<X> extends ToolContract<infer I, z.ZodType, string> ? z.input<I> : never;

/** What a call of the tool returns: its output schema's output type. */
export type ToolOutputOf<X> = ContractOf<X> extends ToolContract<z.ZodType, infer O, string> ? z.output<O> : never;

/**
 * The proxy {@link proxyTools} returns: one method per tool, named after it, taking the tool's input and
 * resolving to its output (or throwing a `ToolCallFailure`). A tool whose name is not a literal type (an agent
 * tool, a name built at run time) has no method: call it with `callTool`.
 */
export type ToolProxy<T> = {
  readonly [X in ToolsOf<T> as string extends ToolNameOf<X> ? never : ToolNameOf<X>]: (
    args: ToolInputOf<X>,
    options?: CallToolOptions,
  ) => Promise<ToolOutputOf<X>>;
};

/**
 * A typed proxy of the worker's tools for workflow code: `tools.reserve_room(args)` is
 * `callTool('reserve_room', args)` with the tool's input and output types. `T` describes the tools, taken with a
 * type-only import from where the worker defines them: an array or tuple of tools, or a record (or module) of
 * them. `options` apply to every call (a call's own options win; a `callId` is per call only).
 *
 * @example
 * ```ts
 * import { proxyTools } from 'durable-tools/workflow';
 * import type { tripTools } from './tools'; // [getWeather, reserveRoom, sendNotice]
 *
 * const tools = proxyTools<typeof tripTools>();
 * export async function trip(city: string): Promise<string> {
 *   const { tempC } = await tools.get_weather({ city });
 *   return (await tools.reserve_room({ city, nights: tempC > 20 ? 3 : 2 })).bookingId;
 * }
 * ```
 */
export function proxyTools<T>(options: Omit<CallToolOptions, 'callId'> = {}): ToolProxy<T> {
  return new Proxy({} as ToolProxy<T>, {
    get(_target, name) {
      if (typeof name !== 'string' || name === 'then') return undefined;
      return (args: unknown, own: CallToolOptions = {}) => callTool(name, args, { ...options, ...own });
    },
  });
}
