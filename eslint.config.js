// Lint: ESLint's and typescript-eslint's recommended rules over the project's own code. `npm run lint` runs it
// and CI fails on any error or warning. Type-aware rules are left out to keep the check fast.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', 'dist/', '.data/', '.bench/', '.schemathesis/', 'coverage/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      // `_`-prefixed names mark parameters and bindings kept on purpose (a handler's unused event, a skipped tuple slot).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
    },
  },
  {
    // Tests read JSON bodies back to assert on them; typing every reply would restate the OpenAPI schemas.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { console: 'readonly', process: 'readonly', URL: 'readonly' } },
  },
);
