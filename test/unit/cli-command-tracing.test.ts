/**
 * Issue 50: the commands that change runs are traced when the OTEL_* variables ask for it, and cost nothing when
 * they do not: what they import statically reaches no OpenTelemetry package (the SDK side is loaded on demand).
 */
import { join } from 'node:path';
import { runtimeClosure } from '../support/module-graph';

const CLI = join(__dirname, '..', '..', 'src', 'cli');

test.each(['run', 'decide', 'cancel', 'fork', 'eval', 'chat'])(
  'the %s command loads no OpenTelemetry package until OTEL_* ask for traces',
  (command) => {
    const { packages, files } = runtimeClosure(join(CLI, 'commands', `${command}.ts`));
    expect([...packages].filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
    expect([...files].some((file) => file.endsWith('command-tracing-sdk.ts'))).toBe(false);
    expect([...files].some((file) => file.endsWith('command-tracing.ts'))).toBe(true);
  },
);
