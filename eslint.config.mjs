// Lint for the whole tree: typed rules on TypeScript (through tsconfig.test.json, which covers code
// and tests), the recommended rules on the plain JavaScript of bench/ and scripts/. Formatting is
// Prettier's business (eslint-config-prettier turns off the rules that would disagree with it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import jest from 'eslint-plugin-jest';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', '.tmp/', 'bench-results/', 'coverage/', '**/generated/', 'docs/'] },
  js.configs.recommended,
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [tseslint.configs.recommended],
    languageOptions: { parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // A callback may read what is assigned once after it is created (a server and its handler).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Input validation matches control characters on purpose.
      'no-control-regex': 'off',
      'max-lines': ['warn', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['warn', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Tests are long by nature: a describe block holds many tests.
    files: ['**/test/**/*.ts', 'test/**/*.ts'],
    rules: { 'max-lines': 'off', 'max-lines-per-function': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // A test that asserts nothing, cannot fail or is left focused or skipped is a defect.
    files: ['**/test/**/*.test.ts', 'test/**/*.test.ts'],
    ...jest.configs['flat/recommended'],
    rules: {
      ...jest.configs['flat/recommended'].rules,
      // Helpers named for what they check (`expectRefused`, `assertDocumentedResponse`, `refused`, waits that throw) count as assertions.
      'jest/expect-expect': [
        'error',
        { assertFunctionNames: ['expect', 'expect*', 'assert*', '*.expect*', 'fc.assert', 'waitFor', '*.waitFor*', '*.processed', 'refused'] },
      ],
      // Property tests assert per generated case and branch on it; the branch is the point.
      'jest/no-conditional-expect': 'off',
      // A set-up that checks what it made fails at its cause rather than in every test after it.
      'jest/no-standalone-expect': ['error', { additionalTestBlockFunctions: ['beforeAll', 'beforeEach'] }],
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='toBeGreaterThanOrEqual'][arguments.0.value=0]",
          message: 'A count or duration is never below 0: assert the value it must have.',
        },
      ],
      'jest/no-disabled-tests': 'error',
      'jest/no-focused-tests': 'error',
      'jest/valid-title': ['error', { ignoreTypeOfDescribeName: true }],
    },
  },
  {
    // No test reads a package's build output: it tests the source.
    files: ['**/test/**/*.ts', 'test/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['./**/dist/**', '../**/dist/**', '@pmatch/*/dist/**'], message: 'Import the source, not the build output.' }] },
      ],
    },
  },
  prettier,
);
