import { defineConfig } from 'vitest/config';

// chDB binds one data directory per process, so every test file runs in its own forked
// process with its own DATA_DIR (test/helpers/server.ts).
export default defineConfig({
  test: {
    pool: 'forks',
    isolate: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    include: ['test/**/*.test.ts', 'sdk/test/**/*.test.ts'],
    // One PGlite initdb per run instead of one per test server (test/globalSetup.ts).
    globalSetup: ['test/globalSetup.ts'],
    // A temp directory per test file, removed when it ends; with DATABASE_URL, a database per file.
    setupFiles: ['test/setupTempDir.ts', 'test/setupDatabase.ts'],
    // real servers in Docker: `npm run test:containers` (vitest.containers.config.ts)
    exclude: ['test/containers/**', '**/node_modules/**'],
  },
});
