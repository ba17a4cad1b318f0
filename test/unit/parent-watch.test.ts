/**
 * Which starter a command watches: npm/npx as its parent or behind npm's `sh -c`, nothing when started any
 * other way (even with npm's variables inherited), and what DURABLE_TOOLS_PARENT_WATCH says.
 */
import { planParentWatch, parentWatchMode, type ProcessInfo } from '../../src/cli/parent-watch';

const NPM_ENV = { npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js', npm_lifecycle_event: 'worker' };

/** A process table: pid → info. */
function table(processes: Record<number, ProcessInfo>): (pid: number) => ProcessInfo | undefined {
  return (pid) => processes[pid];
}

const npm: ProcessInfo = { ppid: 1, name: 'npm run worker', commandLine: 'npm run worker' };
const npx: ProcessInfo = { ppid: 1, name: 'npm exec durabl', commandLine: 'npm exec durable-tools worker' };
const shUnderNpm: ProcessInfo = { ppid: 10, name: 'sh', commandLine: 'sh -c node src/cli/main.ts worker' };
const loginShell: ProcessInfo = { ppid: 1, name: 'bash', commandLine: '-bash' };

test('a command whose parent is npm watches npm and expects npm to relay its signals', () => {
  expect(planParentWatch(NPM_ENV, 10, table({ 10: npm }))).toEqual({ npm: { pid: 10, parent: true }, watch: true });
});

test("a command behind npm's sh -c watches npm, which relays signals to the shell only", () => {
  expect(planParentWatch(NPM_ENV, 11, table({ 10: npx, 11: shUnderNpm }))).toEqual({
    npm: { pid: 10, parent: false },
    watch: true,
  });
});

test('a command started from a shell (or nohup) without npm is not watched', () => {
  expect(planParentWatch({}, 20, table({ 20: loginShell }))).toEqual({ watch: false });
});

test("npm's variables inherited by a script that started the command do not make it watched", () => {
  const script: ProcessInfo = { ppid: 1, name: 'sh', commandLine: 'sh ./start-worker.sh' };
  expect(planParentWatch(NPM_ENV, 30, table({ 30: script }))).toEqual({ watch: false });
});

test('DURABLE_TOOLS_PARENT_WATCH=off turns the watch off under npm; =on watches any parent', () => {
  expect(planParentWatch({ ...NPM_ENV, DURABLE_TOOLS_PARENT_WATCH: 'off' }, 10, table({ 10: npm })).watch).toBe(false);
  expect(planParentWatch({ DURABLE_TOOLS_PARENT_WATCH: 'on' }, 20, table({ 20: loginShell })).watch).toBe(true);
  expect(parentWatchMode({ DURABLE_TOOLS_PARENT_WATCH: 'maybe' })).toBe('auto');
});

test('without /proc, npm’s variables alone mean npm is the parent', () => {
  expect(planParentWatch(NPM_ENV, 40, () => undefined)).toEqual({ npm: { pid: 40, parent: true }, watch: true });
});
