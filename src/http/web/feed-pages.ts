// Feeds in the console: the feeds (status, last read, the reason when one fails), a form to add one (URL, channels,
// template, mode, backlog), and each feed's page with its latest entries and the posts made from them, its settings, pause
// or resume, check now and delete. Every operation goes through the feed tools, as on REST and MCP.
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import type { Services } from '../../../tools/types.js';
import { changeFeedTool, checkFeedTool, createFeedTool, deleteFeedTool, feedList, feedShow } from '../../../tools/feeds.js';
import { DEFAULT_INTERVAL_MINUTES, MAX_BACKLOG } from '../../../tools/internal/feeds.js';
import { DEFAULT_TEMPLATE } from '../../../tools/internal/feed-template.js';
import { clientError, csrfField, html, safeUrl, sendPage, sentence, type Markup } from './html.js';
import { badge } from './post-pages.js';
import { channelsOf } from './compose-pages.js';
import { emptyState } from './compose-form.js';
import { channelChoices } from './compose-view.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { consoleZones, pageZone, when, zoneNote } from './zones.js';

const STATUS: Record<string, [string, string]> = { active: ['Active', 'ok'], paused: ['Paused', 'warn'], failing: ['Failing', 'error'] };
const ENTRY_STATES: Record<string, string> = { posted: 'Posted', baseline: 'Already there when added', failed: 'Refused' };
const NOTICES: Record<string, string> = {
  added: 'Feed added. Entries published from now on become posts.',
  changed: 'Feed changed.',
  paused: 'Feed paused: it is not read until you resume it.',
  resumed: 'Feed resumed: it is read within a minute.',
  deleted: 'Feed deleted. The posts it made stay.',
};

const CHOICES: Record<string, string> = {
  draft: 'drafts, for you to review',
  schedule: "posts scheduled into each channel's next free posting time",
  picture: "Attach the entry's picture",
};

type Channels = Awaited<ReturnType<typeof channelsOf>>;

const body = (request: Request) => (request.body ?? {}) as Record<string, string | string[] | undefined>;
const listOf = (value: string | string[] | undefined) => [value ?? []].flat().filter(Boolean);
const numberOf = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : undefined);

/** The settings fields shared by the add and change forms: the channels chosen as on the compose page (its channelChoices). */
function settingsFields(prefix: string, channels: Channels, values: { channels: string[]; template: string; mode: string; intervalMinutes: number; attachPicture: boolean }): Markup {
  const choice = (id: string, field: Markup) => html`<div class="choice">${field}<label for="${prefix}-${id}">${CHOICES[id]}</label></div>`;
  return html`${channelChoices({ ...emptyState('UTC'), channels: values.channels }, channels.channels, channels.customers)}
    <label for="${prefix}-template">Template</label>
    <textarea id="${prefix}-template" name="template" rows="4" maxlength="2000" aria-describedby="${prefix}-template-hint">${values.template}</textarea>
    <p class="hint" id="${prefix}-template-hint">Plain text. {title}, {link}, {summary} and {picture} are replaced by the entry's; each line becomes a paragraph. A summary that would make the post too long for a channel is shortened.</p>
    <fieldset><legend>New entries become</legend>
      ${choice('draft', html`<input type="radio" id="${prefix}-draft" name="mode" value="draft"${values.mode === 'draft' ? html` checked` : ''}>`)}
      ${choice('schedule', html`<input type="radio" id="${prefix}-schedule" name="mode" value="schedule"${values.mode === 'schedule' ? html` checked` : ''}>`)}
    </fieldset>
    ${choice('picture', html`<input type="checkbox" id="${prefix}-picture" name="attachPicture" value="yes"${values.attachPicture ? html` checked` : ''}>`)}
    <label for="${prefix}-interval">Read every (minutes)</label>
    <input id="${prefix}-interval" name="intervalMinutes" type="number" min="5" max="1440" value="${values.intervalMinutes}">`;
}

/** The form's fields as the tools' input (checkboxes absent when unticked). */
const settingsInput = (request: Request) => ({
  channels: listOf(body(request).channel),
  template: typeof body(request).template === 'string' ? String(body(request).template) : undefined,
  mode: body(request).mode || undefined,
  attachPicture: body(request).attachPicture === 'yes',
  intervalMinutes: numberOf(body(request).intervalMinutes),
});

