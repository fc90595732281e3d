// A few rules that catch real bugs, nothing stylistic (tsc and review cover the rest).
// Type-aware: no-floating-promises needs the type checker, which the project service provides
// from tsconfig.json.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: 'error',
    },
    plugins: {
      '@typescript-eslint': tseslint.plugin,
    },
    rules: {
      // Unused imports, variables and parameters (a parameter an interface requires but the
      // implementation does not read is named with a leading `_`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          vars: 'all',
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
          caughtErrors: 'none',
        },
      ],
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the process) and
      // its ordering. Await it, `.catch` it, or `void` it with a comment on why not waiting is safe.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test registers top-level test()/describe() itself; awaiting them is not needed.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
    },
  },
  {
    // Endpoint handlers face caller input: a `!` there hides a missing value until it throws.
    files: ['src/endpoints/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'error',
    },
  },
);
