import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import { privateRuntimeLogger, SECRET_LOG_ATTRIBUTES } from '../../src/telemetry/private-logs';
import { HttpStatusError } from '../../src/failures/tool-errors';

/** What never reaches a log line or an error message: task tokens, whole tasks, credentials in URLs. */

describe('the runtime logger of the command line', () => {
  test('drops task tokens and whole tasks from every line, at every level, and keeps the rest', () => {
    const written: LogEntry[] = [];
    const logger = privateRuntimeLogger(new DefaultLogger('TRACE', (entry) => written.push(entry)));
    const meta = { taskToken: 'T0K3N', base64TaskToken: 'T0K3N', task: '{"taskToken":"T0K3N"}', taskEncoded: 'x' };
    logger.trace('Starting activity', { ...meta, activityType: 'book' });
    logger.error('Error while processing ActivityTask.start', { ...meta, error: 'boom' });
    logger.log('INFO', 'core line', { ...meta, workflowId: 'w' });
    expect(written.map((entry) => [entry.level, entry.message, entry.meta])).toEqual([
      ['TRACE', 'Starting activity', { activityType: 'book' }],
      ['ERROR', 'Error while processing ActivityTask.start', { error: 'boom' }],
      ['INFO', 'core line', { workflowId: 'w' }],
    ]);
    expect(JSON.stringify(written.map((entry) => [entry.message, entry.meta]))).not.toContain('T0K3N');
    expect(SECRET_LOG_ATTRIBUTES).toContain('taskToken');
  });
});

describe('an HTTP error of a tool', () => {
  test('names the URL without its credentials, query or fragment, which stay on `url`', () => {
    const url = 'https://user:pa55@api.example/v1/rooms?key=S3CRET&x=1#frag';
    const error = new HttpStatusError(403, { statusText: 'Forbidden', url });
    expect(error.message).toBe('HTTP 403 Forbidden from https://api.example/v1/rooms?…');
    expect(error.url).toBe(url);
    expect(new HttpStatusError(500, { url: 'http://127.0.0.1:3000/book' }).message).toBe(
      'HTTP 500 from http://127.0.0.1:3000/book',
    );
    expect(new HttpStatusError(500, { url: '/relative?token=abc' }).message).toBe('HTTP 500 from /relative?…');
  });
});
