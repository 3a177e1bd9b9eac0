// A channel's metrics over time in the console (issue 24): from Herald's recorded history (no platform call on a page
// view), one figure per metric with a table of the numbers, which is the page without JavaScript (and for screen
// readers); /assets/charts.js hydrates each figure into a uPlot chart (uPlot, MIT, served from node_modules) from the
// figure's data-series. Empty history says why (no analytics API, needs reconnecting, the last read failed, not read yet).
import { consoleZones, pageZone, when } from './zones.js';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Request, Response, Router } from 'express';
import type { Services } from '../../../tools/types.js';
import { findIntegration, providerOf } from '../../../tools/internal/integrations.js';
import { csvOf, periodStart, storedChannelDays, type StoredDay } from '../../../tools/internal/metrics-history.js';
import { channelHistoryStatus, type HistoryStatus } from '../../../tools/internal/metrics-snapshots.js';
import { isoDay } from '../../../providers/shared.js';
import { html, sendPage, type Markup } from './html.js';
import { consoleLocals, requireSignedIn } from './session.js';

const PERIODS = [7, 30, 90, 365];
const UPLOT_DIR = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));

// Reads each figure's rows ([day or instant, value, value, …]) and draws one line per label (data-labels, else the one
// data-label); a missing value (null) is a gap the line spans. The table stays for screen readers, visually replaced by
// the chart.
const CHARTS_JS = `var COLORS = ['#0b5cad', '#b3261e', '#1e7b34', '#8a4f00', '#6a3d9a', '#00727a'];
document.querySelectorAll('figure[data-series]').forEach(function (figure) {
  if (!window.uPlot) return;
  var rows = JSON.parse(figure.getAttribute('data-series'));
  var labels = figure.hasAttribute('data-labels') ? JSON.parse(figure.getAttribute('data-labels')) : [figure.getAttribute('data-label')];
  var data = [rows.map(function (p) { return Date.parse(p[0].length === 10 ? p[0] + 'T00:00:00Z' : p[0]) / 1000; })];
  labels.forEach(function (_label, index) { data.push(rows.map(function (p) { return p[index + 1]; })); });
  var box = document.createElement('div');
  box.className = 'chart';
  box.setAttribute('aria-hidden', 'true');
  figure.insertBefore(box, figure.querySelector('table'));
  figure.classList.add('charted');
  new uPlot({ width: Math.min(720, figure.clientWidth || 720), height: 220, scales: { x: { time: true } },
    series: [{}].concat(labels.map(function (label, index) {
      return { label: label, stroke: COLORS[index % COLORS.length], width: 2, spanGaps: true, points: { show: rows.length < 40 } };
    })) }, data, box);
});
`;

const CHARTS_CSS = `figure.metric{margin:1.5rem 0;background:var(--card,#fff);padding:1rem;border:1px solid var(--line,#d1d9e0);border-radius:6px}
figure.charted>table{position:absolute;left:-9999px}figure.metric figcaption{font-weight:600}`;

/** The scripts and styles of a page with charts (PageOptions.assets). */
export const CHART_ASSETS = { scripts: ['/assets/uplot/uPlot.iife.min.js', '/assets/charts.js'], styles: ['/assets/uplot/uPlot.min.css', '/assets/charts.css'] };

export interface ChartFigure {
  id: string;
  caption: string;
  /** One per line: the table's columns after the first. */
  labels: string[];
  /** [day (YYYY-MM-DD), value per label]; null where that line has no value that day. */
  rows: [string, ...(number | null)[]][];
  /** The first column's heading. */
  first?: string;
}

/** A chart as a table of its numbers (the page without JavaScript, and for screen readers) that charts.js draws. */
export function metricFigure(figure: ChartFigure): Markup {
  const single = figure.labels.length === 1;
  return html`<figure class="metric" id="${figure.id}" ${single ? html`data-label="${figure.labels[0]}"` : html`data-labels="${JSON.stringify(figure.labels)}"`} data-series="${JSON.stringify(figure.rows)}">
    <figcaption>${figure.caption}${figure.rows.length < 2 ? html` <span class="hint">(one day recorded so far: a line needs two)</span>` : ''}</figcaption>
    <table><thead><tr><th scope="col">${figure.first ?? 'Day'}</th>${figure.labels.map((label) => html`<th scope="col">${label}</th>`)}</tr></thead>
    <tbody>${figure.rows.map(([day, ...values]) => html`<tr><td>${day}</td>${values.map((value) => html`<td>${value ?? '—'}</td>`)}</tr>`)}</tbody></table>
  </figure>`;
}

