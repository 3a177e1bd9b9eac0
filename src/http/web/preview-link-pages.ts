// Customer preview links in the browser (issue 35). The public page at /preview/<token>: no account and no cookie, the
// link's upcoming posts as each platform will show them, and on each a form to comment, ask for changes or (with the
// link's power, for a post waiting for approval) approve; its forms carry the link's form token instead of the console's
// CSRF cookie, and it answers no-referrer, noindex, no-store and the console's CSP. Media of its posts are served through
// the link (never a storage path). The console's Preview links page makes a link (its URL shown once), lists them with
// their last use and activity, and revokes; a post's page shows its customer comments (`customerComments`).
import express, { type Request, type Response, type Router } from 'express';
import { asDomainError, DomainError } from '../../errors.js';
import { safeEqual } from '../../lib/crypto.js';
import { instantOf, parseWallClock, addDays, localInputValue } from '../../lib/time-zone.js';
import { IntegrationSchema, type Integration, type Post } from '../../db/entities.js';
import { PreviewLinkSchema, type PreviewFeedback, type PreviewLink } from '../../db/preview-link-entities.js';
import { findLibraryMedia } from '../../../tools/internal/media.js';
import { previewChain, type PostPreview as StoredPreview } from '../../../tools/internal/post-view.js';
import { platformPreview, storedEntry } from './platform-preview.js';
import { chainOf } from '../../../tools/internal/posts.js';
import { organizationZone, channelZone } from '../../../tools/internal/time-zones.js';
import { linkFeedback, linkPosts, MAX_LINK_DAYS } from '../../../tools/internal/preview-links.js';
import { actOnPreview, formToken, MAX_MESSAGE, openPreviewLink, postOfRef, postRef, type PreviewAct } from '../../../tools/internal/preview-link-actions.js';
import { createPreviewLinkTool, listPreviewLinksTool, previewLinkActivityTool, revokePreviewLinkTool } from '../../../tools/preview-links.js';
import { platformName } from '../../../tools/internal/channel-health.js';
import type { Services } from '../../../tools/types.js';
import { CustomerSchema } from '../../db/entities.js';
import { clientError, csrfField, html, safeUrl, sendPage, sentence, type Markup } from './html.js';
import { consoleLocals, requireOwner, requireSignedIn, revealAfterRedirect, runConsoleTool, takeReveal } from './session.js';
import { consoleZones, pageZone, when, zoneNote } from './zones.js';

const KIND_LABELS: Record<string, string> = { comment: 'Comment', approved: 'Approved', changes_requested: 'Changes requested' };
const DONE: Record<string, string> = {
  comment: 'Thank you: your comment was sent.',
  approve: 'Approved: the post will be published at its date.',
  changes: 'Thank you: your request for changes was sent. The post stays scheduled until the team changes it.',
  draft: 'Thank you: the post went back to the team as a draft, with your message.',
};

/** The headers of every answer of a link (page, error or media): nothing of the URL leaks on, nothing is kept or indexed. */
function linkHeaders(response: Response): void {
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('X-Robots-Tag', 'noindex, nofollow');
  response.setHeader('Cache-Control', 'no-store');
}

/** The answer of a refused request; a failure of ours is logged without the path (it holds the link's token). */
function errorPage(services: Services, response: Response, raw: unknown): void {
  const error = asDomainError(raw);
  if (error.code === 'internal') services.logger.error({ err: raw, requestId: response.locals.requestId, path: '/preview/…' }, 'preview link error');
  if (response.headersSent) return;
  linkHeaders(response);
  const retry = (error.details as { retryAfter?: number } | undefined)?.retryAfter;
  if (error.code === 'rate_limited' && retry) response.setHeader('Retry-After', String(retry));
  sendPage(
    response,
    { title: 'Preview link', csrf: '', status: error.status, script: false },
    html`<div class="narrow"><h1>${error.status === 410 ? 'This link is no longer open' : error.status === 404 ? 'Nothing to show here' : 'Something is not right'}</h1>
      <p class="flash error" role="alert">${error.message}</p>${error.hint ? html`<p>${error.hint}</p>` : ''}</div>`,
  );
}

