// The analytics overview (channels compared on one metric over 30 or 90 days) and a channel's best posting times, in the
// console (issue 24). The overview reads Herald's recorded history only, as the channel chart does (no platform call on
// a page view), and draws one line per channel with the same figure and hydration (chart-pages.ts); a channel without the
// metric is listed with the reason. Best times are the bestTimesTool's answer (GET /best-times/{id}), run as the person.
import type { Request, Response, Router } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { bestTimesTool } from '../../../tools/best-times.js';
import { listIntegrations, providerOf } from '../../../tools/internal/integrations.js';
import { periodStart, storedChannelDays } from '../../../tools/internal/metrics-history.js';
import { channelHistoryStatus } from '../../../tools/internal/metrics-snapshots.js';
import { isoDay } from '../../../providers/shared.js';
import type { Services } from '../../../tools/types.js';
import { html, sendPage } from './html.js';
import { CHART_ASSETS, metricFigure, whyEmpty } from './chart-pages.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool } from './session.js';

const OVERVIEW_PERIODS = [30, 90];
/** Compared first when the channels have them: what most platforms report. */
const PREFERRED = ['followers', 'engagement', 'impressions', 'reach'];

/**
 * Every metric recorded for these channels, key → label (the newest label of a key), whatever the period: the list to
 * choose from is what the channels report, not only what they reported in the days shown.
 */
async function recordedMetrics(em: EntityManager, organizationId: string, integrationIds: string[]): Promise<Map<string, string>> {
  if (integrationIds.length === 0) return new Map();
  const rows = await em.getConnection().execute<{ metric: string; label: string }[]>(
    `select distinct on (metric) metric, label from channel_metric_day
      where organization_id = ? and integration_id in (${integrationIds.map(() => '?').join(', ')}) order by metric, day desc`,
    [organizationId, ...integrationIds],
  );
  return new Map(rows.map((row) => [row.metric, row.label]));
}

async function overviewPage(services: Services, request: Request, response: Response): Promise<void> {
  const organizationId = consoleCaller(response).organizationId;
  const days = OVERVIEW_PERIODS.includes(Number(request.query.days)) ? Number(request.query.days) : 30;
  const em = services.orm.em.fork();
  const channels = await listIntegrations(em, organizationId);
  const today = isoDay(services.now());
  const rows = await storedChannelDays(em, organizationId, channels.map((channel) => channel.id), periodStart(today, days), today);
  const statuses = await channelHistoryStatus(em, organizationId, channels.map((channel) => channel.id));
  const labels = await recordedMetrics(em, organizationId, channels.map((channel) => channel.id));
  const asked = typeof request.query.metric === 'string' ? request.query.metric : '';
  const metric = labels.has(asked) ? asked : (PREFERRED.find((key) => labels.has(key)) ?? [...labels.keys()].sort()[0] ?? '');
  const ofMetric = rows.filter((row) => row.metric === metric);
  const charted = channels.filter((channel) => ofMetric.some((row) => row.integrationId === channel.id));
  const dayList = [...new Set(ofMetric.map((row) => row.day))].sort();
  const value = new Map(ofMetric.map((row) => [`${row.integrationId}/${row.day}`, row.value]));
  const missing = channels.filter((channel) => !charted.includes(channel));
  const reason = (channel: (typeof channels)[number]) => {
    const provider = providerOf(channel);
    const own = rows.some((row) => row.integrationId === channel.id);
    if (own) return `${provider.name} reports no ${labels.get(metric) ?? metric} for this channel; its other metrics are on its analytics page.`;
    return whyEmpty(provider, statuses.get(channel.id));
  };
  const locals = consoleLocals(response);
  sendPage(
    response,
    { title: 'Analytics overview', signedIn: locals.signedIn, csrf: locals.csrf ?? '', section: 'analytics', assets: CHART_ASSETS },
    html`<h1>Analytics overview</h1>
    <p>The channels compared over the last ${days} days, as Herald recorded them (read daily).</p>
    <form method="get" action="/analytics" class="card filters" aria-label="What to compare">
      ${labels.size === 0
        ? html`<p id="no-metrics">No metric is recorded yet, so there is nothing to compare: ${channels.length === 0 ? 'connect a channel on the Channels page.' : "Herald reads each channel's metrics once a day (the first time within 10 minutes of connecting), where its platform has an analytics API."}</p>`
        : html`<div><label for="metric">Metric</label><select id="metric" name="metric">${[...labels].sort(([, a], [, b]) => a.localeCompare(b)).map(
            ([key, label]) => html`<option value="${key}"${key === metric ? html` selected` : ''}>${label}</option>`,
          )}</select></div>`}
      <div><label for="days">Period</label><select id="days" name="days">${OVERVIEW_PERIODS.map((period) => html`<option value="${period}"${period === days ? html` selected` : ''}>${period} days</option>`)}</select></div>
      <button type="submit">Compare</button>
    </form>
    ${charted.length === 0
      ? html`<p class="flash error" role="status" id="why-empty">${channels.length === 0 ? 'No channel is connected yet: connect one on the Channels page.' : 'No metric was recorded for any channel in this period.'}</p>`
      : metricFigure({
          id: `overview-${metric}`,
          caption: `${labels.get(metric)} per channel`,
          labels: charted.map((channel) => channel.name),
          rows: dayList.map((day) => [day, ...charted.map((channel) => value.get(`${channel.id}/${day}`) ?? null)] as [string, ...(number | null)[]]),
        })}
    ${missing.length > 0
      ? html`<h2>Not in this chart</h2><ul class="card" id="not-charted">${missing.map((channel) => html`<li><strong>${channel.name}</strong> (${providerOf(channel).name}): ${reason(channel)}</li>`)}</ul>`
      : ''}
    <h2>Each channel</h2>
    <ul class="card">${channels.map((channel) => html`<li>${channel.name} (${providerOf(channel).name}): <a href="/channels/${channel.id}/analytics">analytics</a> · <a href="/channels/${channel.id}/best-times">best times</a></li>`)}</ul>`,
  );
}

