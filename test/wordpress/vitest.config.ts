import { defineConfig } from 'vitest/config';

// One WordPress stack, one edge and one Chromium for the file; cells run side by side within it.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 90_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
