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
    // CommonJS tooling that runs before any compiler: the jest configurations and the Node 22 line's helpers.
    files: ['jest.config.js', 'jest.node22.config.js', 'test/support/node22/*.js', 'test/support/packed-manifest.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_' }],
    },
  },
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
    // Everything the workflow bundle contains (src/workflows, the contract it shares with the activities, and the
    // durable-tools/workflow entry a user's workflow imports) runs in Temporal's deterministic sandbox: no Node
    // built-ins, no package but the workflow-safe ones, and no implementation from another folder (types of the
    // tool definitions and zod are fine: `proxyTools` reads them). test/unit/workflow-bundle.test.ts checks the
    // bundle itself.
    files: ['src/workflows/**/*.ts', 'src/contract/**/*.ts', 'src/entries/workflow.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'The workflow bundle must not import Node built-ins.' })),
          patterns: [
            {
              regex: '^(?!\\.{1,2}/|@temporalio/(workflow|common)$|@opentelemetry/api$|zod$)',
              message:
                'The workflow bundle imports only @temporalio/workflow, @temporalio/common and @opentelemetry/api.',
            },
            {
              regex: '^\\.\\./(?!contract/|activities/|tools/|workflows/)',
              message: 'The workflow bundle imports only src/workflows and src/contract.',
            },
            {
              group: ['../activities', '../activities/*', '../tools', '../tools/*', 'zod'],
              message: 'Import only types from activities, tools and zod.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // The contract is the ground floor: it imports nothing from another folder of src/.
    files: ['src/contract/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'The contract must not import Node built-ins.' })),
          patterns: [
            {
              regex: '^(?!\\./|@temporalio/(workflow|common)$)',
              message: 'The contract imports only @temporalio/workflow, @temporalio/common and its own files.',
            },
          ],
        },
      ],
    },
  },
);
