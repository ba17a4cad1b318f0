/**
 * The shapes exchanged between an agent run and a model. Pure data, shared by workflow and worker code.
 */
import type { ToolCatalogEntry } from '../tools/tool-catalog-entry';
import type { ToolObservation } from '../protocol/activity-protocol';

/** One tool call as the model proposed it. `arguments` is untrusted: often a JSON string, sometimes broken. */
export interface ModelToolCall {
  /** The model's own id of the call (used to pair the observation). */
  id: string;
  name: string;
  arguments: unknown;
}

/** What the model said in one turn. */
export interface ModelTurn {
  /** Free text: reasoning shown to the user, or the final answer when `done`. */
  text?: string;
  toolCalls: ModelToolCall[];
  /** True when the model considers the goal reached (or given up); no tool calls then. */
  done: boolean;
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
  [setting: string]: unknown;
}

/** Everything a model provider gets for one turn. */
export interface ModelRequest {
  goal: string;
  /** Model turns taken before this one (0 for the first turn), over the whole run. */
  turn: number;
  transcript: readonly TranscriptMessage[];
  tools: readonly ToolCatalogEntry[];
  settings: ModelSettings;
}

/** A model: takes the goal, the transcript and the tools, answers with one turn. */
export type ModelProvider = (request: ModelRequest) => Promise<ModelTurn>;