const address = (request: Request) => request.ip ?? 'unknown';
const origin = (request: Request) => ({ address: request.ip ?? null, client: request.get('user-agent')?.slice(0, 200) ?? null });

/**
 * The preview with its media as the link serves them: a library file through the link (never its storage path), a
 * client's own URL as it is; no media id.
 */
function linkMedia(services: Services, token: string, ref: string, preview: StoredPreview, chain: Post[]): StoredPreview {
  const base = `${services.config.publicUrl.replace(/\/$/, '')}/preview/${token}/media/${ref}`;
  return {
    ...preview,
    items: preview.items.map((item, position) => ({
      ...item,
      media: item.media.map((media, index) => ({
        ...media,
        id: '',
        path: chain[position]?.media[index]?.type ? `${base}/${position}/${index}` : (safeUrl(media.path) ?? ''),
      })),
    })),
  };
}

/** A post of the link as its platform shows it (platform-preview.ts), what was said on it, and its form. */
function postCard(services: Services, token: string, link: PreviewLink, post: Post, chain: Post[], integration: Integration, zone: string, feedback: PreviewFeedback[]): Markup {
  const ref = postRef(services, link, post.id);
  const preview = previewChain(integration, chain);
  const waiting = post.state === 'AWAITING_APPROVAL';
  const channelTime = channelZone(integration, zone);
  return html`<article class="card preview-post" id="post-${ref}" aria-labelledby="title-${ref}">
    <h2 id="title-${ref}">${integration.name} on ${platformName(integration)}</h2>
    <p>${waiting ? html`<span class="badge warn">Waiting for approval</span>` : html`<span class="badge ok">Scheduled</span>`} for ${when(post.publishDate, channelTime)}</p>
    ${platformPreview(storedEntry(linkMedia(services, token, ref, preview, chain), { id: '', name: integration.name }), { zone: channelTime, dated: false })}
    ${feedback.length
      ? html`<h3>What was said here</h3><ul class="feedback">${feedback.map((item) => html`<li><strong>${KIND_LABELS[item.kind] ?? item.kind}</strong> ${when(item.createdAt, zone)}${item.text ? html`: <q>${item.text}</q>` : ''}</li>`)}</ul>`
      : ''}
    <form method="post" action="/preview/${token}/posts/${ref}">
      <input type="hidden" name="_form" value="${formToken(services, link)}">
      <label for="message-${ref}">Your message</label>
      <textarea id="message-${ref}" name="message" rows="3" maxlength="${MAX_MESSAGE}"></textarea>
      <div class="actions">
        <button type="submit" name="act" value="comment" class="secondary">Comment</button>
        <button type="submit" name="act" value="changes" class="secondary">Ask for changes</button>
        ${link.canApprove && waiting ? html`<button type="submit" name="act" value="approve">Approve</button>` : ''}
      </div>
      <p class="hint">${link.canApprove && waiting ? 'Asking for changes sends the post back to the team as a draft, with your message.' : 'Asking for changes tells the team what to change; the post stays as it is until they do.'}</p>
    </form>
  </article>`;
}

async function publicPage(services: Services, request: Request, response: Response, token: string, link: PreviewLink): Promise<void> {
  const em = services.orm.em.fork();
  const zone = await organizationZone(em, link.organizationId);
  const posts = await linkPosts(em, link);
  const channels = new Map((await em.find(IntegrationSchema, { id: { $in: [...new Set(posts.map((post) => post.integrationId))] }, organizationId: link.organizationId })).map((item) => [item.id, item]));
  const feedback = await linkFeedback(em, link.organizationId, { linkId: link.id });
  const cards = await Promise.all(
    posts.map(async (post) => postCard(services, token, link, post, await chainOf(em, post), channels.get(post.integrationId)!, zone, feedback.filter((item) => item.postId === post.id).reverse())),
  );
  const done = typeof request.query.done === 'string' ? DONE[request.query.done] : undefined;
  linkHeaders(response);
  sendPage(
    response,
    { title: `Posts for ${link.name}`, csrf: '', script: false, flash: done ? { kind: 'ok', text: done } : undefined },
    html`<h1>Posts for ${link.name}</h1>
    <p>The posts to go out from ${when(link.rangeStart, zone)} to ${when(link.rangeEnd, zone)}, each as its platform will show it. Times are in <strong>${zone}</strong> unless a channel says otherwise.</p>
    <p class="hint">This link works until ${when(link.expiresAt, zone)}. Comment on a post or ask for changes${link.canApprove ? '; approve the posts that wait for your approval' : ''}.</p>
    ${cards.length ? cards : html`<p class="card">No posts to review in these dates yet.</p>`}`,
  );
}

