// A channel's metrics over time in the console (issue 24): from Herald's recorded history (no platform call on a page
// view), one figure per metric with a table of the numbers, which is the page without JavaScript (and for screen
// readers); /assets/charts.js hydrates each figure into a uPlot chart (uPlot, MIT, served from node_modules) from the
// figure's data-series. Empty history says why (no analytics API, needs reconnecting, the last read failed, not read yet).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Request, Response, Router } from 'express';
import type { Services } from '../../../tools/types.js';
import { findIntegration, providerOf } from '../../../tools/internal/integrations.js';
import { csvOf, periodStart, storedChannelDays, type StoredDay } from '../../../tools/internal/metrics-history.js';
import { channelHistoryStatus, type HistoryStatus } from '../../../tools/internal/metrics-snapshots.js';
import { isoDay } from '../../../providers/shared.js';
import { html, sendPage } from './html.js';
import { consoleLocals, requireSignedIn } from './session.js';

const PERIODS = [7, 30, 90, 365];
const UPLOT_DIR = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));

// Reads each figure's series and draws it; the table stays for screen readers, visually replaced by the chart.
const CHARTS_JS = `document.querySelectorAll('figure[data-series]').forEach(function (figure) {
  if (!window.uPlot) return;
  var series = JSON.parse(figure.getAttribute('data-series'));
  var xs = series.map(function (p) { return Date.parse(p[0] + 'T00:00:00Z') / 1000; });
  var ys = series.map(function (p) { return p[1]; });
  var box = document.createElement('div');
  box.className = 'chart';
  box.setAttribute('aria-hidden', 'true');
  figure.insertBefore(box, figure.querySelector('table'));
  figure.classList.add('charted');
  new uPlot({ width: Math.min(720, figure.clientWidth || 720), height: 220, scales: { x: { time: true } },
    series: [{}, { label: figure.getAttribute('data-label'), stroke: '#0b5cad', width: 2, points: { show: series.length < 40 } }] }, [xs, ys], box);
});
`;

const CHARTS_CSS = `figure.metric{margin:1.5rem 0;background:var(--card,#fff);padding:1rem;border:1px solid var(--line,#d1d9e0);border-radius:6px}
figure.charted table{position:absolute;left:-9999px}figure.metric figcaption{font-weight:600}`;

function whyEmpty(provider: ReturnType<typeof providerOf>, status: HistoryStatus | undefined): string {
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
    sendPage(
      response,
      { title: `${integration.name} analytics`, signedIn: locals.signedIn, csrf: locals.csrf ?? '', section: 'channels', assets: { scripts: ['/assets/uplot/uPlot.iife.min.js', '/assets/charts.js'], styles: ['/assets/uplot/uPlot.min.css', '/assets/charts.css'] } },
      html`<h1>${integration.name}: analytics</h1>
      <p>${provider.name} · the last ${days} days, as Herald recorded them (read daily). ${PERIODS.map((period) => (period === days ? html` <strong>${period} days</strong>` : html` <a href="?days=${period}">${period} days</a>`))}
        · <a href="/channels/${integration.id}/analytics.csv?days=${days}" download>Download CSV</a></p>
      ${status?.lastSuccessAt ? html`<p class="hint">Last read ${status.lastSuccessAt.toISOString().slice(0, 16).replace('T', ' ')} UTC${status.status !== 'ok' ? html` · ${whyEmpty(provider, status)}` : ''}</p>` : ''}
      ${metrics.length === 0
        ? html`<p class="flash error" role="status" id="why-empty">${whyEmpty(provider, status)}</p>`
        : metrics.map(
            (metric) => html`<figure class="metric" id="metric-${metric.metric}" data-label="${metric.label}" data-series="${JSON.stringify(metric.points)}">
              <figcaption>${metric.label}${metric.points.length < 2 ? html` <span class="hint">(one day recorded so far: a line needs two)</span>` : ''}</figcaption>
              <table><thead><tr><th scope="col">Day</th><th scope="col">${metric.label}</th></tr></thead>
              <tbody>${metric.points.map(([day, value]) => html`<tr><td>${day}</td><td>${value}</td></tr>`)}</tbody></table>
            </figure>`,
          )}
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
