// A month calendar of posts across channels: each day lists its posts with their state; failed ones (and those published
// only in part) stand out, and are also listed above the grid so they are not missed.
import type { Router } from 'express';
import { postList } from '../../../tools/post-list.js';
import type { Services } from '../../../tools/types.js';
import { html, sendPage } from './html.js';
import { badge, channelFilter, channelSelect, dateTime, excerpt, STATUS_LABELS } from './post-pages.js';
import { consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { platformName } from '../../../tools/internal/channel-health.js';

const DAY_MS = 86_400_000;
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** The first day (UTC) of a `YYYY-MM` month, or of the current one. */
export function monthStart(value: unknown, now: Date): Date {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})$/.exec(value) : null;
  if (match && Number(match[2]) >= 1 && Number(match[2]) <= 12) return new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1));
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

const monthKey = (date: Date) => date.toISOString().slice(0, 7);
const monthName = (date: Date) => date.toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });

interface Row {
  id: string;
  content: string;
  publishDate: string;
  publishStatus: string;
  error: string | null;
  integration: { id: string; name: string; providerIdentifier: string };
}

export function calendarPages(router: Router, services: Services): void {
  router.get('/calendar', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const first = monthStart(request.query.month, services.now());
    const next = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 1));
    const previous = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() - 1, 1));
    // Whole weeks, Monday first.
    const gridStart = new Date(first.getTime() - ((first.getUTCDay() + 6) % 7) * DAY_MS);
    const weeks = Math.ceil((next.getTime() - gridStart.getTime()) / (7 * DAY_MS));
    const gridEnd = new Date(gridStart.getTime() + weeks * 7 * DAY_MS);
    const { posts } = await runConsoleTool(postList, { startDate: gridStart.toISOString(), endDate: new Date(gridEnd.getTime() - 1).toISOString() }, response, services);
    const { channel, rows, channels } = channelFilter(posts as unknown as Row[], request.query.channel);
    const byDay = new Map<string, Row[]>();
    for (const row of rows) byDay.set(row.publishDate.slice(0, 10), [...(byDay.get(row.publishDate.slice(0, 10)) ?? []), row]);
    const failing = rows.filter((row) => row.publishStatus === 'failed' || row.publishStatus === 'partial');
    const waiting = rows.filter((row) => row.publishStatus === 'awaiting_approval').length;
    const today = services.now().toISOString().slice(0, 10);
    const query = (month: Date) => `/calendar?month=${monthKey(month)}${channel ? `&channel=${encodeURIComponent(channel)}` : ''}`;
    sendPage(
      response,
      { title: `Calendar, ${monthName(first)}`, signedIn, csrf, section: 'calendar' },
      html`<h1>${monthName(first)}</h1>
      <form method="get" action="/calendar" class="card actions">
        <div><label for="month">Month</label><input id="month" name="month" type="month" value="${monthKey(first)}"></div>
        ${channelSelect(channels, channel)}
        <button type="submit">Show</button>
      </form>
      <p><a href="${query(previous)}">← ${monthName(previous)}</a> · <a href="${query(next)}">${monthName(next)} →</a></p>
      ${failing.length
        ? html`<section class="card failed-summary" aria-labelledby="failed-title"><h2 id="failed-title">${failing.length} post${failing.length === 1 ? '' : 's'} failed</h2><ul>${failing.map(
            (row) => html`<li><a href="/posts/${row.id}">${row.integration.name}, ${dateTime(row.publishDate)}</a>: ${row.error ?? 'failed'}</li>`,
          )}</ul></section>`
        : ''}
      ${waiting ? html`<p class="card">${waiting} post${waiting === 1 ? ' waits' : 's wait'} for approval: <a href="/approvals">review them</a>.</p>` : ''}
      <table class="calendar"><caption class="visually-hidden">Posts of ${monthName(first)}, one cell per day</caption>
        <thead><tr>${WEEKDAYS.map((name) => html`<th scope="col">${name}</th>`)}</tr></thead>
        <tbody>${Array.from({ length: weeks }, (_, week) => html`<tr>${Array.from({ length: 7 }, (_, weekday) => {
          const day = new Date(gridStart.getTime() + (week * 7 + weekday) * DAY_MS);
          const key = day.toISOString().slice(0, 10);
          const items = byDay.get(key) ?? [];
          const outside = day < first || day >= next;
          return html`<td class="day${outside ? ' outside' : ''}${key === today ? ' today' : ''}"><span class="day-number">${day.getUTCDate()}</span>
            ${items.length ? html`<ul>${items.map((row) => {
              const failed = row.publishStatus === 'failed' || row.publishStatus === 'partial';
              return html`<li class="entry${failed ? ' failed' : ''} status-${row.publishStatus}"><a href="/posts/${row.id}">${row.publishDate.slice(11, 16)} ${row.integration.name}</a>
                <span class="hint">${platformName(row.integration)}</span> ${badge(STATUS_LABELS, row.publishStatus)}
                <span class="excerpt">${excerpt(row.content, 60)}</span></li>`;
            })}</ul>` : ''}</td>`;
        })}</tr>`)}</tbody>
      </table>`,
    );
  });
}
