#!/usr/bin/env node
/**
 * `durable-tools <command>`: the command line (package `bin`; `npx durable-tools`; the npm scripts of this
 * repository call it). `durable-tools --help` lists the commands; `durable-tools <command> --help` explains one.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CliUsageError, EXIT_CODES, type CliCommandEntry, type CliContext } from './command';
import { COMMANDS } from './commands';
import { Lifecycle } from './lifecycle';

/** The overview printed by `durable-tools --help`. */
export function overview(commands: readonly CliCommandEntry[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: durable-tools <command> [options]',
    '',
    'Durable tool calls for AI agents on Temporal.',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Every command takes --help. Connection settings come from TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,',
    "TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE / TEMPORAL_CONFIG_FILE (the Temporal CLI's TOML profiles)",
    'and DURABLE_TOOLS_TASK_QUEUE. With the OTEL_* variables asking for traces, the commands that change runs',
    "(run, chat, fork, eval, cancel, approve, reject) are traced into the runs' traces (docs/telemetry.md).",
  ].join('\n');
}

/** How to invoke this command line again, for hints: from an installed package, or inside this repository. */
function selfInvocation(): string {
  return __filename.endsWith('.ts') ? 'npm run -s durable-tools --' : 'npx durable-tools';
}

/** The version in the package.json above this module (src/cli in the repository, dist/src/cli when installed). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'durable-tools') return pkg.version ?? 'unknown';
    } catch {
      // not here
    }
  }
  return 'unknown';
}

/** Runs the command line with its arguments and resolves to the exit code, after stopping what it started. */
export async function runCli(argv: string[], commands: readonly CliCommandEntry[] = COMMANDS): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const target = name === 'help' && rest[0] ? commands.find((c) => c.name === rest[0]) : undefined;
    process.stdout.write(`${target ? (await target.load()).help : overview(commands)}\n`);
    return EXIT_CODES.ok;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write(`${packageVersion()}\n`);
    return EXIT_CODES.ok;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    process.stderr.write(`durable-tools: unknown command "${name}".\n\n${overview(commands)}\n`);
    return EXIT_CODES.usage;
  }
  const lifecycle = new Lifecycle().listen();
  const context: CliContext = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    interactive: process.stdout.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
    lifecycle,
    self: selfInvocation(),
  };
  try {
    const command = await entry.load();
    return await command.run(rest, context);
  } catch (error) {
    if (error instanceof CliUsageError) {
      context.err(`durable-tools ${name}: ${error.message}\nRun \`durable-tools ${name} --help\` for its usage.`);
      return EXIT_CODES.usage;
    }
    context.err(`durable-tools ${name}: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT_CODES.error;
  } finally {
    await lifecycle.stopAll();
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `durable-tools: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(EXIT_CODES.error);
    },
  );
}
