import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildStaged, durableToolsCacheRoot, findGo, goBuild } from '../../src/dev-server/go-build';

/** A `go` that fails like an unreachable checksum database unless GOSUMDB=off, and records its GOFLAGS. */
function fakeGo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'go');
  writeFileSync(
    path,
    '#!/bin/sh\necho "$GOFLAGS" > "$GOBIN/flags"\n' +
      'if [ "$GOSUMDB" != off ]; then echo "verifying x: dial tcp: sum.golang.org" >&2; exit 1; fi\n' +
      'touch "$GOBIN/built"\n',
  );
  chmodSync(path, 0o755);
  return path;
}

describe('go-build', () => {
  const root = mkdtempSync(join(tmpdir(), 'go-build-'));
  const fail = (message: string) => new Error(message);

  test('one cache root for every build', () => {
    expect(durableToolsCacheRoot({ DURABLE_TOOLS_CACHE_DIR: '/c' })).toBe('/c');
    expect(durableToolsCacheRoot({ XDG_CACHE_HOME: '/x' })).toBe('/x/durable-tools');
  });

  test('finds go on PATH', () => {
    const go = fakeGo(join(root, 'bin'));
    expect(findGo({ PATH: `/nonexistent:${join(root, 'bin')}` })).toBe(go);
  });

  test('retries with GOSUMDB=off when the checksum database is unreachable, in a staging directory', async () => {
    const go = fakeGo(join(root, 'bin2'));
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const dir = join(root, 'cache', 'thing-1');
    await buildStaged(dir, { what: 'the thing', log }, async (staging) => {
      expect(staging).toBe(`${dir}.building-${process.pid}`);
      await goBuild(go, ['install', 'x@v1'], { env: { GOBIN: staging }, fail, what: 'the thing', log });
      expect(readFileSync(join(staging, 'flags'), 'utf8')).toBe('-buildvcs=false\n');
      expect(existsSync(join(staging, 'built'))).toBe(true);
    });
    expect(existsSync(`${dir}.building-${process.pid}`)).toBe(false);
    expect(lines[0]).toMatch(/^durable-tools: building the thing with Go into /);
    expect(lines[1]).toMatch(/retrying the build with GOSUMDB=off/);
    expect(lines[2]).toMatch(/^durable-tools: built the thing in \d+ s\.$/);
  });

  test('a failed build throws the caller’s error with the end of Go’s output, and leaves no staging directory', async () => {
    const dir = join(root, 'cache', 'broken');
    const failing = join(root, 'failing-go');
    writeFileSync(failing, '#!/bin/sh\necho "compile error" >&2\nexit 2\n');
    chmodSync(failing, 0o755);
    await expect(
      buildStaged(dir, { what: 'the thing', log: () => {} }, (staging) =>
        goBuild(failing, ['build', '.'], { env: { GOBIN: staging }, fail, what: 'the thing', log: () => {} }),
      ),
    ).rejects.toThrow('Building the thing failed (go build ., exit 2):\ncompile error');
    expect(existsSync(`${dir}.building-${process.pid}`)).toBe(false);
  });
});
