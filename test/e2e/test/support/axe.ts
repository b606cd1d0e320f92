import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'puppeteer-core';

/** axe-core's browser build, as npm ships it. */
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/** One rule axe found broken, with where (CSS selectors, shadow roots included) and why. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary: string | undefined }[];
}

/** What one axe run found: the broken rules, and how many rules it checked and passed. */
export interface AxeReport {
  violations: AxeViolation[];
  passes: number;
}

/**
 * Runs axe-core in the page as it stands, with its default rules (WCAG 2 A and AA and the best
 * practices: landmarks, one level-one heading, contrast…). The script is evaluated through the
 * DevTools protocol, which the page's CSP does not govern, so the page itself stays unchanged.
 */
export async function runAxe(page: Page): Promise<AxeReport> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the page's globals: axe, defined by the script above.
    const page = globalThis as any;
    const results = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return {
      violations: results.violations.map(
        (v: AxeViolation & { nodes: { target: unknown[]; failureSummary?: string }[] }) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
        }),
      ),
      passes: results.passes.length,
    };
  });
}
