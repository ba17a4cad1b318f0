import type { ScriptedTurn } from '../src/model/scripted-model';

/**
 * The `mcp` scenario of the demo: the worker also runs the tools of an MCP server, the reference
 * `@modelcontextprotocol/server-everything` started over stdio, and the agent uses them next to its own tools.
 */
export const demoMcpServers = {
  mcpServers: {
    everything: {
      command: process.execPath,
      args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
      trust: 'trusted' as const,
    },
  },
};

/** Searches flights (our tool), adds two fares with the MCP server's `get-sum`, with a type-drifted try first. */
export const mcpScript: ScriptedTurn[] = [
  {
    text: 'Looking for flights from Lisbon to Berlin.',
    toolCalls: [{ name: 'search_flights', arguments: '{"from":"LIS","to":"BER","date":"2026-12-18"}' }],
  },
  {
    text: 'Adding up two fares with the calculator of the MCP server.',
    toolCalls: [{ name: 'everything__get-sum', arguments: '{"a":"89","b":112}' }],
  },
  {
    text: '`a` must be a number; trying again.',
    toolCalls: [{ name: 'everything__get-sum', arguments: '{"a":89,"b":112}' }],
  },
  {
    text: 'A slow MCP tool, to see its progress as heartbeats.',
    toolCalls: [{ name: 'everything__trigger-long-running-operation', arguments: '{"duration":2,"steps":4}' }],
  },
  { text: 'Two seats on the two cheapest flights cost 201 EUR in total.', final: true },
];
