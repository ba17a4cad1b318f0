/**
 * Worker hosts as Linux network namespaces, made by the code itself: each host is a namespace joined to the root
 * namespace by a veth pair, with loopback-range addresses only (no address outside 127.0.0.0/8 is ever assigned).
 *
 * Layout of one network (second octet `O` picked per run, unused by any route of the root namespace):
 * - `127.O.0.1`: the Temporal frontend (bound there, or a relay to it), in the root namespace;
 * - `127.O.0.2`: the services the hosts reach but a partition does not cut (the key store's PostgreSQL, the
 *   downstream ledger), through relays in the root namespace;
 * - host `k`: veth pair `dt<id>h<k>r` (root side, `127.O.k.1/29`) and `dt<id>h<k>n` (namespace side, `127.O.k.2/29`),
 *   namespace `dt-<pid>-<id>-h<k>`.
 *
 * What makes 127.x addresses travel over a veth (the kernel treats 127.0.0.0/8 as local and martian elsewhere):
 * - `net.ipv4.conf.<veth>.route_localnet=1` on both ends (only those two devices; never `all`);
 * - in the root namespace, the host's /29 as a unicast route in table `local`: without it the `local 127.0.0.0/8`
 *   route there sends the replies to the namespace back into the root namespace's own loopback;
 * - in the namespace, its /29 and the services' /24 as unicast routes in table `local` (more specific than the
 *   namespace's own `local 127.0.0.0/8` on `lo`, which stays up for the host's own loopback), and the rule that reads
 *   table `local` moved from preference 0 to 1000, so that the partition rules (preference 100) come before it.
 *
 * A partition cuts the host off from `127.O.0.1` only, silently in both directions, as a failed switch would: the
 * host's packets to the frontend go to a next hop whose (permanent) neighbour entry names a MAC address nobody has
 * (the root side drops the frames), and a rule at preference 100 blackholes what comes from the frontend. New
 * connections hang, open ones stall; after the heal both carry on (TCP retransmits). PostgreSQL and the ledger stay
 * reachable. No iptables or nftables is needed (this kernel has nf_tables, but no userland tool is installed).
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';

/** Addresses and names of the network. */
export const NETNS_SETTINGS = {
  /** Second octets a run picks from (one unused by the root namespace's routes). */
  octetRange: { min: 100, max: 199 },
  /** Prefix of every namespace a run makes: `dt-<pid of the run>-<id>-h<k>`. */
  namespacePrefix: 'dt-',
  /** Preference of the partition rules inside a namespace (before the `local` table, moved to 1000). */
  partitionRulePref: 100,
  localRulePref: 1000,
  /** Host number of the next hop nobody answers for (inside each host's /29). */
  sinkHost: 6,
} as const;

/** Whether this process may make network namespaces, and why not when it may not. */
export type NetnsSupport = { ok: true } | { ok: false; reason: string };

/**
 * Tries to make (and remove) a network namespace with a veth pair: the only reliable test of permission
 * (root, CAP_NET_ADMIN, a kernel with veth, `ip` installed).
 */
export function probeNetnsSupport(): NetnsSupport {
  const id = randomBytes(2).toString('hex');
  const name = `${NETNS_SETTINGS.namespacePrefix}${process.pid}-${id}-probe`;
  try {
    ip(['netns', 'add', name]);
    try {
      ip(['link', 'add', `dt${id}pr`, 'type', 'veth', 'peer', 'name', `dt${id}pn`]);
      ip(['link', 'set', `dt${id}pn`, 'netns', name]);
      ip(['-n', name, 'link', 'set', 'lo', 'up']);
    } finally {
      ipQuiet(['link', 'del', `dt${id}pr`]);
      ipQuiet(['netns', 'del', name]);
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `ip netns / veth are not permitted here: ${describe(error)}` };
  }
}

