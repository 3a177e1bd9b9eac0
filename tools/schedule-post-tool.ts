import { z } from 'zod';
import { defineTool } from './types.js';
import { createForCaller, PostValidationError, type PlanEntry } from './internal/create-posts.js';
import { createdPostSchema, mediaReference, utcDateTime } from './shapes.js';
import { idempotencyKeyField } from './internal/idempotency.js';

const socialPostSchema = z.object({
  integrationId: z.string().min(1).describe('Channel id from integrationList'),
  isPremium: z.boolean().optional().describe('Optional: X Premium is read from the account'),
  date: utcDateTime.optional().describe('UTC; required for schedule'),
  shortLink: z.boolean().default(false).describe('Shorten links (clicks in postAnalyticsTool)'),
  type: z.enum(['draft', 'schedule', 'now']).describe('schedule: at date; now: at once; draft: kept unpublished'),
  postsAndComments: z
    .array(
      z.object({
        content: z.string().describe('HTML: each line in <p>; p, h1-h3, strong, u, ul/li, a; never strong inside u'),
        attachments: z.array(mediaReference).default([]),
      }),
    )
    .min(1)
    .describe('First item is the post; the rest are its thread (x, threads, bluesky, mastodon, telegram) or comments (linkedin, facebook)'),
  settings: z.array(z.object({ key: z.string(), value: z.any() })).default([]).describe('[{key, value}] from integrationSchema; omit when none'),
});

export const schedulePostInput = z.object({
  socialPost: z.array(socialPostSchema).min(1).describe('One item per channel and date'),
  idempotencyKey: idempotencyKeyField,
  allowDuplicate: z.boolean().optional().describe('true only when repeating a recent post on the same channel is intended'),
});

/** The plan entries of schedulePostTool (and validatePostTool): one group per socialPost item. */
export function socialPostEntries(input: z.output<typeof schedulePostInput>): PlanEntry[] {
  return input.socialPost.map((item, index) => ({
    integrationId: item.integrationId,
    type: item.type,
    date: item.date ? new Date(item.date) : undefined,
    shortLink: item.shortLink,
    groupKey: index,
    isPremium: item.isPremium,
    settings: Object.fromEntries(item.settings.filter((pair) => pair.key !== '__type').map((pair) => [pair.key, pair.value])),
    items: item.postsAndComments.map((part) => ({ content: part.content, media: part.attachments, delay: 0 })),
  }));
}

export const schedulePostTool = defineTool({
  name: 'schedulePostTool',
  title: 'Schedule posts',
  description:
    "Creates posts with threads or comments, one socialPost item per channel and date. First integrationSchema, then validatePostTool with the same arguments (show the user its text). All or nothing: a refusal creates nothing and answers {output: {errors}} with each fix. Answers {output: [{postId, approval?}]}. Each item is its own group. Send an idempotencyKey; after a time-out retry with the same key, never a new one.",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: true,
  countsAsPostCreation: 'in-handler',
  acceptsIdempotencyKey: true,
  input: schedulePostInput,
  output: z.object({ output: z.union([z.array(createdPostSchema), z.object({ errors: z.string() })]) }),
  refused: (output) => !Array.isArray(output.output),
  handler: async (input, context) => {
    try {
      const created = await createForCaller(context, 'MCP', socialPostEntries(input), input.allowDuplicate);
      return { output: created };
    } catch (error) {
      if (error instanceof PostValidationError) {
        context.log?.('warning', `Nothing was created: ${error.message}`);
        return { output: { errors: error.message } };
      }
      throw error;
    }
  },
});
