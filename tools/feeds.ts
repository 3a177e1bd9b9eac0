// Feeds to posts (REST /feeds, issue 35): an RSS or Atom feed whose new entries become posts on chosen channels from a
// template, as drafts or into each channel's next free slot. Adding, changing, pausing, checking and deleting a feed is
// standing automation, like a channel (channels:manage); reading them is `read`. The work is tools/internal/feeds.ts.
import { z } from 'zod';
import { feedModes } from '../src/db/feed-entities.js';
import { defineTool, readOnly, type ToolContext } from './types.js';
import { confirmInput, deletionOutput, idParam, wrapped } from './shapes.js';
import { confirmDeletion } from './internal/confirmation.js';
import { changeFeed, createFeed, DEFAULT_INTERVAL_MINUTES, deleteFeed, MAX_BACKLOG, pollFeed } from './internal/feeds.js';
import { findFeed, listFeeds, recentEntries, toFeedEntryRecord, toFeedRecord } from './internal/feed-records.js';

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

const feedSchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  channels: z.array(z.string()).describe('Channel ids the posts go to'),
  template: z.string(),
  mode: z.enum(feedModes),
  attachPicture: z.boolean(),
  intervalMinutes: z.number(),
  status: z.enum(['active', 'paused', 'failing']),
  feedTitle: z.string().nullable(),
  lastError: z.string().nullable().describe('Why the last read failed (null once a read works)'),
  failingSince: z.string().nullable(),
  lastPolledAt: z.string().nullable(),
  lastSuccessAt: z.string().nullable(),
  nextPollAt: z.string(),
  createdAt: z.string(),
});

const entrySchema = z.object({
  title: z.string(),
  link: z.string().nullable(),
  publishedAt: z.string().nullable(),
  state: z.enum(['posted', 'baseline', 'failed']).describe('baseline: there when the feed was added, never posted'),
  seenAt: z.string(),
  posts: z.array(z.object({ integrationId: z.string(), postId: z.string().optional(), error: z.string().optional() })),
});

const settingsFields = {
  name: z.string().trim().max(200).optional(),
  template: z.string().max(2000).optional().describe('Plain text; {title} {link} {summary} {picture}; each line a paragraph. Default "{title}\\n{link}"'),
  mode: z.enum(feedModes).describe('draft: for review; schedule: into each channel\'s next free posting slot'),
  attachPicture: z.boolean().optional().describe('Attach the entry\'s picture (default true)'),
  intervalMinutes: z.number().int().min(5).max(1440).optional().describe(`Minutes between reads (default ${DEFAULT_INTERVAL_MINUTES})`),
};

const shownFeedSchema = feedSchema.extend({ entries: z.array(entrySchema).optional() });

/** A feed with its 20 latest entries and the posts made from each. */
async function shownFeed(em: ToolContext['em'], organizationId: string, id: string) {
  const feed = await findFeed(em, organizationId, id);
  return { ...toFeedRecord(feed), entries: (await recentEntries(em, feed)).map(toFeedEntryRecord) };
}

export const feedList = defineTool({
  name: 'feedList',
  title: 'List feeds',
  description: 'RSS/Atom feeds that post new entries: channels, status, last error. With id: one feed, its latest entries.',
  annotations: readOnly,
  mcp: true,
  input: z.object({ id: idParam.optional() }),
  output: wrapped(z.array(shownFeedSchema)),
  rest: { method: 'GET', path: '/feeds', toInput: () => ({}), toResponse: (output) => output.output },
  handler: async (input, { em, caller }) => ({
    output: input.id ? [await shownFeed(em, caller.organizationId, input.id)] : (await listFeeds(em, caller.organizationId)).map(toFeedRecord),
  }),
});

/** REST only: over MCP, feedList with the id answers the same. */
export const feedShow = defineTool({
  name: 'feedShow',
  title: 'Show a feed',
  description: 'GET /feeds/{id}: one feed with its 20 latest entries and the posts made from each.',
  annotations: readOnly,
  mcp: false,
  input: z.object({ id: idParam }),
  output: feedSchema.extend({ entries: z.array(entrySchema) }),
  rest: { method: 'GET', path: '/feeds/:id' },
  handler: async (input, { em, caller }) => shownFeed(em, caller.organizationId, input.id),
});

