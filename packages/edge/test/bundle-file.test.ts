import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFile, findElementBundle } from '../src/adapter/node/bundle-file.ts';

let dir: string;

/** A host app laid out the way pnpm does it: node_modules/@analytics-chart/element is a link. */
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'edge-bundle-'));
  const store = join(dir, 'node_modules/.pnpm/element/node_modules/@analytics-chart/element');
  mkdirSync(join(store, 'dist'), { recursive: true });
  writeFileSync(
    join(store, 'package.json'),
    JSON.stringify({
      name: '@analytics-chart/element',
      type: 'module',
      exports: { './analytics-chart.js': './dist/analytics-chart.js' },
    }),
  );
  writeFileSync(join(store, 'dist/analytics-chart.js'), 'customElements.define("x", class {});');
  mkdirSync(join(dir, 'node_modules/@analytics-chart'), { recursive: true });
  symlinkSync(store, join(dir, 'node_modules/@analytics-chart/element'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'host-app' }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('findElementBundle', () => {
  it("resolves the element's bundle export from the host app under pnpm's layout", () => {
    const found = findElementBundle(dir);
    expect(found).toMatch(/node_modules[\\/]\.pnpm[\\/].*[\\/]dist[\\/]analytics-chart\.js$/);
    const source = bundleFile(found ?? undefined);
    const bytes = typeof source === 'function' ? source() : source;
    expect(new TextDecoder().decode(bytes as Uint8Array)).toContain('customElements.define');
  });
});
