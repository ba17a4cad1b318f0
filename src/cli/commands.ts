/**
 * The subcommands of `durable-tools`, in the order `--help` lists them. Adding one is one line here and one
 * `CliCommand` object in its own module.
 */
import type { CliCommand } from './command';
import { cancelCommand } from './commands/cancel';
import { devCommand } from './commands/dev';
import { installCliCommand } from './commands/install-cli';
import { runCommand } from './commands/run';
import { runsCommand } from './commands/runs';
import { serverCommand } from './commands/server';
import { showCommand } from './commands/show';
import { workerCommand } from './commands/worker';

/** Every subcommand. */
export const COMMANDS: readonly CliCommand[] = [
  devCommand,
  serverCommand,
  workerCommand,
  runCommand,
  runsCommand,
  showCommand,
  cancelCommand,
  installCliCommand,
];
