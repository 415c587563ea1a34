// Lint rules: the recommended sets plus the few that guard money and async code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'paybatch-data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
      // Money is integers: parseFloat has no business in this code base.
      'no-restricted-globals': ['error', { name: 'parseFloat', message: 'Money is integer minor units; never parse floats.' }],
    },
  },
  // The console's one script runs in the browser.
  { files: ['assets/console/*.js'], languageOptions: { globals: { ...globals.browser } } },
);
