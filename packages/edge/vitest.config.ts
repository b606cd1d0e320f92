import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Files share a worker's loaded modules instead of loading them again each: no test here
    // changes module state, and each one builds its own edges, servers and stores.
    isolate: false,
    // Tests check answers, not speed: a busy machine (CI runs two suites at once) must not fail them.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The CLI tests run the compiled CLI (dist/cli/main.js), as the package's bin on npm.
    globalSetup: ['../../test/kit/src/fresh-dist.ts'],
  },
});
