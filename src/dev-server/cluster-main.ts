import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveTemporalServer } from './cluster-build';
import { CLUSTER_DEFAULTS, startTemporalCluster } from './cluster';

/** Ports and places of `npm run cluster`: beside the dev server's 7233/8233, never on them. */
export const CLUSTER_COMMAND = {
  basePort: 7333,
  dataDir: join('.data', 'cluster'),
} as const;

const HELP = `usage: npm run cluster [-- options]        start a local Temporal cluster on PostgreSQL
       npm run install-cluster               only build the Temporal server (once per machine)

Builds the Temporal server from Go modules (cached outside the repository), sets up its databases on the local
PostgreSQL with Temporal's schema tool, starts the frontend, history, matching and worker services, each in its
own process, registers the namespace and the engine's search attributes, and runs until Ctrl-C.

options:
  --database NAME    database of the server's state (default ${CLUSTER_DEFAULTS.database}; visibility: NAME_visibility)
  --bind IP          address the services bind to (default ${CLUSTER_DEFAULTS.bindAddress})
  --base-port N      frontend gRPC port; history N+1, matching N+2, worker N+3, membership N+100.. (default ${CLUSTER_COMMAND.basePort})
  --data-dir DIR     generated configuration and service logs (default ${CLUSTER_COMMAND.dataDir})
  -h, --help         this help`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      database: { type: 'string' },
      bind: { type: 'string' },
      'base-port': { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return (console.log(HELP), 0);
  const log = (line: string) => console.error(line);
  if (positionals[0] === 'install') {
    const install = await resolveTemporalServer({ log });
    console.log(`${install.serverPath} (${install.source})\n${install.sqlToolPath}\n${install.schemaDir}`);
    return 0;
  }
  if (positionals.length > 0) return (console.error(`unknown argument ${positionals[0]}\n\n${HELP}`), 2);
  const basePort = values['base-port'] === undefined ? CLUSTER_COMMAND.basePort : Number(values['base-port']);
  if (!Number.isInteger(basePort) || basePort <= 0 || basePort > 65_000) {
    return (console.error(`--base-port must be a port number, got ${values['base-port']}`), 2);
  }
  // Ctrl-C, SIGTERM or a closed terminal, during the start or after it, stops the services in order.
  const stopRequested = new AbortController();
  const onSignal = () => stopRequested.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  const cluster = await startTemporalCluster({
    signal: stopRequested.signal,
    basePort,
    dataDir: values['data-dir'] ?? CLUSTER_COMMAND.dataDir,
    ...(values.database ? { database: values.database } : {}),
    ...(values.bind ? { bindAddress: values.bind } : {}),
    log,
  });
  const pids = cluster.pids();
  console.log(
    [
      `Temporal cluster running: frontend ${cluster.address}, namespace ${cluster.namespace}`,
      `  services: ${Object.entries(pids)
        .map(([name, pid]) => `${name} (pid ${pid})`)
        .join(', ')}`,
      `  logs: ${join(cluster.dataDir, 'logs')}`,
      `Point a worker or a client at it:`,
      `  TEMPORAL_ADDRESS=${cluster.address} npx durable-tools worker --tools ./tools.ts`,
      `  TEMPORAL_ADDRESS=${cluster.address} npm run dev`,
      `Ctrl-C stops the cluster (the databases keep its runs).`,
    ].join('\n'),
  );
  if (!stopRequested.signal.aborted) {
    await new Promise<void>((resolve) => stopRequested.signal.addEventListener('abort', () => resolve()));
  }
  log('durable-tools: stopping the Temporal cluster...');
  await cluster.stop();
  log('durable-tools: Temporal cluster stopped.');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  },
);
