import puppeteer, { type Browser } from 'puppeteer-core';

/** Debian's Chromium unless CHROME_PATH names another. */
export const CHROME_PATH = process.env.CHROME_PATH ?? '/usr/bin/chromium';

/** Launches headless Chromium the way every browser test of the repository does. */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROME_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--headless=new',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    defaultViewport: { width: 1280, height: 900 },
  });
}
