import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ when src/ changed: the tests start the CLI from it, as operators do.
    globalSetup: ['test/global-setup.ts'],
    // PGlite is WASM and single-connection; files run in parallel workers, tests within a file in order.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
