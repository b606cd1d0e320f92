/**
 * How every browser run of the repository starts Chromium (the element's tests, the end-to-end
 * tests, the element benchmark): Debian's build unless CHROME_PATH names another, headless, with
 * nothing that reaches the network on its own (these machines have none but the registry).
 */

/** The Chromium executable: CHROME_PATH, else Debian's `/usr/bin/chromium`. */
export const CHROME_PATH = process.env.CHROME_PATH ?? '/usr/bin/chromium';

/** Command-line switches shared by every launch. */
export const CHROMIUM_ARGS = Object.freeze([
  '--no-sandbox',
  '--headless=new',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]);

/**
 * For runs that time or render pages in the background: timers, rendering and occluded windows
 * are not throttled.
 */
export const UNTHROTTLED_ARGS = Object.freeze([
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
]);
