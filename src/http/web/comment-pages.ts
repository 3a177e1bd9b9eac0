// The comment inbox (issue 24): what people left on the posts Herald published, with filters (channel, post, unanswered),
// and a person's reply, hide/show and delete. Every list and act runs the tool REST and MCP run (tools/comments.ts) as
// the signed-in person (runConsoleTool): the same channel visibility, the same approval gate, and a reply created by the
// same replyToComment, so a comment is answered once (a second reply is refused with the first one named) and the reply
// is published by the publish job like any post. Plain forms with CSRF tokens: the inbox works without JavaScript.
// Hide and delete are offered only where the channel's provider can do them; elsewhere the page says why.
import type { Request, Response, Router } from 'express';
import { commentListTool, deleteCommentTool, hideCommentTool, replyToCommentTool } from '../../../tools/comments.js';
import type { CommentRecord } from '../../../tools/internal/comments.js';
import { ACTIVE_REPLY } from '../../../tools/internal/comment-replies.js';
import { listIntegrations, providerOf } from '../../../tools/internal/integrations.js';
import { invalidInput } from '../../errors.js';
import { PostSchema, type Integration, type PostState } from '../../db/entities.js';
import type { Services } from '../../../tools/types.js';
import { clientError, csrfField, html, safeUrl, sendPage, sentence, type Markup } from './html.js';
import { badge, channelSelect, STATE_LABELS } from './post-pages.js';
import { excerpt } from '../../lib/content.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool, safeNext } from './session.js';
import { consoleZones, pageZone, when, zoneNote, type ConsoleZones } from './zones.js';

const PAGE_SIZE = 50;
const COMMENT_STATES: Record<string, [string, string]> = { new: ['Unanswered', 'warn'], answered: ['Answered', 'ok'], hidden: ['Hidden', ''], deleted: ['Deleted', 'error'] };

const NOTICES: Record<string, string> = {
  replied: 'Reply created: Herald publishes it once, now (or after an owner approves it); its state shows under the comment.',
  hidden: 'Hidden on the platform.',
  shown: 'Shown again on the platform.',
  deleted: 'Deleted on the platform.',
};

interface InboxFilters {
  channel: string;
  post: string;
  unanswered: boolean;
  page: number;
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim().slice(0, 200) : '');

function filtersOf(query: Record<string, unknown>): InboxFilters {
  const page = Number(query.page ?? 0);
  return { channel: text(query.channel), post: text(query.post), unanswered: query.unanswered === 'yes', page: Number.isInteger(page) && page >= 0 && page <= 10_000 ? page : 0 };
}

const queryOf = (filters: InboxFilters, page = filters.page) =>
  [filters.channel && `channel=${encodeURIComponent(filters.channel)}`, filters.post && `post=${encodeURIComponent(filters.post)}`, filters.unanswered && 'unanswered=yes', page > 0 && `page=${page}`]
    .filter(Boolean)
    .join('&');

/** What the page needs besides the records: each comment's channel (and so its provider) and its post. */
interface Context {
  channels: Map<string, Integration>;
  posts: Map<string, { id: string; content: string }>;
  zones: ConsoleZones;
  csrf: string;
  /** Where the forms send the person back (the list with its filters, or a post's page). */
  back: string;
  /** The reply a person typed, kept when it was refused. */
  draft?: { commentId: string; content: string };
}

async function contextOf(services: Services, request: Request, response: Response, comments: CommentRecord[], back: string): Promise<Omit<Context, 'draft'>> {
  const organizationId = consoleCaller(response).organizationId;
  const em = services.orm.em.fork();
  const postIds = [...new Set(comments.map((comment) => comment.postId))];
  const posts = postIds.length ? await em.find(PostSchema, { organizationId, id: { $in: postIds } }, { fields: ['id', 'content'], disableIdentityMap: true }) : [];
  return {
    channels: new Map((await listIntegrations(em, organizationId)).map((channel) => [channel.id, channel])),
    posts: new Map(posts.map((post) => [post.id, { id: post.id, content: post.content }])),
    zones: await consoleZones(services, request, response),
    csrf: consoleLocals(response).csrf,
    back,
  };
}

function replyMarkup(comment: CommentRecord, context: Context, platform: string, canReply: boolean): Markup {
  const reply = comment.reply;
  const shown = reply
    ? html`<p class="reply-state">Reply: ${badge(STATE_LABELS, reply.state)} <a href="/posts/${reply.postId}">the reply's post</a>${
        safeUrl(reply.url) ? html` · <a href="${safeUrl(reply.url)}" rel="noopener noreferrer">view it on ${platform}</a>` : ''
      }</p>${reply.error ? html`<p class="flash error">${reply.error}</p>` : ''}`
    : '';
  if (comment.state === 'deleted' || (reply && ACTIVE_REPLY.includes(reply.state as PostState))) return html`${shown}`;
  if (!canReply) return html`${shown}<p class="hint">${platform} does not let Herald publish replies: answer it on ${platform} itself.</p>`;
  const id = `reply-${comment.id}`;
  const draft = context.draft?.commentId === comment.id ? context.draft.content : '';
  return html`${shown}<form method="post" action="/comments/${comment.id}/reply" class="reply-form">${csrfField(context.csrf)}
    <input type="hidden" name="back" value="${context.back}">
    <label for="${id}">Your reply${reply ? ' (the earlier one did not go out)' : ''}</label>
    <textarea id="${id}" name="content" rows="2" required maxlength="100000">${draft}</textarea>
    <button type="submit">Reply</button></form>`;
}