/** The public routes of preview links, mounted before the console's session: no cookie is read or set. */
export function previewLinkPublicRoutes(services: Services): Router {
  const router = express.Router();
  router.get('/preview/:token', async (request, response) => {
    const token = String(request.params.token);
    try {
      await publicPage(services, request, response, token, await openPreviewLink(services, token, address(request)));
    } catch (raw) {
      errorPage(services, response, raw);
    }
  });

  router.post('/preview/:token/posts/:ref', async (request, response) => {
    const token = String(request.params.token);
    try {
      // The page's no-referrer policy makes browsers send `Origin: null`: only a named other origin is refused here; the
      // form token below is what proves the form came from the page.
      const sentFrom = request.headers.origin;
      if (sentFrom && sentFrom !== 'null' && sentFrom !== new URL(services.config.publicUrl).origin && sentFrom !== `${request.protocol}://${request.headers.host}`) {
        throw new DomainError('forbidden', 'This form was sent from another site.', { hint: 'Open the link itself and send the form from there.' });
      }
      const link = await openPreviewLink(services, token, address(request), true);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const sent = typeof body._form === 'string' ? body._form : '';
      if (!sent || !safeEqual(sent, formToken(services, link))) {
        throw new DomainError('forbidden', 'This form did not come from the preview page.', { hint: 'Open the link again and send the form from the page.' });
      }
      const act = body.act === 'approve' || body.act === 'changes' ? body.act : 'comment';
      const outcome = await actOnPreview(services, link, String(request.params.ref), act as PreviewAct, typeof body.message === 'string' ? body.message : '', origin(request));
      const done = outcome.outcome === 'draft' ? 'draft' : act;
      linkHeaders(response);
      response.redirect(303, `/preview/${token}?done=${done}`);
    } catch (raw) {
      errorPage(services, response, raw);
    }
  });

  router.get('/preview/:token/media/:ref/:position/:index', async (request, response) => {
    const token = String(request.params.token);
    try {
      const link = await openPreviewLink(services, token, address(request));
      const em = services.orm.em.fork();
      const root = await postOfRef(services, em, link, String(request.params.ref));
      const item = (await chainOf(em, root)).find((candidate) => candidate.position === Number(request.params.position));
      const media = item?.media[Number(request.params.index)];
      const [file] = media?.type ? await findLibraryMedia(em, link.organizationId, [media]) : [];
      if (!file) throw new DomainError('not_found', 'This file is not on this preview link.');
      const stream = await services.storage.read(file.storageKey);
      linkHeaders(response);
      response.setHeader('Content-Type', file.type);
      response.setHeader('X-Content-Type-Options', 'nosniff');
      response.setHeader('Content-Security-Policy', 'sandbox');
      stream.on('error', () => response.destroy());
      stream.pipe(response);
    } catch (raw) {
      errorPage(services, response, raw);
    }
  });
  return router;
}

/** What customers said on a post through preview links, for its console page (nothing when nobody did). */
export async function customerComments(services: Services, organizationId: string, postId: string, zone: string): Promise<Markup> {
  const em = services.orm.em.fork();
  const feedback = await linkFeedback(em, organizationId, { postId }, 50);
  if (feedback.length === 0) return html``;
  const links = new Map((await em.find(PreviewLinkSchema, { id: { $in: [...new Set(feedback.map((item) => item.linkId))] }, organizationId })).map((link) => [link.id, link.name]));
  return html`<section class="card" aria-labelledby="customer-comments-title" id="customer-comments"><h2 id="customer-comments-title">Customer comments</h2>
    <ul>${feedback.map(
      (item) => html`<li><strong>${KIND_LABELS[item.kind] ?? item.kind}</strong> through the preview link "${links.get(item.linkId) ?? 'deleted'}", ${when(item.createdAt, zone)}${
        item.text ? html`: <q>${item.text}</q>` : ''
      }${item.outcome === 'draft' ? ' (sent back to draft)' : ''}</li>`,
    )}</ul></section>`;
}

