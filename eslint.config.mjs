// @ts-check
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)].filter(
  // The workflow sandbox provides these three.
  (m) => !['assert', 'url', 'util'].includes(m),
);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'test/fixtures/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no implementations.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows must not import Node built-ins.' })),
          patterns: [
            {
              group: ['@temporalio/activity', '@temporalio/client', '@temporalio/worker'],
              message: 'Workflows must not import activity, client or worker packages.',
            },
            {
              group: ['zod', 'zod/*'],
              message: 'Keep zod out of the workflow bundle; workflows use the JSON catalog.',
            },
            {
              group: ['../activities/*', '../idempotency/*', '../dev-server/*'],
              message: 'Import only types from activities.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
);
