import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectionOptions, connectionSettingsFromEnv } from '../../src/client/connection-settings';

/** A TOML config file like the Temporal CLI's `~/.config/temporalio/temporal.toml`. */
function configFile(toml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'durable-tools-envconfig-')), 'temporal.toml');
  writeFileSync(file, toml);
  return file;
}

const NO_FILE = { TEMPORAL_CONFIG_FILE: join(tmpdir(), 'durable-tools-no-such-config.toml') };

describe('connectionSettingsFromEnv', () => {
  test('uses the local defaults and marks the address as not configured when nothing is set', () => {
    expect(connectionSettingsFromEnv({ ...NO_FILE })).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
      taskQueue: 'durable-tools',
      addressFromEnv: false,
    });
  });

  test('reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and DURABLE_TOOLS_TASK_QUEUE', () => {
    const settings = connectionSettingsFromEnv({
      ...NO_FILE,
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_NAMESPACE: 'agents',
      DURABLE_TOOLS_TASK_QUEUE: 'tools-eu',
    });
    expect(settings).toMatchObject({
      address: 'temporal.internal:7233',
      namespace: 'agents',
      taskQueue: 'tools-eu',
      addressFromEnv: true,
    });
  });

  test('treats an empty variable as unset', () => {
    expect(connectionSettingsFromEnv({ ...NO_FILE, TEMPORAL_ADDRESS: '' })).toMatchObject({
      address: '127.0.0.1:7233',
      addressFromEnv: false,
    });
  });

  test('an API key implies TLS', () => {
    const settings = connectionSettingsFromEnv({ ...NO_FILE, TEMPORAL_API_KEY: 'key-1' });
    expect(settings.apiKey).toBe('key-1');
    expect(settings.tls).toBe(true);
  });

  test('TEMPORAL_TLS=true enables TLS without an API key', () => {
    expect(connectionSettingsFromEnv({ ...NO_FILE, TEMPORAL_TLS: 'true' }).tls).toBeTruthy();
  });

  test('reads the active profile of a TOML config file, as the Temporal CLI does', () => {
    const file = configFile(
      [
        '[profile.default]',
        'address = "default.example:7233"',
        '',
        '[profile.prod]',
        'address = "prod.tmprl.cloud:7233"',
        'namespace = "prod.acct"',
        'api_key = "prod-key"',
        '[profile.prod.grpc_meta]',
        'team = "agents"',
      ].join('\n'),
    );
    const settings = connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' });
    expect(settings).toMatchObject({
      address: 'prod.tmprl.cloud:7233',
      namespace: 'prod.acct',
      apiKey: 'prod-key',
      tls: true,
      addressFromEnv: true,
      metadata: { team: 'agents' },
    });
  });

  test('environment variables override the profile', () => {
    const file = configFile('[profile.default]\naddress = "file.example:7233"\nnamespace = "from-file"\n');
    const settings = connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_NAMESPACE: 'from-env' });
    expect(settings).toMatchObject({ address: 'file.example:7233', namespace: 'from-env' });
  });

  test('loads mTLS client certificates from the TEMPORAL_TLS_* variables', () => {
    const settings = connectionSettingsFromEnv({
      ...NO_FILE,
      TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT',
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'KEY',
      TEMPORAL_TLS_SERVER_NAME: 'tls.example',
    });
    expect(settings.tls).toMatchObject({
      serverNameOverride: 'tls.example',
      clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
    });
  });

  test('an unknown profile is a clear error', () => {
    const file = configFile('[profile.default]\naddress = "a:1"\n');
    expect(() => connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' })).toThrow(
      /Profile 'nope' not found/,
    );
  });
});

describe('connectionOptions', () => {
  test('passes address, TLS, API key and metadata to Connection.connect', () => {
    expect(connectionOptions({ address: 'a:1', tls: true, apiKey: 'k', metadata: { team: 'agents' } })).toEqual({
      address: 'a:1',
      tls: true,
      apiKey: 'k',
      metadata: { team: 'agents' },
    });
    expect(connectionOptions({ address: 'a:1' })).toEqual({ address: 'a:1' });
  });
});