function moderationMarkup(comment: CommentRecord, context: Context, integration: Integration | undefined): Markup {
  if (!integration || comment.state === 'deleted') return html``;
  const provider = providerOf(integration);
  const hidden = comment.state === 'hidden';
  const hide = provider.hideComment
    ? html`<form method="post" action="/comments/${comment.id}/hide" class="inline">${csrfField(context.csrf)}<input type="hidden" name="back" value="${context.back}">
        <input type="hidden" name="hidden" value="${hidden ? 'false' : 'true'}"><button type="submit" class="secondary">${hidden ? 'Show again' : 'Hide'}</button></form>`
    : html`<p class="hint">Hiding: ${provider.name} does not let Herald hide comments through its API${provider.deleteComment ? '; delete it instead' : ''}.</p>`;
  const remove = provider.deleteComment
    ? html`<form method="post" action="/comments/${comment.id}/delete" class="inline">${csrfField(context.csrf)}<input type="hidden" name="back" value="${context.back}">
        <label class="choice"><input type="checkbox" name="confirm" value="yes" required> Delete it from ${provider.name} (cannot be undone)</label>
        <button type="submit" class="danger">Delete</button></form>`
    : html`<p class="hint">Deleting: ${provider.name} does not let Herald delete comments through its API: moderate it on ${provider.name} itself.</p>`;
  return html`<div class="actions">${hide} ${remove}</div>`;
}

function commentMarkup(comment: CommentRecord, context: Context, showPost: boolean): Markup {
  const integration = context.channels.get(comment.integrationId);
  const provider = integration ? providerOf(integration) : undefined;
  const platform = provider?.name ?? comment.platform;
  const post = context.posts.get(comment.postId);
  const who = comment.author.handle ? html` <span class="hint">@${comment.author.handle.replace(/^@/, '')}</span>` : '';
  const name = safeUrl(comment.author.url) ? html`<a href="${safeUrl(comment.author.url)}" rel="noopener noreferrer">${comment.author.name}</a>` : comment.author.name;
  return html`<li class="card comment" id="comment-${comment.id}">
    <p class="preview-head"><strong>${name}</strong>${who} ${badge(COMMENT_STATES, comment.state)} ${when(comment.createdAt, context.zones.viewer)}</p>
    <p class="comment-text">${comment.text}</p>
    <p class="hint">${comment.parentId ? html`In reply to <a href="#comment-${comment.parentId}">another comment</a>, on` : comment.parentPlatformId ? 'In reply to another comment, on' : 'On'}
      ${showPost ? html`<a href="/posts/${comment.postId}">${post ? `“${excerpt(post.content, 80)}”` : 'the post'}</a>` : 'this post'} · ${integration?.name ?? ''} (${platform})${
        safeUrl(comment.url) ? html` · <a href="${safeUrl(comment.url)}" rel="noopener noreferrer">view on ${platform}</a>` : ''
      }</p>
    ${replyMarkup(comment, context, platform, Boolean(provider?.comment))}
    ${moderationMarkup(comment, context, integration)}
  </li>`;
}

/** The comments of one post, for its page in the console (post-pages.ts). */
export async function postComments(services: Services, request: Request, response: Response, postId: string): Promise<Markup> {
  const { comments, total } = await runConsoleTool(commentListTool, { post: postId, pageSize: PAGE_SIZE }, response, services);
  const records = comments as unknown as CommentRecord[];
  const context = await contextOf(services, request, response, records, `/posts/${postId}`);
  return html`<section aria-labelledby="comments-title" id="comments"><h2 id="comments-title">Comments (${total})</h2>
    ${records.length === 0
      ? html`<p class="hint">No comment yet. Herald reads the comments of published posts every few minutes, where the platform lets it.</p>`
      : html`<ol class="preview-list">${records.map((comment) => commentMarkup(comment, context, false))}</ol>
        ${total > records.length ? html`<p><a href="/comments?post=${postId}">All ${total} comments in the inbox</a></p>` : ''}`}
  </section>`;
}

