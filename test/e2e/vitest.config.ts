import { defineConfig } from 'vitest/config';

// One demo process and one Chromium for the whole suite; each step waits on real servers.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 200_000,
    fileParallelism: false,
  },
});
