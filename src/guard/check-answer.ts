import { z } from 'zod';
import { TOOL_ERROR_CODES, type ToolErrorObservation } from '../contract/activity-protocol';
import type { AgentOutputSpec, AnswerCheck } from '../contract/agent-output';
import { parseToolArguments } from './parse-tool-arguments';

/** Schemas built from the runs' JSON Schemas, by their JSON text: a run's turns share one. */
const schemas = new Map<string, z.ZodType>();
const MAX_CACHED_SCHEMAS = 200;

/**
 * Checks a final answer against the run's output schema with the argument guard (JSON, type drift, enum values,
 * invented fields, forbidden keys: as for tool arguments). Returns the validated value, or the `INVALID_ANSWER`
 * observation the model reads: what is wrong and how to answer instead. A schema that cannot be read fails the
 * answer too (never a completed run with an unchecked value).
 *
 * @example
 * ```ts
 * checkAnswer({ schema: z.toJSONSchema(z.object({ city: z.string() })) }, '{"city":"Berlin"}'); // { ok: true, value: { city: 'Berlin' } }
 * ```
 */
export function checkAnswer(output: AgentOutputSpec, text: string | undefined): AnswerCheck {
  const sent = sentValue(text);
  let schema: z.ZodType;
  try {
    schema = schemaOf(output.schema);
  } catch (error) {
    return refused(sent, `The run's output schema cannot be read: ${(error as Error).message}`, schemaHint(output));
  }
  const parsed = parseToolArguments(schema, text ?? '');
  if (parsed.ok) return { ok: true, value: parsed.value };
  const { message, hint, issues } = parsed.error;
  return {
    ok: false,
    sent,
    observation: {
      ...parsed.error,
      code: TOOL_ERROR_CODES.INVALID_ANSWER,
      message: answerWords(message),
      hint: `${answerWords(hint)} ${schemaHint(output)}`,
      ...(issues ? { issues } : {}),
    },
  };
}

/** The guard speaks of arguments and calls; for an answer it says answer. */
function answerWords(text: string): string {
  return text
    .replace("the tool's input schema", "the answer's schema")
    .replace('Fix and call again', 'Fix it and answer again')
    .replace('The arguments do not match', 'The answer does not match')
    .replace('The arguments are not', 'The answer is not')
    .replace('The arguments must be', 'The answer must be')
    .replace('Send the arguments as one JSON object whose keys are the parameter names', 'Answer with one JSON object')
    .replace(/The arguments/g, 'The answer')
    .replace(/the arguments/g, 'the answer');
}

function schemaHint(output: AgentOutputSpec): string {
  return `Answer with only one JSON object matching this JSON Schema, without calling a tool: ${JSON.stringify(output.schema)}`.slice(
    0,
    1_500,
  );
}

function refused(sent: unknown, message: string, hint: string): AnswerCheck {
  const observation: ToolErrorObservation = {
    status: 'error',
    code: TOOL_ERROR_CODES.INVALID_ANSWER,
    message,
    hint,
    retryable: false,
    attempts: 0,
  };
  return { ok: false, sent, observation };
}

function sentValue(text: string | undefined): unknown {
  if (text === undefined) return '';
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function schemaOf(json: Record<string, unknown>): z.ZodType {
  const key = JSON.stringify(json);
  let schema = schemas.get(key);
  if (!schema) {
    schema = z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]);
    if (schemas.size >= MAX_CACHED_SCHEMAS) schemas.clear();
    schemas.set(key, schema);
  }
  return schema;
}
