/**
 * `npm run bench:startup`: how long a worker process takes from its start until `createWorker` returned (the
 * part of a crash's recovery spent on our side before the worker polls), bundling at start (the cache off)
 * against the cached workflow bundle (`createWorker`'s default), each in fresh processes, interleaved.
 * Printed, never asserted; the last line: `startup: bundling X ms, cached Y ms (xR)`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevServer } from '../src/dev-server/dev-server';
import { LoadSampler, machineLine, median } from './bench-report';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

function startOnce(address: string, cacheDir: string | undefined): number {
  const node = process.env.npm_node_execpath || process.execPath;
  const out = execFileSync(node, ['--import', 'tsx', require.resolve('./worker-startup-child')], {
    env: { ...process.env, STARTUP_TEMPORAL_ADDRESS: address, STARTUP_BUNDLE_CACHE: cacheDir ?? '' },
    encoding: 'utf8',
  });
  const match = /startup-ms (\d+)/.exec(out);
  if (!match) throw new Error(`The worker printed no start-up time: ${out}`);
  return Number(match[1]);
}

async function main(): Promise<void> {
  const server = await startDevServer({ ui: false });
  const cacheDir = mkdtempSync(join(tmpdir(), 'durable-tools-bench-startup-'));
  const load = new LoadSampler();
  const bundling: number[] = [];
  const cached: number[] = [];
  try {
    const cold = startOnce(server.address, cacheDir); // fills the cache
    for (let round = 0; round < ROUNDS; round++) {
      bundling.push(startOnce(server.address, undefined));
      cached.push(startOnce(server.address, cacheDir));
      process.stderr.write(
        `round ${round + 1}/${ROUNDS}: bundling ${bundling.at(-1)} ms, cached ${cached.at(-1)} ms (load ${load.sample().toFixed(1)})\n`,
      );
    }
    console.log(`first start with an empty cache (bundles and writes it): ${cold} ms`);
  } finally {
    await server.stop();
    rmSync(cacheDir, { recursive: true, force: true });
  }
  console.log(`worker process start until createWorker returned, ${ROUNDS} interleaved rounds, median`);
  console.log(`bundling at start: ${median(bundling)} ms (${bundling.join(', ')})`);
  console.log(`cached bundle:     ${median(cached)} ms (${cached.join(', ')})`);
  console.log(`machine: ${machineLine()}; load average ${load.range()}`);
  console.log(
    `startup: bundling ${median(bundling)} ms, cached ${median(cached)} ms (x${(median(cached) / median(bundling)).toFixed(2)})`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
