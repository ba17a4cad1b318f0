import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTemporalCli, temporalCliCacheDir } from '../../src/dev-server/temporal-cli';
import { TemporalCliError } from '../../src/dev-server/temporal-cli-error';

function fakeExecutable(dir: string, name = 'temporal'): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, '#!/bin/sh\nexit 0\n');
  chmodSync(path, 0o755);
  return path;
}

describe('resolveTemporalCli', () => {
  const root = mkdtempSync(join(tmpdir(), 'cli-resolve-'));
  const cacheEnv = { DURABLE_TOOLS_CACHE_DIR: join(root, 'cache') };

  test('prefers TEMPORAL_CLI_PATH', async () => {
    const explicit = fakeExecutable(join(root, 'explicit'));
    fakeExecutable(join(root, 'onpath'));
    const cli = await resolveTemporalCli({
      env: { ...cacheEnv, TEMPORAL_CLI_PATH: explicit, PATH: join(root, 'onpath') },
    });
    expect(cli).toEqual({ path: explicit, source: 'TEMPORAL_CLI_PATH' });
  });

  test('refuses a TEMPORAL_CLI_PATH that is not executable', async () => {
    await expect(resolveTemporalCli({ env: { TEMPORAL_CLI_PATH: join(root, 'missing') } })).rejects.toMatchObject({
      name: 'TemporalCliError',
      code: 'NOT_EXECUTABLE',
    });
  });

  test('takes `temporal` from PATH next', async () => {
    const onPath = fakeExecutable(join(root, 'onpath2'));
    const cli = await resolveTemporalCli({ env: { ...cacheEnv, PATH: `/nonexistent:${join(root, 'onpath2')}` } });
    expect(cli).toEqual({ path: onPath, source: 'PATH' });
  });

  test('then the cached build of this version', async () => {
    const env = { DURABLE_TOOLS_CACHE_DIR: join(root, 'cache3'), PATH: '/nonexistent' };
    const cached = fakeExecutable(temporalCliCacheDir(env));
    expect(await resolveTemporalCli({ env })).toEqual({ path: cached, source: 'cache' });
    expect(cached).toContain('temporal-1.5.1');
  });

  test('says how to install the CLI when nothing is found and building is off', async () => {
    const error = await resolveTemporalCli({
      env: { DURABLE_TOOLS_CACHE_DIR: join(root, 'empty'), PATH: '' },
      build: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemporalCliError);
    expect((error as TemporalCliError).code).toBe('NOT_FOUND');
    expect((error as TemporalCliError).message).toMatch(/go install github.com\/temporalio\/cli\/cmd\/temporal@v1.5.1/);
  });
});
