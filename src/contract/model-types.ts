/**
 * The shapes exchanged between an agent run and a model. Pure data, shared by workflow and worker code.
 */
import type { ToolCatalogEntry } from './tool-catalog-entry';
import type { ToolObservation } from './activity-protocol';
import type { AgentOutputSpec, AnswerCheck } from './agent-output';

/** One tool call as the model proposed it. `arguments` is untrusted: often a JSON string, sometimes broken. */
export interface ModelToolCall {
  /** The model's own id of the call (used to pair the observation). */
  id: string;
  name: string;
  arguments: unknown;
}

/** Tokens one model turn used, as the provider reported them (fields it did not report are absent). */
export interface ModelUsage {
  /** Prompt tokens, cached ones included. */
  inputTokens?: number;
  /** Completion tokens, reasoning included. */
  outputTokens?: number;
  /** Prompt tokens served from the provider's cache. */
  cachedInputTokens?: number;
  /** Completion tokens spent on hidden reasoning. */
  reasoningTokens?: number;
}

/**
 * Why the model stopped, in the AI SDK's unified words: `stop` (answered), `tool-calls`, `length` (hit the
 * output limit), `content-filter` (refused or filtered), `error`, `other`.
 */
export type ModelFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/**
 * A turn that is neither tool calls nor an answer: the model refused, said nothing, was cut off, or its
 * provider returned values JSON cannot carry (`MODEL_OUTPUT_NOT_JSON`: a symbol as a tool name, a BigInt or a
 * function in the arguments, a cycle; none of its calls runs). The run records it as an observation and asks
 * the model again; it is never a completed answer.
 */
export interface ModelTurnIssue {
  code: 'MODEL_REFUSED' | 'MODEL_EMPTY_RESPONSE' | 'MODEL_OUTPUT_TRUNCATED' | 'MODEL_OUTPUT_NOT_JSON';
  message: string;
}

/** What the model said in one turn. */
export interface ModelTurn {
  /** Free text: reasoning shown to the user, or the final answer when `done`. */
  text?: string;
  toolCalls: ModelToolCall[];
  /** True when the model considers the goal reached (or given up); no tool calls then. */
  done: boolean;
  /** Tokens this turn used, when the provider reports them. */
  usage?: ModelUsage;
  /** The model that answered (the provider's id), for usage and cost accounting. */
  modelId?: string;
  finishReason?: ModelFinishReason;
  /** Set when the turn is a refusal, empty or truncated (then `done` is false and there are no tool calls). */
  issue?: ModelTurnIssue;
  /** Calls beyond the per-turn limit that the engine dropped (never run); absent when none. */
  droppedToolCalls?: number;
  /**
   * The worker's check of a final answer against the run's `output` schema (set by the model activity when the
   * run has one and the turn answers).
   */
  answerCheck?: AnswerCheck;
}

/** One message of the run's transcript. */
export type TranscriptMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; text?: string; toolCalls: ModelToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; stepId: number; observation: ToolObservation };

/**
 * Which model to call and how. `provider` selects a provider registered on the worker; the remaining
 * fields are the provider's own settings (for `scripted`: `script`).
 */
export interface ModelSettings {
  provider: string;
  /** The provider's model id (AI SDK providers: the id their model source is asked for). */
  model?: string;
  /** A system prompt of the run's own, instead of the engine's default one (AI SDK providers). */
  system?: string;
  /** Sampling temperature (AI SDK `temperature`). */
  temperature?: number;
  /** Output token limit of one turn (AI SDK `maxOutputTokens`). */
  maxOutputTokens?: number;
  /** Nucleus sampling (AI SDK `topP`). */
  topP?: number;
  /** Top-K sampling (AI SDK `topK`). */
  topK?: number;
  /** AI SDK `presencePenalty`. */
  presencePenalty?: number;
  /** AI SDK `frequencyPenalty`. */
  frequencyPenalty?: number;
  /** Sequences that stop the generation (AI SDK `stopSequences`). */
  stopSequences?: string[];
  /** Seed of the sampling, where the provider supports one (AI SDK `seed`). */
  seed?: number;
  /** Provider-specific options, by provider name (AI SDK `providerOptions`), passed through as given. */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Extra HTTP headers of the provider's request (AI SDK `headers`). */
  headers?: Record<string, string>;
  /** Deadline of one turn, in milliseconds (default 90 s). */
  turnTimeoutMs?: number;
  /** Attempts of one turn (default 5). */
  maxAttempts?: number;
  [setting: string]: unknown;
}

/** Everything a model provider gets for one turn. */
export interface ModelRequest {
  goal: string;
  /**
   * The agent's standing instructions (`AgentRunInput.instructions`): a provider gives them to the model as its
   * system prompt, after its own. With a typed answer they end with the answer's JSON Schema.
   */
  instructions?: string;
  /** The shape the final answer must have, when the run has one (`AgentRunInput.output`). */
  output?: AgentOutputSpec;
  /** Model turns taken before this one (0 for the first turn), over the whole run. */
  turn: number;
  transcript: readonly TranscriptMessage[];
  tools: readonly ToolCatalogEntry[];
  settings: ModelSettings;
}

/**
 * What the engine hands a provider besides the request: the signal that aborts the call (the activity was
 * cancelled, or the turn's deadline passed) and the deadline itself. Providers must pass `signal` to every
 * request they make.
 */
export interface ModelCallContext {
  signal: AbortSignal;
  /** Epoch milliseconds after which the engine gives up on this turn (and aborts `signal`). */
  deadline: number;
  /**
   * Present when the worker streams turns to readers (it has a stream store): a provider that can stream
   * reports the turn's text and tool-call starts here as they arrive, and still returns the whole turn. A
   * provider that ignores it is streamed as a whole turn when it returns.
   */
  stream?: ModelStreamSink;
}

/**
 * Where a streaming provider reports a turn while it runs. Calls never throw and never wait: the engine
 * publishes out of band (see docs/streaming.md); the returned turn stays the durable result.
 */
export interface ModelStreamSink {
  /** A piece of the turn's text, in order. */
  text(delta: string): void;
  /** The model began a tool call (its arguments follow in the returned turn). */
  toolCallStart(call: { id: string; name: string }): void;
}

/**
 * A model: takes the goal, the transcript and the tools, answers with one turn. A provider throws on
 * failure; the engine classifies what it throws (`classifyModelError`) into transient or permanent.
 */
export type ModelProvider = (request: ModelRequest, context: ModelCallContext) => Promise<ModelTurn>;
