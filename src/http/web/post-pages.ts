// A post in the console, where people check an agent's work: each item exactly as the platform receives it (length against
// the limit, media), what went out (the link of every item), the approval decision, retry of a failed post, and editing
// a post that has not gone out, with the same validation as the API (the updatePost tool).
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import { changePostStatus } from '../../../tools/change-post-status.js';
import { approvePost, rejectPost, requesterLabel } from '../../../tools/internal/approval.js';
import { postView, type PostPreview, type PostView } from '../../../tools/internal/post-view.js';
import { chainStatus } from '../../../tools/internal/posts.js';
import type { Services } from '../../../tools/types.js';
import { PostSchema } from '../../db/entities.js';
import { clientError, csrfField, html, safeUrl, sendPage, type Markup } from './html.js';
import { consoleCaller, consoleLocals, requireOwner, requireSignedIn, runConsoleTool } from './session.js';
import { platformName } from '../../../tools/internal/channel-health.js';
import { localInputValue } from '../../lib/time-zone.js';
import { consoleZones, formatWhen, localTimes, pageZone, when, zoneNote, type ConsoleZones } from './zones.js';
import { afterPublishing } from './post-sections.js';
import { CHART_ASSETS } from './chart-pages.js';
import { postActivitySection } from './activity-pages.js';
import { ACTION_NOTICES, postActionRoutes, postActions } from './post-actions.js';
import { isUndated } from './compose-form.js';
import { customerComments } from './preview-link-pages.js';
import { platformPreview, storedEntry } from './platform-preview.js';

export const STATE_LABELS: Record<string, [string, string]> = {
  QUEUE: ['Scheduled', 'ok'],
  DRAFT: ['Draft', 'warn'],
  PUBLISHED: ['Published', 'ok'],
  ERROR: ['Failed', 'error'],
  AWAITING_APPROVAL: ['Awaiting approval', 'warn'],
};

export const STATUS_LABELS: Record<string, [string, string]> = {
  draft: ['Draft', 'warn'],
  awaiting_approval: ['Awaiting approval', 'warn'],
  scheduled: ['Scheduled', 'ok'],
  retrying: ['Retrying', 'warn'],
  published: ['Published', 'ok'],
  partial: ['Published in part', 'error'],
  failed: ['Failed', 'error'],
};

export const badge = (labels: Record<string, [string, string]>, value: string) => {
  const [label, kind] = labels[value] ?? [value, ''];
  return html`<span class="badge ${kind}">${label}</span>`;
};



/** The channel chosen with `?channel=` (all when empty), the posts of that channel, and the channels of every post. */
export function channelFilter<Row extends { integration: { id: string; name: string } }>(posts: Row[], query: unknown): { channel: string; rows: Row[]; channels: Row['integration'][] } {
  const channel = typeof query === 'string' ? query : '';
  return {
    channel,
    rows: posts.filter((post) => !channel || post.integration.id === channel),
    channels: [...new Map(posts.map((post) => [post.integration.id, post.integration])).values()],
  };
}

/** The channel field of a list's filter form. */
export const channelSelect = (channels: { id: string; name: string }[], channel: string) =>
  html`<div><label for="channel">Channel</label><select id="channel" name="channel"><option value="">All channels</option>${channels.map(
    (item) => html`<option value="${item.id}"${item.id === channel ? html` selected` : ''}>${item.name}</option>`,
  )}</select></div>`;

/** After an approval decision (the post's page and the approvals queue). */
export const DECISION_NOTICES: Record<string, string> = {
  approved: 'Approved: the post will be published at its date (at once if the date has passed).',
  rejected: 'Rejected: the post is now a draft, with your reason.',
};

const NOTICES: Record<string, string> = {
  ...DECISION_NOTICES,
  ...ACTION_NOTICES,
  retried: 'Retrying: the post is queued again and resumes at the first item that did not go out.',
  saved: 'Saved.',
  moved: 'Moved: the post is at its new date.',
  created: 'Created.',
};

