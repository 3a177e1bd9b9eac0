// The console's Activity page: the organization's audit trail (tools/internal/audit.ts), newest first, filtered by actor,
// action, channel and date, paged by cursor, times in the person's zone; and the post page's "Activity" section (that
// post's events), called from post-pages.ts.
import type { Request, Response, Router } from 'express';
import type { Services } from '../../../tools/types.js';
import { auditActors, listAudit, type AuditQuery, type AuditRecord } from '../../../tools/internal/audit-query.js';
import { listIntegrations } from '../../../tools/internal/integrations.js';
import { addDays, instantOf } from '../../lib/time-zone.js';
import { html, sendPage, type Markup } from './html.js';
import { consoleCaller, consoleLocals, requireSignedIn } from './session.js';
import { consoleZones, pageZone, when, zoneNote } from './zones.js';

const PAGE_SIZE = 50;
/** The families of actions (the part before the dot), for the action filter. */
const FAMILIES: [string, string][] = [
  ['post', 'Posts'],
  ['comment', 'Comments'],
  ['channel', 'Channels'],
  ['customer', 'Customers'],
  ['key', 'API keys'],
  ['app', 'OAuth apps and logins'],
  ['webhook', 'Webhooks'],
  ['member', 'Members'],
  ['approval_settings', 'Approval gate'],
  ['organization', 'Organization settings'],
];
const VIA: Record<string, string> = { console: 'console', rest: 'REST API', mcp: 'MCP', worker: 'Herald', cli: 'CLI', preview_link: 'preview link' };

const text = (value: unknown) => (typeof value === 'string' ? value.trim().slice(0, 200) : '');
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A `YYYY-MM-DD` of the form as the start of that day in `zone` (`after`: the start of the next day), or undefined. */
function dayStart(value: string, zone: string, after = false): Date | undefined {
  const match = DAY.exec(value);
  if (!match) return undefined;
  const wall = { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]), hour: 0, minute: 0 };
  return instantOf(after ? addDays(wall, 1) : wall, zone);
}

/** One event as a table row: when, who (and how, from where), what. */
function eventRow(event: AuditRecord, zone: string, channelName: (id: string | null) => string | undefined): Markup {
  const where = [VIA[event.via] ?? event.via, event.client, event.address].filter(Boolean).join(' · ');
  const channel = channelName(event.integrationId);
  return html`<tr><td>${when(event.at, zone, true)}</td>
    <td>${event.actor.name}<br><span class="hint">${where}</span></td>
    <td>${event.summary}${channel ? html`<br><span class="hint">Channel: ${channel}</span>` : ''}
      ${event.target.kind === 'post' && event.target.id ? html` <a href="/posts/${event.target.id}">Open the post</a>` : ''}</td>
    <td><code>${event.action}</code></td></tr>`;
}

function eventTable(events: AuditRecord[], zone: string, channelName: (id: string | null) => string | undefined, caption: string): Markup {
  return html`<table><caption class="visually-hidden">${caption}</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Who (how, from where)</th><th scope="col">What</th><th scope="col">Action</th></tr></thead>
    <tbody>${events.map((event) => eventRow(event, zone, channelName))}</tbody></table>`;
}

/** The post page's "Activity" section: who created, edited, approved, published or deleted this post, newest first. */
export async function postActivitySection(services: Services, request: Request, response: Response, postId: string): Promise<Markup> {
  const zones = await consoleZones(services, request, response);
  const { events } = await listAudit(services.orm.em.fork(), consoleCaller(response).organizationId, { targetKind: 'post', targetId: postId, limit: 100 });
  return html`<section class="card" aria-labelledby="post-activity-title"><h2 id="post-activity-title">Activity</h2>
    ${events.length === 0
      ? html`<p>Nothing recorded for this post yet.</p>`
      : eventTable(events, zones.viewer, () => undefined, 'Activity of this post')}
    <p class="hint"><a href="/activity?targetId=${postId}">All of this post's activity</a></p></section>`;
}