/** A local date of the form (the organization's zone) as an instant: the start of the day, or the end with `end`. */
function dayInstant(value: unknown, zone: string, field: string, end = false): string {
  const wall = typeof value === 'string' ? parseWallClock(value) : undefined;
  if (!wall) throw new DomainError('invalid_input', `${field}: choose a date.`, { hint: 'Use the date field (YYYY-MM-DD).' });
  // The end of a day is its last second (the next midnight would read as a day more).
  const instant = end ? instantOf(addDays(wall, 1), zone).getTime() - 1000 : instantOf(wall, zone).getTime();
  return new Date(instant).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function previewLinkPages(router: Router, services: Services): void {
  async function listPage(request: Request, response: Response, options: { error?: string; status?: number } = {}) {
    const { signedIn, csrf } = consoleLocals(response);
    const owner = signedIn!.organization!.role === 'owner';
    const zones = await consoleZones(services, request, response);
    const organizationId = signedIn!.organization!.id;
    const em = services.orm.em.fork();
    const { output: links } = await runConsoleTool(listPreviewLinksTool, {}, response, services);
    const activities = await Promise.all(links.map((link) => runConsoleTool(previewLinkActivityTool, { id: link.id }, response, services)));
    const channels = await em.find(IntegrationSchema, { organizationId, deletedAt: null }, { orderBy: { name: 'asc', id: 'asc' } });
    const customers = await em.find(CustomerSchema, { organizationId }, { orderBy: { name: 'asc', id: 'asc' } });
    const channelNames = new Map(channels.map((channel) => [channel.id, channel.name]));
    const revealed = takeReveal(services, request, response, 'preview-link');
    const today = localInputValue(services.now(), zones.viewer).slice(0, 10);
    sendPage(
      response,
      { title: 'Preview links', signedIn, csrf, section: 'preview-links', status: options.status, zone: pageZone(zones), flash: options.error ? { kind: 'error', text: options.error } : undefined },
      html`<h1>Preview links</h1>
      <p>A preview link shows a customer their upcoming posts (scheduled, or waiting for approval) as each platform will show them, without an account. Whoever holds it comments or asks for changes, and approves waiting posts if you allow it. Everything done through it is in the activity, the notifications and the audit trail under the link's name.</p>
      ${zoneNote(zones)}
      ${revealed
        ? html`<section class="card" aria-labelledby="new-link-title"><h2 id="new-link-title">Link for ${revealed.name}</h2>
          <label for="new-link-url">Copy it now: it is shown only once.</label>
          <input id="new-link-url" type="text" readonly value="${revealed.url}"></section>`
        : ''}
      ${owner
        ? html`<form method="post" action="/preview-links" class="card" aria-labelledby="make-title">${csrfField(csrf)}
          <h2 id="make-title">Make a preview link</h2>
          <label for="link-name">For whom</label><input id="link-name" name="name" type="text" required maxlength="100" placeholder="Acme Bakery">
          <fieldset><legend>Posts of</legend>
            ${customers.length
              ? html`<label for="link-customer">A customer (all its channels)</label><select id="link-customer" name="customer"><option value="">None: the channels ticked below</option>${customers.map(
                  (customer) => html`<option value="${customer.id}">${customer.name}</option>`,
                )}</select>`
              : ''}
            ${channels.map((channel) => html`<label><input type="checkbox" name="channels" value="${channel.id}"> ${channel.name} (${platformName(channel)})</label> `)}
          </fieldset>
          <label for="link-from">From (a date)</label><input id="link-from" name="from" type="date" required value="${today}">
          <label for="link-to">To (a date, included)</label><input id="link-to" name="to" type="date" required>
          <label for="link-days">Expires after (days, at most ${MAX_LINK_DAYS})</label><input id="link-days" name="days" type="number" min="1" max="${MAX_LINK_DAYS}" value="14" required>
          <label><input type="checkbox" name="canApprove" value="yes"> It may approve posts waiting for approval (and send them back to draft)</label>
          <button type="submit">Make the link</button></form>`
        : html`<p class="hint">Only owners make and revoke preview links.</p>`}
      <h2>Links (${links.length})</h2>
      ${links.length === 0 ? html`<p class="card">No preview links yet.</p>` : ''}
      ${links.map((link, index) => {
        const activity = activities[index].activity;
        return html`<article class="card" aria-labelledby="link-${link.id}">
          <h3 id="link-${link.id}">${link.name} <span class="badge ${link.state === 'active' ? 'ok' : 'warn'}">${link.state === 'active' ? 'Active' : link.state === 'revoked' ? 'Revoked' : 'Expired'}</span></h3>
          <p>${link.customer ? `The channels of ${link.customer.name}` : (link.channels ?? []).map((id) => channelNames.get(id) ?? 'a deleted channel').join(', ')}, posts from ${when(link.from, zones.viewer)} to ${when(link.to, zones.viewer)}${link.canApprove ? ', may approve' : ''}.</p>
          <p class="hint">Made by ${link.createdBy} ${when(link.createdAt, zones.viewer)} · ${link.state === 'revoked' ? html`revoked ${when(link.revokedAt, zones.viewer)}` : html`expires ${when(link.expiresAt, zones.viewer)}`} · last used ${link.lastUsedAt ? when(link.lastUsedAt, zones.viewer) : 'never'}</p>
          ${activity.length
            ? html`<ul class="feedback">${activity.map(
                (item) => html`<li><strong>${KIND_LABELS[item.kind]}</strong> on <a href="/posts/${item.postId}">a post</a> ${when(item.createdAt, zones.viewer)}${item.text ? html`: <q>${item.text}</q>` : ''}${item.outcome === 'draft' ? ' (sent back to draft)' : ''}</li>`,
              )}</ul>`
            : html`<p class="hint">Nothing done through it yet.</p>`}
          ${owner && link.state === 'active'
            ? html`<form method="post" action="/preview-links/${link.id}/revoke">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Revoke the link for ${link.name}">Revoke</button></form>`
            : ''}
        </article>`;
      })}`,
    );
  }

  router.get('/preview-links', requireSignedIn, (request, response) => listPage(request, response));

  router.post('/preview-links', requireSignedIn, requireOwner, async (request, response) => {
    try {
      const body = (request.body ?? {}) as Record<string, unknown>;
      const zone = (await consoleZones(services, request, response)).viewer;
      const days = Number(body.days);
      if (!Number.isInteger(days) || days < 1 || days > MAX_LINK_DAYS) throw new DomainError('invalid_input', `Expires after: give a number of days from 1 to ${MAX_LINK_DAYS}.`);
      const customer = typeof body.customer === 'string' && body.customer ? body.customer : undefined;
      const created = await runConsoleTool(
        createPreviewLinkTool,
        {
          name: body.name,
          ...(customer ? { customer } : { channels: [body.channels ?? []].flat() }),
          from: dayInstant(body.from, zone, 'From'),
          to: dayInstant(body.to, zone, 'To', true),
          expiresAt: new Date(services.now().getTime() + days * 86_400_000).toISOString(),
          canApprove: body.canApprove === 'yes',
        },
        response,
        services,
      );
      revealAfterRedirect(services, request, response, 'preview-link', { name: created.name, url: created.url });
      response.redirect(303, '/preview-links');
    } catch (raw) {
      const error = clientError(raw);
      await listPage(request, response, { error: sentence(error), status: error.status });
    }
  });

  router.post('/preview-links/:id/revoke', requireSignedIn, requireOwner, async (request, response) => {
    await runConsoleTool(revokePreviewLinkTool, { id: request.params.id }, response, services);
    response.redirect(303, '/preview-links');
  });
}
