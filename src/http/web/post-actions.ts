// What a person does to a post from its page: edit it in the composer, duplicate it, publish it now, schedule a draft
// (or take a scheduled post back to drafts) and delete it, saying first what deleting does on the platform. Every action
// is the API's tool (updatePost, changePostStatus, deletePost) run as the signed-in person.
import type { Request, Response, Router } from 'express';
import { changePostStatus } from '../../../tools/change-post-status.js';
import { deletePost } from '../../../tools/delete-post.js';
import { updatePost } from '../../../tools/update-post.js';
import { cannotChange } from '../../../tools/internal/platform-changes.js';
import { providerOf } from '../../../tools/internal/integrations.js';
import type { PostView } from '../../../tools/internal/post-view.js';
import type { PostRecord } from '../../../tools/internal/posts.js';
import type { Services } from '../../../tools/types.js';
import { DomainError } from '../../errors.js';
import { canonicalZone, instantOf, localInputValue, parseWallClock } from '../../lib/time-zone.js';
import { isUndated } from './compose-form.js';
import { clientError, csrfField, html, type Markup } from './html.js';
import { requireSignedIn, runConsoleTool } from './session.js';
import { zoneDatalist, zoneField } from './zones.js';

export const ACTION_NOTICES: Record<string, string> = {
  'published-now': 'Publishing now: the post is queued for this minute.',
  scheduled: 'Scheduled: the post will be published at its date.',
  unscheduled: 'Back in drafts: the post will not be published until it is scheduled again.',
};

