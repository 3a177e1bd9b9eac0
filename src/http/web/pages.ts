// Posts, developer settings (API key, URLs, client snippets), notifications and members.
import type { Request, Response, Router } from 'express';
import { ApiKeySchema } from '../../db/entities.js';
import { clientSnippets } from '../../lib/client-snippets.js';
import { createInvitation, membersOf, type OrganizationChoice } from '../../../tools/internal/accounts.js';
import { mintApiKey } from '../../../tools/internal/credentials.js';
import { notificationList } from '../../../tools/notification-list.js';
import type { NotificationTargetKind } from '../../../tools/internal/notifications.js';
import { postList } from '../../../tools/post-list.js';
import type { PostRecord } from '../../../tools/internal/posts.js';
import type { Services } from '../../../tools/types.js';
import type { McpSessions } from '../../mcp/sessions.js';
import { DomainError } from '../../errors.js';
import { clientError, csrfField, html, safeUrl, sendPage, type Markup } from './html.js';
import { changeMemberRole, removeMember } from '../../../tools/internal/members.js';
import { channelFilter, channelSelect, STATE_LABELS } from './post-pages.js';
import { excerpt } from '../../lib/content.js';
import { dayKey, isoWeekKey, plusDays, rangeOf, today, weekOf, type Day } from './calendar-dates.js';
import { consoleZones, localTimes, pageZone, when, zoneNote } from './zones.js';
import { consoleCaller, consoleLocals, requireOwner, requireSignedIn, revealAfterRedirect, runConsoleTool, takeReveal } from './session.js';
import { platformName } from '../../../tools/internal/channel-health.js';
import { KEY_REVEAL, keyRoutes, keysSection } from './key-pages.js';
import { rowActions } from './post-actions.js';

/** The publishing status over the whole chain: a retry in progress and a half-published chain stand out. */
const STATUS_BADGES: Record<string, [string, string]> = { retrying: ['Retrying', 'warn'], partial: ['Published in part', 'error'], failed: ['Failed', 'error'] };

/** What went out (each item's link), what failed and why, what was not attempted, and the next attempt of a retry. */
function resultOf(post: PostRecord, zone: string): Markup {
  const links =
    post.items.length > 1
      ? post.items.map((item) =>
          safeUrl(item.releaseURL)
            ? html`<a href="${safeUrl(item.releaseURL)}" rel="noopener noreferrer">Item ${item.position + 1}</a> `
            : item.state === 'ERROR'
              ? html`<span class="hint">Item ${item.position + 1}: ${localTimes(item.error ?? 'failed', zone)}</span> `
              : '',
        )
      : safeUrl(post.releaseURL)
        ? html`<a href="${safeUrl(post.releaseURL)}" rel="noopener noreferrer">View post</a>`
        : '';
  const retry = post.nextAttemptAt
    ? html`<p class="hint">Attempt ${post.attempts} failed: ${localTimes(post.lastError ?? 'unknown error', zone)}. Next attempt ${when(post.nextAttemptAt, zone)}.</p>`
    : '';
  return html`${links}${post.error ? html`<p><span class="badge error">Error</span> ${localTimes(post.error, zone)}</p>` : ''}${retry}`;
}

type NotificationItem = { content: string; at: string | null; target: { kind: NotificationTargetKind; id: string } | null };

/** The console page of what a notification is about, and how a link to it reads. */
const TARGET_PAGES: Record<NotificationTargetKind, [(id: string) => string, string]> = {
  post: [(id) => `/posts/${id}`, "The post's page"],
  channel: [(id) => `/channels#channel-${id}`, 'The channel'],
  feed: [(id) => `/feeds/${id}`, "The feed's page"],
  recurring_post: [(id) => `/recurring-posts/${id}`, 'The recurring post'],
  preview_link: [(id) => `/preview-links#link-${id}`, 'The preview link'],
};
const targetPath = (target: { kind: NotificationTargetKind; id: string }) => TARGET_PAGES[target.kind][0](encodeURIComponent(target.id));

/**
 * A notification's text as a person reads it: the instants it names in their zone (localTimes, with its `at`), the posts
 * it names linked to their pages.
 */
