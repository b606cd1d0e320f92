import type * as z from 'zod';
import { REQUIRED } from './query-request.ts';

const MAX_KEY = 40;
const MAX_MESSAGE = 200;

/** Cuts text a caller chose (keys, values) so an error never echoes kilobytes back. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** Formats an issue path the way a developer writes it: `filters[0][1]`, `customizations.hideMissing`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else {
      const name = clip(String(key), MAX_KEY);
      out += out ? `.${name}` : name;
    }
  }
  return out;
}

/**
 * Turns a zod failure into one clear sentence naming the field, such as
 * `start: could not parse 'yesterdayy' as a time`. Only the first issue is reported: one mistake
 * fixed at a time beats a dump of every consequence.
 */
export function describeZodError(error: z.ZodError, subject = 'request body'): string {
  const issue = error.issues[0];
  if (!issue) return `${subject} is invalid`;
  const where = formatPath(issue.path) || subject;
  if (issue.message === REQUIRED) return `${where} is required`;
  let message = issue.message;
  // zod's own wording for built-in checks is "Invalid input: expected string, received number".
  message = message.replace(/^Invalid input: /, '').replace(/^Invalid input$/, 'is invalid');
  return `${where}: ${clip(message, MAX_MESSAGE)}`;
}
