import * as z from 'zod';

/**
 * The answer of `POST /api/collections` (`{api_key}` in the body): the workspace's collections,
 * each an object with at least its `name`. Unknown keys pass through, as the service may add some.
 */
export const collectionsAnswerSchema = z.object({
  list: z.array(z.looseObject({ name: z.string() })),
});

/** What `POST /api/collections` answers. */
export type CollectionsAnswer = z.infer<typeof collectionsAnswerSchema>;
