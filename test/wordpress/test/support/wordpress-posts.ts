import type { WordPressStack, WordPressUser } from './wordpress-stack.ts';

/** The four roles of a single site, most trusted first. */
export const ROLES = ['administrator', 'editor', 'author', 'contributor'] as const;
export type Role = (typeof ROLES)[number];

/** A published post: its address and the content WordPress stored. */
export interface PublishedPost {
  id: number;
  link: string;
  /** The post's content as stored, after the author's role's filter. */
  stored: string;
}

function basicAuth(user: WordPressUser): string {
  return `Basic ${Buffer.from(`${user.login}:${user.applicationPassword}`).toString('base64')}`;
}

/** One REST call as `user`; fails with WordPress's answer unless it is 2xx. */
async function rest<T>(
  wp: WordPressStack,
  user: WordPressUser,
  route: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${wp.url}/?rest_route=${encodeURIComponent(route)}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: basicAuth(user),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${route} as ${user.login}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

interface RestPost {
  id: number;
  link: string;
  status: string;
  content: { raw: string };
}

/**
 * Writes a post as `role` through the REST API (the block editor's own path: the role's
 * capabilities and content filter apply) and publishes it. A contributor may only submit it for
 * review, so the administrator then publishes it, changing nothing but its status.
 */
export async function publishAs(
  wp: WordPressStack,
  role: Role,
  title: string,
  content: string,
): Promise<PublishedPost> {
  const author = wp.users[role];
  const admin = wp.users.administrator;
  const status = role === 'contributor' ? 'pending' : 'publish';
  const created = await rest<RestPost>(wp, author, '/wp/v2/posts', { title, content, status });
  if (created.status !== status) throw new Error(`post ${created.id} is ${created.status}`);
  let post = created;
  if (status === 'pending') {
    post = await rest<RestPost>(wp, admin, `/wp/v2/posts/${created.id}`, { status: 'publish' });
    if (post.content.raw !== created.content.raw) {
      throw new Error(`publishing post ${created.id} changed its content`);
    }
  }
  if (post.status !== 'publish') throw new Error(`post ${post.id} is ${post.status}`);
  return { id: post.id, link: post.link, stored: post.content.raw };
}
