// Analytics history (issue 24): the snapshot job reads channels daily and posts on a decaying schedule, with Herald's clock
// moved day by day; REST, MCP and the CSV export then answer the days recorded, where Bluesky itself gives only today's
// counters. Failures back off or are recorded with their reason; a platform without analytics is recorded as such;
// history older than ANALYTICS_HISTORY_DAYS is pruned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { startBlueskyFake, type BlueskyFake } from './fakes/bluesky.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';
import { createPost, chainOf, publishUntilSettled } from './helpers/posts.js';
import { channelHistoryStatus, pruneAnalyticsHistory, snapshotDueMetrics } from '../tools/internal/metrics-snapshots.js';
import { isoDay } from '../providers/shared.js';
import { IntegrationSchema } from '../src/db/entities.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

let herald: Herald;
let bluesky: BlueskyFake;
let telegram: TelegramFake;
let client: Client;
let channelId: string;
let telegramId: string;
let postId: string;
let postUri: string;
let start: number;

// The UTC day each snapshot lands on: at(offset) is 2 hours after the first post's time, the next day when it was published after 22:00.
const dayOf = (offset: number) => isoDay(at(offset));
const at = (days: number, hours = 2) => new Date(start + days * DAY + hours * HOUR);

beforeAll(async () => {
  bluesky = await startBlueskyFake();
  telegram = await startTelegramFake();
  herald = await startHerald({ ANALYTICS_HISTORY_DAYS: '30', SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }) });
  const connected = await herald.rest('POST', '/integrations/bluesky/connect', { service: bluesky.url, identifier: bluesky.handle, appPassword: bluesky.password });
  expect(connected.status, JSON.stringify(connected.body)).toBe(200);
  channelId = connected.body.id;
  const tg = await herald.rest('POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
  expect(tg.status, JSON.stringify(tg.body)).toBe(200);
  telegramId = tg.body.id;
  postId = await createPost(herald, channelId, ['A post whose likes grow']);
  const { outcome } = await publishUntilSettled(herald, postId);
  expect(outcome.kind).toBe('published');
  postUri = (await chainOf(herald, postId))[0].releaseId!;
  start = (await chainOf(herald, postId))[0].publishedAt!.getTime();
  const transport = new StreamableHTTPClientTransport(new URL(`${herald.url}/api/mcp`), { requestInit: { headers: { Authorization: `Bearer ${herald.apiKey}` } } });
  client = new Client({ name: 'history-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await herald?.stop();
  await bluesky?.close();
  await telegram?.server.close();
});

describe('analytics history', () => {
  it('records days of metrics with a moving clock and answers them through REST, MCP and CSV', async () => {
    // Five days: followers grow by 10 a day, the post gains 2 likes a day. The job runs 2 hours into each day.
    for (let day = 0; day <= 4; day++) {
      herald.setNow(at(day));
      bluesky.profile.followersCount = 100 + day * 10;
      bluesky.setEngagement(postUri, { likeCount: day * 2, repostCount: day });
      await snapshotDueMetrics(herald.services);
    }
    // Today (day 4) Bluesky says 150: the live value wins on its day, the recorded ones fill the days before.
    bluesky.profile.followersCount = 150;
    bluesky.setEngagement(postUri, { likeCount: 9, repostCount: 4 });

    const response = await herald.rest('GET', `/analytics/${channelId}?date=7`);
    expect(response.status).toBe(200);
    const followers = response.body.find((metric: any) => metric.label === 'Followers');
    expect(followers).toEqual({
      label: 'Followers',
      data: [100, 110, 120, 130, 150].map((total, day) => ({ total: String(total), date: dayOf(day) })),
      percentageChange: 50,
    });
    // A 3-day request answers 3 days; nothing before the first record is invented.
    const short = await herald.rest('GET', `/analytics/${channelId}?date=3`);
    expect(short.body.find((metric: any) => metric.label === 'Followers').data.map((point: any) => point.date)).toEqual([dayOf(2), dayOf(3), dayOf(4)]);

    // MCP answers the same numbers.
    const viaMcp: any = await client.callTool({ name: 'channelAnalyticsTool', arguments: { integration: channelId, date: 7 } });
    expect(viaMcp.isError).toBeFalsy();
    expect(viaMcp.structuredContent.output).toEqual(response.body);

    // The post: read at +2 h, +26 h, +50 h, +74 h (the decaying schedule; the next read is at +120 h), then live today.
    const post = await herald.rest('GET', `/analytics/post/${postId}?date=7`);
    expect(post.status).toBe(200);
    const likes = post.body.find((metric: any) => metric.label === 'Likes');
    expect(likes.data).toEqual([0, 2, 4, 6, 9].map((total, day) => ({ total: String(total), date: dayOf(day) })));
    const overview: any = await client.callTool({ name: 'analyticsOverviewTool', arguments: { date: 7, channels: [channelId, telegramId] } });
    expect(overview.structuredContent.output[0].metrics.find((metric: any) => metric.label === 'Followers').data).toHaveLength(5);
    expect(overview.structuredContent.output[1]).toMatchObject({ metrics: [], note: expect.stringMatching(/offers no analytics API/) });

    // CSV: the same days, one row per metric and day, as a download.
    const csv = await fetch(`${herald.restUrl}/analytics/${channelId}/export?date=7`, { headers: { authorization: herald.apiKey } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename=Alice-analytics-7d.csv`);
    const lines = (await csv.text()).split('\r\n');
    expect(lines[0]).toBe('date,metric,label,value');
    for (const [day, total] of [[0, 100], [1, 110], [4, 150]]) expect(lines).toContain(`${dayOf(day)},followers,Followers,${total}`);
    const postCsv = await fetch(`${herald.restUrl}/analytics/post/${postId}/export`, { headers: { authorization: herald.apiKey } });
    const postLines = (await postCsv.text()).trim().split('\r\n');
    expect(postLines[0]).toBe('taken_at,metric,label,value');
    expect(postLines.filter((line) => line.includes(',likes,Likes,'))).toEqual([0, 1, 2, 3].map((day, index) => `${at(day).toISOString()},likes,Likes,${index * 2}`));
    // A CSV export of another organization's channel is a 404, not its numbers.
    const other = await herald.newOrganization('Other');
    const foreign = await fetch(`${herald.restUrl}/analytics/${channelId}/export`, { headers: { authorization: other.apiKey } });
    expect(foreign.status).toBe(404);

    const statuses = await channelHistoryStatus(herald.services.orm.em.fork(), herald.organizationId, [channelId, telegramId]);
    expect(statuses.get(channelId)).toMatchObject({ status: 'ok', snapshots: 5, lastError: null });
    expect(statuses.get(telegramId)).toMatchObject({ status: 'no_analytics', lastError: expect.stringMatching(/no analytics API/) });
  });

  it('answers the recorded history with a note when the platform fails, and backs off a retryable failure', async () => {
    herald.setNow(at(5));
    bluesky.server.failNext('GET', '/xrpc/app.bsky.actor.getProfile', { status: 503, json: { error: 'InternalServerError', message: 'AppView down' } }, 10);
    const run = await snapshotDueMetrics(herald.services);
    expect(run.failed).toBe(1);
    const status = (await channelHistoryStatus(herald.services.orm.em.fork(), herald.organizationId, [channelId])).get(channelId)!;
    expect(status.status).toBe('retrying');
    // Backed off 15 minutes, not retried at the next run 10 minutes later.
    expect(status.nextAt!.getTime() - at(5).getTime()).toBe(15 * 60_000);
    const calls = bluesky.server.requestsTo('GET', '/xrpc/app.bsky.actor.getProfile').length;
    herald.setNow(new Date(at(5).getTime() + 10 * 60_000));
    await snapshotDueMetrics(herald.services);
    expect(bluesky.server.requestsTo('GET', '/xrpc/app.bsky.actor.getProfile').length).toBe(calls);

    // Bluesky still fails: the overview answers the five recorded days and says why there is no live value.
    const overview: any = await client.callTool({ name: 'analyticsOverviewTool', arguments: { date: 7, channels: [channelId] } });
    const [entry] = overview.structuredContent.output;
    expect(entry.note).toMatch(/Showing the recorded history/);
    expect(entry.metrics.find((metric: any) => metric.label === 'Followers').data.map((point: any) => point.total)).toEqual(['100', '110', '120', '130', '140']);
  });

  it('does not call a channel that needs reconnecting, and prunes history older than the retention', async () => {
    const em = herald.services.orm.em.fork();
    await em.nativeUpdate(IntegrationSchema, { id: channelId }, { refreshNeeded: true });
    const calls = bluesky.server.requests.length;
    herald.setNow(at(8));
    await snapshotDueMetrics(herald.services);
    expect(bluesky.server.requests.length).toBe(calls);
    expect((await channelHistoryStatus(em, herald.organizationId, [channelId])).get(channelId)!.status).toBe('needs_reconnection');
    // Reconnect-needed channels still answer their history, with the reason.
    const answer = await herald.rest('GET', `/analytics/${channelId}?date=30`);
    expect(answer.status).toBe(200);
    expect(answer.body.find((metric: any) => metric.label === 'Followers').data).toHaveLength(5);
    await em.nativeUpdate(IntegrationSchema, { id: channelId }, { refreshNeeded: false });

    // 32 days later (retention 30): days 0 and 1 are gone, the rest stays.
    herald.setNow(at(32));
    await pruneAnalyticsHistory(herald.services);
    const days = await em.getConnection().execute<{ day: string }[]>(`select to_char(day, 'YYYY-MM-DD') as day from channel_metric_day where integration_id = ? and metric = 'followers' order by day`, [channelId]);
    expect(days.map((row) => row.day)).toEqual([dayOf(2), dayOf(3), dayOf(4)]);
    herald.setNow(undefined);
  });
});
