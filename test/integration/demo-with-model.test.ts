/**
 * `npm start` with a model configured in the environment: the demo process runs the same trip with the
 * OpenAI-compatible model behind the local test server instead of its offline script.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tripScript } from '../../examples/trip-script';
import { scriptResponder, startFakeModelServer, type FakeModelServer } from '../support/fake-model-server';
import { testServer, uniqueTaskQueue } from '../support/temporal-test-env';

let server: FakeModelServer;
beforeAll(async () => {
  server = await startFakeModelServer();
  server.respond(scriptResponder(tripScript));
});
afterAll(async () => {
  await server.close();
});

/** Runs `examples/demo.ts` with extra environment; resolves with its exit code and output. */
function runDemo(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-tools-demo-'));
  const child = spawn(process.execPath, [require.resolve('tsx/cli'), 'examples/demo.ts'], {
    cwd: join(__dirname, '..', '..'),
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: testServer().address,
      TEMPORAL_NAMESPACE: testServer().namespace,
      DURABLE_TOOLS_TASK_QUEUE: uniqueTaskQueue('demo-model'),
      DURABLE_TOOLS_SQLITE_PATH: join(dir, 'keys.sqlite'),
      TEMPORAL_CONFIG_FILE: join(dir, 'no-temporal.toml'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

describe('npm start with a configured model', () => {
  test('DURABLE_TOOLS_MODEL=openai-compatible and a base URL run the same trip with that model', async () => {
    const { code, stdout, stderr } = await runDemo({
      DURABLE_TOOLS_MODEL: 'openai-compatible:trip-model',
      OPENAI_COMPATIBLE_BASE_URL: server.baseURL,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`Model: openai-compatible:trip-model at ${server.baseURL}`);
    expect(stdout).toMatch(/step 3 {2}→ book_flight \{"flightId":"FR2381","passengers":2\}/);
    expect(stdout).toMatch(/Run completed in .* after 6 model turns and 5 tool calls\./);
    expect(stdout).toContain('Answer: Your trip is booked: flight FR2381 for two, 3 nights in Berlin, paid 642 EUR.');
    expect(stdout).toMatch(/Tokens: \d+ in, \d+ out\./);
    expect(server.requests).toHaveLength(tripScript.length);
    expect(server.requests.every((request) => request.body.model === 'trip-model')).toBe(true);
  });
});