/** The chain drawn as its platform shows it (platform-preview.ts), then each item's state, link and what went wrong. */
export function previewMarkup(preview: PostPreview, channel: { id: string; name: string }, zone: string): Markup {
  const many = preview.items.length > 1;
  const kind = preview.platform.chain === 'comments' ? 'comment' : 'thread reply';
  return html`${platformPreview(storedEntry(preview, channel), { zone, dated: false })}<ol class="preview-list">${preview.items.map(
    (item) => html`<li class="preview-item${item.overLimit ? ' over' : ''}">
      <p class="preview-head"><strong>${many ? `Item ${item.position + 1}` : 'Post'}${many && item.position > 0 ? ` (${kind})` : ''}</strong>
        ${badge(STATE_LABELS, item.state)}${safeUrl(item.releaseURL) ? html` <a href="${safeUrl(item.releaseURL)}" rel="noopener noreferrer">View on ${preview.platform.name}</a>` : ''}</p>
      ${item.error ? html`<p class="flash error">${localTimes(item.error, zone)}</p>` : ''}
      ${item.warnings.map((warning) => html`<p class="hint warning">${localTimes(warning, zone)}</p>`)}
    </li>`,
  )}</ol>`;
}

/** What is wrong, then what to do, as sentences for the form (validation messages end without a full stop). */
const sentence = (error: DomainError) => [error.message.replace(/([^.!?])$/, '$1.'), error.hint].filter(Boolean).join(' ');

function approvalMarkup(view: PostView, csrf: string, owner: boolean, from: string, zone: string): Markup {
  const approval = view.record.approval;
  if (!approval) return html``;
  const decided = approval.decision
    ? html`<p>${approval.decision === 'approved' ? 'Approved' : 'Rejected'} by ${approval.decidedByName ?? approval.decidedBy ?? 'an owner'} on ${when(approval.decidedAt, zone)}${
        approval.reason ? html`: <q>${approval.reason}</q>` : '.'
      }</p>`
    : html`<p><strong>Waiting for an owner's approval.</strong></p>`;
  return html`<section class="card approval" aria-labelledby="approval-title-${view.root.id}"><h2 id="approval-title-${view.root.id}">Approval</h2>
    <p>Requested by ${requesterLabel(approval)} on ${when(approval.requestedAt, zone)}.</p>${decided}
    ${view.root.state === 'AWAITING_APPROVAL' && owner
      ? html`<div class="actions">
        <form method="post" action="/posts/${view.root.id}/approve">${csrfField(csrf)}<input type="hidden" name="from" value="${from}">
          <button type="submit">Approve</button></form>
        <form method="post" action="/posts/${view.root.id}/reject" class="reject">${csrfField(csrf)}<input type="hidden" name="from" value="${from}">
          <label for="reason-${view.root.id}">Reason for rejecting</label>
          <input id="reason-${view.root.id}" name="reason" type="text" maxlength="1000" required>
          <button type="submit" class="danger">Reject</button></form></div>`
      : view.root.state === 'AWAITING_APPROVAL'
        ? html`<p class="hint">Only owners of the organization approve or reject.</p>`
        : ''}
  </section>`;
}

