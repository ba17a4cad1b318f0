/**
 * The events of a run's live stream: what a model turn produces while it runs (text deltas, the starts of
 * tool calls) and the progress of running tool calls. They travel out of band, through a stream store, and
 * never enter Temporal's history. Pure data, shared by the worker (which writes them) and readers.
 */
import type { ModelFinishReason } from '../../contract/model-types';

/**
 * One attempt of one model turn. A retried turn (a new attempt: the worker died, the provider failed) or a
 * re-executed one (a reset run: another `runId`) writes a new segment, so text of two answers never mixes.
 */
export interface StreamSegment {
  /** The workflow id of the run. */
  workflowId: string;
  /** Temporal's run id of the execution that ran the turn (changes with continue-as-new and resets). */
  runId: string;
  /** Model turns taken before this one (0 for the first turn), over the whole run. */
  turn: number;
  /** Temporal's attempt number of the `callModel` activity. */
  attempt: number;
}

/** An event as the worker writes it, before the store gives it an offset. */
export type AgentStreamEventData =
  | {
      /**
       * A model turn attempt begins. `restart` is true when an earlier attempt of the same turn may have
       * written a segment: a reader discards that segment's text and shows this one instead.
       */
      type: 'segment-start';
      segment: StreamSegment;
      restart: boolean;
    }
  | { type: 'text-delta'; segment: StreamSegment; delta: string }
  | { type: 'tool-call-start'; segment: StreamSegment; toolCallId: string; toolName: string }
  | {
      /**
       * The attempt ended: `completed` (its turn is what the history records) or `failed` (another attempt
       * may follow, as a new segment).
       */
      type: 'segment-end';
      segment: StreamSegment;
      outcome: 'completed' | 'failed';
      finishReason?: ModelFinishReason;
      /** The failure's code when `failed`. */
      error?: string;
    }
  | {
      /** A running tool call reported progress (`ctx.progress(percent, message)`). */
      type: 'tool-progress';
      workflowId: string;
      runId: string;
      stepId: number;
      tool: string;
      percent: number;
      message?: string;
    };

/** An event of a run's stream, as readers get it. */
export type AgentStreamEvent = AgentStreamEventData & {
  /** Position in the run's stream: 1, 2, 3, … increasing by one per event, across continue-as-new. */
  offset: number;
  /** When the store wrote it (epoch ms, the writer's clock). */
  at: number;
};

/** The type names of {@link AgentStreamEvent}. */
export type AgentStreamEventType = AgentStreamEventData['type'];
