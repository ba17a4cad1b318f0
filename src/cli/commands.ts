/**
 * The subcommands of `durable-tools`, in the order `--help` lists them. Adding one is one entry here (name,
 * summary, and its module, loaded only when it runs) and a `CliCommand` object in its own module.
 */
import type { CliCommandEntry } from './command';

/** Every subcommand. */
export const COMMANDS: readonly CliCommandEntry[] = [
  {
    name: 'dev',
    summary: 'local Temporal server + web UI + a worker with the tools of a module, until Ctrl-C',
    load: async () => (await import('./commands/dev')).devCommand,
  },
  {
    name: 'server',
    summary: 'start a local Temporal dev server with its web UI, until Ctrl-C',
    load: async () => (await import('./commands/server')).serverCommand,
  },
  {
    name: 'worker',
    summary: 'run a worker with the tools of a module, against TEMPORAL_ADDRESS (default 127.0.0.1:7233)',
    load: async () => (await import('./commands/worker')).workerCommand,
  },
  {
    name: 'run',
    summary: 'start a run and show its steps live with a progress line until it ends (--detach: just start it)',
    load: async () => (await import('./commands/run')).runCommand,
  },
  {
    name: 'chat',
    summary: 'talk with an agent in a conversation: one message per line, answers streamed, approvals inline',
    load: async () => (await import('./commands/chat')).chatCommand,
  },
  {
    name: 'runs',
    summary: 'list runs with their status (newest first), filterable by status',
    load: async () => (await import('./commands/runs')).runsCommand,
  },
  {
    name: 'show',
    summary: 'show a run: goal, status, and its steps (tool, arguments, status, attempts, observation)',
    load: async () => (await import('./commands/show')).showCommand,
  },
  {
    name: 'diff',
    summary: 'compare two runs step by step (tool, arguments, outcome, tokens) and mark the first divergence',
    load: async () => (await import('./commands/diff')).diffCommand,
  },
  {
    name: 'fork',
    summary: 'start a new run from the recorded steps 1..n-1 of a finished run, going on from step n',
    load: async () => (await import('./commands/fork')).forkCommand,
  },
  {
    name: 'eval',
    summary: 'evaluate the current model and tools on recorded runs re-run dry; JUnit XML and JSON for CI',
    load: async () => (await import('./commands/eval')).evalCommand,
  },
  {
    name: 'cancel',
    summary: 'cancel a run: running tool calls are stopped, done steps compensated, newest first',
    load: async () => (await import('./commands/cancel')).cancelCommand,
  },
  {
    name: 'pending',
    summary: 'list the tool calls waiting for a human decision: run, step, tool, arguments, digest',
    load: async () => (await import('./commands/pending')).pendingCommand,
  },
  {
    name: 'approve',
    summary: 'print a waiting call (tool, arguments, digest), then approve it: the tool runs once',
    load: async () => (await import('./commands/decide')).approveCommand,
  },
  {
    name: 'reject',
    summary: 'print a waiting call, then reject it with --reason: the model is told, or the run aborts',
    load: async () => (await import('./commands/decide')).rejectCommand,
  },
  {
    name: 'audit',
    summary: "print the audit trail of gated calls (decision, who, why, outcome) from the worker's store",
    load: async () => (await import('./commands/audit')).auditCommand,
  },
  {
    name: 'replay',
    summary: 'replay recorded runs against the current workflow code: the determinism check before a deploy',
    load: async () => (await import('./commands/replay')).replayCommand,
  },
  {
    name: 'mcp',
    summary: 'serve the tools over MCP (stdio or Streamable HTTP), each call a durable workflow',
    load: async () => (await import('./commands/mcp')).mcpCommand,
  },
  {
    name: 'codec-server',
    summary: 'decrypt encrypted payloads for the web UI and the Temporal CLI (Temporal codec server), until Ctrl-C',
    load: async () => (await import('./commands/codec-server')).codecServerCommand,
  },
  {
    name: 'stream-server',
    summary: 'serve the live events of runs (model text, tool progress) as server-sent events, until Ctrl-C',
    load: async () => (await import('./commands/stream-server')).streamServerCommand,
  },
  {
    name: 'install-cli',
    summary: 'find or build the Temporal CLI and print its path',
    load: async () => (await import('./commands/install-cli')).installCliCommand,
  },
];
