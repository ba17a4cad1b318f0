import { ClientRequest, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { runInThisContext } from 'node:vm';
import { MemoryIdempotencyStore } from '../../src/stores/idempotency/memory-idempotency-store';
import {
  AttemptRequestGuard,
  installRequestLeaseGuard,
  uninstallRequestLeaseGuard,
} from '../../src/activities/request-lease-guard';
import { runInRequestLeaseScope, type RequestLeaseCheck } from '../../src/activities/request-lease-scope';
import { ToolCallLease } from '../../src/activities/tool-call-lease';
import { LeaseLostError } from '../../src/failures/lease-lost-error';
import { startRequestCounter, type RequestCounter } from '../support/request-counter';

const LOST_MESSAGE = 'lease ran out';

/** A lease check the test flips by hand. */
function switchableCheck(): RequestLeaseCheck & { lost: boolean } {
  const error = new LeaseLostError(LOST_MESSAGE, 'LEASE_EXPIRED');
  return {
    lost: false,
    check() {
      if (this.lost) throw error;
    },
  };
}

/** The status of a fetch, or the error it rejected with (of Node's realm, not the test's: see leaseLostOf). */
function fetchOutcome(url: string, init?: RequestInit): Promise<number | Error> {
  return fetch(url, init).then(
    async (response) => {
      await response.text();
      return response.status;
    },
    (error: Error) => error,
  );
}

/** A POST through node:http or node:https: the status, or the request's error. */
function postOutcome(url: string, options: RequestOptions & { chunks?: () => Promise<void> } = {}) {
  const send = url.startsWith('https') ? httpsRequest : httpRequest;
  return new Promise<number | Error>((resolve) => {
    const req = send(url, { method: 'POST', rejectUnauthorized: false, ...options } as RequestOptions, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', resolve);
    if (!options.chunks) return void req.end('{"effect":1}');
    req.write('{"effect":');
    void options.chunks().then(() => req.end('1}'));
  });
}

/**
 * The LeaseLostError behind a refusal: fetch wraps it as the cause of `TypeError: fetch failed`. Under
 * Jest, Node's fetch runs in another realm than the test, where the error is not `instanceof Error`, so
 * undici hands back a copy, `Error('LeaseLostError: <message>')` (every loss in these tests is a deadline).
 */
function leaseLostOf(outcome: number | Error): Pick<LeaseLostError, 'code'> | undefined {
  if (outcome instanceof LeaseLostError) return outcome;
  const cause = typeof outcome === 'object' ? (outcome.cause as Error | undefined) : undefined;
  if (cause instanceof LeaseLostError) return cause;
  if (cause?.message?.startsWith('LeaseLostError: ')) return { code: 'LEASE_EXPIRED' };
  return undefined;
}

let plain: RequestCounter;
let tls: RequestCounter;

beforeAll(async () => {
  installRequestLeaseGuard();
  plain = await startRequestCounter();
  tls = await startRequestCounter({ tls: true });
});

afterAll(async () => {
  await plain.close();
  await tls.close();
});

describe('the request lease guard inside a tool attempt', () => {
  test('global fetch is sent while the lease holds and refused with LeaseLostError once it is lost, unsent', async () => {
    const check = switchableCheck();
    const [before, after] = await runInRequestLeaseScope(check, async () => {
      const ok = await fetchOutcome(`${plain.url}/fetch-before`, { method: 'POST', body: '{}' });
      check.lost = true;
      return [ok, await fetchOutcome(`${plain.url}/fetch-after`, { method: 'POST', body: '{}' })];
    });
    expect(before).toBe(200);
    expect(leaseLostOf(after!)?.code).toBe('LEASE_EXPIRED');
    expect(plain.paths).toContain('/fetch-before');
    expect(plain.paths).not.toContain('/fetch-after');
  });

  test.each([
    ['node:http', () => plain],
    ['node:https', () => tls],
  ])(
    '%s is sent while the lease holds and refused with LeaseLostError once it is lost, unsent',
    async (_name, server) => {
      const { url, paths } = server();
      const check = switchableCheck();
      const [before, after] = await runInRequestLeaseScope(check, async () => {
        const ok = await postOutcome(`${url}/http-before`);
        check.lost = true;
        return [ok, await postOutcome(`${url}/http-after`)];
      });
      expect(before).toBe(200);
      expect(leaseLostOf(after!)?.code).toBe('LEASE_EXPIRED');
      expect(paths).toContain('/http-before');
      expect(paths).not.toContain('/http-after');
    },
  );

  test('a keep-alive socket already connected carries nothing once the lease is lost', async () => {
    const agent = new HttpsAgent({ keepAlive: true, rejectUnauthorized: false });
    const check = switchableCheck();
    try {
      const outcomes = await runInRequestLeaseScope(check, async () => {
        const warm = await postOutcome(`${tls.url}/keep-alive-warm`, { agent });
        check.lost = true;
        const flushed = await new Promise<number | Error>((resolve) => {
          const req = httpsRequest(`${tls.url}/keep-alive-flush`, { method: 'POST', agent }, () => resolve(0));
          req.on('error', resolve);
          req.flushHeaders();
        });
        return [warm, flushed, await postOutcome(`${tls.url}/keep-alive-after`, { agent })];
      });
      expect(outcomes[0]).toBe(200);
      expect(leaseLostOf(outcomes[1]!)).toBeDefined();
      expect(leaseLostOf(outcomes[2]!)).toBeDefined();
      expect(tls.paths).not.toContain('/keep-alive-flush');
      expect(tls.paths).not.toContain('/keep-alive-after');
    } finally {
      agent.destroy();
    }
  });

  test('requests from timers and promise chains the tool started are checked too', async () => {
    const check = switchableCheck();
    check.lost = true;
    const outcomes = await runInRequestLeaseScope(
      check,
      () =>
        new Promise<Array<number | Error>>((resolve) => {
          setTimeout(() => {
            void Promise.resolve()
              .then(() =>
                Promise.all([fetchOutcome(`${plain.url}/nested-fetch`), postOutcome(`${plain.url}/nested-http`)]),
              )
              .then(resolve);
          }, 1);
        }),
    );
    expect(outcomes.map((o) => leaseLostOf(o) !== undefined)).toEqual([true, true]);
    expect(plain.paths).not.toContain('/nested-fetch');
    expect(plain.paths).not.toContain('/nested-http');
  });

  test('an inner attempt scope governs its own requests, and the outer one applies again after it', async () => {
    const outer = switchableCheck();
    const inner = switchableCheck();
    outer.lost = true;
    const [innerOutcome, outerOutcome] = await runInRequestLeaseScope(outer, async () => {
      const fromInner = await runInRequestLeaseScope(inner, () => fetchOutcome(`${plain.url}/inner`));
      return [fromInner, await fetchOutcome(`${plain.url}/outer`)];
    });
    expect(innerOutcome).toBe(200);
    expect(leaseLostOf(outerOutcome!)).toBeDefined();
  });

  test('a request sent before the lease was lost is not torn down: its answer and its late body chunks go through', async () => {
    const held = await startRequestCounter({ holdAnswers: true });
    const check = switchableCheck();
    try {
      const [fetched, posted] = await runInRequestLeaseScope(check, () => {
        const inFlight = fetchOutcome(`${held.url}/in-flight-fetch`, { method: 'POST', body: '{}' });
        const streamed = postOutcome(`${held.url}/in-flight-http`, {
          chunks: async () => {
            await held.arrived('/in-flight-http');
            check.lost = true; // the rest of the body is written after the loss
          },
        });
        void Promise.all([held.arrived('/in-flight-fetch'), held.arrived('/in-flight-http')]).then(() => {
          check.lost = true;
          held.release();
        });
        return Promise.all([inFlight, streamed]);
      });
      expect([fetched, posted]).toEqual([200, 200]);
    } finally {
      await held.close();
    }
  });
});

describe('the request lease guard outside a tool attempt', () => {
  test('leaves requests alone, even while an attempt elsewhere has lost its lease', async () => {
    const check = switchableCheck();
    check.lost = true;
    let release!: () => void;
    const attempt = runInRequestLeaseScope(check, () => new Promise<void>((resolve) => (release = resolve)));
    const outcomes = await Promise.all([
      fetchOutcome(`${plain.url}/outside-fetch`),
      postOutcome(`${plain.url}/outside-http`),
    ]);
    release();
    await attempt;
    expect(outcomes).toEqual([200, 200]);
  });

  test('is installed once however often it is installed, and again after the global dispatcher was replaced', async () => {
    // The realm of Node's own fetch (Jest runs this file in a vm context of its own).
    const global = runInThisContext('globalThis') as Record<symbol, Record<symbol, unknown>>;
    const dispatcherSymbol = Symbol.for('undici.globalDispatcher.1');
    const wrappedSymbol = Symbol.for('durable-tools.leaseGuard.wrapped');
    const guarded = global[dispatcherSymbol]!;
    const send = ClientRequest.prototype.write;
    installRequestLeaseGuard();
    expect(global[dispatcherSymbol]).toBe(guarded);
    expect(ClientRequest.prototype.write).toBe(send);
    // As `setGlobalDispatcher(new Agent())` would: the next attempt wraps the dispatcher now in place.
    const replacement = guarded[wrappedSymbol] as Record<symbol, unknown>;
    global[dispatcherSymbol] = replacement;
    const check = switchableCheck();
    check.lost = true;
    const outcome = await new AttemptRequestGuard(unownedLease()).run(() =>
      runInRequestLeaseScope(check, () => fetchOutcome(`${plain.url}/rewrapped`)),
    );
    expect(leaseLostOf(outcome)).toBeDefined();
    expect(global[dispatcherSymbol]![wrappedSymbol]).toBe(replacement);
  });

  test('can be removed and installed again', async () => {
    const check = switchableCheck();
    check.lost = true;
    uninstallRequestLeaseGuard();
    const unguarded = await runInRequestLeaseScope(check, () =>
      Promise.all([fetchOutcome(`${plain.url}/unguarded-fetch`), postOutcome(`${plain.url}/unguarded-http`)]),
    );
    installRequestLeaseGuard();
    const guarded = await runInRequestLeaseScope(check, () =>
      Promise.all([fetchOutcome(`${plain.url}/reguarded-fetch`), postOutcome(`${plain.url}/reguarded-http`)]),
    );
    expect(unguarded).toEqual([200, 200]);
    expect(guarded.map((o) => leaseLostOf(o) !== undefined)).toEqual([true, true]);
  });
});

/** A lease that owns no key (a read-only tool's): its check never refuses. */
function unownedLease(): ToolCallLease {
  return new ToolCallLease({ key: 'k', leaseMs: 60_000, heartbeat: () => {}, log: console, now: () => 0 });
}

describe('the guard of one attempt, on its lease', () => {
  function ownedLease(clock: { mono: number }): ToolCallLease {
    // A minute's lease: no renewal comes due while the test runs; the injected clock jumps instead.
    const lease = new ToolCallLease({
      key: 'run-1/1',
      leaseMs: 60_000,
      heartbeat: () => {},
      log: console,
      now: () => clock.mono,
    });
    lease.owned(new MemoryIdempotencyStore(), 'token', 0, '1');
    return lease;
  }

  test('refuses from the last renewal plus the lease minus the safety margin on, and remembers the refusal', async () => {
    const clock = { mono: 0 };
    const lease = ownedLease(clock);
    const guard = new AttemptRequestGuard(lease);
    try {
      const outcomes = await guard.run(async () => {
        clock.mono = 39_999; // lease 60 s, margin 20 s: the local deadline is 40 s after the claim was sent
        const inTime = await fetchOutcome(`${plain.url}/deadline-before`);
        clock.mono = 40_000;
        return [inTime, await fetchOutcome(`${plain.url}/deadline-after`)];
      });
      expect(outcomes[0]).toBe(200);
      expect(leaseLostOf(outcomes[1]!)?.code).toBe('LEASE_EXPIRED');
      expect(guard.refused).toBe(lease.lost);
    } finally {
      lease.stop();
    }
  });

  test("refuses a fetch that carries the attempt's own signal and finds the loss first, without crashing the process", async () => {
    const clock = { mono: 0 };
    const lease = ownedLease(clock);
    const guard = new AttemptRequestGuard(lease);
    try {
      const outcome = await guard.run(async () => {
        clock.mono = 40_000; // as after a pause: the deadline passed and no timer of the lease has run yet
        return fetchOutcome(`${plain.url}/own-signal`, { method: 'POST', body: '{}', signal: lease.signal });
      });
      expect(outcome).toBeInstanceOf(Object);
      expect(typeof outcome).not.toBe('number');
      expect(lease.lost?.code).toBe('LEASE_EXPIRED');
      expect(lease.signal.aborted).toBe(true);
      expect(plain.paths).not.toContain('/own-signal');
    } finally {
      lease.stop();
    }
  });

  test('after the attempt ended, leaves its context alone, unless the attempt had lost its lease', async () => {
    const clock = { mono: 0 };
    const kept = ownedLease(clock);
    const lost = ownedLease(clock);
    const keptGuard = new AttemptRequestGuard(kept);
    const lostGuard = new AttemptRequestGuard(lost);
    let later!: () => void;
    const keptLater = keptGuard.run(() =>
      new Promise<void>((resolve) => (later = resolve)).then(() => fetchOutcome(`${plain.url}/ended-kept`)),
    );
    clock.mono = 40_000;
    expect(() => lost.assert()).toThrow(LeaseLostError);
    const lostLater = lostGuard.run(() => Promise.resolve().then(() => fetchOutcome(`${plain.url}/ended-lost`)));
    keptGuard.end();
    lostGuard.end();
    kept.stop();
    lost.stop();
    later();
    expect(await keptLater).toBe(200);
    expect(leaseLostOf(await lostLater)).toBeDefined();
  });
});
