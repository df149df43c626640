import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '**/.data/', 'test/clients/runtime/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', performance: 'readonly', NodeJS: 'readonly', Response: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // The layers (cli → compose → app → http → mcp → tools → memory → db): the domain knows nothing of the wire
  // or of SQL, and the storage knows nothing of the domain above it.
  {
    files: ['src/memory/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'fastify', message: 'src/memory is the domain: no web framework.' },
            { name: 'kysely', message: 'src/memory builds no SQL: call the storage functions of src/db/memories.' },
          ],
          patterns: [
            { regex: '(^|/)(mcp|tools|http|auth|cli)/', message: 'src/memory is the domain: it knows nothing of MCP, the tools, HTTP or auth.' },
            { regex: '^@fastify/', message: 'src/memory is the domain: no web framework.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'fastify', message: 'src/db is storage: no web framework.' }],
          patterns: [
            { regex: '(^|/)(memory|mcp|tools|http|auth|cli)/', message: 'src/db is the bottom layer: it imports nothing from the layers above it.' },
            { regex: '^@fastify/', message: 'src/db is storage: no web framework.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/db/migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
