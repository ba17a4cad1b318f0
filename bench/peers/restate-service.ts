/**
 * The Restate service process of `npm run bench:peers`: a Restate service `peerBench` whose handler journals
 * each step as a `ctx.run` that POSTs to the ledger under `<run id>/<step>`, served on a fixed port (so a
 * restarted process is the same deployment), and the ingress client that submits runs with the run id as the
 * idempotency key (a resubmission after a kill attaches to the same invocation). Runs on Node 20 with a
 * `Promise.withResolvers` polyfill.
 */
import './promise-with-resolvers';
import * as restate from '@restatedev/restate-sdk';
import * as clients from '@restatedev/restate-sdk-clients';
import { postEffect } from './peer-ledger';
import { serveParent, serviceEnv } from './service-protocol';

/** Settings of this service (from the bench). */
export interface RestateServiceConfig {
  endpointPort: number;
  ingressUrl: string;
}

async function main(): Promise<void> {
  const { ledgerUrl, steps, config } = serviceEnv<RestateServiceConfig>();
  const peerBench = restate.service({
    name: 'peerBench',
    handlers: {
      run: async (ctx: restate.Context, runId: string): Promise<number> => {
        for (let step = 1; step <= steps; step++) {
          await ctx.run(`step-${step}`, () => postEffect(ledgerUrl, `${runId}/${step}`));
        }
        return steps;
      },
    },
  });
  await restate.serve({ services: [peerBench], port: config.endpointPort });
  const ingress = clients.connect({ url: config.ingressUrl });
  const submit = (runId: string) =>
    ingress
      .serviceSendClient<typeof peerBench>({ name: 'peerBench' })
      .run(runId, clients.rpc.sendOpts({ idempotencyKey: runId }));
  const finish = async (runId: string, send: Awaited<ReturnType<typeof submit>>): Promise<void> => {
    const done = await ingress.result(send);
    if (done !== steps) throw new Error(`run ${runId} returned ${String(done)}`);
  };
  serveParent({
    async run(runId, started) {
      const send = await submit(runId);
      started();
      await finish(runId, send);
    },
    // The same idempotency key attaches to the invocation the killed process submitted.
    attach: async (runId) => finish(runId, await submit(runId)),
    close: async () => undefined,
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
