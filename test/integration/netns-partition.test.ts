import { createServer, type Server } from 'node:net';
import { runClusterChaos, formatClusterChaosResult, CLUSTER_CHAOS_RESULT_PATTERN } from '../support/netns-chaos-run';
import { NetnsNetwork, probeNetnsSupport, type NetnsHost } from '../support/netns-network';
import { startTcpRelay, type TcpRelay } from '../support/netns-relay';
import { testServer } from '../support/temporal-test-env';

/**
 * Issue 49: worker hosts in network namespaces (test/support/netns-network.ts), each with its own worker process and
 * the PostgreSQL key store, and one of them cut off from the Temporal server while one of its tool calls is at the
 * downstream, then healed. The Temporal server is the test run's dev server, reached from the hosts through a relay
 * on the network's Temporal address; `npm run chaos -- --topology cluster` runs the same on a Temporal cluster, with
 * the other modes. Skipped, with the reason in its name, only where this process may not make network namespaces.
 */
const support = probeNetnsSupport();
const describeWithNetns = support.ok ? describe : describe.skip;
const title = support.ok
  ? 'worker hosts in network namespaces'
  : `worker hosts in network namespaces (skipped: ${support.reason})`;

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

describeWithNetns(title, () => {
  let network: NetnsNetwork;
  let temporalRelay: TcpRelay;

  beforeAll(async () => {
    network = NetnsNetwork.create();
    const port = Number(testServer().address.split(':').pop());
    temporalRelay = await startTcpRelay({ host: network.temporalHost, port: 0 }, { host: '127.0.0.1', port });
  });

  afterAll(async () => {
    await temporalRelay?.close();
    network?.destroy();
  });

  test('a partitioned host still reaches the services but not the Temporal frontend, and reaches it again after the heal', async () => {
    const services = await listen(network.servicesHost);
    const frontend = await listen(network.temporalHost);
    try {
      const host = network.addHost();
      host.partition();
      // Waits (no upper bound) until the services answer, then gives the frontend 1.5 s more to answer.
      const during = await probeFrom(network, host, services.port, frontend.port);
      host.heal();
      const after = await probeFrom(network, host, services.port, frontend.port);

      expect(during).toEqual({ services: true, frontend: false });
      expect(after).toEqual({ services: true, frontend: true });
    } finally {
      services.server.close();
      frontend.server.close();
    }
  }, 120_000);

  test('a host cut off from Temporal while its tool call is at the downstream, then healed: one effect per key, every run finished', async () => {
    const { namespace, bundlePath } = testServer();
    const result = await runClusterChaos({
      mode: 'partition',
      network,
      temporal: { hostAddress: temporalRelay.address, clientAddress: testServer().address, namespace, bundlePath },
      hosts: 2,
      runs: 8,
      concurrency: 4,
      events: 2,
      failFraction: 0.3,
      seed: 49,
      log,
    });
    const line = formatClusterChaosResult(result);
    log(`${line}; statuses ${JSON.stringify(result.statuses)}; events ${JSON.stringify(result.eventLog)}`);

    expect(result.problems).toEqual([]);
    expect(result.events).toBe(2);
    // Each partition landed while a call of the cut-off host was at the ledger.
    for (const event of result.eventLog) expect(event).toMatch(/cut off from Temporal .* at the ledger, then healed$/);
    expect(result.workerDeaths).toBe(0);
    expect(CLUSTER_CHAOS_RESULT_PATTERN.exec(line)?.slice(1)).toEqual(['0', '0', '0']);
  }, 900_000); // two worker processes start on a loaded machine, and each partition lasts 5–9 s
});

/** A TCP server on `host` (a free port) that accepts and closes. */
async function listen(host: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return { server, port: (server.address() as { port: number }).port };
}

/** From inside the host: whether the services' and the frontend's ports accept a connection. */
async function probeFrom(
  network: NetnsNetwork,
  host: NetnsHost,
  servicesPort: number,
  frontendPort: number,
): Promise<{ services: boolean; frontend: boolean }> {
  const script = `
    const net = require('node:net');
    const seen = { services: false, frontend: false };
    const tryConnect = (name, host, port) => {
      const socket = net.connect(port, host, () => { seen[name] = true; socket.destroy(); if (name === 'services') setTimeout(done, 1500); });
      socket.on('error', () => { if (name === 'services') setTimeout(() => tryConnect(name, host, port), 100); });
    };
    const done = () => { process.stdout.write(JSON.stringify(seen)); process.exit(0); };
    tryConnect('services', ${JSON.stringify(network.servicesHost)}, ${servicesPort});
    tryConnect('frontend', ${JSON.stringify(network.temporalHost)}, ${frontendPort});
  `;
  const child = host.spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return JSON.parse(output) as { services: boolean; frontend: boolean };
}
