import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMcpConfigFile } from '../../src/mcp/client/mcp-config';

const SECRET = 'sk-secret-123';

function configFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'mcp-config-')), 'mcp.json');
  writeFileSync(path, text);
  return path;
}

function errorOf(path: string): Error & { code?: string } {
  try {
    loadMcpConfigFile(path);
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the file to be refused');
}

test('a broken config file is refused without quoting any of its text', () => {
  const path = configFile(
    `{\n  "mcpServers": {\n    "x": { "url": "http://127.0.0.1:1/mcp", "headers": { "Authorization": Bearer ${SECRET} } }\n  }\n}`,
  );
  const error = errorOf(path);
  expect(error.code).toBe('INVALID_CONFIG');
  expect(error.message).toMatch(/is not valid JSON \(.+\)\.$/);
  expect(error.message).not.toContain(SECRET);
  expect(error.message).not.toContain('Bearer');
  expect(error.cause).toBeUndefined();
});

test('a config file cut short is refused without quoting it', () => {
  const error = errorOf(configFile(`{ "mcpServers": { "x": { "headers": { "token": "${SECRET}"`));
  expect(error.code).toBe('INVALID_CONFIG');
  expect(error.message).not.toContain(SECRET);
});

test('a config file refused by JSON.parse at a known position names its line and column', () => {
  const error = errorOf(configFile(`{\n  "mcpServers": {}\n  "token": "${SECRET}"\n}`));
  expect(error.message).toMatch(/is not valid JSON \(line 3, column 3\)\.$/);
  expect(error.message).not.toContain(SECRET);
});