/** The buttons of a post's page: what can be done to it in its state. */
export function postActions(view: PostView, csrf: string, zone: string, siblings: number): Markup {
  const id = view.root.id;
  const published = view.chain.filter((item) => item.state === 'PUBLISHED');
  const editable = published.length === 0;
  const state = view.root.state;
  const provider = providerOf(view.integration);
  const platform = provider.name;
  const others = siblings > 0 ? ` and the ${siblings} other post${siblings === 1 ? '' : 's'} created with it (listed below)` : '';
  const onPlatform = published.length
    ? provider.deletePublished
      ? html`<fieldset><legend>What went out on ${platform}</legend>
          <div class="choice"><input type="radio" id="keep-${id}" name="onPlatform" value="keep" checked><label for="keep-${id}">Keep it on ${platform}: Herald forgets it</label></div>
          <div class="choice"><input type="radio" id="remove-${id}" name="onPlatform" value="delete"><label for="remove-${id}">Delete it on ${platform} too (${published.length} published item${published.length === 1 ? '' : 's'})</label></div></fieldset>`
      : html`<p class="hint">${published.length} item${published.length === 1 ? '' : 's'} went out and stay${published.length === 1 ? 's' : ''} on ${platform}: ${cannotChange(provider, 'delete')}</p>`
    : html`<p class="hint">Nothing of it went out: it will not be published.</p>`;
  return html`<section class="card post-actions" aria-labelledby="actions-title"><h2 id="actions-title">Actions</h2>
    <div class="actions">
      ${editable ? html`<a class="button" href="/posts/${id}/edit">Edit</a>` : ''}
      <a class="button secondary" href="/compose?duplicate=${id}">Duplicate</a>
      ${editable && state !== 'AWAITING_APPROVAL' && state !== 'ERROR'
        ? html`<form method="post" action="/posts/${id}/publish-now" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">Publish now</button></form>`
        : ''}
      ${state === 'QUEUE' ? html`<form method="post" action="/posts/${id}/unschedule" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">Back to drafts</button></form>` : ''}
    </div>
    ${state === 'DRAFT'
      ? html`<form method="post" action="/posts/${id}/schedule" class="schedule-draft">${csrfField(csrf)}
          <h3 id="schedule-${id}">Schedule this draft</h3>
          <label for="schedule-date-${id}">Date and time</label>
          <input id="schedule-date-${id}" name="date" type="datetime-local" step="60" required${isUndated(view.root) ? '' : html` value="${localDate(view, zone)}"`}>
          ${zoneField(`schedule-zone-${id}`, 'timeZone', zone, 'Time zone of the date')}${zoneDatalist()}
          <button type="submit">Schedule</button></form>`
      : ''}
    <form method="post" action="/posts/${id}/delete" class="delete-post">${csrfField(csrf)}
      <h3 id="delete-${id}">Delete</h3>
      <p>Deletes this post${others} from Herald. This cannot be undone.</p>
      ${onPlatform}
      <div class="choice"><input type="checkbox" id="confirm-delete-${id}" name="confirm" value="yes" required><label for="confirm-delete-${id}">I understand: delete it</label></div>
      <button type="submit" class="danger">Delete</button></form>
  </section>`;
}

/**
 * The same actions in a list's row (Posts, Home): edit, duplicate, publish now, and links to the post's page for what
 * needs its explanation or a date there (scheduling a draft, deleting, which says first what happens on the platform).
 */
export function rowActions(post: Pick<PostRecord, 'id' | 'state' | 'items'>, csrf: string): Markup {
  const editable = post.items.every((item) => item.state !== 'PUBLISHED');
  return html`<div class="row-actions">
    ${editable ? html`<a href="/posts/${post.id}/edit">Edit</a>` : ''}
    <a href="/compose?duplicate=${post.id}">Duplicate</a>
    ${post.state === 'DRAFT' ? html`<a href="/posts/${post.id}#schedule-${post.id}">Schedule</a>` : ''}
    ${editable && (post.state === 'DRAFT' || post.state === 'QUEUE')
      ? html`<form method="post" action="/posts/${post.id}/publish-now" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">Publish now</button></form>`
      : ''}
    <a href="/posts/${post.id}#delete-${post.id}">Delete…</a></div>`;
}

const localDate = (view: PostView, zone: string) => localInputValue(view.root.publishDate, zone).slice(0, 16);

type Shown = (request: Request, response: Response, id: string, problem: DomainError) => Promise<void>;

export function postActionRoutes(router: Router, services: Services, postPage: Shown): void {
  /** Runs the action; a client mistake is shown on the post's page, with what to do. */
  const act = (run: (request: Request, response: Response, id: string) => Promise<string>) => async (request: Request, response: Response) => {
    const id = String(request.params.id);
    let location: string;
    try {
      location = await run(request, response, id);
    } catch (raw) {
      return postPage(request, response, id, clientError(raw));
    }
    response.redirect(303, location);
  };

  router.post('/posts/:id/publish-now', requireSignedIn, act(async (_request, response, id) => {
    const saved = await runConsoleTool(updatePost, { id, date: services.now().toISOString() }, response, services);
    if (saved.state === 'DRAFT') await runConsoleTool(changePostStatus, { id, status: 'schedule' }, response, services);
    return `/posts/${id}?notice=published-now`;
  }));

  router.post('/posts/:id/schedule', requireSignedIn, act(async (request, response, id) => {
    const zone = canonicalZone(request.body?.timeZone);
    const wall = parseWallClock(String(request.body?.date ?? ''));
    if (!zone) throw new DomainError('invalid_input', `Time zone: "${String(request.body?.timeZone ?? '')}" is not a time zone.`, { hint: 'Choose one from the list, such as Europe/Berlin.' });
    if (!wall) throw new DomainError('invalid_input', 'Choose the date and time to publish the draft at.');
    await runConsoleTool(updatePost, { id, date: instantOf(wall, zone).toISOString() }, response, services);
    await runConsoleTool(changePostStatus, { id, status: 'schedule' }, response, services);
    return `/posts/${id}?notice=scheduled`;
  }));

  router.post('/posts/:id/unschedule', requireSignedIn, act(async (_request, response, id) => {
    await runConsoleTool(changePostStatus, { id, status: 'draft' }, response, services);
    return `/posts/${id}?notice=unscheduled`;
  }));

  router.post('/posts/:id/delete', requireSignedIn, act(async (request, response, id) => {
    if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', 'Tick "I understand: delete it" to delete the post.');
    const answer = await runConsoleTool(deletePost, { id, deleteOnPlatform: request.body?.onPlatform === 'delete', confirm: true }, response, services);
    return `/posts?notice=${answer.onPlatform && answer.onPlatform.pending.length + answer.onPlatform.awaitingApproval.length > 0 ? 'deleting-on-platform' : 'deleted'}`;
  }));
}
