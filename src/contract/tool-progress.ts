/** The latest progress a running tool call reported with `ctx.progress(percent, message)`. Pure data. */
export interface ToolProgress {
  /** From 0 to 100. */
  percent: number;
  /** A short message (at most 200 characters). */
  message?: string;
  /** When the tool reported it (ISO 8601, the worker's clock). */
  at: string;
}

/** Longest progress message kept. */
export const PROGRESS_MESSAGE_MAX_CHARS = 200;