/** The summary, decision box and preview of one post (also used by the approvals queue), its date in the person's zone and the channel's. */
export function postSummary(view: PostView, csrf: string, owner: boolean, from: string, zones: ConsoleZones): Markup {
  const { record, integration } = view;
  const platform = platformName(integration);
  const channelZone = integration.timeZone ?? zones.organization;
  if (isUndated(view.root)) {
    return html`<p>${badge(STATUS_LABELS, record.publishStatus)} on <strong>${integration.name}</strong> (${platform}), no date yet: it takes no posting slot until it is scheduled</p>
    ${approvalMarkup(view, csrf, owner, from, zones.viewer)}
    ${previewMarkup(view.preview, integration, zones.viewer)}`;
  }
  return html`<p>${badge(STATUS_LABELS, record.publishStatus)} on <strong>${integration.name}</strong> (${platform}), ${when(record.publishDate, zones.viewer)}${
      channelZone !== zones.viewer ? html` <span class="hint">(${when(record.publishDate, channelZone)} in the channel's zone, ${channelZone})</span>` : ''
    } · created over ${record.creationMethod === 'MCP' ? 'MCP' : 'the API or this console'}</p>
    ${record.error ? html`<p class="flash error" role="alert">${localTimes(record.error, zones.viewer)}</p>` : ''}
    ${approvalMarkup(view, csrf, owner, from, zones.viewer)}
    ${previewMarkup(view.preview, integration, zones.viewer)}`;
}

async function postPage(services: Services, request: Request, response: Response, id: string, problem?: { text: string; status: number }): Promise<void> {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const organizationId = consoleCaller(response).organizationId;
  const em = services.orm.em.fork();
  const view = await postView(em, organizationId, id);
  const owner = signedIn!.organization!.role === 'owner';
  const { status } = chainStatus(view.chain);
  const editable = !view.chain.some((item) => item.state === 'PUBLISHED');
  const siblings = (await em.find(PostSchema, { organizationId, group: view.root.group, position: 0, deletedAt: null }, { orderBy: { publishDate: 'asc' } })).filter((post) => post.id !== view.root.id);
  // "Publishing now" is true only while the post waits for its minute: a reload once it went out (or failed) drops it.
  const stale = request.query.notice === 'published-now' && view.root.state !== 'QUEUE';
  const notice = typeof request.query.notice === 'string' && !stale ? NOTICES[request.query.notice] : undefined;
  const published = await afterPublishing(services, request, response, view);
  sendPage(
    response,
    {
      title: `Post on ${view.integration.name}`,
      signedIn,
      csrf,
      section: 'calendar',
      status: problem?.status,
      zone: pageZone(zones),
      assets: CHART_ASSETS,
      flash: problem ? { kind: 'error', text: problem.text } : notice ? { kind: 'ok', text: notice } : undefined,
    },
    html`<h1>Post on ${view.integration.name}</h1>
    ${zoneNote(zones)}
    ${postSummary(view, csrf, owner, 'post', zones)}
    ${await customerComments(services, organizationId, view.root.id, zones.viewer)}
    ${editable ? html`<p><a href="/posts/${view.root.id}/move">Move to another date</a></p>` : ''}
    ${status === 'failed' || status === 'partial'
      ? html`<form method="post" action="/posts/${view.root.id}/retry" class="card">${csrfField(csrf)}
        <p>${status === 'partial' ? 'Retrying resumes at the first item that did not go out; what went out is never sent again.' : 'Retrying queues the post again for its date (at once if it has passed).'}</p>
        <button type="submit">Retry</button></form>`
      : ''}
    ${siblings.length
      ? html`<h2>Created in the same request</h2><ul class="card">${siblings.map((post) => html`<li><a href="/posts/${post.id}">${formatWhen(post.publishDate, zones.viewer)}</a> ${badge(STATE_LABELS, post.state)}</li>`)}</ul>`
      : ''}
    ${postActions(view, csrf, zones.viewer, siblings.length)}
    ${editable ? '' : html`<p class="hint">Published posts cannot be edited: what went out stays on the platform. Duplicate it to post a corrected version.</p>`}
    ${published}
    ${await postActivitySection(services, request, response, view.root.id)}
    <p><a href="/calendar?month=${localInputValue(view.root.publishDate, zones.viewer).slice(0, 7)}">Back to the calendar</a></p>`,
  );
}

export function postPages(router: Router, services: Services): void {
  const who = (response: Response) => {
    const user = consoleLocals(response).signedIn!.user;
    return { id: `user:${user.id}`, name: user.name || user.email };
  };
  const back = (request: Request, id: string, notice: string) => (request.body?.from === 'approvals' ? `/approvals?notice=${notice}` : `/posts/${id}?notice=${notice}`);

  router.get('/posts/:id', requireSignedIn, (request, response) => postPage(services, request, response, String(request.params.id)));
  postActionRoutes(router, services, (request, response, id, error) => postPage(services, request, response, id, { text: sentence(error), status: error.status }));

  router.post('/posts/:id/retry', requireSignedIn, async (request, response) => {
    const id = String(request.params.id);
    try {
      await runConsoleTool(changePostStatus, { id, status: 'schedule' }, response, services);
    } catch (raw) {
      const error = clientError(raw);
      return postPage(services, request, response, id, { text: sentence(error), status: error.status });
    }
    response.redirect(303, `/posts/${id}?notice=retried`);
  });

  router.post('/posts/:id/approve', requireSignedIn, requireOwner, async (request, response) => {
    const id = String(request.params.id);
    await approvePost(services, services.orm.em.fork(), consoleCaller(response).organizationId, id, who(response));
    response.redirect(303, back(request, id, 'approved'));
  });

  router.post('/posts/:id/reject', requireSignedIn, requireOwner, async (request, response) => {
    const id = String(request.params.id);
    try {
      await rejectPost(services, services.orm.em.fork(), consoleCaller(response).organizationId, id, String(request.body?.reason ?? ''), who(response));
    } catch (raw) {
      const error = clientError(raw);
      return postPage(services, request, response, id, { text: sentence(error), status: error.status });
    }
    response.redirect(303, back(request, id, 'rejected'));
  });
}
