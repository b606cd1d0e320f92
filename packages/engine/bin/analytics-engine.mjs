#!/usr/bin/env node
// The workspace's `analytics-engine`: runs the TypeScript CLI in this very process through tsx's
// loader, so it works from a clone without a build, and signals (Ctrl-C, SIGTERM from a
// supervisor) reach the CLI itself instead of a wrapper that would leave it orphaned. The
// published package's bin is the compiled dist/cli/main.js instead (publishConfig.bin).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
