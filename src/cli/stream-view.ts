/**
 * How `durable-tools run` prints a run's live stream. On a terminal, the model's text appears as it is generated,
 * on its own lines (`model › …`); a retried turn is announced and its text follows anew. Elsewhere (a pipe, a
 * file, a CI log) each turn's text is printed once, whole, when its attempt completed: no partial lines, no
 * control characters, and text of a failed attempt never mixed into the log.
 */
import type { AgentStreamEvent } from '../stores/streams/stream-events';
import { wrap } from './run-view';

/** Where the view writes. */
export interface StreamViewOutput {
  /** Raw text at the cursor (terminal only). */
  write(text: string): void;
  /** A whole line. */
  line(text: string): void;
}

const PREFIX = 'model › ';
const INDENT = ' '.repeat(PREFIX.length);

/** Prints stream events; `open` says whether a line of streamed text is unfinished (the terminal's cursor is on it). */
export class StreamView {
  private pending = '';
  private openLine = false;
  /** Off a terminal: the text of each turn whose attempt completed, by turn (0-based), and the turns printed. */
  private readonly completed = new Map<number, string>();
  private readonly printed = new Set<number>();
  /** Off a terminal: turns before this one are printed as soon as their text is complete. */
  private releasedTurns = 0;

  constructor(
    private readonly out: StreamViewOutput,
    private readonly interactive: boolean,
    private readonly width: number,
  ) {}

  /** Whether any event of the run arrived (its worker streams). */
  seenAny = false;

  /** Whether an attempt of turn `turn` (0-based) completed, so its text is known. */
  hasCompleted(turn: number): boolean {
    return this.completed.has(turn);
  }

  /** Whether streamed text is being written on the current line (a progress line must wait). */
  get open(): boolean {
    return this.openLine;
  }

  show(event: AgentStreamEvent): void {
    this.seenAny = true;
    switch (event.type) {
      case 'segment-start':
        this.close();
        this.pending = '';
        if (event.restart) {
          this.out.line(
            `(turn ${event.segment.turn + 1} is answered again, attempt ${event.segment.attempt}: earlier text of this turn is void)`,
          );
        }
        break;
      case 'text-delta':
        if (!this.interactive) {
          this.pending += event.delta;
          break;
        }
        if (!this.openLine) {
          this.out.write(PREFIX);
          this.openLine = true;
        }
        this.out.write(event.delta.replace(/\r?\n/g, `\n${INDENT}`));
        break;
      case 'segment-end':
        if (this.interactive) this.close();
        else if (event.outcome === 'completed') {
          this.completed.set(event.segment.turn, this.pending);
          if (event.segment.turn < this.releasedTurns) this.printTurn(event.segment.turn);
        }
        this.pending = '';
        break;
      default:
        break; // tool-call starts and progress: the step lines show them
    }
  }

  /**
   * Off a terminal: prints the text of turn `turn` (0-based) now if it is complete, else as soon as it is; the
   * caller releases turns in order, between the step lines of the turns before and those of the turn itself.
   */
  printTurn(turn: number): void {
    this.releasedTurns = Math.max(this.releasedTurns, turn + 1);
    const text = this.completed.get(turn);
    if (this.interactive || text === undefined || this.printed.has(turn)) return;
    this.printed.add(turn);
    if (text.trim() !== '') for (const line of wrap(text.trim(), this.width, PREFIX, INDENT)) this.out.line(line);
  }

  /** Ends an unfinished line of streamed text, so other output starts on a line of its own. */
  close(): void {
    if (!this.openLine) return;
    this.out.write('\n');
    this.openLine = false;
  }
}