async function inboxPage(services: Services, request: Request, response: Response, query: Record<string, unknown>, problem?: { text: string; status: number; draft?: Context['draft'] }): Promise<void> {
  const filters = filtersOf(query);
  const { signedIn, csrf } = consoleLocals(response);
  const list = await runConsoleTool(
    commentListTool,
    { channel: filters.channel || undefined, post: filters.post || undefined, unanswered: filters.unanswered || undefined, page: filters.page, pageSize: PAGE_SIZE },
    response,
    services,
  );
  const records = list.comments as unknown as CommentRecord[];
  const back = `/comments${queryOf(filters) ? `?${queryOf(filters)}` : ''}`;
  const context: Context = { ...(await contextOf(services, request, response, records, back)), draft: problem?.draft };
  const notice = typeof query.notice === 'string' ? NOTICES[query.notice] : undefined;
  const channels = [...context.channels.values()].map((channel) => ({ id: channel.id, name: channel.name }));
  const last = Math.max(0, Math.ceil(list.total / PAGE_SIZE) - 1);
  sendPage(
    response,
    {
      title: 'Comments',
      signedIn,
      csrf,
      section: 'comments',
      status: problem?.status,
      zone: pageZone(context.zones),
      flash: problem ? { kind: 'error', text: problem.text } : notice ? { kind: 'ok', text: notice } : undefined,
    },
    html`<h1>Comments</h1>
    ${zoneNote(context.zones)}
    <form method="get" action="/comments" class="card filters" aria-label="Filter the comments">
      ${channelSelect(channels, filters.channel)}
      <div><label for="post">Post id</label><input id="post" name="post" type="text" value="${filters.post}" aria-describedby="post-hint">
        <p class="hint" id="post-hint">Only the comments on this post (its page links here).</p></div>
      <div><label class="choice"><input type="checkbox" name="unanswered" value="yes"${filters.unanswered ? html` checked` : ''}> Unanswered only</label></div>
      <button type="submit">Filter</button>
    </form>
    <p>${list.total} comment${list.total === 1 ? '' : 's'}${filters.channel || filters.post || filters.unanswered ? html` · <a href="/comments">All comments</a>` : ''}</p>
    ${records.length === 0
      ? html`<p class="hint" id="no-comments">No comment${filters.unanswered ? ' waiting for an answer' : ''} here. Herald reads the comments of published posts every few minutes on the platforms that let it.</p>`
      : html`<ol class="preview-list">${records.map((comment) => commentMarkup(comment, context, true))}</ol>`}
    ${last > 0
      ? html`<nav aria-label="Pages of comments"><p>${filters.page > 0 ? html`<a href="/comments?${queryOf(filters, filters.page - 1)}">Newer</a> ` : ''}Page ${filters.page + 1} of ${last + 1}${
          filters.page < last ? html` <a href="/comments?${queryOf(filters, filters.page + 1)}">Older</a>` : ''
        }</p></nav>`
      : ''}`,
  );
}

/** Where a form sends the person back: a console path (the list with its filters, or a post's page). */
const backOf = (request: Request) => safeNext(request.body?.back) ?? '/comments';

/** The filters of the page a form came from, to show it again with a problem. */
function queryOfBack(back: string): Record<string, unknown> {
  const url = new URL(back, 'http://herald.invalid');
  if (url.pathname.startsWith('/posts/')) return { post: url.pathname.split('/')[2] ?? '' };
  return Object.fromEntries(url.searchParams);
}

function redirectBack(response: Response, back: string, notice: string, commentId: string): void {
  const [path] = back.split('#');
  response.redirect(303, `${path}${path.includes('?') ? '&' : '?'}notice=${notice}#comment-${commentId}`);
}

export function commentPages(router: Router, services: Services): void {
  router.get('/comments', requireSignedIn, (request, response) => inboxPage(services, request, response, request.query as Record<string, unknown>));

  /** Runs one act; a client mistake (not supported, a duplicate reply, too long) shows the list again with the reason. */
  const act = (notice: (request: Request) => string, run: (request: Request, response: Response, id: string) => Promise<unknown>) => async (request: Request, response: Response) => {
    const id = String(request.params.id);
    const back = backOf(request);
    try {
      await run(request, response, id);
    } catch (raw) {
      const error = clientError(raw);
      const draft = typeof request.body?.content === 'string' ? { commentId: id, content: request.body.content } : undefined;
      return inboxPage(services, request, response, queryOfBack(back), { text: sentence(error), status: error.status, draft });
    }
    redirectBack(response, back, notice(request), id);
  };

  router.post(
    '/comments/:id/reply',
    requireSignedIn,
    act(() => 'replied', (request, response, id) => runConsoleTool(replyToCommentTool, { id, content: String(request.body?.content ?? '') }, response, services)),
  );
  router.post(
    '/comments/:id/hide',
    requireSignedIn,
    act(
      (request) => (request.body?.hidden === 'false' ? 'shown' : 'hidden'),
      (request, response, id) => runConsoleTool(hideCommentTool, { id, hidden: request.body?.hidden !== 'false' }, response, services),
    ),
  );
  router.post(
    '/comments/:id/delete',
    requireSignedIn,
    act(
      () => 'deleted',
      async (request, response, id) => {
        if (request.body?.confirm !== 'yes') throw invalidInput('Tick the box to confirm the deletion: it cannot be undone.');
        return runConsoleTool(deleteCommentTool, { id }, response, services);
      },
    ),
  );
}
