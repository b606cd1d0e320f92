import type { Snippets } from '../embed/embed-snippets.ts';

/** The element snippet alone, as `sign` prints it for a session-bound id. */
export function elementSnippetText(snippets: Snippets): string {
  return `Paste into any HTML page:

${snippets.element}
`;
}

/** The three snippets of a public id, each with where it fits, as `sign --public` prints them. */
export function publicSnippetsText(snippets: Snippets): string {
  return `1. Script and element (pages that allow scripts: your own site, "unfiltered HTML" editors):

${snippets.element}

2. Iframe (editors that strip scripts and unknown elements but keep an iframe from this edge):

${snippets.iframe}

   Optional, once per page where scripts are allowed, so the frame follows the chart's height:

${snippets.resizeScript}

3. Embed URL (paste on its own line where the CMS resolves links through oEmbed):

${snippets.url}
`;
}
