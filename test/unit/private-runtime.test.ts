import { Runtime } from '@temporalio/worker';
import { installPrivateRuntimeIfNone } from '../../src/telemetry/private-runtime';

/**
 * Without a runtime of the user's, createWorker installs Temporal's default one with the private logger: its
 * lines keep their attributes but never a task token. (This file owns its process's runtime.)
 */
test('the runtime createWorker installs when there is none writes lines without the task token', () => {
  expect(Runtime._instance).toBeUndefined();
  installPrivateRuntimeIfNone();
  const runtime = Runtime._instance;
  expect(runtime).toBeDefined();
  installPrivateRuntimeIfNone(); // a runtime exists now: kept
  expect(Runtime._instance).toBe(runtime);
  const written: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    Runtime.instance().logger.error('Error while processing ActivityTask.start', {
      taskToken: 'T0K3N',
      task: '{"taskToken":"T0K3N"}',
      activityType: 'book',
    });
  } finally {
    write.mockRestore();
  }
  expect(written.join('')).toContain('Error while processing ActivityTask.start');
  expect(written.join('')).toContain('book');
  expect(written.join('')).not.toContain('T0K3N');
});
