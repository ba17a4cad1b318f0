import { startCodecServer } from '../../encryption/codec-server';
import { CodecServerConfigError } from '../../encryption/codec-server-config-error';
import { encryptionKeysFromEnv, ENCRYPTION_ENV } from '../../encryption/encryption-keys';
import { parseCommandArgs } from '../args';
import { EXIT_CODES, type CliCommand } from '../command';
import { httpServerArgs, httpServerOptionSpec, startCommandServer } from '../http-server-args';

/** Environment variable holding the codec server's bearer token (not an argument: `ps` would show it). */
export const CODEC_TOKEN_ENV = 'DURABLE_TOOLS_CODEC_TOKEN';

/** `durable-tools codec-server`: decrypts payloads for the web UI and the Temporal CLI, until Ctrl-C. */
export const codecServerCommand: CliCommand = {
  name: 'codec-server',
  help: `usage: durable-tools codec-server [options]

Serves Temporal's codec protocol (POST /encode, POST /decode) with the payload encryption keys, so the web UI
and \`temporal workflow show --codec-endpoint <url>\` show encrypted runs in clear while the history keeps
ciphertext. Start the local server with \`durable-tools server --ui-codec-endpoint <url>\` to wire its UI to it.
Whoever reaches this server reads the payloads: it listens on 127.0.0.1 unless told otherwise, answers only
requests whose Host header names it (DNS-rebinding protection), and refuses to listen beyond loopback without a
token.

options:
  --port <n>           port (default 8888; 0 = a free port)
  --host <address>     interface to listen on (default 127.0.0.1; beyond loopback ${CODEC_TOKEN_ENV} is required)
  --allow-host <h:p>   another accepted Host header, e.g. the name browsers reach it by (repeatable)
  --ui-origin <url>    browser origin allowed by CORS (repeatable; default http://127.0.0.1:8233 and
                       http://localhost:8233, the local web UI)
  -h, --help           this help

environment: ${ENCRYPTION_ENV.keys} or ${ENCRYPTION_ENV.keysFile} (required), ${CODEC_TOKEN_ENV} (optional on
  loopback, required beyond: requests must then send Authorization: Bearer <token>)

exit codes: 0 stopped by Ctrl-C/SIGTERM, 1 it could not start (no keys, port taken), 2 bad arguments`,
  async run(argv, context) {
    const { values, help } = parseCommandArgs(argv, httpServerOptionSpec('ui-origin'));
    if (help) return (context.out(codecServerCommand.help), EXIT_CODES.ok);
    const listen = httpServerArgs(values, context.env, {
      defaultPort: 8888,
      originOption: 'ui-origin',
      defaultOrigins: ['http://127.0.0.1:8233', 'http://localhost:8233'],
      tokenEnv: CODEC_TOKEN_ENV,
    });
    const keyring = encryptionKeysFromEnv(context.env);
    if (!keyring) {
      context.err(
        `No encryption keys: set ${ENCRYPTION_ENV.keys} or ${ENCRYPTION_ENV.keysFile} (docs/security.md, "Encryption").`,
      );
      return EXIT_CODES.error;
    }
    const server = await startCommandServer(
      context,
      'the codec server',
      { tokenEnv: CODEC_TOKEN_ENV, invalidConfig: CodecServerConfigError },
      () => startCodecServer({ keyring, ...listen }),
    );
    if (!server) return EXIT_CODES.error;
    context.out(
      `Codec server at ${server.url} (keys ${[...keyring.keys.keys()].join(', ')}; CORS ${listen.corsOrigins.join(', ')}` +
        `${listen.token ? '; bearer token required' : ''}). Ctrl-C stops it.`,
    );
    context.out(
      `Web UI: ${context.self} server --ui-codec-endpoint ${server.url}; CLI: temporal workflow show --codec-endpoint ${server.url} ...`,
    );
    await context.lifecycle.stopRequested;
    await context.lifecycle.stopAll();
    return EXIT_CODES.ok;
  },
};
