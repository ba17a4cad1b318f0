import type { ProcReader } from '../../src/activities/holder-identity';

/** The boot id of the fake `/proc`. */
export const FAKE_BOOT_ID = '0b6b1c8e-3f43-4f1e-9a43-2c1c1b6f7d10';
/** The pid namespace link of the fake `/proc`. */
export const FAKE_PID_NAMESPACE = 'pid:[4026531836]';

/** A process of the fake `/proc`: its state (`R`, `S`, `T`, `Z`...), start time in ticks and thread count. */
export interface FakeProcess {
  state: string;
  startTime: number;
  tasks?: number;
}

/** A `/proc/<pid>/stat` line: field 3 the state, field 22 the start time; the name has a space and a paren. */
export function statLine(pid: number, state: string, startTime: number): string {
  const middle = Array.from({ length: 18 }, (_, i) => String(i)).join(' '); // fields 4..21
  return `${pid} (node (worker) x) ${state} ${middle} ${startTime} 0 0\n`;
}

/**
 * A `/proc` showing `processes` (by pid; change the record to make one die or start) to a process `self`:
 * boot id, pid namespace, each `<pid>/stat`, `<pid>/task` and the listing of `/proc` itself.
 */
export function fakeProc(processes: Record<number, FakeProcess>, self = { pid: 100, uid: 1000 }): ProcReader {
  return {
    readFile: (path) => {
      if (path === '/proc/sys/kernel/random/boot_id') return `${FAKE_BOOT_ID}\n`;
      const pid = path === '/proc/self/stat' ? self.pid : Number(/^\/proc\/(\d+)\/stat$/.exec(path)?.[1]);
      const process = processes[pid];
      return process && statLine(pid, process.state, process.startTime);
    },
    readLink: () => FAKE_PID_NAMESPACE,
    readDir: (path) => {
      if (path === '/proc') return ['self', 'sys', ...Object.keys(processes)];
      const process = processes[Number(/^\/proc\/(\d+)\/task$/.exec(path)?.[1])];
      return process && Array.from({ length: process.tasks ?? 1 }, (_, i) => String(i));
    },
    self: () => self,
  };
}
