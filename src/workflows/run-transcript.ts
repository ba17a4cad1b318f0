import { jsonByteLength } from '../contract/payload-limits';
import type { TranscriptMessage } from '../contract/model-types';

/**
 * The run's transcript as the workflow holds it: the messages since `offset` (all of them in the first
 * generation; those since the last continue-as-new later), and how many of them the transcript store
 * already has. Only the part the store lacks is sent to the model activity, so each step adds a constant
 * number of bytes to the history. The workflow's copy is rebuilt on replay from activity results, so it
 * costs no history of its own.
 */
export class RunTranscript {
  private messages: TranscriptMessage[];
  private offset: number;
  /** Messages the store holds (absolute count). */
  private stored: number;
  /** JSON bytes of the messages of this generation. */
  private bytes = 0;

  constructor(init: { goal: string } | { cursor: number; unsent: readonly TranscriptMessage[] }) {
    if ('goal' in init) {
      this.messages = [{ role: 'user', content: init.goal }];
      this.offset = 0;
      this.stored = 0;
    } else {
      this.messages = [...init.unsent];
      this.offset = init.cursor;
      this.stored = init.cursor;
    }
  }

  /** What to hand to the next generation: how much the store holds, and what it does not have yet. */
  carryOver(): { cursor: number; unsent: TranscriptMessage[] } {
    const { fromIndex, messages } = this.delta();
    return { cursor: fromIndex, unsent: messages };
  }

  push(message: TranscriptMessage): void {
    this.messages.push(message);
    this.bytes += jsonByteLength(message);
  }

  /** JSON bytes of the messages this generation added (what a full resend would send, roughly). */
  get generationBytes(): number {
    return this.bytes;
  }

  /** The messages this generation holds (all of them in the first generation), oldest first. */
  held(): readonly TranscriptMessage[] {
    return this.messages;
  }

  /** Absolute length of the transcript. */
  get length(): number {
    return this.offset + this.messages.length;
  }

  /** What the store lacks: position and messages. */
  delta(): { fromIndex: number; messages: TranscriptMessage[] } {
    return { fromIndex: this.stored, messages: this.messages.slice(this.stored - this.offset) };
  }

  /** The store now holds everything. */
  markStored(): void {
    this.stored = this.length;
  }

  /**
   * The store lost the transcript: from now on send it whole. When earlier messages are gone (they were
   * before a continue-as-new), a note says how many, so the model knows its memory has a gap.
   */
  resend(goal: string): { fromIndex: number; messages: TranscriptMessage[] } {
    if (this.offset > 0) {
      this.messages = [
        { role: 'user', content: goal },
        { role: 'user', content: `(${this.offset - 1} earlier messages of this run are no longer available.)` },
        ...this.messages,
      ];
      this.offset = 0;
    }
    this.stored = 0;
    return this.delta();
  }
}
