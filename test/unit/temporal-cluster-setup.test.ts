import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findCachedTemporalServer,
  resolveTemporalServer,
  temporalServerCacheDir,
  TEMPORAL_SERVER,
} from '../../src/dev-server/cluster-build';
import {
  CLUSTER_SERVICES,
  clusterConfigYaml,
  clusterDynamicConfig,
  clusterDynamicConfigYaml,
  type ClusterConfigSettings,
} from '../../src/dev-server/cluster-config';
import { TUNED_DEV_SERVER_CONFIG } from '../../src/dev-server/tuned-dev-server-config';

const settings: ClusterConfigSettings = {
  bindAddress: '127.0.0.9',
  ports: {
    frontend: { grpc: 21001, membership: 21101 },
    history: { grpc: 21002, membership: 21102 },
    matching: { grpc: 21003, membership: 21103 },
    worker: { grpc: 21004, membership: 21104 },
  },
  frontendHttpPort: 21010,
  postgres: { host: '127.0.0.1', port: 5432, user: 'postgres' },
  database: 'temporal_x',
  visibilityDatabase: 'temporal_x_visibility',
  numHistoryShards: 4,
  dynamicConfigFile: '/tmp/x/dynamicconfig.yaml',
};

describe('the cluster configuration file', () => {
  const yaml = clusterConfigYaml(settings);

  test('binds every service to the bind address with its own gRPC and membership ports', () => {
    for (const name of CLUSTER_SERVICES) {
      const { grpc, membership } = settings.ports[name];
      expect(yaml).toContain(
        `  ${name}:\n    rpc:\n      grpcPort: ${grpc}\n      membershipPort: ${membership}\n      bindOnIP: "127.0.0.9"`,
      );
    }
    expect(yaml).toContain('broadcastAddress: "127.0.0.9"');
    expect(yaml).toContain('httpPort: 21010');
  });

  test('keeps state and visibility in two PostgreSQL databases', () => {
    expect(yaml).toContain('defaultStore: postgres-default\n  visibilityStore: postgres-visibility');
    expect(yaml).toContain('databaseName: "temporal_x"');
    expect(yaml).toContain('databaseName: "temporal_x_visibility"');
    expect(yaml.match(/pluginName: "postgres12"/g)).toHaveLength(2);
    expect(yaml).toContain('connectAddr: "127.0.0.1:5432"');
  });

  test('names the frontend as the cluster address and the system worker’s client', () => {
    expect(yaml).toContain('rpcAddress: "127.0.0.9:21001"');
    expect(yaml).toContain('publicClient:\n  hostPort: "127.0.0.9:21001"');
  });

  test('opens no metrics or pprof listener (no port besides the chosen ones)', () => {
    expect(yaml).not.toMatch(/metrics|pprof/);
  });
});

describe('the cluster dynamic config', () => {
  test('is the dev server tuning plus the CLI dev server’s search attribute settings, then the caller’s', () => {
    const values = clusterDynamicConfig(true, { 'history.transferProcessorMaxPollRPS': 20 });
    expect(values).toMatchObject({
      ...TUNED_DEV_SERVER_CONFIG,
      'history.transferProcessorMaxPollRPS': 20,
      'system.forceSearchAttributesCacheRefreshOnRead': true,
    });
    expect(clusterDynamicConfig(false)).not.toHaveProperty('history.timerProcessorMaxTimeShift');
  });

  test('is written as one unconstrained value per key', () => {
    expect(clusterDynamicConfigYaml({ 'a.b': 10, 'c.d': '10ms', 'e.f': true })).toBe(
      'a.b:\n  - value: 10\n    constraints: {}\nc.d:\n  - value: "10ms"\n    constraints: {}\n' +
        'e.f:\n  - value: true\n    constraints: {}\n',
    );
  });
});

describe('resolveTemporalServer', () => {
  const root = mkdtempSync(join(tmpdir(), 'server-resolve-'));

  test('caches under temporal-server-<version> beside the CLI', () => {
    expect(temporalServerCacheDir({ DURABLE_TOOLS_CACHE_DIR: root })).toBe(
      join(root, `temporal-server-${TEMPORAL_SERVER.version}`),
    );
  });

  test('takes a complete cached build without building', async () => {
    const env = { DURABLE_TOOLS_CACHE_DIR: join(root, 'complete') };
    const dir = temporalServerCacheDir(env);
    mkdirSync(join(dir, TEMPORAL_SERVER.schemaDir), { recursive: true });
    for (const name of ['temporal-server', 'temporal-sql-tool']) {
      writeFileSync(join(dir, name), '#!/bin/sh\nexit 0\n');
      chmodSync(join(dir, name), 0o755);
    }
    await expect(resolveTemporalServer({ env, build: false })).resolves.toEqual({
      serverPath: join(dir, 'temporal-server'),
      sqlToolPath: join(dir, 'temporal-sql-tool'),
      schemaDir: join(dir, 'schema/postgresql/v12'),
      source: 'cache',
    });
  });

  test('says how to build it when the cache is incomplete and building is off', async () => {
    const env = { DURABLE_TOOLS_CACHE_DIR: join(root, 'incomplete') };
    mkdirSync(temporalServerCacheDir(env), { recursive: true });
    writeFileSync(join(temporalServerCacheDir(env), 'temporal-server'), '');
    expect(findCachedTemporalServer(env)).toBeUndefined();
    await expect(resolveTemporalServer({ env, build: false })).rejects.toMatchObject({
      name: 'TemporalClusterError',
      code: 'NOT_FOUND',
      message: expect.stringContaining('npm run install-cluster'),
    });
  });
});
