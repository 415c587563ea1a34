// Lint rules: the recommended sets plus the few that guard money and async code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** The database drivers: only the stores (src/store/) open a database. */
const DATABASE_DRIVERS = ['better-sqlite3', 'pg', 'pg-cursor', 'pg-copy-streams']
  .map((name) => ({ name, message: 'Only src/store/ talks to a database.' }));

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
  // Small files and short functions (STYLE 10): plain line counts, so a long function cannot hide in blank lines or comments.
  { files: ['src/**/*.ts'], rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] } },
  {
    files: ['src/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }] },
  },
  // Import boundaries (STYLE, the shape): the engine talks to the store's port only; the validators are pure; the
  // sandbox is the service's own code and knows nothing of paybatch's engine.
  {
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: DATABASE_DRIVERS,
        patterns: [{ group: ['../store/*', '!../store/port.js', '!../store/rows.js', '!../store/records.js'], message: 'The engine imports only the store\'s interface (src/store/port.ts and its row types).' }],
      }],
    },
  },
  {
    files: ['src/validate/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...['node:fs', 'node:fs/promises', 'fs', 'fs/promises', 'node:http', 'node:https', 'node:child_process', 'node:worker_threads', 'node:dgram', 'node:dns', 'undici']
            .map((name) => ({ name, message: 'Validation is pure: no I/O (STYLE 1).' })),
          // isIP is a parser (no socket): the rest of node:net is I/O.
          { name: 'node:net', allowImportNames: ['isIP'], message: 'Validation is pure: no I/O (STYLE 1).' },
          ...DATABASE_DRIVERS,
        ],
        patterns: [{ group: ['../store/*', '../api/*', '../workspace/*', '../engine/*', '../watch/*'], message: 'Validation is pure: it imports no I/O module.' }],
      }],
    },
  },
  {
    files: ['src/sandbox/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['../engine/*', '../../engine/*'], message: 'The sandbox is the service\'s own code: it never imports the engine.' }] }] },
  },
  // The console's one script runs in the browser.
  { files: ['assets/console/*.js'], languageOptions: { globals: { ...globals.browser } } },
);
