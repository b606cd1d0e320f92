import puppeteer, { type Browser } from 'puppeteer-core';
import { CHROME_PATH, CHROMIUM_ARGS } from '../../../../scripts/chromium.mjs';

/** Launches headless Chromium the way every browser test of the repository does. */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROME_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    defaultViewport: { width: 1280, height: 900 },
  });
}
