import { defineConfig } from 'vitest/config';

// The Worker's tests start workerd; both files share the machine's cores.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
