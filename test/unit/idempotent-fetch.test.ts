import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { idempotentFetch, withIdempotencyKey } from '../../src/tools/idempotent-fetch';
import { LeaseLostError } from '../../src/failures/lease-lost-error';
import { startCountingHttpServer } from '../support/counting-http-server';

const ctx = { idempotencyKey: 'run-1/3', signal: new AbortController().signal, assertLease: () => {} };

describe('forwarding the idempotency key', () => {
  test('adds the Idempotency-Key header and the activity signal', () => {
    const init = withIdempotencyKey(ctx, { method: 'POST' });
    expect(new Headers(init.headers).get('Idempotency-Key')).toBe('run-1/3');
    expect(init.signal).toBe(ctx.signal);
    expect(init.method).toBe('POST');
  });

  test('keeps a key the caller set itself', () => {
    const init = withIdempotencyKey(ctx, { headers: { 'idempotency-key': 'mine' } });
    expect(new Headers(init.headers).get('Idempotency-Key')).toBe('mine');
  });

  test('adds the Fencing-Token header when the call has one', () => {
    const init = withIdempotencyKey({ ...ctx, fencingToken: '1800000000123' });
    expect(new Headers(init.headers).get('Fencing-Token')).toBe('1800000000123');
  });

  test('asserts the lease before building the request, so a call that lost it never sends', async () => {
    const server = await startCountingHttpServer(() => ({ status: 200, body: 'ok' }));
    const lost = {
      ...ctx,
      assertLease: () => {
        throw new LeaseLostError('lease ran out', 'LEASE_EXPIRED');
      },
    };
    try {
      expect(() => withIdempotencyKey(lost, { method: 'POST' })).toThrow(LeaseLostError);
      await expect(idempotentFetch(lost, `${server.url}/charges`, { method: 'POST' })).rejects.toThrow(LeaseLostError);
      expect(server.calls).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  test('refuses an options object built by hand without the lease check: it does not compile, and throws unsent', async () => {
    const server = await startCountingHttpServer(() => ({ status: 200, body: 'ok' }));
    const handBuilt = { idempotencyKey: 'run-1/3', signal: new AbortController().signal };
    try {
      // @ts-expect-error `assertLease` is required: pass the tool's ctx
      expect(() => withIdempotencyKey(handBuilt, { method: 'POST' })).toThrow(/assertLease/);
      // @ts-expect-error `assertLease` is required: pass the tool's ctx
      await expect(idempotentFetch(handBuilt, `${server.url}/charges`, { method: 'POST' })).rejects.toThrow(TypeError);
      expect(server.calls).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  test('sends the header on a real request', async () => {
    let seen: IncomingHttpHeaders = {};
    const server = createServer((req, res) => {
      seen = req.headers;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await idempotentFetch(ctx, `http://127.0.0.1:${port}/charges`, { method: 'POST', body: '{}' });
      expect(await response.text()).toBe('ok');
      expect(seen['idempotency-key']).toBe('run-1/3');
    } finally {
      server.close();
    }
  });
});
