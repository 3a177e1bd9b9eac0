// Best times (issue 24): suggested from seeded published posts and their engagement snapshots, bucketed by weekday and
// hour in the channel's time zone (New York, across the end of daylight-saving time), with the evidence; too little data
// says so and falls back to the posting times; the same through REST, MCP tool and resource, and find-slot's
// strategy=engagement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { createPost } from './helpers/posts.js';
import { IntegrationSchema, PostSchema } from '../src/db/entities.js';
import { recordPostSnapshot } from '../tools/internal/metrics-history.js';

const HOUR = 3_600_000;
const NOW = new Date('2026-11-27T12:00:00Z'); // a Friday; New York is on EST (UTC-5) since 1 November

let herald: Herald;
let bluesky: BlueskyFake;
let client: Client;
let channelId: string;
let seeded = 0;

/** A published post of the channel at `publishedAt` whose likes (and replies, views) were read two days later. */
async function seed(publishedAt: string, likes: number, extra: { replies?: number; views?: number; readAfterHours?: number } = {}) {
  const id = await createPost(herald, channelId, [`Seeded post ${seeded++}`], { type: 'draft', date: new Date(Date.now() + 86_400_000) });
  const em = herald.services.orm.em.fork();
  await em.nativeUpdate(PostSchema, { id }, { state: 'PUBLISHED', publishedAt: new Date(publishedAt), publishDate: new Date(publishedAt), releaseId: `at://seed/${id}` });
  const metrics = [
    { label: 'Likes', data: [{ total: String(likes), date: publishedAt.slice(0, 10) }], percentageChange: 0 },
    { label: 'Replies', data: [{ total: String(extra.replies ?? 0), date: publishedAt.slice(0, 10) }], percentageChange: 0 },
    { label: 'Views', data: [{ total: String(extra.views ?? 0), date: publishedAt.slice(0, 10) }], percentageChange: 0 },
  ];
  // An early read (1 hour in) that the answer must not use when a settled one exists.
  await recordPostSnapshot(em, { id, organizationId: herald.organizationId, integrationId: channelId }, metrics.map((metric) => ({ ...metric, data: [{ ...metric.data[0], total: '1' }] })), new Date(Date.parse(publishedAt) + HOUR));
  await recordPostSnapshot(em, { id, organizationId: herald.organizationId, integrationId: channelId }, metrics, new Date(Date.parse(publishedAt) + (extra.readAfterHours ?? 48) * HOUR));
  return id;
}

