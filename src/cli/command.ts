/**
 * The contract of a `durable-tools` subcommand. A subcommand is one object in `commands.ts`: its name, a
 * one-line summary for the overview, its help text and a function that returns the process's exit code.
 */
import type { Lifecycle } from './lifecycle';
import { DurableToolsError } from '../contract/durable-tools-error';

/** Exit codes of every subcommand. */
export const EXIT_CODES = {
  /** Done as asked (for `run`: the run completed). */
  ok: 0,
  /** Something went wrong (connection refused, a server that would not start, a run that does not exist, ...). */
  error: 1,
  /** The command line is wrong: unknown command or option, missing argument. */
  usage: 2,
  /** `run`: the run ended, but not `completed` (failed, compensated, compensation_failed, cancelled). */
  runNotCompleted: 3,
  /** Stopped by Ctrl-C (SIGINT) / SIGTERM, after stopping what it started. */
  sigint: 130,
  sigterm: 143,
} as const;

/** What a subcommand gets besides its arguments. */
export interface CliContext {
  /** Normal output (stdout). */
  out(line: string): void;
  /** Progress, warnings and errors (stderr). */
  err(line: string): void;
  /** Whether stdout is a terminal (progress lines are redrawn in place only then). */
  interactive: boolean;
  env: NodeJS.ProcessEnv;
  /** Directory that relative paths (tools module, database file) are resolved from. */
  cwd: string;
  /** What the command starts, stopped in reverse order on Ctrl-C / SIGTERM. */
  lifecycle: Lifecycle;
  /** How to invoke this command again in hints (`npx durable-tools` or `npm run -s durable-tools --`). */
  self: string;
}

/**
 * A subcommand as the command line registers it: a name, a summary for the overview, and its module, loaded
 * only when the subcommand runs (so `--help` and the other subcommands start fast).
 */
export interface CliCommandEntry {
  name: string;
  /** One line for `durable-tools --help`. */
  summary: string;
  load(): Promise<CliCommand>;
}

/** One subcommand, once loaded. */
export interface CliCommand {
  name: string;
  /** The whole `--help` text of the subcommand. */
  help: string;
  /** Runs the subcommand with the arguments after its name; resolves to the exit code. */
  run(argv: string[], context: CliContext): Promise<number>;
}

/** A mistake on the command line: printed with the subcommand's usage, exit code 2. */
export class CliUsageError extends DurableToolsError<'USAGE'> {
  override readonly name = 'CliUsageError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'USAGE', options);
  }
}
