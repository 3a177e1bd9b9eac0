import { z } from 'zod';
import { defineTool } from './types.js';
import { createForCaller, type PlanEntry } from './internal/create-posts.js';
import { createdPostSchema, mediaReference, utcDateTime, wrapped } from './shapes.js';

/** The body of POST /posts (and of POST /posts/validate). */
export const createPostBody = z.object({
  type: z.enum(['draft', 'schedule', 'now']),
  date: utcDateTime.optional(),
  shortLink: z.boolean().default(false),
  allowDuplicate: z.boolean().optional().describe('true when repeating the text of a recent post on the same channel is intended'),
  tags: z
    .array(z.union([z.string().max(100), z.object({ value: z.string().max(100), label: z.string().max(100) })]))
    .max(50)
    .default([])
    .describe('Stored with the post and listed by GET /posts; they do not change what is published'),
  posts: z
    .array(
      z.object({
        integration: z.object({ id: z.string().min(1) }),
        value: z
          .array(z.object({ content: z.string(), image: z.array(mediaReference).default([]), delay: z.number().int().min(0).default(0), id: z.string().optional() }))
          .min(1),
        settings: z.record(z.string(), z.unknown()).default({}),
        group: z.string().optional(),
      }),
    )
    .min(1),
});

/** The plan entries of a REST create body: one group for the whole request. */
export function restPlanEntries(input: z.output<typeof createPostBody>): PlanEntry[] {
  return input.posts.map((post) => {
    const { __type: _ignored, ...settings } = post.settings;
    return {
      integrationId: post.integration.id,
      type: input.type,
      date: input.date ? new Date(input.date) : undefined,
      shortLink: input.shortLink,
      tags: input.tags,
      groupKey: 0,
      settings,
      items: post.value.map((value) => ({
        content: value.content,
        media: value.image.map((image) => ({ id: image.id, path: image.path, alt: image.alt, thumbnail: image.thumbnail })),
        delay: value.delay,
      })),
    };
  });
}

export const createPost = defineTool({
  name: 'createPost',
  title: 'Create posts (REST)',
  description:
    'POST /posts: the REST form of schedulePostTool. One entry per channel; value[0] is the post, further values are thread items or comments. ' +
    'POST /posts/validate takes the same body and answers what each platform would receive, without creating anything. ' +
    'Send an Idempotency-Key header to make a retried request answer the first answer instead of posting twice. ' +
    'allowDuplicate: true lets a text through that (nearly) repeats a recent post on the same channel. Posts made with an OAuth token may wait for approval (AWAITING_APPROVAL).',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: false,
  countsAsPostCreation: 'in-handler',
  acceptsIdempotencyKey: true,
  input: createPostBody,
  output: wrapped(z.array(createdPostSchema)),
  rest: { method: 'POST', path: '/posts', largeBody: true, toResponse: (output) => output.output },
  handler: async (input, context) => {
    const created = await createForCaller(context, 'API', restPlanEntries(input), input.allowDuplicate);
    return { output: created };
  },
});