export function notificationText(item: NotificationItem, zone: string): Markup {
  const { content, at } = item;
  const parts: Markup[] = [];
  let last = 0;
  for (const match of content.matchAll(/\bpost ([A-Za-z0-9_-]{8,64})\b/g)) {
    parts.push(localTimes(content.slice(last, match.index), zone, at), html`<a href="/posts/${match[1]}">post ${match[1]}</a>`);
    last = match.index + match[0].length;
  }
  parts.push(localTimes(content.slice(last), zone, at));
  return html`${parts}`;
}

/** The links of a notification: to the console page of what it is about, and its own link unless that is the same page. */
function notificationLinks(item: NotificationItem & { link: string | null }): Markup {
  const page = item.target ? targetPath(item.target) : undefined;
  const named = item.target?.kind === 'post' && item.content.includes(`post ${item.target.id}`);
  const own = safeUrl(item.link);
  const ownIsPage = own !== undefined && page !== undefined && own.endsWith(page);
  return html`${page && !named ? html` <a href="${page}">${TARGET_PAGES[item.target!.kind][1]}</a>` : ''}${own && !ownIsPage ? html` <a href="${own}" rel="noopener noreferrer">Open</a>` : ''}`;
}

/** A local day typed as YYYY-MM-DD (a date field), or undefined. */
function dayOfKey(value: unknown): Day | undefined {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  if (!match) return undefined;
  const day = { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) };
  return dayKey(day) === value ? day : undefined;
}

/** After a deletion from a post's page. */
const POSTS_NOTICES: Record<string, string> = {
  deleted: 'Deleted: the post and those created with it will not be published.',
  'deleting-on-platform': 'Deleting: what went out is being deleted on the platform; the post is listed until that is done.',
};

/** The longest range one postList call takes. */
const LIST_WINDOW_MS = 100 * 86_400_000;

function mcpSnippets(publicUrl: string, key: string): Markup {
  return html`<h2>Client configuration</h2>
    ${clientSnippets(publicUrl, key).map((snippet) => html`<h3>${snippet.client} <span class="hint">(${snippet.where})</span></h3><pre><code>${snippet.text}</code></pre>`)}
    <p class="hint">Clients that speak the MCP authorization spec can use <code>${publicUrl}/api/mcp-oauth</code> with no key: they register themselves and send you to a consent screen. Every MCP URL also answers at the root (<code>${publicUrl}/mcp</code>).</p>`;
}

