/** @type {import('jest').Config} */
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
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