export function activityPages(router: Router, services: Services): void {
  router.get('/activity', requireSignedIn, async (request: Request, response: Response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const organizationId = consoleCaller(response).organizationId;
    const zones = await consoleZones(services, request, response);
    const em = services.orm.em.fork();
    const chosen = {
      actor: text(request.query.actor),
      action: text(request.query.action),
      channel: text(request.query.channel),
      from: text(request.query.from),
      to: text(request.query.to),
      targetId: text(request.query.targetId),
      cursor: text(request.query.cursor),
    };
    const problems: string[] = [];
    const from = chosen.from ? dayStart(chosen.from, zones.viewer) : undefined;
    const to = chosen.to ? dayStart(chosen.to, zones.viewer, true) : undefined;
    if (chosen.from && !from) problems.push('The "from" date is not a date (YYYY-MM-DD).');
    if (chosen.to && !to) problems.push('The "to" date is not a date (YYYY-MM-DD).');
    const query: AuditQuery = {
      actor: chosen.actor || undefined,
      action: chosen.action || undefined,
      integrationId: chosen.channel || undefined,
      targetId: chosen.targetId || undefined,
      from,
      to,
      limit: PAGE_SIZE,
    };
    let page: Awaited<ReturnType<typeof listAudit>> = { events: [], nextCursor: null };
    try {
      page = await listAudit(em, organizationId, { ...query, cursor: chosen.cursor || undefined });
    } catch {
      problems.push('That page link is out of date: showing the newest events.');
      page = await listAudit(em, organizationId, query);
    }
    const [actors, channels] = await Promise.all([auditActors(em, organizationId), listIntegrations(em, organizationId)]);
    const names = new Map(channels.map((channel) => [channel.id, `${channel.name} (${channel.providerIdentifier})`]));
    const option = (value: string, label: string, current: string) => html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
    const filters = new URLSearchParams(Object.entries({ ...chosen, cursor: '' }).filter(([, value]) => value));
    sendPage(
      response,
      {
        title: 'Activity',
        signedIn,
        csrf,
        section: 'activity',
        zone: pageZone(zones),
        status: problems.length > 0 && page.events.length === 0 ? 400 : undefined,
        flash: problems.length > 0 ? { kind: 'error', text: problems.join(' ') } : undefined,
      },
      html`<h1>Activity</h1>
      <p>Who changed what in ${signedIn!.organization!.name}, when, how (console, REST API, MCP, or Herald itself) and from where.
      Secrets are never recorded. ${zoneNote(zones)}</p>
      <form method="get" action="/activity" class="card filters" aria-label="Filter the activity">
        <label for="activity-actor">Who</label>
        <select id="activity-actor" name="actor">${option('', 'Anyone', chosen.actor)}${option('herald', 'Herald itself', chosen.actor)}${actors
          .filter((actor) => actor.id)
          .map((actor) => option(actor.id!, `${actor.name} (${actor.kind === 'api_key' ? 'API key' : actor.kind === 'oauth_app' ? 'OAuth app' : actor.kind === 'preview_link' ? 'preview link' : 'person'})`, chosen.actor))}</select>
        <label for="activity-action">What</label>
        <select id="activity-action" name="action">${option('', 'Everything', chosen.action)}${FAMILIES.map(([value, label]) => option(value, label, chosen.action))}</select>
        <label for="activity-channel">Channel</label>
        <select id="activity-channel" name="channel">${option('', 'Any channel', chosen.channel)}${channels.map((channel) => option(channel.id, names.get(channel.id)!, chosen.channel))}</select>
        <label for="activity-from">From</label> <input id="activity-from" name="from" type="date" value="${chosen.from}">
        <label for="activity-to">To</label> <input id="activity-to" name="to" type="date" value="${chosen.to}">
        ${chosen.targetId ? html`<input type="hidden" name="targetId" value="${chosen.targetId}">` : ''}
        <button type="submit">Show</button> <a href="/activity">Clear the filters</a>
      </form>
      ${page.events.length === 0
        ? html`<p class="card">No activity${filters.size > 0 ? ' matches these filters' : ' recorded yet'}.</p>`
        : eventTable(page.events, zones.viewer, (id) => (id ? names.get(id) : undefined), 'Activity, newest first')}
      ${page.nextCursor
        ? html`<p><a class="button secondary" href="/activity?${new URLSearchParams([...filters, ['cursor', page.nextCursor]]).toString()}">Older activity</a></p>`
        : ''}`,
    );
  });
}
