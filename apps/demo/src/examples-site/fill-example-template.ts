/**
 * The committed example pages are the pages a page author writes, with the two things that
 * depend on a deployment written as placeholders: `{{edge}}` (the edge's public URL) and
 * `{{sign <query> [name=value]…}}` (a public id, exactly what
 * `pnpm edge sign --public --query <query> --param name=value` prints). The demo fills them in
 * with ids minted at start against the machine's own development key, so the committed files
 * never hold an id that is only valid on one machine.
 */

/** One `{{sign …}}` placeholder: which public query, with which locked parameters. */
export interface SignRequest {
  query: string;
  params: Record<string, string>;
}

/** `{{edge}}`, or `{{sign name k=v…}}` with a registry name: prose such as `{{sign …}}` is left alone. */
const PLACEHOLDER = /\{\{\s*(edge|sign(?=\s+[A-Za-z0-9_.:-]+[\s}]))((?:\s+[^\s}]+)*)\s*\}\}/g;

/** Every `{{sign …}}` placeholder of a template, in order (malformed ones throw, naming them). */
export function signRequests(template: string): SignRequest[] {
  const requests: SignRequest[] = [];
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (match[1] === 'sign') requests.push(parseSign(match[0], match[2] ?? ''));
  }
  return requests;
}

function parseSign(placeholder: string, args: string): SignRequest {
  const [query, ...pairs] = args.trim().split(/\s+/);
  if (!query || !/^[A-Za-z0-9_.:-]+$/.test(query)) {
    throw new Error(`${placeholder}: expected {{sign <query> [name=value]...}}`);
  }
  const params: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`${placeholder}: '${pair}' is not name=value`);
    params[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { query, params };
}

/**
 * Fills a template: `{{edge}}` with `edgeUrl`, and each `{{sign …}}` with the id `sign` returns
 * for it. Ids and URLs are attribute values, so they are HTML-escaped.
 */
export async function fillExampleTemplate(
  template: string,
  edgeUrl: string,
  sign: (request: SignRequest) => Promise<string>,
): Promise<string> {
  const ids = await Promise.all(signRequests(template).map(sign));
  let next = 0;
  return template.replace(PLACEHOLDER, (whole, kind: string) => {
    if (kind === 'edge') return escapeAttribute(edgeUrl.replace(/\/+$/, ''));
    const id = ids[next++];
    if (id === undefined) throw new Error(`${whole}: no id was minted`);
    return escapeAttribute(id);
  });
}

function escapeAttribute(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('"', '&quot;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');
}
