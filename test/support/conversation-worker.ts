/**
 * A worker process for the conversation tests (test/integration/conversations.test.ts): the default settings of
 * `createWorker` with the conversation tools over the test ledger, run as `node --import tsx
 * test/support/conversation-worker.ts` so a test can SIGKILL it between two messages. Prints
 * {@link CONVERSATION_WORKER_READY} once polling; runs until killed.
 */
import { conversationTools } from './conversation-tools';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';

/** Environment variables the conversation worker reads. */
export const CONVERSATION_WORKER_ENV = workerProcessEnv('DT_CONVERSATION', { ledgerUrl: 'LEDGER_URL' });

/** The line the worker prints when it starts polling. */
export const CONVERSATION_WORKER_READY = 'conversation-worker ready';

/** This script, for `spawnTestWorkerProcess`. */
export const CONVERSATION_WORKER = {
  script: __filename,
  env: CONVERSATION_WORKER_ENV,
  ready: CONVERSATION_WORKER_READY,
};

if (require.main === module) {
  const env = CONVERSATION_WORKER_ENV;
  runWorkerProcess('conversation-worker', env, (required) => ({
    tools: conversationTools(required(env.ledgerUrl)),
  }));
}
