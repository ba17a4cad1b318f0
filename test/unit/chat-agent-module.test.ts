import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAgentModule } from '../../src/cli/agent-module';
import type { CliContext } from '../../src/cli/command';
import { Lifecycle } from '../../src/cli/lifecycle';

/*
 * Which agent `durable-tools chat <module>` talks to: the module's default export, `agent`, or its only agent;
 * a module with several or none is a usage error that says what to do.
 */

const dir = mkdtempSync(join(tmpdir(), 'chat-agent-module-'));
const defineAgentPath = JSON.stringify(join(__dirname, '..', '..', 'src', 'agents', 'define-agent'));
const context: CliContext = {
  out: () => {},
  err: () => {},
  interactive: false,
  env: {},
  // tsx resolves from here (the repository's), as from a project that has it.
  cwd: join(__dirname, '..', '..'),
  lifecycle: new Lifecycle(() => {}),
  self: 'durable-tools',
};

function agentModule(name: string, exports: string): string {
  const path = join(dir, `${name}.ts`);
  writeFileSync(
    path,
    `import { defineAgent } from ${defineAgentPath};\n` +
      `const make = (name: string) => defineAgent({ name, instructions: 'Help.', model: { provider: 'scripted', script: [] }, tools: [] });\n` +
      exports,
  );
  return path;
}

test('a module with one agent gives that agent, whatever its export is called', async () => {
  const path = agentModule('one', "export const concierge = make('concierge');\n");

  await expect(loadAgentModule(path, context)).resolves.toMatchObject({ name: 'concierge' });
});

test('a module with several agents needs --agent, and gives the one it names', async () => {
  const path = agentModule('several', "export const a = make('alpha');\nexport const b = make('beta');\n");

  await expect(loadAgentModule(path, context)).rejects.toThrow(/several agents \(a, b\).*--agent/);
  await expect(loadAgentModule(path, context, 'b')).resolves.toMatchObject({ name: 'beta' });
});

test('a module without an agent is a usage error that says what to export', async () => {
  const path = agentModule('none', 'export const tools = [];\n');

  await expect(loadAgentModule(path, context)).rejects.toThrow(/exports no agent: export one made with defineAgent/);
});