/** One worker host: a network namespace joined to the root namespace by a veth pair. */
export interface NetnsHost {
  /** 1-based host number. */
  index: number;
  /** The namespace's name. */
  namespace: string;
  /** The host's own address (namespace side of the veth). */
  address: string;
  /** Whether the host is cut off from the Temporal frontend now. */
  partitioned: boolean;
  /** Starts `command` inside the namespace (`ip netns exec`, which execs: the child's pid is the command's). */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Cuts the host off from the Temporal frontend (both directions, silently); the services stay reachable. */
  partition(): void;
  /** Undoes {@link partition}. */
  heal(): void;
  /** Pids of every process inside the namespace. */
  pids(): number[];
}

/**
 * The namespaces, veths, routes and rules of one run. `create()` picks free addresses; `addHost()` makes a host;
 * `destroy()` removes everything it made (an exit hook does too, and {@link sweepStaleNamespaces} removes what a
 * run that died left behind).
 */
export class NetnsNetwork {
  /** Where the Temporal frontend is reached from the hosts. */
  readonly temporalHost: string;
  /** Where PostgreSQL and the downstream are reached from the hosts (relays in the root namespace). */
  readonly servicesHost: string;
  readonly hosts: NetnsHost[] = [];
  private readonly removeAtExit = (): void => this.removeAll();
  private destroyed = false;

  private constructor(
    /** The run's id (4 hex digits), in every name it makes. */
    readonly id: string,
    /** The run's second octet. */
    readonly octet: number,
  ) {
    this.temporalHost = `127.${octet}.0.1`;
    this.servicesHost = `127.${octet}.0.2`;
    process.once('exit', this.removeAtExit);
  }

  /** A new network with an unused octet; namespaces left by dead runs are swept first. */
  static create(): NetnsNetwork {
    sweepStaleNamespaces();
    const used = new Set(
      [...ip(['-4', 'route', 'show', 'table', 'all']).matchAll(/\b127\.(\d+)\./g)].map((m) => Number(m[1])),
    );
    const { min, max } = NETNS_SETTINGS.octetRange;
    const free = Array.from({ length: max - min + 1 }, (_, i) => min + i).filter((o) => !used.has(o));
    if (free.length === 0) throw new Error(`No free 127.x octet in ${min}..${max} for a netns network.`);
    const octet = free[Math.floor(Math.random() * free.length)]!;
    return new NetnsNetwork(randomBytes(2).toString('hex'), octet);
  }

  /** Makes the next host: namespace, veth pair, addresses, routes, rules. */
  addHost(): NetnsHost {
    if (this.destroyed) throw new Error('This netns network was destroyed.');
    const k = this.hosts.length + 1;
    const ns = `${NETNS_SETTINGS.namespacePrefix}${process.pid}-${this.id}-h${k}`;
    const rootDev = `dt${this.id}h${k}r`;
    const nsDev = `dt${this.id}h${k}n`;
    const subnet = `127.${this.octet}.${k}.0/29`;
    const rootAddress = `127.${this.octet}.${k}.1`;
    const address = `127.${this.octet}.${k}.2`;
    const sink = `127.${this.octet}.${k}.${NETNS_SETTINGS.sinkHost}`;
    const services = `127.${this.octet}.0.0/24`;
    ip(['netns', 'add', ns]);
    const host: NetnsHost = {
      index: k,
      namespace: ns,
      address,
      partitioned: false,
      spawn: (command, args, options = {}) => spawn('ip', ['netns', 'exec', ns, command, ...args], options),
      partition: () => {
        if (host.partitioned) return;
        // Out: to a next hop nobody answers for (frames to an unknown MAC are dropped by the root side).
        ip(['-n', ns, 'neigh', 'replace', sink, 'lladdr', sinkMac(k), 'dev', nsDev, 'nud', 'permanent']);
        // With `src`: addresses in 127.0.0.0/8 get scope host, so the kernel would pick none by itself.
        ip([
          ...['-n', ns, 'route', 'replace', `${this.temporalHost}/32`, 'via', sink, 'dev', nsDev],
          ...['src', address, 'table', 'local'],
        ]);
        // In: whatever the frontend sends is dropped.
        ip([
          '-n',
          ns,
          'rule',
          'add',
          'pref',
          String(NETNS_SETTINGS.partitionRulePref),
          'from',
          this.temporalHost,
          'blackhole',
        ]);
        host.partitioned = true;
      },
      heal: () => {
        if (!host.partitioned) return;
        ipQuiet(['-n', ns, 'rule', 'del', 'pref', String(NETNS_SETTINGS.partitionRulePref)]);
        ipQuiet(['-n', ns, 'route', 'del', `${this.temporalHost}/32`, 'table', 'local']);
        host.partitioned = false;
      },
      pids: () =>
        ipQuiet(['netns', 'pids', ns])
          .split('\n')
          .map((line) => Number(line.trim()))
          .filter((pid) => Number.isInteger(pid) && pid > 0),
    };
    this.hosts.push(host);
    ip(['link', 'add', rootDev, 'type', 'veth', 'peer', 'name', nsDev]);
    ip(['link', 'set', nsDev, 'netns', ns]);
    // Root side.
    sysctl(undefined, `net.ipv4.conf.${rootDev}.route_localnet`, '1');
    ip(['addr', 'add', `${rootAddress}/29`, 'dev', rootDev]);
    ip(['link', 'set', rootDev, 'up']);
    ip(['route', 'replace', subnet, 'dev', rootDev, 'src', rootAddress, 'table', 'local']);
    // Namespace side.
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    sysctl(ns, `net.ipv4.conf.${nsDev}.route_localnet`, '1');
    ip(['-n', ns, 'addr', 'add', `${address}/29`, 'dev', nsDev]);
    ip(['-n', ns, 'link', 'set', nsDev, 'up']);
    ip(['-n', ns, 'route', 'replace', subnet, 'dev', nsDev, 'src', address, 'table', 'local']);
    ip(['-n', ns, 'route', 'replace', services, 'via', rootAddress, 'dev', nsDev, 'src', address, 'table', 'local']);
    ip(['-n', ns, 'rule', 'add', 'pref', String(NETNS_SETTINGS.localRulePref), 'lookup', 'local']);
    ip(['-n', ns, 'rule', 'del', 'pref', '0']);
    return host;
  }

