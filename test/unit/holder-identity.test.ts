import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import {
  currentHolderIdentity,
  holderLiveness,
  holderTag,
  parseHolder,
  processOwner,
  type HolderIdentity,
  type ProcReader,
} from '../../src/activities/holder-identity';
import { FAKE_BOOT_ID, fakeProc } from '../support/fake-proc';

/**
 * The holder identity recorded with each claim and the check that its process is dead (docs/exactly-once.md,
 * "Dead-holder takeover"), on an injected `/proc`: dead only when provable, never for a paused process.
 */

const BOOT = FAKE_BOOT_ID;

const holder: HolderIdentity = { bootId: BOOT, pidNamespace: '4026531836', uid: 1000, pid: 200, startTime: '5000' };
const owner = `${processOwner('host', holder, 200)}/attempt-2`;

describe('holder identity', () => {
  it('reads boot id, pid namespace, uid, pid and start time from /proc', () => {
    const proc = fakeProc({ 100: { state: 'R', startTime: 4242 } });

    expect(currentHolderIdentity(proc)).toEqual({
      bootId: BOOT,
      pidNamespace: '4026531836',
      uid: 1000,
      pid: 100,
      startTime: '4242',
    });
  });

  it('has no identity when /proc shows this process under another pid (another namespace’s /proc)', () => {
    const proc = fakeProc({ 7: { state: 'R', startTime: 1 } }, { pid: 7, uid: 1000 });
    const shifted: ProcReader = { ...proc, self: () => ({ pid: 8, uid: 1000 }) };

    expect(currentHolderIdentity(shifted)).toBeUndefined();
  });

  it('has no identity where /proc cannot be read (not Linux)', () => {
    const proc: ProcReader = {
      ...fakeProc({}),
      readLink: () => {
        throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      },
    };

    expect(currentHolderIdentity(proc)).toBeUndefined();
  });

  it('round-trips through the owner label, which keeps host and pid in front', () => {
    expect(owner).toBe(`host:200/${holderTag(holder)}/attempt-2`);
    expect(parseHolder(owner)).toEqual(holder);
    expect(parseHolder('host:200/attempt-2')).toBeUndefined();
    expect(processOwner('host', undefined, 200)).toBe('host:200');
  });
});

describe('holder liveness', () => {
  const self = currentHolderIdentity(fakeProc({ 100: { state: 'S', startTime: 4242 } }))!;

  it('is dead when the holder’s pid no longer exists', () => {
    expect(holderLiveness(owner, self, fakeProc({}))).toBe('dead');
  });

  it('is dead when the pid belongs to another process now (another start time)', () => {
    expect(holderLiveness(owner, self, fakeProc({ 200: { state: 'S', startTime: 9999 } }))).toBe('dead');
  });

  it('is dead for a zombie with no thread left, alive for a zombie leader whose threads still run', () => {
    expect(holderLiveness(owner, self, fakeProc({ 200: { state: 'Z', startTime: 5000, tasks: 1 } }))).toBe('dead');
    expect(holderLiveness(owner, self, fakeProc({ 200: { state: 'Z', startTime: 5000, tasks: 3 } }))).toBe('alive');
  });

  it('is alive for a running, sleeping or paused (SIGSTOPped) holder', () => {
    for (const state of ['R', 'S', 'D', 'T', 't']) {
      expect(holderLiveness(owner, self, fakeProc({ 200: { state, startTime: 5000 } }))).toBe('alive');
    }
  });

  it('is alive for this very process, dead for an earlier process that had this pid', () => {
    const mine = processOwner('host', self, self.pid);
    const earlier = processOwner('host', { ...self, startTime: '1' }, self.pid);

    expect(holderLiveness(mine, self, fakeProc({}))).toBe('alive');
    expect(holderLiveness(earlier, self, fakeProc({}))).toBe('dead');
  });

  it('is unknown for another boot, pid namespace or user, an old-format owner, or no identity here', () => {
    const gone = fakeProc({});
    const other = (change: Partial<HolderIdentity>) => processOwner('host', { ...holder, ...change }, 200);

    expect(holderLiveness(other({ bootId: BOOT.replace('0b', 'ff') }), self, gone)).toBe('unknown');
    expect(holderLiveness(other({ pidNamespace: '4026532000' }), self, gone)).toBe('unknown');
    expect(holderLiveness(other({ uid: 0 }), self, gone)).toBe('unknown');
    expect(holderLiveness('host:200/attempt-2', self, gone)).toBe('unknown');
    expect(holderLiveness(owner, undefined, gone)).toBe('unknown');
  });

  it('is unknown when /proc answers with an error other than “no such process”', () => {
    const proc: ProcReader = {
      ...fakeProc({}),
      readFile: () => {
        throw Object.assign(new Error('denied'), { code: 'EACCES' });
      },
    };

    expect(holderLiveness(owner, self, proc)).toBe('unknown');
  });

  it('sees this real process alive and a pid that never existed dead, on this machine’s /proc', () => {
    const real = currentHolderIdentity();
    if (process.platform !== 'linux') {
      expect(real).toBeUndefined();
      return;
    }
    expect(holderLiveness(processOwner('h', real), real)).toBe('alive');
    const parent = { ...real!, pid: process.ppid, startTime: '1' };
    expect(holderLiveness(processOwner('h', parent, process.ppid), real)).toBe('dead');
  });

  it('sees a real SIGSTOPped process alive, and dead once it was SIGKILLed and reaped', async () => {
    const real = currentHolderIdentity();
    if (real === undefined) return; // not Linux: nothing is ever dead
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const pid = child.pid!;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    const childOwner = processOwner('h', { ...real, pid, startTime }, pid);

    child.kill('SIGSTOP');
    expect(holderLiveness(childOwner, real)).toBe('alive');
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    expect(holderLiveness(childOwner, real)).toBe('dead');
  });
});
