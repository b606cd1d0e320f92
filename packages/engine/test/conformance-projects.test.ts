import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { CLUSTERED_CONFORMANCE, CONFORMANCE } from './helpers/conformance.ts';

/** The test projects' lists (vitest.config.ts) agree with what each conformance file does. */
describe('conformance projects', () => {
  const ingests = (file: string) =>
    /\bingest\(\s*server\b/.test(readFileSync(join(import.meta.dirname, '..', file), 'utf8'));

  test('the clustered project runs exactly the conformance files that ingest through ingest()', () => {
    expect(CLUSTERED_CONFORMANCE.every((file) => CONFORMANCE.includes(file))).toBe(true);
    expect(CONFORMANCE.filter(ingests)).toEqual(CLUSTERED_CONFORMANCE);
  });
});
