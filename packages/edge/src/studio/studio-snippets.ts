import { escapeHtml, type Snippets } from '../embed/embed-snippets.ts';

/** One snippet as the studio offers it: where it goes, who can paste it there, the text. */
export interface PlacedSnippet {
  place: string;
  who: string;
  text: string;
}

/** Markdown link text: brackets and backslashes escaped so a title cannot end the link early. */
function markdownText(text: string): string {
  return text.replace(/[\\[\]]/g, (ch) => `\\${ch}`);
}

/**
 * The snippets of a public id for each place an author pastes one, each with who may paste it
 * there. The WordPress roles are those of its default capabilities: only `unfiltered_html` keeps
 * an iframe or a script, and a URL on its own line is resolved by oEmbed for every role.
 */
export function placedSnippets(
  snippets: Snippets,
  title: string,
  limitedToSites: boolean,
): PlacedSnippet[] {
  // WordPress shows a discovered provider's frame sandboxed, so its data request has no origin
  // that a site list could admit.
  const sandboxNote = limitedToSites
    ? ' Limited to sites, it draws there only where the edge admits WordPress’s sandboxed frame (or the site registers the edge as an oEmbed provider).'
    : '';
  return [
    {
      place: 'WordPress (any block editor post)',
      who: `Every role, Contributor to Administrator: paste the URL on a line of its own and WordPress shows the chart through oEmbed.${sandboxNote}`,
      text: snippets.url,
    },
    {
      place: 'Custom HTML (WordPress Custom HTML block, other CMSs)',
      who: 'Needs the right to post unfiltered HTML: in WordPress the unfiltered_html capability (Administrators, and Editors on single sites); elsewhere an editor that keeps iframes from this site.',
      text: snippets.iframe,
    },
    {
      place: 'A page with the script',
      who: 'Whoever edits the page’s HTML and may add scripts (in WordPress, unfiltered_html). The chart refreshes itself, so a revoked embed shows its notice without a reload.',
      text: snippets.element,
    },
    {
      place: 'Markdown',
      who: 'Any author: a link to the chart, shown as the chart where the site resolves oEmbed links. The Custom HTML snippet works only where the Markdown renderer lets raw HTML through.',
      text: `[${markdownText(escapeHtml(title))}](${snippets.url})`,
    },
  ];
}
