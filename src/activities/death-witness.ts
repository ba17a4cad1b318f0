import { performance } from 'node:perf_hooks';
import {
  LINUX_PROC,
  checkableHolder,
  holderLiveness,
  holderTag,
  parseHolder,
  type HolderIdentity,
  type ProcReader,
} from './holder-identity';

/**
 * Since when this process knows that a key's holder is dead: the drain of a dead-holder takeover (what the dead
 * process handed to the kernel may still reach the downstream) is counted from that instant, not from the
 * takeover. A worker restarted after a crash has usually waited out most of the drain by the time the retried
 * call finds the dead worker's key (a workflow task or heartbeat timeout later), so that call reconciles at once
 * instead of after a full drain; a second crash during that wait then finds nothing left to drain either.
 *
 * Two witnesses, both sound because a dead process stays dead:
 * - the listing of `/proc` taken when the witness is made (a worker's start): a holder that started before this
 *   process and is not in that listing was dead by the time the listing was read;
 * - every holder found dead since (`isDead`), from the first time it was found so.
 * A holder about which neither says anything (it was alive, or its pid was taken, at the listing) gets the
 * whole drain from now.
 */
export class DeathWitness {
  private readonly listedAt: number;
  private readonly listed: ReadonlySet<number> | undefined;
  private readonly foundDead = new Map<string, number>();

  /**
   * Lists `/proc` now. `self` is this process's identity (undefined: no holder is ever provably dead, and the
   * witness knows nothing); `clock` is monotonic, in ms.
   */
  constructor(
    private readonly self: HolderIdentity | undefined,
    private readonly proc: ProcReader = LINUX_PROC,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.listed = self === undefined ? undefined : listPids(proc, self.pid);
    // Read after the listing: every process absent from it was gone at this instant at the latest.
    this.listedAt = this.clock();
  }

  /** Whether the process that wrote `owner` is provably dead; remembers when it was first found so. */
  isDead(owner: string): boolean {
    const dead = holderLiveness(owner, this.self, this.proc) === 'dead';
    const tag = dead ? holderTagOf(owner) : undefined;
    if (tag !== undefined && !this.foundDead.has(tag)) this.foundDead.set(tag, this.clock());
    return dead;
  }

  /**
   * How much of a `drainMs` drain is still to wait after taking over a key from `owner`, a holder found dead:
   * `drainMs` counted from the earliest instant this process knew it dead.
   */
  drainLeftMs(owner: string, drainMs: number): number {
    const since = this.deadSince(owner);
    return since === undefined ? drainMs : Math.max(0, Math.ceil(since + drainMs - this.clock()));
  }

  /** The earliest instant (this witness's clock) at which `owner`'s process is known to have been dead. */
  deadSince(owner: string): number | undefined {
    const tag = holderTagOf(owner);
    const found = tag === undefined ? undefined : this.foundDead.get(tag);
    const listed = this.deadWhenListed(owner) ? this.listedAt : undefined;
    if (found === undefined) return listed;
    return listed === undefined ? found : Math.min(found, listed);
  }

  /** Whether the `/proc` listing proves `owner`'s process gone: it started before this one and was not listed. */
  private deadWhenListed(owner: string): boolean {
    const { self, listed } = this;
    const holder = checkableHolder(owner, self);
    if (holder === undefined || self === undefined || listed === undefined) return false;
    if (!(BigInt(holder.startTime) < BigInt(self.startTime))) return false;
    // This process holds that pid now: the holder, older than it, had ended before it started.
    if (holder.pid === self.pid) return true;
    return !listed.has(holder.pid);
  }
}

/**
 * The pids `/proc` lists, or undefined when it cannot be read or does not list this process (`selfPid`): then
 * it is not this pid namespace's `/proc`, and the listing proves nothing.
 */
function listPids(proc: ProcReader, selfPid: number): ReadonlySet<number> | undefined {
  try {
    const entries = proc.readDir('/proc');
    if (entries === undefined) return undefined;
    const pids = new Set<number>();
    for (const entry of entries) if (/^\d+$/.test(entry)) pids.add(Number(entry));
    return pids.has(selfPid) ? pids : undefined;
  } catch {
    return undefined;
  }
}

/** The holder tag of an owner label (one process, whatever the attempt), or undefined. */
function holderTagOf(owner: string): string | undefined {
  const holder = parseHolder(owner);
  return holder === undefined ? undefined : holderTag(holder);
}
