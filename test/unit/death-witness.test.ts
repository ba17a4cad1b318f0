import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { DeathWitness } from '../../src/activities/death-witness';
import { currentHolderIdentity, processOwner, type HolderIdentity } from '../../src/activities/holder-identity';
import { FAKE_BOOT_ID, fakeProc, type FakeProcess } from '../support/fake-proc';

/**
 * Since when a worker knows a key's holder dead, so that a dead-holder takeover's drain counts from then
 * (docs/exactly-once.md, "Dead-holder takeover"): the /proc listing at the worker's start, and each holder found
 * dead since. Only what is provable shortens a drain; everything else waits it whole.
 */

const DRAIN = 1_000;
const SELF_PID = 100;
const SELF_START = 9_000;
const self: HolderIdentity = {
  bootId: FAKE_BOOT_ID,
  pidNamespace: '4026531836',
  uid: 1000,
  pid: SELF_PID,
  startTime: String(SELF_START),
};

/** An owner label of a claim by process `pid`, started at `startTime` ticks since boot. */
function ownerOf(pid: number, startTime: number, changes: Partial<HolderIdentity> = {}): string {
  const identity = { ...self, pid, startTime: String(startTime), ...changes };
  return `${processOwner('host', identity, pid)}/attempt-1`;
}

/** A witness made now over `processes` (this process added), with a clock the test moves. */
function witnessOver(processes: Record<number, FakeProcess>) {
  const clock = { now: 50_000 };
  const all: Record<number, FakeProcess> = { [SELF_PID]: { state: 'R', startTime: SELF_START }, ...processes };
  const witness = new DeathWitness(self, fakeProc(all, { pid: SELF_PID, uid: 1000 }), () => clock.now);
  return { witness, clock, processes: all };
}

