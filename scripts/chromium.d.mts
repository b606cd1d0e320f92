/** The Chromium executable: CHROME_PATH, else Debian's `/usr/bin/chromium`. */
export declare const CHROME_PATH: string;
/** Command-line switches shared by every launch. */
export declare const CHROMIUM_ARGS: readonly string[];
/** Timers, rendering and occluded windows not throttled. */
export declare const UNTHROTTLED_ARGS: readonly string[];