  /** Removes every namespace and veth of this network (their routes and rules go with them). */
  destroy(): void {
    this.removeAll();
    process.off('exit', this.removeAtExit);
  }

  private removeAll(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const host of this.hosts) {
      for (const pid of host.pids()) killNow(pid);
      ipQuiet(['link', 'del', `dt${this.id}h${host.index}r`]);
      ipQuiet(['netns', 'del', host.namespace]);
    }
  }
}

/**
 * Removes the namespaces (and so their veths) that runs which are no longer alive left behind: their names carry
 * the pid of the run that made them.
 */
export function sweepStaleNamespaces(): string[] {
  const pattern = new RegExp(`^${NETNS_SETTINGS.namespacePrefix}(\\d+)-([0-9a-f]{4})-`);
  const removed: string[] = [];
  for (const line of ipQuiet(['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const match = pattern.exec(name);
    if (!match || processAlive(Number(match[1]))) continue;
    for (const pid of ipQuiet(['netns', 'pids', name]).split('\n').map(Number)) if (pid > 0) killNow(pid);
    ipQuiet(['netns', 'del', name]);
    removed.push(name);
  }
  return removed;
}

function sinkMac(k: number): string {
  return `02:de:ad:00:00:${(k % 256).toString(16).padStart(2, '0')}`;
}

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function ipQuiet(args: readonly string[]): string {
  try {
    return ip(args);
  } catch {
    return '';
  }
}

function sysctl(ns: string | undefined, key: string, value: string): void {
  const args = ['-qw', `${key}=${value}`];
  if (ns === undefined) execFileSync('sysctl', args, { stdio: 'ignore' });
  else ip(['netns', 'exec', ns, 'sysctl', ...args]);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGCONT (a stopped process cannot die until it runs) then SIGKILL; ignores a process already gone. */
export function killNow(pid: number): void {
  for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return;
    }
  }
}

function describe(error: unknown): string {
  const stderr = (error as { stderr?: unknown }).stderr;
  const text =
    typeof stderr === 'string' && stderr.trim()
      ? stderr.trim()
      : error instanceof Error
        ? error.message
        : String(error);
  return text.split('\n')[0] ?? text;
}