async function bestTimesPage(services: Services, request: Request, response: Response): Promise<void> {
  const { output } = await runConsoleTool(bestTimesTool, { id: String(request.params.id) }, response, services);
  const zone = output.timeZone;
  const slotTable = (id: string, caption: string, slots: typeof output.slots) =>
    html`<table id="${id}"><caption>${caption}</caption><thead><tr><th scope="col">Weekday</th><th scope="col">Hour (${zone})</th><th scope="col">Posts</th><th scope="col">Median engagement</th></tr></thead>
      <tbody>${slots.map((slot) => html`<tr><td>${slot.weekday}</td><td>${slot.hour}</td><td>${slot.posts}</td><td>${slot.medianEngagement}</td></tr>`)}</tbody></table>`;
  const locals = consoleLocals(response);
  sendPage(
    response,
    { title: `${output.integration.name} best times`, signedIn: locals.signedIn, csrf: locals.csrf ?? '', section: 'analytics' },
    html`<h1>${output.integration.name}: best times to post</h1>
    <p>From this organization's own posts on the channel: ${output.publishedPosts} published, ${output.postsWithMetrics} with metrics. Times are in the channel's zone, <strong>${zone}</strong>.</p>
    <p class="${output.enoughData ? 'flash ok' : 'flash error'}" role="status" id="best-times-verdict">${output.explanation}</p>
    ${output.enoughData
      ? slotTable('suggestions', 'Suggested slots, best first', output.suggestions)
      : html`<p id="fallback">Until there is enough data, Herald schedules at the channel's posting times: ${(output.fallback?.postingTimes ?? []).join(', ')} (${zone}).</p>`}
    ${output.slots.length > 0 ? slotTable('evidence', 'Every slot with posts: the evidence', output.slots) : ''}
    <p class="hint">${output.method}</p>
    <p><a href="/channels/${output.integration.id}/analytics">Analytics of this channel</a> · <a href="/analytics">Analytics overview</a></p>`,
  );
}

export function overviewPages(router: Router, services: Services): void {
  router.get('/analytics', requireSignedIn, (request, response) => overviewPage(services, request, response));
  router.get('/channels/:id/best-times', requireSignedIn, (request, response) => bestTimesPage(services, request, response));
}
