// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

/**
 * src/common is the shared kernel: it may import from itself, src/config and packages, never from a
 * feature module (users, auth, delivery, ...) or the app's entry files. One pattern per depth below
 * src/common, so `../guards/x` from src/common/decorators stays allowed while `../../users/x` does not.
 */
const commonMayNotLeave = [1, 2, 3, 4].map((depth) => ({
  files: [`src/common/${'*/'.repeat(depth - 1)}*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(\\./)?${'\\.\\./'.repeat(depth)}(?!config(/|$))`,
            message:
              'src/common may import only from src/common, src/config and packages: move what you need into src/common, or move this file into the feature module that owns it.',
          },
          {
            regex: '^src/(?!common(/|$)|config(/|$))',
            message: 'src/common may import only from src/common, src/config and packages.',
          },
        ],
      },
    ],
  },
}));

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test/.tmp/**',
      'test/.certs/**',
      'bench/results/**',
      'src/generated/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    // Type-aware linting: each .ts/.tsx file is checked against the tsconfig that owns it
    // (tsconfig.json for src, test and mikro-orm.config.ts; web/tsconfig.json for the dashboard).
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        projectService: {
          // Config files that no tsconfig includes (vite loads this one itself).
          allowDefaultProject: ['web/vite.config.ts'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['warn', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'warn',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'no-console': 'off',
    },
  },
  {
    // The dashboard's unit tests are excluded from web/tsconfig.json (no jest/node types in the
    // browser build) and owned by web/tsconfig.spec.json, which the project service cannot find
    // on its own: name it explicitly.
    files: ['web/src/**/*.spec.ts', 'web/src/**/*.spec.tsx'],
    languageOptions: {
      parserOptions: {
        projectService: false,
        project: './web/tsconfig.spec.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  ...commonMayNotLeave,
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
