import { parseArgs } from 'node:util';
import { CliUsageError } from './command';

/** Options of one subcommand, as `node:util` `parseArgs` takes them. */
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** Parsed values: strings for string options, booleans for flags. */
export type ParsedValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/**
 * Parses a subcommand's arguments strictly (an unknown option is a usage error, exit 2), with `--help`/`-h`
 * always accepted, and checks the number of positional arguments.
 */
export function parseCommandArgs(
  argv: string[],
  options: OptionSpec,
  positionals: { min: number; max: number; names?: string } = { min: 0, max: 0 },
): { values: ParsedValues; positionals: string[]; help: boolean } {
  let parsed: { values: ParsedValues; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }) as { values: ParsedValues; positionals: string[] };
  } catch (error) {
    throw new CliUsageError(error instanceof Error ? error.message : String(error));
  }
  const help = parsed.values.help === true;
  if (!help && parsed.positionals.length < positionals.min) {
    throw new CliUsageError(`Missing argument: ${positionals.names ?? 'an argument'}.`);
  }
  if (!help && parsed.positionals.length > positionals.max) {
    throw new CliUsageError(`Unexpected argument: ${parsed.positionals[positionals.max]}.`);
  }
  return { values: parsed.values, positionals: parsed.positionals, help };
}

/** A string option's value, or the default. */
export function stringOption(values: ParsedValues, name: string, fallback?: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : fallback;
}

/** A port option: an integer 0–65535 (0 = a free port). */
export function portOption(values: ParsedValues, name: string, fallback: number): number {
  const raw = stringOption(values, name);
  if (raw === undefined) return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new CliUsageError(`--${name} must be a port number from 0 to 65535 (0 = a free port), not "${raw}".`);
  }
  return port;
}

/** A positive integer option. */
export function positiveIntOption(values: ParsedValues, name: string, fallback: number): number {
  const raw = stringOption(values, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new CliUsageError(`--${name} must be a positive integer, not "${raw}".`);
  return n;
}
