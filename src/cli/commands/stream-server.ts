import { startAgentRunStreamServer } from '../../client/agent-run-stream-server';
import { AgentRunStreamServerConfigError } from '../../client/agent-run-stream-server-config-error';
import { STREAM_STORE_ENV } from '../../stores/streams/open-stream-store';
import { parseCommandArgs } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { httpServerArgs, httpServerOptionSpec, startCommandServer } from '../http-server-args';
import { openCommandStreamStore } from '../stream-store';

/** Environment variable holding the stream server's bearer token (not an argument: `ps` would show it). */
export const STREAM_SERVER_TOKEN_ENV = 'DURABLE_TOOLS_STREAM_TOKEN';

/** `durable-tools stream-server`: the live events of runs as server-sent events, until Ctrl-C. */
export const streamServerCommand: CliCommand = {
  name: 'stream-server',
  help: `usage: durable-tools stream-server [options]

Serves the live events of runs (model text as it is generated, tool-call starts, tool progress) as server-sent
events at GET /runs/<workflow id>/stream, for a browser's EventSource: each event has its offset as id, a reconnect
resumes after Last-Event-ID, and an "end" event follows once the run has ended. It reads the stream store the
workers write (${STREAM_STORE_ENV.store}, default sqlite at .data/streams.sqlite from this directory) and asks the
Temporal server (TEMPORAL_ADDRESS) whether a run has ended. It listens on 127.0.0.1 unless told otherwise, answers
only requests whose Host header names it, and refuses to listen beyond loopback without a token.

options:
  --port <n>            port (default 8235; 0 = a free port)
  --host <address>      interface to listen on (default 127.0.0.1; beyond loopback ${STREAM_SERVER_TOKEN_ENV} is required)
  --allow-host <h:p>    another accepted Host header (repeatable)
  --cors-origin <url>   browser origin allowed by CORS, e.g. http://localhost:3000 (repeatable; default none)
  -h, --help            this help

environment: ${STREAM_SERVER_TOKEN_ENV} (optional on loopback, required beyond: requests then send
  Authorization: Bearer <token> or ?access_token=<token>)

exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 it could not start (port taken, no stream store), 2 bad arguments`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, httpServerOptionSpec('cors-origin'));
    if (help) return (context.out(streamServerCommand.help), EXIT_CODES.ok);
    const listen = httpServerArgs(values, context.env, {
      defaultPort: 8235,
      originOption: 'cors-origin',
      defaultOrigins: [],
      tokenEnv: STREAM_SERVER_TOKEN_ENV,
    });
    const store = await openCommandStreamStore(context);
    if (!store) {
      context.err(`${STREAM_STORE_ENV.store} is off: there is no stream to serve.`);
      return EXIT_CODES.error;
    }
    const { client } = await connectForCommand(context);
    const server = await startCommandServer(
      context,
      'the stream server',
      { tokenEnv: STREAM_SERVER_TOKEN_ENV, invalidConfig: AgentRunStreamServerConfigError },
      () => startAgentRunStreamServer({ client, store, ...listen }),
    );
    if (!server) return EXIT_CODES.error;
    context.out(
      `Stream server at ${server.url}: GET ${server.url}/runs/<workflow id>/stream (server-sent events)` +
        `${listen.corsOrigins.length > 0 ? `; CORS ${listen.corsOrigins.join(', ')}` : ''}` +
        `${listen.token ? '; bearer token required' : ''}. Ctrl-C stops it.`,
    );
    await context.lifecycle.stopRequested;
    await context.lifecycle.stopAll();
    return EXIT_CODES.ok;
  },
};