export const createFeedTool = defineTool({
  name: 'createFeed',
  title: 'Add a feed',
  description:
    'POST /feeds: reads the RSS or Atom feed at url now (refused with the reason when it cannot), then turns each entry published after its newest ' +
    'into one post per channel from template. An entry is used once (its GUID or link). backlog N also posts its newest N entries now.',
  annotations: writes,
  mcp: true,
  scope: 'channels:manage',
  acceptsIdempotencyKey: true,
  input: z.object({
    url: z.string().trim().min(1).max(2000).describe('The feed\'s public http(s) URL'),
    channels: z.array(idParam).min(1).max(20).describe('Channel ids (integrationList)'),
    ...settingsFields,
    backlog: z.number().int().min(0).max(MAX_BACKLOG).optional().describe('Also post the newest N entries now (default 0)'),
  }),
  output: feedSchema.extend({ posts: z.number().describe('Posts made now (from backlog)') }),
  rest: { method: 'POST', path: '/feeds', status: 201 },
  handler: async (input, context) => {
    const { feed, posts } = await createFeed(context, input);
    return { ...toFeedRecord(feed), posts };
  },
});

export const changeFeedTool = defineTool({
  name: 'changeFeed',
  title: 'Change a feed',
  description:
    'PUT /feeds/{id}: changes the fields given; paused true stops reading it, false resumes (entries that came meanwhile are new). ' +
    'A new url is read first, and what it has then is not posted.',
  annotations: { ...writes, idempotentHint: true },
  mcp: true,
  scope: 'channels:manage',
  input: z.object({
    id: idParam,
    url: z.string().trim().min(1).max(2000).optional(),
    channels: z.array(idParam).min(1).max(20).optional(),
    ...settingsFields,
    mode: settingsFields.mode.optional(),
    paused: z.boolean().optional(),
  }),
  output: feedSchema,
  rest: { method: 'PUT', path: '/feeds/:id' },
  handler: async ({ id, ...changes }, context) => {
    const feed = await findFeed(context.em, context.caller.organizationId, id);
    return toFeedRecord(await changeFeed(context, feed, changes));
  },
});

export const checkFeedTool = defineTool({
  name: 'checkFeed',
  title: 'Check a feed now',
  description: 'POST /feeds/{id}/check: reads the feed now (also a paused or failing one) and answers what came of it; new entries become posts.',
  annotations: writes,
  mcp: true,
  scope: 'channels:manage',
  input: z.object({ id: idParam }),
  output: feedSchema.extend({
    check: z.object({ ok: z.boolean(), notModified: z.boolean().optional().describe('304: nothing changed'), posts: z.number(), error: z.string().optional() }),
  }),
  rest: { method: 'POST', path: '/feeds/:id/check' },
  handler: async (input, { em, caller, services }) => {
    const feed = await findFeed(em, caller.organizationId, input.id);
    const check = await pollFeed(services, em, feed);
    return { ...toFeedRecord(feed), check };
  },
});

export const deleteFeedTool = defineTool({
  name: 'deleteFeed',
  title: 'Delete a feed',
  description: 'DELETE /feeds/{id}: stops the feed and forgets its entries; the posts it made stay. Over MCP the user confirms first (confirm: true on a second call).',
  annotations: { ...writes, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: true,
  scope: 'channels:manage',
  input: z.object({ id: idParam, confirm: confirmInput }),
  output: deletionOutput,
  rest: { method: 'DELETE', path: '/feeds/:id', toInput: ({ params }) => ({ id: params.id }) },
  handler: async (input, context) => {
    const feed = await findFeed(context.em, context.caller.organizationId, input.id);
    const summary = `This stops the feed "${feed.name}" (${feed.url}); the posts it made stay.`;
    const refused = await confirmDeletion(context, { action: `deleteFeed:${feed.id}`, tool: 'deleteFeed', id: feed.id, summary, wouldDelete: { feed: feed.name, url: feed.url }, confirmed: input.confirm });
    if (refused) return refused;
    await deleteFeed(context.em, feed);
    return { id: feed.id, deleted: true };
  },
});

export const feedTools = [feedList, feedShow, createFeedTool, changeFeedTool, checkFeedTool, deleteFeedTool];
