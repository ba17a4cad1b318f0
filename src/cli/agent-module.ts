import { isAbsolute, resolve } from 'node:path';
import type { AgentDefinition } from '../agents/define-agent';
import { enableTypeScriptFor } from '../runtime/typescript-tools-module';
import { CliUsageError, type CliContext } from './command';

function isAgent(value: unknown): value is AgentDefinition {
  return typeof value === 'object' && value !== null && (value as AgentDefinition).kind === 'durable-tools.agent';
}

/**
 * The agent a module exports (made with `defineAgent`): the export named `exportName`, else the default export,
 * else `agent`, else its only agent. A TypeScript module is loaded with the project's tsx. A usage error says
 * what the module exports instead.
 */
export async function loadAgentModule(
  path: string,
  context: CliContext,
  exportName?: string,
): Promise<AgentDefinition> {
  const absolute = isAbsolute(path) ? path : resolve(context.cwd, path);
  enableTypeScriptFor(absolute, context.cwd);
  let exports: Record<string, unknown>;
  try {
    exports = (await import(absolute)) as Record<string, unknown>;
  } catch (error) {
    throw new CliUsageError(`Cannot load ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const agents = Object.entries(exports).filter(([, value]) => isAgent(value));
  const chosen = exportName
    ? exports[exportName]
    : (agents.find(([name]) => name === 'default')?.[1] ??
      agents.find(([name]) => name === 'agent')?.[1] ??
      (agents.length === 1 ? agents[0]![1] : undefined));
  if (isAgent(chosen)) return chosen;
  const names = agents.map(([name]) => name);
  throw new CliUsageError(
    exportName
      ? `${path} exports no agent named ${exportName}${names.length ? ` (its agents: ${names.join(', ')})` : ''}.`
      : names.length > 1
        ? `${path} exports several agents (${names.join(', ')}): choose one with --agent <export>.`
        : `${path} exports no agent: export one made with defineAgent (as the default export or \`agent\`).`,
  );
}
