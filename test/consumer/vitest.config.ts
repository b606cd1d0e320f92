import { defineConfig } from 'vitest/config';

// One pack, one engine and one install per scratch project for the whole suite (global setup);
// scenario files run one after another since they share that engine and the machine's cores.
export default defineConfig({
  test: {
    include: ['scenarios/**/*.test.ts'],
    globalSetup: ['harness/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    fileParallelism: false,
  },
});
