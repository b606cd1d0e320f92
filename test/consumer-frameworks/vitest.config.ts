import { defineConfig } from 'vitest/config';

// One pack, one edge and one Chromium for the file; each app's npm install and build take a while.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
