/** Paths of the monorepo's parts that the reliability suite runs as real processes or reads. */
import { join } from 'node:path';

/** The repository root. */
export const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');

/** The engine's CLI entry (`analytics-engine`), runnable with plain `node`. */
export const ENGINE_BIN = join(REPO_ROOT, 'packages', 'engine', 'bin', 'analytics-engine.mjs');

/** The element's one-file bundle the edge serves. */
export const ELEMENT_BUNDLE = join(REPO_ROOT, 'packages', 'element', 'dist', 'analytics-chart.js');
