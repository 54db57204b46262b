// ESLint with typescript-eslint's type-checked rules over the whole repository; formatting is
// Prettier's (.prettierrc.json), so eslint-config-prettier turns off the rules it would fight.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'packages/*/dist/', 'node_modules/', 'test-artifacts/', 'bench/results/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.test.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after'] }] },
      ],
      // The compiler checks names in every file, JavaScript included (tsconfig.test.json: checkJs).
      'no-undef': 'off',
      // Fastify's handlers and plugins are async by contract: an async handler answers by returning.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // The comparison servers are the plainest code a user would write for each framework, where a
    // parsed body is `any`; the service itself gets no such allowance.
    files: ['bench/**/*.mjs'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  { files: ['eslint.config.js'], extends: [tseslint.configs.disableTypeChecked] },
  prettier,
);
