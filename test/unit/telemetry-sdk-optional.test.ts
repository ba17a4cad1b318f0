import { TelemetryConfigError } from '../../src/telemetry/telemetry-config-error';

/**
 * `@opentelemetry/sdk-node` is an optional peer dependency (an app that exports no telemetry does not install its
 * 35 packages): asked for telemetry without it, a worker says what to install.
 */
describe('OpenTelemetry SDK not installed', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    jest.resetModules();
  });

  test('telemetry asked for by OTEL_* fails with SDK_NOT_INSTALLED and the npm install command', async () => {
    jest.resetModules();
    jest.doMock('@opentelemetry/sdk-node', () => {
      throw Object.assign(new Error("Cannot find module '@opentelemetry/sdk-node'"), { code: 'MODULE_NOT_FOUND' });
    });
    process.env = { ...saved, OTEL_TRACES_EXPORTER: 'console' };
    const { startTelemetryFromEnv } = await import('../../src/telemetry/telemetry-from-env');
    const { TelemetryConfigError: LoadedError } = await import('../../src/telemetry/telemetry-config-error');

    const error: unknown = await startTelemetryFromEnv().then(
      () => undefined,
      (e: unknown) => e,
    );

    expect(error).toBeInstanceOf(LoadedError);
    expect(error).toMatchObject({ code: 'SDK_NOT_INSTALLED' });
    expect((error as TelemetryConfigError).message).toContain('npm install @opentelemetry/sdk-node@^0.57.2');
  });

  test('no telemetry asked for loads nothing, with or without the SDK', async () => {
    jest.resetModules();
    jest.doMock('@opentelemetry/sdk-node', () => {
      throw new Error('must not be loaded');
    });
    process.env = { ...saved };
    for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
    const { startTelemetryFromEnv } = await import('../../src/telemetry/telemetry-from-env');

    await expect(startTelemetryFromEnv()).resolves.toBeUndefined();
  });
});