export function feedPages(router: Router, services: Services): void {
  const channelsFor = (response: Response) => channelsOf(services, consoleCaller(response).organizationId);

  async function listPage(request: Request, response: Response, options: { error?: string; status?: number } = {}) {
    const { signedIn, csrf } = consoleLocals(response);
    const [{ output: feeds }, channels, zones] = await Promise.all([runConsoleTool(feedList, {}, response, services), channelsFor(response), consoleZones(services, request, response)]);
    const names = new Map(channels.channels.map((channel) => [channel.id, channel.name]));
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    const typed = options.error ? body(request) : {};
    sendPage(
      response,
      { title: 'Feeds', signedIn, csrf, section: 'feeds', status: options.status, zone: pageZone(zones), flash: options.error ? { kind: 'error', text: options.error } : notice ? { kind: 'ok', text: notice } : undefined },
      html`<h1>Feeds</h1>
      <p>Herald reads each RSS or Atom feed and turns every new entry into a post on the channels you choose. An entry is used once, even when the feed shows it again or edits it; entries the feed already has when you add it are not posted.</p>
      ${zoneNote(zones)}
      ${feeds.length === 0
        ? html`<p class="card">No feed yet.</p>`
        : html`<table><caption class="visually-hidden">Feeds</caption><thead><tr><th scope="col">Feed</th><th scope="col">Channels</th><th scope="col">Status</th><th scope="col">Last read</th><th scope="col">Next read</th></tr></thead><tbody>${feeds.map(
            (feed) => html`<tr><td><a href="/feeds/${feed.id}">${feed.name}</a><br><span class="hint">${feed.url}</span></td>
              <td>${feed.channels.map((id) => names.get(id) ?? id).join(', ')}<br><span class="hint">${feed.mode === 'draft' ? 'as drafts' : 'scheduled'}</span></td>
              <td>${badge(STATUS, feed.status)}${feed.lastError ? html`<br><span class="hint">${feed.lastError}</span>` : ''}</td>
              <td>${when(feed.lastPolledAt, zones.viewer)}</td><td>${feed.status === 'paused' ? '—' : when(feed.nextPollAt, zones.viewer)}</td></tr>`,
          )}</tbody></table>`}
      <h2>Add a feed</h2>
      <form method="post" action="/feeds" class="card">${csrfField(csrf)}
        <label for="feed-url">Feed URL</label>
        <input id="feed-url" name="url" type="url" required value="${String(typed.url ?? '')}" aria-describedby="feed-url-hint">
        <p class="hint" id="feed-url-hint">The address of the RSS or Atom feed itself (a blog links it as RSS, often at /feed or /rss.xml). It is read once now: a URL that is not a feed is refused with the reason.</p>
        <label for="feed-name">Name (optional: the feed's own title)</label>
        <input id="feed-name" name="name" type="text" maxlength="200" value="${String(typed.name ?? '')}">
        ${settingsFields('feed', channels, {
          channels: listOf(typed.channel),
          template: typeof typed.template === 'string' ? typed.template : DEFAULT_TEMPLATE,
          mode: typeof typed.mode === 'string' ? typed.mode : 'draft',
          intervalMinutes: numberOf(typed.intervalMinutes) ?? DEFAULT_INTERVAL_MINUTES,
          attachPicture: options.error ? typed.attachPicture === 'yes' : true,
        })}
        <label for="feed-backlog">Also post the newest entries it has now</label>
        <input id="feed-backlog" name="backlog" type="number" min="0" max="${MAX_BACKLOG}" value="${String(typed.backlog ?? '0')}" aria-describedby="feed-backlog-hint">
        <p class="hint" id="feed-backlog-hint">0 starts after its newest entry; at most ${MAX_BACKLOG}.</p>
        <button type="submit">Add feed</button></form>`,
    );
  }

  async function feedPage(request: Request, response: Response, options: { error?: string; status?: number } = {}) {
    const { signedIn, csrf } = consoleLocals(response);
    const id = String(request.params.id);
    const [feed, channels, zones] = await Promise.all([runConsoleTool(feedShow, { id }, response, services), channelsFor(response), consoleZones(services, request, response)]);
    const names = new Map(channels.channels.map((channel) => [channel.id, channel.name]));
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    sendPage(
      response,
      { title: `Feed ${feed.name}`, signedIn, csrf, section: 'feeds', status: options.status, zone: pageZone(zones), flash: options.error ? { kind: 'error', text: options.error } : notice ? { kind: 'ok', text: notice } : undefined },
      html`<p><a href="/feeds">← All feeds</a></p>
      <h1>${feed.name} ${badge(STATUS, feed.status)}</h1>
      ${zoneNote(zones)}
      <p><code>${feed.url}</code>${feed.feedTitle && feed.feedTitle !== feed.name ? html` (“${feed.feedTitle}”)` : ''}</p>
      ${feed.lastError
        ? html`<section class="card" aria-labelledby="feed-error"><h2 id="feed-error">Why it fails</h2><p class="flash error">${feed.lastError}</p>
          <p class="hint">Failing since ${when(feed.failingSince, zones.viewer)}. Herald tries again ${when(feed.nextPollAt, zones.viewer)} and less often while it fails; you were notified once.</p></section>`
        : ''}
      <p>Posts to ${feed.channels.map((channel) => names.get(channel) ?? channel).join(', ')}, ${feed.mode === 'draft' ? 'as drafts for review' : "scheduled into each channel's next free posting time"}.
        Last read ${feed.lastPolledAt ? when(feed.lastPolledAt, zones.viewer) : 'never'}${feed.status === 'paused' ? '' : html`, next ${when(feed.nextPollAt, zones.viewer)}`}.</p>
      <div class="actions">
        <form method="post" action="/feeds/${feed.id}/check">${csrfField(csrf)}<button type="submit" class="secondary">Check now</button></form>
        <form method="post" action="/feeds/${feed.id}/${feed.status === 'paused' ? 'resume' : 'pause'}">${csrfField(csrf)}<button type="submit" class="secondary">${feed.status === 'paused' ? 'Resume' : 'Pause'}</button></form>
      </div>
      <h2>Latest entries</h2>
      ${feed.entries.length === 0
        ? html`<p class="card">No entry yet.</p>`
        : html`<table><caption class="visually-hidden">Latest entries</caption><thead><tr><th scope="col">Entry</th><th scope="col">Published</th><th scope="col">Seen</th><th scope="col">Outcome</th></tr></thead><tbody>${feed.entries.map(
            (entry) => html`<tr><td>${safeUrl(entry.link) ? html`<a href="${entry.link!}" rel="noopener noreferrer">${entry.title || entry.link}</a>` : entry.title}</td>
              <td>${when(entry.publishedAt, zones.viewer)}</td><td>${when(entry.seenAt, zones.viewer)}</td>
              <td>${ENTRY_STATES[entry.state] ?? entry.state}${entry.posts.length > 0
                ? html`<ul>${entry.posts.map((post) => html`<li>${names.get(post.integrationId) ?? post.integrationId}: ${post.postId ? html`<a href="/posts/${post.postId}">post</a>` : post.error}</li>`)}</ul>`
                : ''}</td></tr>`,
          )}</tbody></table>`}
      <h2>Change</h2>
      <form method="post" action="/feeds/${feed.id}" class="card">${csrfField(csrf)}
        <label for="change-url">Feed URL</label><input id="change-url" name="url" type="url" required value="${feed.url}">
        <label for="change-name">Name</label><input id="change-name" name="name" type="text" maxlength="200" value="${feed.name}">
        ${settingsFields('change', channels, feed)}
        <div class="actions"><button type="submit">Save</button></div></form>
      <h2>Delete</h2>
      <form method="post" action="/feeds/${feed.id}/delete" class="card">${csrfField(csrf)}
        <div class="choice"><input type="checkbox" id="delete-confirm" name="confirm" value="yes" required><label for="delete-confirm">stop this feed (the posts it made stay)</label></div>
        <button type="submit" class="danger">Delete feed</button></form>`,
    );
  }

  /** Runs a form action; a client mistake re-renders the page it came from with the message. */
  const action = (perform: (request: Request, response: Response) => Promise<string>, page: typeof listPage) => async (request: Request, response: Response) => {
    try {
      response.redirect(303, await perform(request, response));
    } catch (raw) {
      const error = clientError(raw);
      await page(request, response, { error: sentence(error), status: error.status });
    }
  };
  const feedId = (request: Request) => String(request.params.id);

  router.get('/feeds', requireSignedIn, (request, response) => listPage(request, response));
  router.get('/feeds/:id', requireSignedIn, (request, response) => feedPage(request, response));

  router.post('/feeds', requireSignedIn, action(async (request, response) => {
    const created = await runConsoleTool(
      createFeedTool,
      { url: body(request).url, name: body(request).name || undefined, backlog: numberOf(body(request).backlog), ...settingsInput(request) },
      response,
      services,
    );
    return `/feeds/${created.id}?notice=added`;
  }, listPage));

  router.post('/feeds/:id', requireSignedIn, action(async (request, response) => {
    await runConsoleTool(changeFeedTool, { id: feedId(request), url: body(request).url, name: body(request).name, ...settingsInput(request) }, response, services);
    return `/feeds/${feedId(request)}?notice=changed`;
  }, feedPage));

  for (const [path, paused] of [['pause', true], ['resume', false]] as const) {
    router.post(`/feeds/:id/${path}`, requireSignedIn, action(async (request, response) => {
      await runConsoleTool(changeFeedTool, { id: feedId(request), paused }, response, services);
      return `/feeds/${feedId(request)}?notice=${paused ? 'paused' : 'resumed'}`;
    }, feedPage));
  }

  router.post('/feeds/:id/check', requireSignedIn, action(async (request, response) => {
    await runConsoleTool(checkFeedTool, { id: feedId(request) }, response, services);
    return `/feeds/${feedId(request)}`;
  }, feedPage));

  router.post('/feeds/:id/delete', requireSignedIn, action(async (request, response) => {
    if (body(request).confirm !== 'yes') throw new DomainError('invalid_input', 'Tick the box to confirm: deleting stops the feed.');
    await runConsoleTool(deleteFeedTool, { id: feedId(request) }, response, services);
    return '/feeds?notice=deleted';
  }, feedPage));
}
