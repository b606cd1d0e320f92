import { describe, expect, it } from 'vitest';
import { embedOptionsQuery, parseEmbedOptions } from '../src/embed/embed-options.ts';
import { escapeHtml, iframeHtml, snippetsFor } from '../src/embed/embed-snippets.ts';

/** Parses a snippet with the HTML rules a browser would apply, as far as these tags go. */
function attributesOf(html: string, tag: string): Record<string, string> {
  const open = new RegExp(`<${tag}\\s([^>]*)>`).exec(html)?.[1] ?? '';
  const attributes: Record<string, string> = {};
  for (const [, name = '', value = ''] of open.matchAll(/([a-z-]+)="([^"]*)"/g)) {
    attributes[name] = value
      .replaceAll('&quot;', '"')
      .replaceAll('&#39;', "'")
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&amp;', '&');
  }
  return attributes;
}

describe('snippetsFor', () => {
  const id = 'eyJhbGciOiJIUzI1NiJ9.eyJxIjoieCJ9.c2ln';

  it('gives the element, the iframe and the URL of one id under the edge base', () => {
    const snippets = snippetsFor({
      base: 'https://app.example.com/analytics/',
      id,
      title: 'Signups',
    });
    expect(snippets.url).toBe(`https://app.example.com/analytics/embed/${id}`);
    const [script, element] = snippets.element.split('\n');
    expect(attributesOf(script ?? '', 'script')).toEqual({
      type: 'module',
      src: 'https://app.example.com/analytics/analytics-chart.js',
    });
    expect(attributesOf(element ?? '', 'analytics-chart')).toEqual({ 'query-id': id });
    expect(snippets.iframe).toMatch(/^<iframe [^>]*><\/iframe>$/);
    expect(attributesOf(snippets.iframe, 'iframe')).toEqual({
      src: snippets.url,
      title: 'Signups',
      width: '100%',
      height: '300',
      style: 'border:0',
      loading: 'lazy',
    });
    expect(attributesOf(snippets.resizeScript, 'script')).toEqual({
      src: 'https://app.example.com/analytics/embed.js',
    });
  });

  it('carries the viewer options into the element, the URL and the frame height alike', () => {
    const snippets = snippetsFor({
      base: 'https://edge.example',
      id,
      options: { range: '7d', theme: 'dark', height: 420, locale: 'de-CH' },
    });
    const url = new URL(snippets.url);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      range: '7d',
      theme: 'dark',
      height: '420',
      locale: 'de-CH',
    });
    expect(attributesOf(snippets.element, 'analytics-chart')).toEqual({
      'query-id': id,
      range: '7d',
      theme: 'dark',
      height: '420',
      locale: 'de-CH',
    });
    expect(attributesOf(snippets.iframe, 'iframe')).toMatchObject({
      src: snippets.url,
      title: 'Chart',
      height: '420',
    });
    // The URL's options read back as the same options.
    const parsed = parseEmbedOptions(url.searchParams, ['7d']);
    expect(parsed).toEqual({
      ok: true,
      value: { range: '7d', theme: 'dark', height: 420, locale: 'de-CH' },
    });
  });

  it('escapes a title and base that carry markup', () => {
    const frame = iframeHtml({
      src: 'https://e.example/embed/x?a=1&b="2"',
      title: 'Revenue <b>&</b> "costs"',
      width: 320,
      height: 200,
    });
    expect(frame).not.toContain('<b>');
    expect(attributesOf(frame, 'iframe')).toMatchObject({
      src: 'https://e.example/embed/x?a=1&b="2"',
      title: 'Revenue <b>&</b> "costs"',
      width: '320',
    });
    expect(escapeHtml(`<'&">`)).toBe('&lt;&#39;&amp;&quot;&gt;');
  });
});

describe('parseEmbedOptions', () => {
  const parse = (query: string, ranges: string[] = ['7d', '30d']) =>
    parseEmbedOptions(new URLSearchParams(query), ranges);

  it('accepts each option within its bounds and canonicalises the locale', () => {
    expect(parse('')).toEqual({ ok: true, value: {} });
    expect(parse('height=80')).toEqual({ ok: true, value: { height: 80 } });
    expect(parse('height=2000')).toEqual({ ok: true, value: { height: 2000 } });
    expect(parse('locale=EN-gb')).toEqual({ ok: true, value: { locale: 'en-GB' } });
    expect(parse('theme=auto&range=30d')).toEqual({
      ok: true,
      value: { theme: 'auto', range: '30d' },
    });
  });

  it.each([
    ['height=79', 'height'],
    ['height=2001', 'height'],
    ['height=3e2', 'height is a whole number of pixels.'],
    ['height=-1', 'height is a whole number of pixels.'],
    ['theme=Dark', 'theme'],
    ['locale=en_US_POSIX_nope!', 'locale is a BCP 47 language tag such as en-GB.'],
    ['range=90d', "range '90d' is not allowed for this chart; choose one of 7d, 30d."],
    ['range=7d&range=7d', 'Give range once.'],
    ['endpoint=https://evil.example', "Unknown option 'endpoint'"],
    ['__proto__=1', "Unknown option '__proto__'"],
    ['constructor=x&range=7d', "Unknown option 'constructor'"],
  ])('refuses %s with a sentence naming it', (query, sentence) => {
    const parsed = parse(query);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(sentence);
  });

  it('refuses any range for a chart without ranges', () => {
    expect(parse('range=7d', [])).toEqual({
      ok: false,
      error: 'This chart has no ranges to choose from.',
    });
  });

  it('writes the options back in a fixed order', () => {
    expect(embedOptionsQuery({ locale: 'fr', height: 200, theme: 'light', range: '7d' })).toBe(
      '?range=7d&theme=light&height=200&locale=fr',
    );
    expect(embedOptionsQuery({})).toBe('');
  });
});