export function consolePages(router: Router, services: Services, sessions: McpSessions): void {
  router.get('/posts', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    const monday = weekOf(request.query.week, today(services.now(), zones.viewer));
    // Any range of local days (From–To, at most 100 days as GET /posts takes), else the week; a search and a state on top.
    const from = dayOfKey(request.query.from);
    const to = dayOfKey(request.query.to);
    const ranged = from && to;
    const days = ranged ? Math.round((Date.UTC(to.year, to.month - 1, to.day) - Date.UTC(from.year, from.month - 1, from.day)) / 86_400_000) + 1 : 7;
    if (ranged && days > 100) throw new DomainError('invalid_input', 'The range is longer than 100 days.', { hint: 'Choose at most 100 days, or look at the rest in a second range.' });
    if (ranged && days < 1) throw new DomainError('invalid_input', `"To" (${dayKey(to)}) is before "From" (${dayKey(from)}).`, { hint: 'Swap the two dates.' });
    const { start, end } = rangeOf(ranged ? from : monday, days, zones.viewer);
    // postList takes at most 100 days of 24 hours; 100 local days across the autumn change are an hour more: two calls.
    const posts: Record<string, unknown>[] = [];
    for (let from = start.getTime(); from < end.getTime(); from += LIST_WINDOW_MS) {
      const until = Math.min(from + LIST_WINDOW_MS, end.getTime()) - 1;
      posts.push(...(await runConsoleTool(postList, { startDate: new Date(from).toISOString(), endDate: new Date(until).toISOString() }, response, services)).posts);
    }
    const search = typeof request.query.q === 'string' ? request.query.q.trim().toLowerCase() : '';
    const state = typeof request.query.state === 'string' && STATE_LABELS[request.query.state] ? request.query.state : '';
    const listed = channelFilter(posts as unknown as PostRecord[], request.query.channel);
    const { channel, channels } = listed;
    const rows = listed.rows.filter((post) => (!state || post.state === state) && (!search || `${excerpt(post.content, 100_000)} ${post.integration.name}`.toLowerCase().includes(search)));
    // A draft saved without a date is dated when it was saved (isUndated): its row says it has no date.
    const drafts = rows.filter((post) => post.state === 'DRAFT').map((post) => post.id);
    const undated = new Set(
      drafts.length
        ? (await services.orm.em.fork().getConnection().execute<{ id: string }[]>(`select id from post where id in (${drafts.map(() => '?').join(', ')}) and publish_date = created_at`, drafts)).map((draft) => draft.id)
        : [],
    );
    const draftsFrom = plusDays(today(services.now(), zones.viewer), -60);
    const byChannel = new Map<string, PostRecord[]>();
    for (const row of rows) byChannel.set(row.integration.id, [...(byChannel.get(row.integration.id) ?? []), row]);
    const previous = isoWeekKey(plusDays(monday, -7));
    const following = isoWeekKey(plusDays(monday, 7));
    sendPage(
      response,
      { title: 'Posts', signedIn, csrf, section: 'posts', zone: pageZone(zones), flash: typeof request.query.notice === 'string' && POSTS_NOTICES[request.query.notice] ? { kind: 'ok', text: POSTS_NOTICES[request.query.notice] } : undefined },
      html`<h1>${state === 'DRAFT' ? 'Drafts' : 'Posts'}, ${ranged ? `${dayKey(from)} to ${dayKey(to)}` : `week of ${dayKey(monday)}`}</h1>
      ${zoneNote(zones)}
      <p class="actions"><a href="/posts/import">Import posts from a file</a> <a href="/sets">Sets</a></p>
      <form method="get" action="/posts" class="card actions">
        <div><label for="week">Week</label><input id="week" name="week" type="week" value="${ranged ? '' : isoWeekKey(monday)}"></div>
        <div><label for="from">Or from</label><input id="from" name="from" type="date" value="${ranged ? dayKey(from) : ''}"></div>
        <div><label for="to">to</label><input id="to" name="to" type="date" value="${ranged ? dayKey(to) : ''}"></div>
        <div><label for="q">Search</label><input id="q" name="q" type="search" value="${typeof request.query.q === 'string' ? request.query.q : ''}"></div>
        <div><label for="state">State</label><select id="state" name="state"><option value="">Any state</option>${Object.entries(STATE_LABELS).map(
          ([value, [label]]) => html`<option value="${value}"${value === state ? html` selected` : ''}>${label}</option>`,
        )}</select></div>
        ${channelSelect(channels, channel)}
        <button type="submit">Show</button>
      </form>
      <p><a href="/posts?week=${previous}">← Previous week</a> · <a href="/posts?week=${following}">Next week →</a> ·
        <a href="/posts?state=DRAFT&amp;from=${dayKey(draftsFrom)}&amp;to=${dayKey(plusDays(draftsFrom, 99))}">Drafts</a> <span class="hint">(the last 60 days and the next 40; a draft without a date is listed on the day it was saved)</span></p>
      ${rows.length === 0 ? html`<p class="card">No posts ${search || state ? 'match' : ranged ? 'in these days' : 'this week'}.</p>` : ''}
      ${[...byChannel.entries()].map(([, items]) => {
        const integration = items[0].integration;
        return html`<h2>${integration.name} <span class="hint">${platformName(integration)}</span></h2>
        <table><thead><tr><th scope="col">Date</th><th scope="col">State</th><th scope="col">Content</th><th scope="col">Result</th><th scope="col">Actions</th></tr></thead><tbody>${items.map((post) => {
          const [label, kind] = STATUS_BADGES[post.publishStatus] ?? STATE_LABELS[post.state] ?? [post.state, ''];
          return html`<tr><td><a href="/posts/${post.id}">${undated.has(post.id) ? html`No date <span class="hint">(saved ${when(post.publishDate, zones.viewer)})</span>` : when(post.publishDate, zones.viewer)}</a></td><td><span class="badge ${kind}">${label}</span></td>
            <td>${excerpt(post.content, 160)}</td>
            <td>${resultOf(post, zones.viewer)}</td><td>${rowActions(post, csrf)}</td></tr>`;
        })}</tbody></table>`;
      })}`,
    );
  });

  async function developerPage(request: Request, response: Response, revealed?: Record<string, string>): Promise<void> {
    const zones = await consoleZones(services, request, response);
    const { signedIn, csrf } = consoleLocals(response);
    const organization = signedIn!.organization as OrganizationChoice;
    const newKey = revealed?.key;
    const created = revealed?.secret ? { name: revealed.name ?? '', secret: revealed.secret, rotated: revealed.rotated === 'yes' } : undefined;
    const key = await services.orm.em.fork().findOne(ApiKeySchema, { organizationId: organization.id, organizationKey: true, revokedAt: null });
    const keys = await keysSection(services, response, { csrf, owner: organization.role === 'owner', zone: zones.viewer, created });
    const publicUrl = services.config.publicUrl;
    sendPage(
      response,
      { title: 'Developer settings', signedIn, csrf, section: 'developer', zone: pageZone(zones), flash: newKey ? { kind: 'ok', text: 'New API key created. Copy it now: it is shown only once.' } : undefined },
      html`<h1>Developer settings</h1>
      <section class="card" aria-labelledby="key-title"><h2 id="key-title">Organization key (owner)</h2>
      ${newKey
        ? html`<p>Your new key:</p><code class="secret" id="new-api-key">${newKey}</code><p class="hint">Clients using the previous key stop working now.</p>`
        : key
          ? html`<p>Current key ends in <code>…${key.lastFour}</code>, created ${when(key.createdAt, zones.viewer)}. It is stored only as a hash and cannot be shown again.</p>`
          : html`<p>This organization has no API key yet.</p>`}
      ${organization.role === 'owner'
        ? html`<form method="post" action="/developer/api-key">${csrfField(csrf)}
          ${key ? html`<label class="hint"><input type="checkbox" name="confirm" value="yes" required> I understand that clients using the current key stop working</label>` : html`<input type="hidden" name="confirm" value="yes">`}
          <button type="submit"${key ? html` class="danger"` : ''}>${key ? 'Regenerate API key' : 'Create API key'}</button></form>`
        : html`<p class="hint">Only owners can create or regenerate the key.</p>`}
      </section>
      ${keys}
      <section class="card" aria-labelledby="urls-title"><h2 id="urls-title">Endpoints</h2>
        <dl><dt>REST API</dt><dd><code>${publicUrl}/api/public/v1</code> (key in <code>Authorization</code>, no prefix)</dd>
        <dt>MCP (key as Bearer)</dt><dd><code>${publicUrl}/api/mcp</code></dd>
        <dt>MCP (key in the path)</dt><dd><code>${publicUrl}/api/mcp/&lt;API key&gt;</code></dd>
        <dt>MCP (OAuth, no key)</dt><dd><code>${publicUrl}/api/mcp-oauth</code></dd></dl>
        ${mcpSnippets(publicUrl, created?.secret ?? '<agent key>')}
      </section>
      <section class="card" aria-labelledby="reference-title"><h2 id="reference-title">API reference</h2>
        <p>Every REST endpoint with its parameters, bodies, answers and errors: <a href="/api-reference">read the API reference</a>, or give tools the
        OpenAPI 3.1 document at <a href="/api/public/v1/openapi.json"><code>${publicUrl}/api/public/v1/openapi.json</code></a>.
        To hear about published and failed posts without polling, <a href="/webhooks">add a webhook</a>.</p>
      </section>`,
    );
  }

  router.get('/developer', requireSignedIn, (request, response) => developerPage(request, response, takeReveal(services, request, response, KEY_REVEAL)));
  keyRoutes(router, services, sessions);

  router.post('/developer/api-key', requireSignedIn, requireOwner, async (request, response) => {
    if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', 'Tick the box to confirm: the current key stops working.');
    const organizationId = consoleCaller(response).organizationId;
    const em = services.orm.em.fork();
    const previous = await em.find(ApiKeySchema, { organizationId, organizationKey: true, revokedAt: null });
    const key = await mintApiKey(em, organizationId, services.now());
    for (const old of previous) await sessions.closeForCredential(old.id);
    revealAfterRedirect(services, request, response, KEY_REVEAL, { key });
    response.redirect(303, '/developer');
  });

  router.get('/notifications', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    const page = Math.max(0, Number.parseInt(String(request.query.page ?? '0'), 10) || 0);
    const result = await runConsoleTool(notificationList, { page }, response, services);
    sendPage(
      response,
      { title: 'Notifications', signedIn, csrf, section: 'notifications', zone: pageZone(zones) },
      html`<h1>Notifications</h1>
      ${zoneNote(zones)}
      ${result.notifications.length === 0 ? html`<p class="card">Nothing yet.</p>` : ''}
      <ul class="card">${result.notifications.map(
        (item) => html`<li><span class="hint">${when(item.createdAt, zones.viewer)}</span> — ${notificationText(item, zones.viewer)}${notificationLinks(item)}</li>`,
      )}</ul>
      <p>${page > 0 ? html`<a href="/notifications?page=${page - 1}">← Newer</a> ` : ''}${result.hasMore ? html`<a href="/notifications?page=${page + 1}">Older →</a>` : ''}</p>`,
    );
  });

  async function membersPage(response: Response, invitationLink?: string, problem?: DomainError): Promise<void> {
    const { signedIn, csrf } = consoleLocals(response);
    const organization = signedIn!.organization as OrganizationChoice;
    const members = await membersOf(services.orm.em.fork(), organization.id);
    const owner = organization.role === 'owner';
    sendPage(
      response,
      {
        title: 'Members',
        signedIn,
        csrf,
        section: 'members',
        status: problem?.status,
        flash: problem ? { kind: 'error', text: [problem.message, problem.hint].filter(Boolean).join(' ') } : invitationLink ? { kind: 'ok', text: 'Invitation link created. Send it to the person; it works once, for 7 days.' } : undefined,
      },
      html`<h1>Members of ${organization.name}</h1>
      ${invitationLink ? html`<code class="secret" id="invitation-link">${invitationLink}</code>` : ''}
      <table><thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th>${owner ? html`<th scope="col"><span class="visually-hidden">Remove</span></th>` : ''}</tr></thead>
      <tbody>${members.map(
        (member) => html`<tr><td>${member.name}</td><td>${member.email}</td>
          <td>${owner
            ? html`<form method="post" action="/members/${member.id}/role" class="inline">${csrfField(csrf)}
                <label for="role-${member.id}" class="visually-hidden">Role of ${member.email}</label>
                <select id="role-${member.id}" name="role"><option value="member"${member.role === 'member' ? html` selected` : ''}>Member</option><option value="owner"${member.role === 'owner' ? html` selected` : ''}>Owner</option></select>
                <button type="submit" class="secondary" aria-label="Change the role of ${member.email}">Change</button></form>`
            : member.role}</td>
          ${owner
            ? html`<td><form method="post" action="/members/${member.id}/remove" class="inline">${csrfField(csrf)}
                <label class="hint"><input type="checkbox" name="confirm" value="yes" required> ${member.email} loses access</label>
                <button type="submit" class="danger" aria-label="Remove ${member.email}">Remove</button></form></td>`
            : ''}</tr>`,
      )}</tbody></table>
      ${organization.role === 'owner'
        ? html`<form method="post" action="/members/invite" class="card">${csrfField(csrf)}
          <label for="role">Invite someone as</label><select id="role" name="role"><option value="member">Member</option><option value="owner">Owner</option></select>
          <button type="submit">Create invitation link</button></form>`
        : ''}`,
    );
  }

  router.get('/members', requireSignedIn, (request, response) => membersPage(response, takeReveal(services, request, response, 'invitation')?.link));

  router.post('/members/:userId/role', requireSignedIn, requireOwner, async (request, response) => {
    try {
      await changeMemberRole(services.orm.em.fork(), consoleCaller(response).organizationId, String(request.params.userId), request.body?.role);
    } catch (raw) {
      return membersPage(response, undefined, clientError(raw));
    }
    response.redirect(303, '/members');
  });

  router.post('/members/:userId/remove', requireSignedIn, requireOwner, async (request, response) => {
    try {
      if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', 'Tick the box to confirm: the person loses access to the organization.');
      await removeMember(services.orm.em.fork(), consoleCaller(response).organizationId, String(request.params.userId));
    } catch (raw) {
      return membersPage(response, undefined, clientError(raw));
    }
    response.redirect(303, '/members');
  });

  router.post('/members/invite', requireSignedIn, requireOwner, async (request, response) => {
    const signedIn = consoleLocals(response).signedIn!;
    const role = request.body?.role === 'owner' ? 'owner' : 'member';
    const token = await createInvitation(services.orm.em.fork(), signedIn.organization!.id, signedIn.user.id, role, services.now());
    revealAfterRedirect(services, request, response, 'invitation', { link: `${services.config.publicUrl}/invite/${token}` });
    response.redirect(303, '/members');
  });
}
