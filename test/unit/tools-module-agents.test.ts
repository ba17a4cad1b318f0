import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadToolsModuleExports } from '../../src/runtime/create-worker';

const DEFINE_AGENT = JSON.stringify(join(__dirname, '..', '..', 'src', 'agents', 'define-agent'));

/** A tools module in a fresh directory, with `body` after a `defineAgent` import. */
function toolsModule(body: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'tools-module-agents-')), 'tools.ts');
  writeFileSync(file, `import { defineAgent } from ${DEFINE_AGENT};\n${body}\n`);
  return file;
}

describe("a tools module's agents export", () => {
  test('is loaded with the tools, for `durable-tools mcp` to serve', async () => {
    const file = toolsModule(`export const tools = [];
export const agents = [defineAgent({ name: 'planner', instructions: 'Plan.', model: { provider: 'scripted' }, tools: [] })];`);
    const loaded = await loadToolsModuleExports(file);
    expect(loaded.agents?.map((agent) => agent.name)).toEqual(['planner']);
  });

  test('that is not a list of defineAgent agents is refused, naming the export', async () => {
    const file = toolsModule(`export const tools = [];\nexport const agents = [{ name: 'planner' }];`);
    await expect(loadToolsModuleExports(file)).rejects.toThrow(
      /exports "agents", which must be an array of defineAgent/,
    );
  });
});
