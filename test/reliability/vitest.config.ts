import { defineConfig } from 'vitest/config';

// One file at a time: the items start real processes and measure memory and latency, which
// other files running beside them on two cores would distort.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
