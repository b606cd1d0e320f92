import * as z from 'zod';

/** The viewer options an embed URL may carry: the element's presentation attributes. */
export interface EmbedOptions {
  range?: string;
  theme?: 'light' | 'dark' | 'auto';
  /** The chart's height in CSS pixels, which is also the embed page's height. */
  height?: number;
  locale?: string;
}

/** The embed page's height without a `height` option (the element's own default). */
export const DEFAULT_EMBED_HEIGHT = 300;
/** Bounds of the `height` option: a readable chart, and no page taller than a screen or two. */
export const MIN_EMBED_HEIGHT = 80;
export const MAX_EMBED_HEIGHT = 2000;

function isLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

const optionsSchema = z.strictObject({
  range: z.string().min(1).max(32).optional(),
  theme: z.enum(['light', 'dark', 'auto']).optional(),
  height: z
    .string()
    .regex(/^[0-9]{1,4}$/, { error: 'height is a whole number of pixels' })
    .transform(Number)
    .pipe(z.number().min(MIN_EMBED_HEIGHT).max(MAX_EMBED_HEIGHT))
    .optional(),
  locale: z
    .string()
    .max(35)
    .refine(isLocale, { error: 'locale is a BCP 47 language tag such as en-GB' })
    .optional(),
});

/** Either the options, or one sentence naming what is wrong. */
export type ParsedEmbedOptions = { ok: true; value: EmbedOptions } | { ok: false; error: string };

/**
 * Reads the viewer options of an embed URL's query string: each at most once, nothing else, and
 * `range` only among `rangeKeys` (the definition's ranges).
 */
export function parseEmbedOptions(
  search: URLSearchParams,
  rangeKeys: readonly string[],
): ParsedEmbedOptions {
  const seen = new Set<string>();
  for (const [key] of search) {
    if (seen.has(key)) return { ok: false, error: `Give ${key.slice(0, 40)} once.` };
    seen.add(key);
  }
  // fromEntries defines each key as an own property, `__proto__` included, so zod sees them all.
  const parsed = optionsSchema.safeParse(Object.fromEntries(search));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      return {
        ok: false,
        error: `Unknown option '${String(issue.keys[0]).slice(0, 40)}'; embeds accept range, theme, height and locale.`,
      };
    }
    const field = issue?.path.join('.') ?? 'option';
    const message = issue?.message ?? 'is not valid';
    return {
      ok: false,
      error: message.startsWith(field) ? `${message}.` : `${field}: ${message}.`,
    };
  }
  const value: EmbedOptions = {};
  const { range, theme, height, locale } = parsed.data;
  if (range !== undefined) {
    if (!rangeKeys.includes(range)) {
      return {
        ok: false,
        error: rangeKeys.length
          ? `range '${range}' is not allowed for this chart; choose one of ${rangeKeys.join(', ')}.`
          : 'This chart has no ranges to choose from.',
      };
    }
    value.range = range;
  }
  if (theme !== undefined) value.theme = theme;
  if (height !== undefined) value.height = height;
  if (locale !== undefined) value.locale = Intl.getCanonicalLocales(locale)[0] as string;
  return { ok: true, value };
}

/** The query string of `options` (`?range=7d&height=320`), empty without any; a fixed order. */
export function embedOptionsQuery(options: EmbedOptions): string {
  const search = new URLSearchParams();
  if (options.range !== undefined) search.set('range', options.range);
  if (options.theme !== undefined) search.set('theme', options.theme);
  if (options.height !== undefined) search.set('height', String(options.height));
  if (options.locale !== undefined) search.set('locale', options.locale);
  const text = search.toString();
  return text ? `?${text}` : '';
}
