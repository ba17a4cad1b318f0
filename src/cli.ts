/**
 * The command line: `tsx src/cli.ts <command>` (npm scripts wrap it).
 *
 *   install-cli   find or build the Temporal CLI and print its path
 *   server        start a local dev server with its UI and keep it running
 *   dev           local dev server + UI + a worker with the demo tools (or DURABLE_TOOLS_TOOLS_MODULE)
 */
import { connectionSettingsFromEnv } from './connection-settings';
import { ensureLocalTemporal } from './dev-server/local-temporal';
import { resolveTemporalCli } from './dev-server/temporal-cli';
import { loadToolsModule, runWorkerProcess } from './worker';

const USAGE = `usage: durable-tools <install-cli | server | dev>
  install-cli  find or build the Temporal CLI (TEMPORAL_CLI_PATH, PATH, cache, go install) and print its path
  server       start a local Temporal dev server with its web UI (state in .data/) until Ctrl-C
  dev          server + web UI + a worker running the tools of DURABLE_TOOLS_TOOLS_MODULE (default: the demo)`;

async function main(argv: string[]): Promise<void> {
  const command = argv[0];
  switch (command) {
    case 'install-cli': {
      const cli = await resolveTemporalCli();
      console.log(`${cli.path} (${cli.source})`);
      return;
    }
    case 'server': {
      const temporal = await ensureLocalTemporal(connectionSettingsFromEnv());
      console.log(
        `Temporal server at ${temporal.address}${temporal.uiUrl ? `, web UI at ${temporal.uiUrl}` : ''}. Ctrl-C stops it.`,
      );
      await untilSignal();
      await temporal.stop();
      return;
    }
    case 'dev': {
      const settings = connectionSettingsFromEnv();
      const temporal = await ensureLocalTemporal(settings);
      const tools = await loadToolsModule();
      console.log(`Temporal server at ${temporal.address}${temporal.uiUrl ? `, web UI at ${temporal.uiUrl}` : ''}.`);
      try {
        await runWorkerProcess({ tools, settings: { address: temporal.address } });
      } finally {
        await temporal.stop();
      }
      return;
    }
    default:
      console.error(USAGE);
      process.exitCode = command === undefined || command === '--help' ? 0 : 2;
  }
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
