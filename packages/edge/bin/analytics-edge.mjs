#!/usr/bin/env node
// The workspace's `analytics-edge`: runs the TypeScript CLI in this process through tsx's loader,
// so it works from a clone without a build. The published package's bin is the compiled
// dist/cli/main.js instead (publishConfig.bin).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
