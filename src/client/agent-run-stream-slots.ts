/** Defaults of the caps on open streams of `startAgentRunStreamServer`. */
export const AGENT_RUN_STREAM_LIMITS = {
  /** Open streams at most; one more is answered 503 with `Retry-After` until one closes. */
  maxStreams: 100,
  /** Open streams of one reader at most (so one reader cannot hold every stream). */
  maxStreamsPerReader: 16,
  /** The `Retry-After` of a 503, in seconds. */
  retryAfterSeconds: 5,
} as const;

/** The open streams of a stream server, counted in total and per reader. */
export class AgentRunStreamSlots {
  readonly #byReader = new Map<string, number>();
  #open = 0;
  readonly #max: number;
  readonly #maxPerReader: number;

  constructor(limits: { maxStreams?: number | undefined; maxStreamsPerReader?: number | undefined }) {
    this.#max = limits.maxStreams ?? AGENT_RUN_STREAM_LIMITS.maxStreams;
    this.#maxPerReader = limits.maxStreamsPerReader ?? AGENT_RUN_STREAM_LIMITS.maxStreamsPerReader;
  }

  /** Takes a slot for a stream of `reader`, or undefined when a cap is reached; the function gives it back (once). */
  take(reader: string): (() => void) | undefined {
    const own = this.#byReader.get(reader) ?? 0;
    if (this.#open >= this.#max || own >= this.#maxPerReader) return undefined;
    this.#open += 1;
    this.#byReader.set(reader, own + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#open -= 1;
      const left = (this.#byReader.get(reader) ?? 1) - 1;
      if (left > 0) this.#byReader.set(reader, left);
      else this.#byReader.delete(reader);
    };
  }
}
