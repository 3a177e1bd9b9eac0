// The calendar of posts across channels, in the person's zone (or another one chosen for the page: a client's): a month
// grid or a week of hours. Failed posts (and those published only in part) stand out and are listed above the grid.
// Posts that have not gone out can be moved: dragged to another day or hour (the console's script), moved with Alt+arrow
// keys, or with the plain form behind each post's "Move" link (move-pages.ts); every move goes through updatePost, so the
// duplicate guard and the approval rules apply as on the API.
import type { Response, Router } from 'express';
import { platformName } from '../../../tools/internal/channel-health.js';
import type { Services } from '../../../tools/types.js';
import { canonicalZone, dateKey, timeKey, wallClockOf, zoneAbbreviation } from '../../lib/time-zone.js';
import { calendarData, filterFields, filterQuery, filtersOf, type CalendarEntry } from './calendar-filters.js';
import { addMonths, dayKey, dayName, isoWeekKey, monthKey, monthName, monthOf, plusDays, rangeOf, sameDay, today, weekday, weekOf, type Day } from './calendar-dates.js';
import { escapeHtml, html, Markup, sendPage } from './html.js';
import { badge, STATUS_LABELS } from './post-pages.js';
import { consoleLocals, requireSignedIn } from './session.js';
import { consoleZones, formatWhen, pageZone, zoneDatalist, zoneField } from './zones.js';

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
/** Posts that have not gone out may move; what went out stays where it went. */
const MOVABLE = new Set(['draft', 'awaiting_approval', 'scheduled', 'retrying', 'failed']);
const failedOf = (row: CalendarEntry) => row.publishStatus === 'failed' || row.publishStatus === 'partial';

interface Placed {
  row: CalendarEntry;
  day: string;
  hour: number;
  time: string;
  /** Kept by a move: moving a day keeps the time of day exactly. */
  seconds: number;
  /** The date as formatWhen writes it (zones.ts), from the same reading. */
  when: string;
}

/**
 * One post of a cell, as one string (a month holds a thousand: no markup object per field). The same markup as the
 * `html` template would make: every value escaped; the channel's parts and the badges are made once per page.
 */
function entry(placed: Placed, back: string, parts: (row: CalendarEntry) => { name: string; platform: string; badge: string }): string {
  const { row } = placed;
  const movable = MOVABLE.has(row.publishStatus);
  const { name, platform, badge: status } = parts(row);
  const id = escapeHtml(row.id);
  return `<li class="entry${failedOf(row) ? ' failed' : ''} status-${escapeHtml(row.publishStatus)}"${movable ? ` draggable="true" data-post="${id}" data-time="${placed.time}:${String(placed.seconds).padStart(2, '0')}"` : ''}>
    <a href="/posts/${id}" title="${escapeHtml(placed.when)}">${placed.time} ${name}</a>
    <span class="hint">${platform}</span> ${status}
    <span class="excerpt">${escapeHtml(row.excerpt)}</span>
    ${movable ? `<a class="move" href="/posts/${id}/move?back=${escapeHtml(encodeURIComponent(back))}">Move<span class="visually-hidden"> the post on ${name}, ${placed.time}</span></a>` : ''}</li>`;
}

/** The escaped name and platform of each channel, and each state's badge, made once for the page. */
function entryParts(): (row: CalendarEntry) => { name: string; platform: string; badge: string } {
  const channels = new Map<string, { name: string; platform: string }>();
  const badges = new Map<string, string>();
  return (row) => {
    let channel = channels.get(row.integration.id);
    if (!channel) {
      channel = { name: escapeHtml(row.integration.name), platform: escapeHtml(platformName(row.integration)) };
      channels.set(row.integration.id, channel);
    }
    let status = badges.get(row.publishStatus);
    if (status === undefined) {
      status = badge(STATUS_LABELS, row.publishStatus).value;
      badges.set(row.publishStatus, status);
    }
    return { ...channel, badge: status };
  };
}

