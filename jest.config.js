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
