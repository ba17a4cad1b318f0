import { startAgentRunStreamServer } from '../../client/agent-run-stream-server';
import { AgentRunStreamServerConfigError } from '../../client/agent-run-stream-server-config-error';
import { STREAM_STORE_ENV } from '../../stores/streams/open-stream-store';
import { AGENT_RUN_STREAM_LIMITS } from '../../client/agent-run-stream-slots';
import { parseCommandArgs, positiveIntOption } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';
import { connectForCommand } from '../connect';
import { httpServerArgs, httpServerOptionSpec, startCommandServer } from '../http-server-args';
import { openCommandStreamStore } from '../stream-store';
import { STREAM_READER_OPTION_SPEC, streamReadersOf } from '../stream-server-readers';

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

Who reads what: without a token everyone who reaches the port reads every run (loopback only). With
${STREAM_SERVER_TOKEN_ENV}, "Authorization: Bearer <token>" reads every run (your app's backend). With --mcp-server,
the callers of that MCP server (the same tokens) each read only the runs they started through it. A token is
accepted only in the Authorization header (?access_token= is refused: browsers' EventSource cannot send one, read
the stream with fetch or through your backend). A run a reader may not read is answered 404, like an unknown one.

options:
  --port <n>            port (default 8235; 0 = a free port)
  --host <address>      interface to listen on (default 127.0.0.1; beyond loopback a token or --mcp-server is required)
  --allow-host <h:p>    another accepted Host header (repeatable)
  --cors-origin <url>   browser origin allowed by CORS, e.g. http://localhost:3000 (repeatable; default none)
  --mcp-server <name>   the callers of the MCP server of this name (durable-tools mcp --name) read their own runs:
                        by DURABLE_TOOLS_MCP_TOKEN(S), or by OAuth with the two options below
  --oauth-issuer <url>  the MCP server's OAuth issuer (DURABLE_TOOLS_MCP_OAUTH_ISSUER)
  --oauth-audience <u>  the audience of its tokens: the MCP server's resource URL (DURABLE_TOOLS_MCP_OAUTH_AUDIENCE)
  --oauth-token-type T  the typ of its access tokens (default at+jwt; JWT for issuers that type them so)
  --max-streams <n>     open streams at most (default ${AGENT_RUN_STREAM_LIMITS.maxStreams}); past it 503 with Retry-After
  --max-streams-per-reader <n>
                        open streams of one reader at most (default ${AGENT_RUN_STREAM_LIMITS.maxStreamsPerReader})
  -h, --help            this help

environment: ${STREAM_SERVER_TOKEN_ENV} (the token that reads every run; optional on loopback, required beyond
  unless --mcp-server: requests then send Authorization: Bearer <token>)

exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 it could not start (port taken, no stream store), 2 bad arguments`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, {
      ...httpServerOptionSpec('cors-origin'),
      ...STREAM_READER_OPTION_SPEC,
      'max-streams': { type: 'string' },
      'max-streams-per-reader': { type: 'string' },
    });
    if (help) return (context.out(streamServerCommand.help), EXIT_CODES.ok);
    const listen = httpServerArgs(values, context.env, {
      defaultPort: 8235,
      originOption: 'cors-origin',
      defaultOrigins: [],
      tokenEnv: STREAM_SERVER_TOKEN_ENV,
    });
    const readers = streamReadersOf(values, context.env);
    const limits = {
      maxStreams: positiveIntOption(values, 'max-streams', AGENT_RUN_STREAM_LIMITS.maxStreams),
      maxStreamsPerReader: positiveIntOption(
        values,
        'max-streams-per-reader',
        AGENT_RUN_STREAM_LIMITS.maxStreamsPerReader,
      ),
    };
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
      () => startAgentRunStreamServer({ client, store, ...listen, ...limits, ...(readers ? { readers } : {}) }),
    );
    if (!server) return EXIT_CODES.error;
    context.out(
      `Stream server at ${server.url}: GET ${server.url}/runs/<workflow id>/stream (server-sent events)` +
        `${listen.corsOrigins.length > 0 ? `; CORS ${listen.corsOrigins.join(', ')}` : ''}` +
        `${listen.token || readers ? '; bearer token required' : '; no token: every run is readable from this machine'}` +
        `${readers ? `; callers of MCP server "${String(values['mcp-server'])}" read their own runs` : ''}. Ctrl-C stops it.`,
    );
    await context.lifecycle.stopRequested;
    await context.lifecycle.stopAll();
    return EXIT_CODES.ok;
  },
};