describe('death witness', () => {
  it('counts the drain from the worker’s start for a holder older than the worker and gone at its start', () => {
    const { witness, clock } = witnessOver({});
    const dead = ownerOf(200, 5_000);

    clock.now += 600;

    expect(witness.isDead(dead)).toBe(true);
    expect(witness.drainLeftMs(dead, DRAIN)).toBe(400);
  });

  it('has no drain left once the drain has passed since the worker’s start', () => {
    const { witness, clock } = witnessOver({});
    const dead = ownerOf(200, 5_000);

    clock.now += 4_000;

    expect(witness.isDead(dead)).toBe(true);
    expect(witness.drainLeftMs(dead, DRAIN)).toBe(0);
  });

  it('gives the whole drain to a holder that was alive at the worker’s start and died since', () => {
    const { witness, clock, processes } = witnessOver({ 200: { state: 'S', startTime: 5_000 } });
    const holder = ownerOf(200, 5_000);
    delete processes[200];

    clock.now += 3_000;

    expect(witness.isDead(holder)).toBe(true);
    expect(witness.drainLeftMs(holder, DRAIN)).toBe(DRAIN);
  });

  it('counts the drain from the first time a holder was found dead, for every key it held', () => {
    const { witness, clock, processes } = witnessOver({ 200: { state: 'S', startTime: 5_000 } });
    delete processes[200];
    clock.now += 3_000;
    expect(witness.isDead(ownerOf(200, 5_000))).toBe(true);

    clock.now += 700;
    const sameProcessOtherAttempt = ownerOf(200, 5_000).replace('/attempt-1', '/attempt-4');

    expect(witness.isDead(sameProcessOtherAttempt)).toBe(true);
    expect(witness.drainLeftMs(sameProcessOtherAttempt, DRAIN)).toBe(300);
  });

  it('gives the whole drain to a holder younger than the worker, though the listing did not show it', () => {
    const { witness, clock } = witnessOver({});
    const younger = ownerOf(300, SELF_START + 50);

    clock.now += 2_000;

    expect(witness.isDead(younger)).toBe(true);
    expect(witness.drainLeftMs(younger, DRAIN)).toBe(DRAIN);
  });

  it('gives the whole drain to a holder whose pid another process had at the worker’s start', () => {
    const { witness, clock } = witnessOver({ 200: { state: 'S', startTime: 7_000 } });
    const pidReused = ownerOf(200, 5_000);

    clock.now += 2_000;

    expect(witness.isDead(pidReused)).toBe(true);
    expect(witness.drainLeftMs(pidReused, DRAIN)).toBe(DRAIN);
  });

  it('knows a holder dead at the worker’s start when the worker now has its pid', () => {
    const { witness, clock } = witnessOver({});
    const earlierSelf = ownerOf(SELF_PID, 5_000);

    clock.now += 250;

    expect(witness.isDead(earlierSelf)).toBe(true);
    expect(witness.drainLeftMs(earlierSelf, DRAIN)).toBe(750);
  });

  it('proves nothing by a listing of /proc that does not show the worker (another namespace’s /proc)', () => {
    const clock = { now: 0 };
    const proc = fakeProc({ 7: { state: 'R', startTime: 1 } }, { pid: SELF_PID, uid: 1000 });
    const witness = new DeathWitness(self, proc, () => clock.now);
    const dead = ownerOf(200, 5_000);

    clock.now += 2_000;

    expect(witness.drainLeftMs(dead, DRAIN)).toBe(DRAIN);
  });

  it('proves nothing about a holder of another boot, pid namespace or user', () => {
    const { witness, clock } = witnessOver({});
    clock.now += 2_000;

    for (const other of [{ bootId: '1b6b1c8e-3f43-4f1e-9a43-2c1c1b6f7d10' }, { pidNamespace: '1' }, { uid: 0 }]) {
      const foreign = ownerOf(200, 5_000, other);
      expect(witness.isDead(foreign)).toBe(false);
      expect(witness.drainLeftMs(foreign, DRAIN)).toBe(DRAIN);
    }
  });

  it('never finds a paused holder dead', () => {
    const { witness, clock } = witnessOver({ 200: { state: 'T', startTime: 5_000 } });
    clock.now += 2_000;

    expect(witness.isDead(ownerOf(200, 5_000))).toBe(false);
  });

  it('knows nothing without an identity of its own (not Linux)', () => {
    const clock = { now: 0 };
    const witness = new DeathWitness(undefined, fakeProc({}), () => clock.now);
    clock.now += 2_000;

    expect(witness.isDead(ownerOf(200, 5_000))).toBe(false);
    expect(witness.drainLeftMs(ownerOf(200, 5_000), DRAIN)).toBe(DRAIN);
  });
});

describe('death witness on this machine’s /proc', () => {
  const real = currentHolderIdentity();
  // Linux only: elsewhere a worker has no identity and no holder is ever provably dead.
  const onLinux = real ? it : it.skip;

  /** A child process and the owner label its claims would carry; `exit` once it has been killed and reaped. */
  async function holderProcess() {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const pid = child.pid!;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    const owner = `${processOwner('host', { ...real!, pid, startTime }, pid)}/attempt-1`;
    const exit = async () => {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    };
    return { owner, startTime, exit };
  }

  onLinux('counts the drain from the listing for a holder killed before a worker that started after it', async () => {
    const holder = await holderProcess();
    await holder.exit();
    // This process stands for a worker started after the holder (its start time later than the holder's).
    const self = { ...real!, startTime: String(BigInt(holder.startTime) + 1n) };
    const clock = { now: 0 };
    const witness = new DeathWitness(self, undefined, () => clock.now);

    clock.now += DRAIN;

    expect(witness.isDead(holder.owner)).toBe(true);
    expect(witness.drainLeftMs(holder.owner, DRAIN)).toBe(0);
  });

  onLinux('gives the whole drain to a holder that was alive at the listing and was killed after it', async () => {
    const holder = await holderProcess();
    const self = { ...real!, startTime: String(BigInt(holder.startTime) + 1n) };
    const clock = { now: 0 };
    const witness = new DeathWitness(self, undefined, () => clock.now);
    await holder.exit();

    clock.now += DRAIN;

    expect(witness.isDead(holder.owner)).toBe(true);
    expect(witness.drainLeftMs(holder.owner, DRAIN)).toBe(DRAIN);
  });
});