export function calendarPages(router: Router, services: Services): void {
  router.get('/calendar', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    // Another zone for this page only (a client's), else the person's.
    const zone = canonicalZone(request.query.zone) ?? zones.viewer;
    const week = request.query.view === 'week';
    const filters = filtersOf(request);
    const now = services.now();
    const current = today(now, zone);
    const first = week ? weekOf(request.query.week, current) : monthOf(request.query.month, current);
    // Whole weeks, Monday first.
    const gridStart = week ? first : plusDays(first, -weekday(first));
    const next = week ? plusDays(first, 7) : addMonths(first, 1);
    const previous = week ? plusDays(first, -7) : addMonths(first, -1);
    const weeks = week ? 1 : Math.ceil(Math.round((Date.UTC(next.year, next.month - 1, next.day) - Date.UTC(gridStart.year, gridStart.month - 1, gridStart.day)) / 86_400_000) / 7);
    const range = rangeOf(gridStart, weeks * 7, zone);
    const data = await calendarData(services, response, range, filters);

    const zoneQuery = zone !== zones.viewer ? `&zone=${encodeURIComponent(zone)}` : '';
    const link = (view: 'month' | 'week', day: Day) =>
      view === 'week' ? `/calendar?view=week&week=${isoWeekKey(day)}${filterQuery(filters)}${zoneQuery}` : `/calendar?month=${monthKey(day)}${filterQuery(filters)}${zoneQuery}`;
    const here = link(week ? 'week' : 'month', first);
    const placed: Placed[] = data.posts.map((row) => {
      const wall = wallClockOf(row.publishDate, zone);
      const day = dateKey(wall);
      const time = timeKey(wall);
      return { row, day, hour: wall.hour, time, seconds: wall.second, when: `${day} ${time} ${zoneAbbreviation(row.publishDate, zone)}` };
    });
    const byCell = new Map<string, Placed[]>();
    for (const item of placed) {
      const key = week ? `${item.day}|${item.hour}` : item.day;
      const list = byCell.get(key);
      if (list) list.push(item);
      else byCell.set(key, [item]);
    }
    const failing = data.posts.filter(failedOf);
    const waiting = data.posts.filter((row) => row.publishStatus === 'awaiting_approval').length;
    const title = week ? `Week of ${dayKey(first)}` : monthName(first);
    const zoneChoices = [...new Set([zones.viewer, zones.organization, ...(await channelZones(services, response))])];
    const grid = new Markup(week ? weekRows(first, byCell, here) : monthRows(gridStart, weeks, first, current, byCell, here));
    sendPage(
      response,
      {
        title: `Calendar, ${title}`,
        signedIn,
        csrf,
        section: 'calendar',
        zone: pageZone(zones),
        flash: request.query.notice === 'moved' ? { kind: 'ok', text: 'Moved: the post is at its new date.' } : undefined,
      },
      html`<h1>${title}</h1>
      <p class="hint zone-note">Times are in <strong>${zone}</strong>${zone === zones.viewer ? ' (yours)' : ''}. <a href="/settings">Change your time zone</a></p>
      <form method="get" action="/calendar" class="card actions filters">
        <div><label for="view">View</label><select id="view" name="view"><option value="month"${week ? '' : html` selected`}>Month</option><option value="week"${week ? html` selected` : ''}>Week</option></select></div>
        ${week
          ? html`<div><label for="week">Week</label><input id="week" name="week" type="week" value="${isoWeekKey(first)}"></div>`
          : html`<div><label for="month">Month</label><input id="month" name="month" type="month" value="${monthKey(first)}"></div>`}
        ${filterFields(data, filters)}
        <div>${zoneField('zone', 'zone', zone, 'Show times in', `Your zone, or a client's: ${zoneChoices.join(', ')}.`)}</div>
        <button type="submit">Show</button>
      </form>
      ${zoneDatalist()}
      <p><a href="${link(week ? 'week' : 'month', previous)}">← ${week ? 'Previous week' : monthName(previous)}</a> · <a href="${link(week ? 'week' : 'month', next)}">${week ? 'Next week' : monthName(next)} →</a>
        · ${week ? html`<a href="${link('month', first)}">Month view</a>` : html`<a href="${link('week', sameMonth(current, first) ? current : first)}">Week view</a>`}
        · <a href="/compose">New post</a></p>
      ${failing.length
        ? html`<section class="card failed-summary" aria-labelledby="failed-title"><h2 id="failed-title">${failing.length} post${failing.length === 1 ? '' : 's'} failed</h2><ul>${failing.map(
            (row) => html`<li><a href="/posts/${row.id}">${row.integration.name}, ${formatWhen(row.publishDate, zone)}</a>: ${row.error ?? 'failed'}</li>`,
          )}</ul></section>`
        : ''}
      ${waiting ? html`<p class="card">${waiting} post${waiting === 1 ? ' waits' : 's wait'} for approval: <a href="/approvals">review them</a>.</p>` : ''}
      <p class="hint" id="move-help">To move a post that has not gone out, drag it to another ${week ? 'day or hour' : 'day'}, focus it and press Alt+Left or Alt+Right${week ? ' (Alt+Up or Alt+Down: an hour)' : ''}, or use its Move link. Drafts saved without a date have no day here: the <a href="/posts">Posts</a> page's Drafts list has them.</p>
      <p id="move-status" class="move-status" role="status" aria-live="polite"></p>
      <table class="calendar${week ? ' week' : ''}" data-zone="${zone}" data-back="${here}" data-csrf="${csrf}" aria-describedby="move-help">
        <caption class="visually-hidden">Posts of ${title}, ${week ? 'one row per hour, one column per day' : 'one cell per day'}</caption>
        ${week
          ? html`<thead><tr><th scope="col">Hour</th>${Array.from({ length: 7 }, (_, index) => {
              const day = plusDays(first, index);
              return html`<th scope="col"${sameDay(day, current) ? html` class="today"` : ''}>${dayName(day)}</th>`;
            })}</tr></thead>
            <tbody>${grid}</tbody>`
          : html`<thead><tr>${WEEKDAYS.map((name) => html`<th scope="col">${name.slice(0, 3)}</th>`)}</tr></thead>
            <tbody>${grid}</tbody>`}
      </table>`,
    );
  });
}

const sameMonth = (a: Day, b: Day) => a.year === b.year && a.month === b.month;

// The grid's rows as one string: pieces pushed on one array and joined once (a month holds a thousand entries; nested
// templates would copy the page's largest part at every level).
type Cells = Map<string, Placed[]>;

function pushCell(out: string[], items: Placed[] | undefined, back: string, parts: ReturnType<typeof entryParts>): void {
  if (!items) return;
  out.push('<ul>');
  for (const item of items) out.push(entry(item, back, parts));
  out.push('</ul>');
}

/** One row per hour, one column per day of the week starting on `first`. */
function weekRows(first: Day, byCell: Cells, back: string): string {
  const parts = entryParts();
  const days = Array.from({ length: 7 }, (_, index) => dayKey(plusDays(first, index)));
  const out: string[] = [];
  for (let hour = 0; hour < 24; hour++) {
    out.push(`<tr><th scope="row">${String(hour).padStart(2, '0')}:00</th>`);
    for (const day of days) {
      out.push(`<td class="slot" data-date="${day}" data-hour="${hour}">`);
      pushCell(out, byCell.get(`${day}|${hour}`), back, parts);
      out.push('</td>');
    }
    out.push('</tr>');
  }
  return out.join('');
}

/** One row per week from `gridStart`, one cell per day; days outside the month of `first` are marked. */
function monthRows(gridStart: Day, weeks: number, first: Day, current: Day, byCell: Cells, back: string): string {
  const parts = entryParts();
  const out: string[] = [];
  for (let row = 0; row < weeks; row++) {
    out.push('<tr>');
    for (let column = 0; column < 7; column++) {
      const day = plusDays(gridStart, row * 7 + column);
      const key = dayKey(day);
      out.push(
        `<td class="day${day.month !== first.month ? ' outside' : ''}${sameDay(day, current) ? ' today' : ''}" data-date="${key}"><span class="day-number">${day.day}<span class="visually-hidden"> (${escapeHtml(dayName(day))})</span></span>`,
      );
      pushCell(out, byCell.get(key), back, parts);
      out.push('</td>');
    }
    out.push('</tr>');
  }
  return out.join('');
}

/** The zones of the organization's channels that have their own (a client's). */
async function channelZones(services: Services, response: Response): Promise<string[]> {
  const rows = await services.orm.em
    .fork()
    .getConnection()
    .execute<{ time_zone: string }[]>('select distinct time_zone from integration where organization_id = ? and deleted_at is null and time_zone is not null order by 1', [
      consoleLocals(response).signedIn!.organization!.id,
    ]);
  return rows.map((row) => row.time_zone);
}