beforeAll(async () => {
  herald = await startHerald({ DUPLICATE_WINDOW_DAYS: '0' });
  bluesky = await startBlueskyFake();
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
  const em = herald.services.orm.em.fork();
  await em.nativeUpdate(IntegrationSchema, { id: channelId }, { postingTimes: [540], timeZone: 'America/New_York' });
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  client = new Client({ name: 'best-times-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await bluesky?.close();
});

describe('best times', () => {
  it('says there is no data, then too little, and falls back to the posting times', async () => {
    herald.setNow(NOW);
    const empty = await herald.rest('GET', `/best-times/${channelId}`);
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ enoughData: false, publishedPosts: 0, postsWithMetrics: 0, suggestions: [], slots: [], fallback: { postingTimes: ['04:00'] }, timeZone: 'America/New_York' });
    expect(empty.body.explanation).toMatch(/^No data: no post was published on this channel/);

    // Tuesday 09:00 and Thursday 18:00 in New York (14:00 and 23:00 UTC in November).
    for (const [at, likes] of [['2026-11-24T14:00:00Z', 10], ['2026-11-17T14:00:00Z', 10], ['2026-11-19T23:00:00Z', 50], ['2026-11-12T23:00:00Z', 10]] as const) await seed(at, likes);
    const thin = await herald.rest('GET', `/best-times/${channelId}`);
    expect(thin.body).toMatchObject({ enoughData: false, postsWithMetrics: 4, suggestions: [], fallback: { postingTimes: ['04:00'] } });
    expect(thin.body.explanation).toMatch(/^Not enough data: 4 posts with metrics \(at least 10 are needed/);
    // The evidence is still shown.
    expect(thin.body.slots).toEqual([
      { weekday: 'Thursday', hour: '18:00', posts: 2, medianEngagement: 30 },
      { weekday: 'Tuesday', hour: '09:00', posts: 2, medianEngagement: 10 },
    ]);
    const slot = await herald.rest('GET', `/find-slot/${channelId}?strategy=engagement`);
    expect(slot.status).toBe(200);
    expect(slot.body).toMatchObject({ date: '2026-11-28T09:00:00.000Z', note: thin.body.explanation });
  });

  it('suggests the slots with the highest median engagement in the channel time zone, with the evidence', async () => {
    // Tuesday 09:00 New York: a third post in October, when 09:00 was 13:00 UTC (EDT): 10, 10, 30 → median 10.
    await seed('2026-10-27T13:00:00Z', 30);
    // Thursday 18:00 New York: 42 (40 likes + 2 replies; views never count), with 50 and 10 → median 42.
    await seed('2026-11-05T23:00:00Z', 40, { replies: 2, views: 10_000 });
    // Single posts with high engagement: too few in their slots to be suggested.
    for (const at of ['2026-11-23T15:00:00Z', '2026-11-18T15:00:00Z', '2026-11-20T15:00:00Z', '2026-11-21T15:00:00Z', '2026-11-22T15:00:00Z']) await seed(at, 100);
    // Published two hours ago: not read a day after publication yet, so without metrics.
    await seed('2026-11-27T10:00:00Z', 500, { readAfterHours: 1.5 });

    const response = await herald.rest('GET', `/best-times/${channelId}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ enoughData: true, publishedPosts: 12, postsWithMetrics: 11, fallback: null, timeZone: 'America/New_York' });
    expect(response.body.suggestions).toEqual([
      { weekday: 'Thursday', hour: '18:00', posts: 3, medianEngagement: 42 },
      { weekday: 'Tuesday', hour: '09:00', posts: 3, medianEngagement: 10 },
    ]);
    expect(response.body.explanation).toMatch(/^From 11 posts with metrics: Thursday 18:00 \(America\/New_York\)/);
    expect(response.body.slots).toHaveLength(7);

    // MCP tool and resource answer the same.
    const tool: any = await client.callTool({ name: 'bestTimesTool', arguments: { id: channelId } });
    expect(tool.structuredContent.output).toEqual(response.body);
    const resource = await client.readResource({ uri: `herald://channels/${channelId}/best-times` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toEqual(response.body);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain('herald://channels/{id}/best-times');
    await expect(client.readResource({ uri: 'herald://channels/nope/best-times' })).rejects.toThrow(/Channel not found/);

    // find-slot strategy=engagement: the soonest free best slot (Tuesday 09:00 New York = 14:00 UTC), then the next one.
    const first = await herald.rest('GET', `/find-slot/${channelId}?strategy=engagement`);
    expect(first.body.date).toBe('2026-12-01T14:00:00.000Z');
    expect(first.body.note).toMatch(/^A best slot by engagement \(America\/New_York\)/);
    await createPost(herald, channelId, ['Taking the Tuesday slot'], { date: new Date(first.body.date) });
    expect((await herald.rest('GET', `/find-slot/${channelId}?strategy=engagement`)).body.date).toBe('2026-12-03T23:00:00.000Z');
    // Without the strategy: the posting times, as before.
    expect((await herald.rest('GET', `/find-slot/${channelId}`)).body).toMatchObject({ date: '2026-11-28T09:00:00.000Z' });
    expect((await herald.rest('GET', `/find-slot/${channelId}?strategy=best`)).status).toBe(400);
    herald.setNow(undefined);
  });
});
