/**
 * `npm run bench:import`: what importing each package entry costs a fresh Node process — modules loaded and
 * wall time of the `require` — measured on the built package (`dist/`, run `npm run build` first), each entry
 * in its own process, rounds interleaved, medians reported. The ratio lines compare `durable-tools/client` and
 * the root entry (what a tools module imports) with `durable-tools/worker`, which loads the worker, the bundler,
 * SQLite and Postgres.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const ENTRIES = {
  'durable-tools': 'dist/index.js',
  'durable-tools/client': 'dist/entries/client.js',
  'durable-tools/worker': 'dist/worker.js',
  'durable-tools/testing': 'dist/entries/testing.js',
} as const;
const ROUNDS = Number(process.env.ROUNDS ?? 5);

/** Loads one file in a fresh process and reports modules loaded, the time taken and whether heavy code came in. */
function measure(file: string): { modules: number; ms: number; heavy: string[] } {
  const script = `
    const before = Object.keys(require.cache).length;
    const t = process.hrtime.bigint();
    require(${JSON.stringify(join(ROOT, file))});
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    const loaded = Object.keys(require.cache);
    const heavy = ['better-sqlite3', '/pg/', '@temporalio/worker', '@temporalio/core-bridge', 'webpack']
      .filter((name) => loaded.some((path) => path.includes('node_modules/' + name.replace(/^\\//, '')) || path.includes(name)));
    console.log(JSON.stringify({ modules: loaded.length - before, ms, heavy }));`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' })) as {
    modules: number;
    ms: number;
    heavy: string[];
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function main(): void {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('Build first: npm run build');
  const results: Record<string, { modules: number[]; ms: number[]; heavy: string[] }> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, file] of Object.entries(ENTRIES)) {
      const { modules, ms, heavy } = measure(file);
      const r = (results[name] ??= { modules: [], ms: [], heavy });
      r.modules.push(modules);
      r.ms.push(ms);
    }
  }
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(24)} modules ${String(median(r.modules)).padStart(4)}  import ${median(r.ms).toFixed(0).padStart(5)} ms  heavy: ${r.heavy.join(', ') || 'none'}`,
    );
  }
  const worker = results['durable-tools/worker']!;
  for (const name of ['durable-tools/client', 'durable-tools'] as const) {
    const entry = results[name]!;
    console.log(
      `import cost of ${name} vs durable-tools/worker: modules x${(median(entry.modules) / median(worker.modules)).toFixed(2)}, time x${(median(entry.ms) / median(worker.ms)).toFixed(2)}`,
    );
  }
}

main();
