import { defineConfig } from 'vitest/config';

// `npm run test:containers`: the service against real servers in Docker (test/containers/).
// Not part of `npm test`: it pulls images and starts a ClickHouse cluster, minutes of work, and
// needs a Docker daemon, which CI's machine does not have (the suite then skips, saying so).
export default defineConfig({
  test: {
    pool: 'forks',
    isolate: true,
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 900_000,
    include: ['test/containers/**/*.test.ts'],
  },
});
