// The console's home page, where a person starts their day: today's posts and the rest of this week's (in their zone),
// what failed, what waits for their approval, and the channels that need reconnecting. Read with the API's tools
// (postList, integrationList) and the approvals queue, as the signed-in person.
import type { Router } from 'express';
import { postList } from '../../../tools/post-list.js';
import { integrationList } from '../../../tools/integration-list.js';
import { awaitingApproval } from '../../../tools/internal/approval.js';
import type { PostRecord } from '../../../tools/internal/posts.js';
import type { Services } from '../../../tools/types.js';
import { html, sendPage, type Markup } from './html.js';
import { STATUS_LABELS, badge } from './post-pages.js';
import { excerpt } from '../../lib/content.js';
import { dayKey, rangeOf, today, weekOf } from './calendar-dates.js';
import { consoleCaller, consoleLocals, runConsoleTool } from './session.js';
import { consoleZones, localTimes, pageZone, when, zoneNote } from './zones.js';

// How far back a failure still asks for attention on the home page (with what failed this week).
const FAILED_DAYS = 14;

function postRows(posts: PostRecord[], zone: string, empty: string): Markup {
  if (posts.length === 0) return html`<p class="hint">${empty}</p>`;
  return html`<ul class="home-list">${posts.map(
    (post) => html`<li><a href="/posts/${post.id}">${when(post.publishDate, zone)}</a> ${badge(STATUS_LABELS, post.publishStatus)} <strong>${post.integration.name}</strong>: ${excerpt(post.content, 100)}</li>`,
  )}</ul>`;
}

export function homePages(router: Router, services: Services): void {
  router.get('/', async (request, response, next) => {
    const { signedIn, csrf } = consoleLocals(response);
    if (!signedIn) return void response.redirect(303, '/login');
    if (!signedIn.organization) return next();
    const zones = await consoleZones(services, request, response);
    const now = services.now();
    const day = today(now, zones.viewer);
    const week = rangeOf(weekOf(undefined, day), 7, zones.viewer);
    const todayRange = rangeOf(day, 1, zones.viewer);
    const since = new Date(now.getTime() - FAILED_DAYS * 86_400_000);
    const start = since < week.start ? since : week.start;
    const { posts } = await runConsoleTool(postList, { startDate: start.toISOString(), endDate: new Date(week.end.getTime() - 1).toISOString() }, response, services);
    const rows = (posts as unknown as PostRecord[]).sort((a, b) => a.publishDate.localeCompare(b.publishDate));
    const within = (post: PostRecord, range: { start: Date; end: Date }) => new Date(post.publishDate) >= range.start && new Date(post.publishDate) < range.end;
    const todays = rows.filter((post) => within(post, todayRange) && post.state !== 'DRAFT');
    const rest = rows.filter((post) => within(post, week) && !within(post, todayRange) && post.state !== 'DRAFT');
    const failed = rows.filter((post) => post.publishStatus === 'failed' || post.publishStatus === 'partial').reverse();
    const waiting = await awaitingApproval(services.orm.em.fork(), consoleCaller(response).organizationId, 20);
    const { output: channels } = await runConsoleTool(integrationList, {}, response, services);
    const broken = channels.filter((channel) => channel.health.state === 'needs_reconnection' || channel.health.state === 'token_expiring');
    sendPage(
      response,
      { title: 'Home', signedIn, csrf, section: '', zone: pageZone(zones) },
      html`<h1>Today, ${dayKey(day)}</h1>
      ${zoneNote(zones)}
      <p><a class="button" href="/compose">New post</a></p>
      ${broken.length
        ? html`<section class="card" aria-labelledby="broken-title"><h2 id="broken-title">Channels to reconnect (${broken.length})</h2><ul>${broken.map(
            (channel) => html`<li><strong>${channel.name}</strong> (${channel.identifier}): ${channel.health.reason ? localTimes(channel.health.reason, zones.viewer, channel.health.tokenExpiresAt) : (channel.health.state === 'token_expiring' ? 'its access expires soon' : 'it needs reconnecting')} <a href="/channels">Reconnect on Channels</a></li>`,
          )}</ul></section>`
        : ''}
      ${failed.length
        ? html`<section class="card" aria-labelledby="failed-title"><h2 id="failed-title">Failed (${failed.length})</h2>${postRows(failed, zones.viewer, '')}</section>`
        : ''}
      ${waiting.length
        ? html`<section class="card" aria-labelledby="waiting-title"><h2 id="waiting-title">Waiting for approval (${waiting.length})</h2><ul class="home-list">${waiting.map(
            (post) => html`<li><a href="/posts/${post.id}">${excerpt(post.content, 100) || '(no text)'}</a></li>`,
          )}</ul><p><a href="/approvals">Review them on Approvals</a></p></section>`
        : ''}
      <section class="card" aria-labelledby="today-title"><h2 id="today-title">Today</h2>${postRows(todays, zones.viewer, 'Nothing goes out today.')}</section>
      <section class="card" aria-labelledby="week-title"><h2 id="week-title">Later this week</h2>${postRows(rest, zones.viewer, 'Nothing else this week.')}
        <p><a href="/calendar?view=week">The week on the calendar</a> · <a href="/posts">All posts</a></p></section>`,
    );
  });
}

/** The console's icon (a page's /favicon.ico), so no page asks for it in vain. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5fbf"/><path d="M9 8v16M23 8v16M9 16h14" stroke="#fff" stroke-width="4" stroke-linecap="round"/></svg>';
