/**
 * A worker process for the streaming crash test, run as `node --import tsx test/support/stream-worker.ts` so a
 * SIGKILL of its pid kills the worker mid-turn. Its model is the OpenAI provider against the fake model server;
 * it streams turns to a SQLite stream store file the test (and the next worker) opens too. Prints
 * {@link STREAM_WORKER_READY} once polling; runs until killed.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { aiSdkModelProvider } from '../../src/model/ai-sdk-model-provider';
import { SqliteStreamStore } from '../../src/stores/streams/sqlite-stream-store';
import { runWorkerProcess, workerProcessEnv } from './worker-process-main';
import { createRecordingTools } from './test-tools';

/** Environment variables the stream worker reads. */
export const STREAM_WORKER_ENV = workerProcessEnv('DT_STREAM', { modelUrl: 'MODEL_URL', streamsPath: 'STREAMS_DB' });

/** The line the worker prints when it starts polling. */
export const STREAM_WORKER_READY = 'stream-worker ready';

/** This script, for `spawnTestWorkerProcess`. */
export const STREAM_WORKER = { script: __filename, env: STREAM_WORKER_ENV, ready: STREAM_WORKER_READY };

if (require.main === module) {
  const env = STREAM_WORKER_ENV;
  runWorkerProcess('stream-worker', env, (required) => {
    const openai = createOpenAI({ baseURL: required(env.modelUrl), apiKey: 'test-key' });
    return {
      tools: createRecordingTools().tools,
      modelProviders: { openai: aiSdkModelProvider((id) => openai.chat(id ?? 'test-model')) },
      streams: new SqliteStreamStore({ path: required(env.streamsPath) }),
    };
  });
}
