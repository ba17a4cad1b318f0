import { readFileSync } from 'node:fs';
import { createContext, runInContext } from 'node:vm';
import { SANDBOX_GLOBALS, sandboxGlobalsBanner } from '../../src/runtime/sandbox-globals';

/*
 * The engine's workflow bundle begins with a script-level `const` of each of these globals
 * (src/runtime/sandbox-globals.ts): it must bind exactly the object the global is, and only globals Temporal's
 * sandbox never replaces.
 */

test('the banner binds each listed global to the very object the sandbox has under that name', () => {
  const context = createContext({});
  const bound = runInContext(`${sandboxGlobalsBanner()}\n[${SANDBOX_GLOBALS.join(', ')}]`, context) as unknown[];
  const globals = SANDBOX_GLOBALS.map((name) => runInContext(`globalThis.${name}`, context) as unknown);
  expect(bound).toHaveLength(SANDBOX_GLOBALS.length);
  bound.forEach((value, i) => expect(value).toBe(globals[i]));
});

test("none of the listed globals is one Temporal's workflow sandbox replaces", () => {
  const overrides = readFileSync(require.resolve('@temporalio/workflow/lib/global-overrides.js'), 'utf8');
  const replaced = [...overrides.matchAll(/\bglobal(?:This)?\.([A-Za-z]+)\s*=[^=]/g)].map((match) => match[1]);
  expect(replaced).toEqual(expect.arrayContaining(['Date', 'setTimeout']));
  expect(SANDBOX_GLOBALS.filter((name) => replaced.includes(name))).toEqual([]);
});

test('Date and Promise, which a run sees as its own, are not bound once for all runs', () => {
  expect(SANDBOX_GLOBALS).not.toContain('Date');
  expect(SANDBOX_GLOBALS).not.toContain('Promise');
});