export function whyEmpty(provider: ReturnType<typeof providerOf>, status: HistoryStatus | undefined): string {
  if (!provider.analytics) return `${provider.name} offers no analytics API: Herald cannot read metrics for this channel.`;
  if (!status || status.status === 'pending') return 'Not read yet: Herald reads each channel\'s metrics once a day, the first time within 10 minutes of connecting.';
  if (status.status === 'needs_reconnection') return 'The channel needs reconnecting: Herald cannot read its metrics until then.';
  if (status.status === 'failed' || status.status === 'retrying') return `The last read failed: ${status.lastError ?? 'no reason given'}${status.status === 'retrying' ? ' (Herald tries again soon).' : ''}`;
  return 'No metric was recorded in this period.';
}

function byMetric(rows: StoredDay[]): { metric: string; label: string; points: [string, number][] }[] {
  const metrics = new Map<string, { metric: string; label: string; points: [string, number][] }>();
  for (const row of rows) {
    const entry = metrics.get(row.metric) ?? { metric: row.metric, label: row.label, points: [] };
    entry.label = row.label;
    entry.points.push([row.day, row.value]);
    metrics.set(row.metric, entry);
  }
  return [...metrics.values()];
}

async function channelHistory(services: Services, response: Response, id: string, days: number) {
  const organizationId = consoleLocals(response).signedIn!.organization!.id;
  const em = services.orm.em.fork();
  const integration = await findIntegration(em, organizationId, id);
  const today = isoDay(services.now());
  const rows = await storedChannelDays(em, organizationId, [integration.id], periodStart(today, days), today);
  const status = (await channelHistoryStatus(em, organizationId, [integration.id])).get(integration.id);
  return { integration, rows, status };
}

const periodOf = (request: Request) => {
  const days = Number(request.query.days ?? 90);
  return PERIODS.includes(days) ? days : 90;
};

export function chartPages(router: Router, services: Services): void {
  router.get('/assets/uplot/:file', (request, response) => {
    const file = String(request.params.file);
    if (file !== 'uPlot.iife.min.js' && file !== 'uPlot.min.css') return void response.status(404).type('text').send('Not found');
    response.setHeader('Cache-Control', 'public, max-age=86400').type(file.endsWith('.js') ? 'application/javascript' : 'text/css').send(fs.readFileSync(path.join(UPLOT_DIR, file)));
  });
  router.get('/assets/charts.js', (_request, response) => void response.setHeader('Cache-Control', 'public, max-age=3600').type('application/javascript').send(CHARTS_JS));
  router.get('/assets/charts.css', (_request, response) => void response.setHeader('Cache-Control', 'public, max-age=3600').type('text/css').send(CHARTS_CSS));

  router.get('/channels/:id/analytics', requireSignedIn, async (request, response) => {
    const days = periodOf(request);
    const { integration, rows, status } = await channelHistory(services, response, String(request.params.id), days);
    const provider = providerOf(integration);
    const metrics = byMetric(rows);
    const locals = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    sendPage(
      response,
      { title: `${integration.name} analytics`, signedIn: locals.signedIn, csrf: locals.csrf ?? '', section: 'channels', assets: CHART_ASSETS, zone: pageZone(zones) },
      html`<h1>${integration.name}: analytics</h1>
      <p>${provider.name} · the last ${days} days, as Herald recorded them (read daily). ${PERIODS.map((period) => (period === days ? html` <strong>${period} days</strong>` : html` <a href="?days=${period}">${period} days</a>`))}
        · <a href="/channels/${integration.id}/analytics.csv?days=${days}" download>Download CSV</a></p>
      ${status?.lastSuccessAt ? html`<p class="hint">Last read ${when(status.lastSuccessAt, zones.viewer)}${status.status !== 'ok' ? html` · ${whyEmpty(provider, status)}` : ''}</p>` : ''}
      ${metrics.length === 0
        ? html`<p class="flash error" role="status" id="why-empty">${whyEmpty(provider, status)}</p>`
        : metrics.map((metric) => metricFigure({ id: `metric-${metric.metric}`, caption: metric.label, labels: [metric.label], rows: metric.points }))}
      <p><a href="/channels/${integration.id}/best-times">Best times to post</a></p>
      <p><a href="/channels">Back to the channels</a></p>`,
    );
  });

  router.get('/channels/:id/analytics.csv', requireSignedIn, async (request, response) => {
    const days = periodOf(request);
    const { integration, rows } = await channelHistory(services, response, String(request.params.id), days);
    const safe = integration.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'channel';
    response
      .type('text/csv; charset=utf-8')
      .attachment(`${safe}-analytics-${days}d.csv`)
      .send(csvOf(['date', 'metric', 'label', 'value'], rows.map((row) => [row.day, row.metric, row.label, row.value])));
  });
}
