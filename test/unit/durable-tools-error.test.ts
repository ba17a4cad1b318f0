/**
 * One error family: every error class durable-tools has extends `DurableToolsError`, which carries `code`,
 * `cause` and the class name as `name`, so one `instanceof` check catches any of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as root from '../../src/index';
import * as client from '../../src/entries/client';
import * as testing from '../../src/entries/testing';
import * as worker from '../../src/worker';
import { DurableToolsError } from '../../src/contract/durable-tools-error';
import { McpConfigError } from '../../src/mcp/client/mcp-config-error';
import { ToolDefinitionError } from '../../src/contract/tool-definition-error';
import { TransientToolError } from '../../src/failures/tool-errors';

const ENTRIES = { root, client, worker, testing } as Record<string, Record<string, unknown>>;

/** Every exported class of every entry, and of its `errors` namespace, whose prototype chain reaches `Error`. */
function exportedErrorClasses(): Map<string, abstract new (...args: never[]) => unknown> {
  const classes = new Map<string, abstract new (...args: never[]) => unknown>();
  const namespaces = Object.values(ENTRIES).flatMap((entry) => [
    entry,
    (entry.errors ?? {}) as Record<string, unknown>,
  ]);
  for (const entry of namespaces)
    for (const [name, value] of Object.entries(entry))
      if (typeof value === 'function' && value.prototype instanceof Error)
        classes.set(name, value as abstract new (...args: never[]) => unknown);
  return classes;
}

test('every error class any entry exports extends DurableToolsError', () => {
  const classes = exportedErrorClasses();
  const outside = [...classes].filter(
    ([, value]) => value !== DurableToolsError && !(value.prototype instanceof DurableToolsError),
  );
  expect(outside.map(([name]) => name)).toEqual([]);
  expect(classes.size).toBeGreaterThanOrEqual(22); // the base class and 21 or more error classes
});

test('DurableToolsError is exported by the client, worker and root entries', () => {
  expect(client.DurableToolsError).toBe(DurableToolsError);
  expect(worker.DurableToolsError).toBe(DurableToolsError);
  expect(root.DurableToolsError).toBe(DurableToolsError);
});

test('an error class outside the top-level names is reachable for instanceof through the errors namespace', () => {
  const error = new McpConfigError('mcp.json cannot be read', 'UNREADABLE');
  expect(error).toBeInstanceOf(worker.errors.McpConfigError);
  expect(client.errors.McpConfigError).toBe(worker.errors.McpConfigError);
  expect(root.errors.ToolDefinitionError).toBe(ToolDefinitionError);
});

test('no class in src/ extends Error directly but DurableToolsError itself', () => {
  const src = join(__dirname, '..', '..', 'src');
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  const direct = files.filter(
    (file) =>
      !file.endsWith('durable-tools-error.ts') &&
      /class \w+ extends Error\b/.test(readFileSync(join(src, file), 'utf8')),
  );
  expect(direct).toEqual([]);
  expect(files.length).toBeGreaterThan(100);
});

test('a durable-tools error keeps its class, its code, its cause and its class name as name', () => {
  const cause = new Error('ENOENT');
  const error = new McpConfigError('mcp.json cannot be read', 'INVALID_CONFIG', { cause });
  expect(error).toBeInstanceOf(McpConfigError);
  expect(error).toBeInstanceOf(DurableToolsError);
  expect(error).toBeInstanceOf(Error);
  expect(error.name).toBe('McpConfigError');
  expect(error.code).toBe('INVALID_CONFIG');
  expect(error.cause).toBe(cause);
  expect(error.message).toBe('mcp.json cannot be read');
  expect(String(error)).toBe('McpConfigError: mcp.json cannot be read');
});

test('an error without a cause has no cause property, as a plain Error has none', () => {
  const error = new ToolDefinitionError('no description', 'MISSING_DESCRIPTION');
  expect('cause' in error).toBe(false);
});

test('a taxonomy error keeps the code it was given, or its default', () => {
  expect(new TransientToolError('restarting').code).toBe('UNAVAILABLE');
  expect(new TransientToolError('slow', { code: 'TIMEOUT' }).code).toBe('TIMEOUT');
});

test('DurableToolsError names a subclass without its own name after the subclass', () => {
  class QuotaError extends DurableToolsError<'QUOTA'> {}
  const error = new QuotaError('over quota', 'QUOTA');
  expect(error.name).toBe('QuotaError');
  expect(error).toBeInstanceOf(DurableToolsError);
});
