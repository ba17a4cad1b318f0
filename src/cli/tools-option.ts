import { isAbsolute, resolve } from 'node:path';
import { enableTypeScriptFor } from '../runtime/typescript-tools-module';
import { CliUsageError, type CliContext } from './command';
import { stringOption, type ParsedValues } from './args';

/** The environment variable naming the tools module (the same as `TOOLS_MODULE_ENV` of the worker module). */
const TOOLS_MODULE_ENV = 'DURABLE_TOOLS_TOOLS_MODULE';

/** The option spec of `--tools`. */
export const TOOLS_OPTION_SPEC = { tools: { type: 'string' } } as const;

/** `--tools` in a subcommand's help. */
export const TOOLS_OPTION_HELP = `  --tools <module> module exporting \`tools: Tool[]\`, relative to the working directory
                  (default: $${TOOLS_MODULE_ENV}); a .ts/.mts/.cts module is loaded with the tsx
                  of your project (npm i -D tsx)`;

/**
 * The tools module of a worker: `--tools`, else DURABLE_TOOLS_TOOLS_MODULE; a usage error when neither is
 * given. A TypeScript module gets its loader here (tsx from the project), so that a missing one is reported
 * before any server or worker starts.
 */
export function toolsModuleOption(values: ParsedValues, context: CliContext): string {
  const module = stringOption(values, 'tools') ?? (context.env[TOOLS_MODULE_ENV] || undefined);
  if (!module) {
    throw new CliUsageError(
      `Which tools should the worker run? Pass --tools <module> or set ${TOOLS_MODULE_ENV} (a module exporting \`tools\`, relative to ${context.cwd}).`,
    );
  }
  enableTypeScriptFor(isAbsolute(module) ? module : resolve(context.cwd, module), context.cwd);
  return module;
}
