/**
 * The IPC between `npm run bench:peers` and a system's service process (one per system, so its CPU is its own).
 *
 * Parent → service: `{ type: 'run', runId }` starts run `runId` (10 durable steps; the service sends `started`
 * once the run is durably accepted, then `done` or `failed`); `{ type: 'attach', runId }` waits for a run an
 * earlier (killed) process started; `{ type: 'cpu' }`; `{ type: 'stop' }`.
 * Service → parent: `{ type: 'ready' }` once it serves, `started` / `done` / `failed` per run, and `cpu` with
 * this process's `process.cpuUsage()` (µs).
 */

/** Environment every service process reads. */
export const PEER_SERVICE_ENV = {
  ledgerUrl: 'PEERS_LEDGER_URL',
  steps: 'PEERS_STEPS',
  /** JSON of the system's own settings (addresses, ports, variant). */
  config: 'PEERS_CONFIG',
} as const;

/** Messages a service process receives. */
export type ParentMessage =
  { type: 'run'; runId: string } | { type: 'attach'; runId: string } | { type: 'cpu' } | { type: 'stop' };

/** Messages a service process sends. */
export type ServiceMessage =
  | { type: 'ready' }
  | { type: 'started'; runId: string }
  | { type: 'done'; runId: string }
  | { type: 'failed'; runId: string; message: string }
  | { type: 'cpu'; user: number; system: number };

/** What one system's service process implements. */
export interface PeerService {
  /** Starts run `runId`, calls `started` once it is durably accepted, resolves when all its steps are done. */
  run(runId: string, started: () => void): Promise<void>;
  /** Resolves when run `runId`, started by an earlier process, is done. */
  attach(runId: string): Promise<void>;
  close(): Promise<void>;
}

/** The settings every service process gets from the environment. */
export function serviceEnv<C>(): { ledgerUrl: string; steps: number; config: C } {
  const need = (name: string): string => {
    const value = process.env[name];
    if (!value) throw new Error(`bench:peers service: ${name} is not set.`);
    return value;
  };
  return {
    ledgerUrl: need(PEER_SERVICE_ENV.ledgerUrl),
    steps: Number(need(PEER_SERVICE_ENV.steps)),
    config: JSON.parse(need(PEER_SERVICE_ENV.config)) as C,
  };
}

/** Serves the parent's messages with `service` and sends `ready`. */
export function serveParent(service: PeerService): void {
  const send = (message: ServiceMessage): void => {
    process.send?.(message);
  };
  const settle = (runId: string, work: Promise<void>): void => {
    work.then(
      () => send({ type: 'done', runId }),
      (error: unknown) =>
        send({ type: 'failed', runId, message: error instanceof Error ? error.message : String(error) }),
    );
  };
  process.on('message', (message: ParentMessage) => {
    switch (message.type) {
      case 'run':
        return settle(
          message.runId,
          service.run(message.runId, () => send({ type: 'started', runId: message.runId })),
        );
      case 'attach':
        return settle(message.runId, service.attach(message.runId));
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return send({ type: 'cpu', user, system });
      }
      case 'stop':
        void service.close().finally(() => process.exit(0));
        return;
    }
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}
