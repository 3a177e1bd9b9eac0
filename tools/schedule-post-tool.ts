import { z } from 'zod';
import { newId } from '../src/lib/crypto.js';
import { defineTool } from './types.js';
import { createForCaller, PostValidationError, type PlanEntry } from './internal/create-posts.js';
import { createdPostSchema, utcDateTime } from './shapes.js';
import { idempotencyKeyField } from './internal/idempotency.js';

const socialPostSchema = z.object({
  integrationId: z.string().min(1).describe('Channel id from integrationList'),
  isPremium: z.boolean().describe('true for X premium accounts (25,000 characters); false otherwise'),
  date: utcDateTime.describe('Publication date, UTC ISO 8601 (ignored for type "now")'),
  shortLink: z.boolean().describe('Shorten the links of the post when it is published (the length rules count the short form); their clicks appear as the "clicks" metric of postAnalyticsTool'),
  type: z.enum(['draft', 'schedule', 'now']).describe('"schedule" publishes at `date`, "now" at once, "draft" keeps it unpublished'),
  postsAndComments: z
    .array(
      z.object({
        content: z.string().describe('HTML: wrap each line in <p>; allowed p, h1-h3, strong (bold), u (underline), ul/li; never strong and u together'),
        attachments: z.array(z.string()).describe('Media URLs (from upload or generateImageTool), or an empty array'),
      }),
    )
    .min(1)
    .describe('Thread platforms (x, threads, bluesky, mastodon, telegram): each item is a post of the thread. Comment platforms (linkedin, facebook): first item is the post, the rest comments.'),
  settings: z.array(z.object({ key: z.string(), value: z.any() })).describe('Platform settings from integrationSchema as key/value pairs; prefer ids over labels'),
});

export const schedulePostInput = z.object({
  socialPost: z.array(socialPostSchema).min(1).describe('One item per channel and date'),
  idempotencyKey: idempotencyKeyField,
  allowDuplicate: z.boolean().optional().describe('true only when repeating the text of a recent post on the same channel is intended (otherwise it is refused as a duplicate)'),
});

/** The plan entries of schedulePostTool (and validatePostTool): one group per socialPost item. */
export function socialPostEntries(input: z.output<typeof schedulePostInput>): PlanEntry[] {
  return input.socialPost.map((item, index) => ({
    integrationId: item.integrationId,
    type: item.type,
    date: new Date(item.date),
    shortLink: item.shortLink,
    groupKey: index,
    isPremium: item.isPremium,
    settings: Object.fromEntries(item.settings.filter((pair) => pair.key !== '__type').map((pair) => [pair.key, pair.value])),
    items: item.postsAndComments.map((part) => ({
      content: part.content,
      media: part.attachments.map((url) => ({ id: newId(), path: url })),
      delay: 0,
    })),
  }));
}

export const schedulePostTool = defineTool({
  name: 'schedulePostTool',
  title: 'Schedule posts',
  description:
    'Creates posts, threads and comments on one or more channels: each socialPost item targets one channel at its own date. ' +
    'First call integrationList (channel ids) and integrationSchema (rules, maxLength, settings) for each platform. ' +
    'Validation is all or nothing: if any item is invalid nothing is created and the answer is {output: {errors: "<channel>: <problem>, <fix>"}}; fix and call again. ' +
    'On success answers {output: [{postId, integration, warnings?}]}, one per item. Dates are UTC. ' +
    'When unsure how a post will look or whether it fits (length, media, settings), call validatePostTool first with the same arguments: it answers the exact text each platform receives and every problem, and creates nothing. ' +
    'If a call times out, call again with the same idempotencyKey: you get the first answer, never a second post. ' +
    'When the organization requires approval of posts made by agents, each answer item carries approval: {status: "pending"}: the post waits for an owner (read or subscribe to herald://posts/{postId} for the decision). ' +
    'A text (nearly) repeating a post on the same channel within days is refused with the earlier post; set allowDuplicate: true only when the repetition is intended.',
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
        return { output: { errors: error.problems.map((problem) => `${problem.channel}: ${problem.message}`).join('; ') } };
      }
      throw error;
    }
  },
});
