#!/usr/bin/env node
// Runs the TypeScript CLI in this very process through tsx's loader, so the package works
// straight from a clone without a build, and signals (Ctrl-C, SIGTERM from a supervisor) reach
// the CLI itself instead of a wrapper that would leave it orphaned.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
