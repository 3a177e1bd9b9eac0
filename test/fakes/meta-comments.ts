// The comment and change routes of the Meta fake (test/fakes/facebook.ts), for Facebook Pages and Instagram accounts (issue 24).
// References (read 2026-11-27): developers.facebook.com/docs/graph-api/reference/object/comments/ (filter=stream|toplevel,
// order, fields, cursors), /docs/graph-api/reference/comment/ (is_hidden, DELETE; two levels of nesting), /reference/post/
// (POST message, DELETE), /docs/instagram-platform/comment-moderation, …/ig-media/comments, …/ig-comment (hide, DELETE),
// …/ig-comment/replies (top-level comments only, not hidden ones), …/instagram-media (Updating: comment_enabled only;
// Deleting: not supported).
//
//   GET  /{object}/comments      Facebook: a Page token of the owning Page with pages_read_engagement and
//                                pages_read_user_content; filter=stream answers every depth with parent{id}, otherwise the
//                                direct comments; order; 2 per page (cursors, next) so paging is exercised.
//                                Instagram: the media owner's token with its comment permission; top-level comments, the
//                                `replies{…}` expansion answered; fields asked for only.
//   POST /{comment}/replies      Instagram: a reply to a top-level comment (a reply to a reply goes under its top-level
//                                comment, as Meta documents); refused on a hidden comment.
//   POST /{node}                 Facebook comment is_hidden (pages_manage_engagement; not the Page's own comments), post
//                                message, video description (pages_manage_posts); Instagram comment hide; media
//                                comment_enabled (a caption is refused: the API cannot change it).
//   DELETE /{node}               Facebook comment (pages_manage_engagement), post or video (pages_manage_posts); Instagram
//                                comment; Instagram media is refused. Something gone answers code 100/33.
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import type { FakeToken, FakePage, metaError as MetaError } from './facebook.js';
import { graphTime, topFields, type FakeComment, type GraphModel } from './facebook-graph.js';

type Versioned = Parameters<typeof import('./facebook-graph.js').createGraphModel>[0]['versioned'];

/** The fields asked inside an edge's expansion ("replies{id,from{id}}" → "id,from{id}"), or undefined. */
function expansion(fields: string, edge: string): string | undefined {
  const start = fields.indexOf(`${edge}{`);
  if (start < 0) return undefined;
  let depth = 0;
  for (let index = start + edge.length; index < fields.length; index++) {
    if (fields[index] === '{') depth++;
    if (fields[index] === '}' && --depth === 0) return fields.slice(start + edge.length + 1, index);
  }
  return undefined;
}

export const PAGE_GRANTS = ['pages_manage_posts', 'pages_manage_engagement', 'pages_read_engagement', 'pages_read_user_content', 'instagram_basic', 'instagram_manage_comments'];

export function registerMetaComments(server: FakeServer, options: { model: GraphModel; pages: FakePage[]; versioned: Versioned; metaError: typeof MetaError }) {
  const { model, pages, versioned, metaError } = options;
  const { posts, videos, comments, media, instagramOf, notFound, segment, paramsOf, commentsOn } = model.internals;
  /** What the person granted the app at Facebook Login, as the Page tokens carry it (remove one to see Meta refuse). */
  const pageGrants = new Set(PAGE_GRANTS);
  const deleted: { id: string; kind: 'post' | 'video' | 'comment' }[] = [];
  let pageSize = 100;

  const lacking = (token: FakeToken, needed: string[]): FakeReply | undefined => {
    const viaInstagramLogin = token.kind === 'ig' || token.kind === 'ig-short';
    // Instagram Login names the same permissions instagram_business_* and needs no Page permission.
    const names = viaInstagramLogin ? needed.filter((permission) => !permission.startsWith('pages_')).map((permission) => permission.replace(/^instagram_/, 'instagram_business_')) : needed;
    const missing = names.filter((permission) => !(viaInstagramLogin ? token.scopes.includes(permission) : pageGrants.has(permission)));
    return missing.length > 0 ? metaError(10, `(#10) This endpoint requires the '${missing.join("' and '")}' permission`) : undefined;
  };
  /** The Page post or video a Facebook comment (at any depth) is under. */
  const facebookRoot = (id: string): { pageId: string; id: string } | undefined => {
    let current = id;
    for (let comment = comments.find((entry) => entry.id === current); comment; comment = comments.find((entry) => entry.id === current)) current = comment.parentId;
    const post = posts.find((entry) => entry.id === current) ?? videos.find((entry) => entry.id === current);
    return post && { pageId: post.pageId, id: post.id };
  };
  const instagramMediaOf = (comment: FakeComment) => media.find((item) => item.id === comment.parentId) ?? media.find((item) => item.id === comments.find((entry) => entry.id === comment.parentId)?.parentId);
  const descendants = (id: string): FakeComment[] => commentsOn(id).flatMap((comment) => [comment, ...descendants(comment.id)]);
  const pick = (object: Record<string, unknown>, fields: string[]) => Object.fromEntries(Object.entries(object).filter(([key, value]) => value !== undefined && (key === 'id' || fields.includes(key))));
  const paged = (request: RecordedRequest, items: Record<string, unknown>[]): FakeReply => {
    const after = Number(request.query.get('after') ?? 0);
    const page = items.slice(after, after + Math.min(pageSize, Number(request.query.get('limit') ?? 25)));
    const more = after + page.length < items.length;
    return { json: { data: page, paging: { cursors: { before: String(after), after: String(after + page.length) }, ...(more ? { next: `${request.path}?after=${after + page.length}` } : {}) } } };
  };
  const authorName = (comment: FakeComment) => comment.authorName ?? pages.find((page) => page.id === comment.authorId)?.name ?? pages.find((page) => page.instagram?.id === comment.authorId)?.instagram?.username;

  server.on('GET', '/*/*/comments', versioned((request, token) => {
    const id = segment(request, 2);
    const fields = topFields(request.query.get('fields'));
    const item = media.find((candidate) => candidate.id === id);
    if (item) {
      if (!instagramOf(token).includes(item.owner)) return notFound(id);
      const refused = lacking(token, ['instagram_basic', 'instagram_manage_comments', 'pages_read_engagement']);
      if (refused) return refused;
      const view = (comment: FakeComment, asked: string[]): Record<string, unknown> =>
        pick({ id: comment.id, text: comment.message, timestamp: graphTime(comment.createdTime), username: authorName(comment), from: { id: comment.authorId, username: authorName(comment) }, hidden: comment.hidden ?? false }, asked);
      const replyFields = topFields(expansion(request.query.get('fields') ?? '', 'replies') ?? 'id');
      return paged(request, commentsOn(id).map((comment) => ({ ...view(comment, fields), ...(fields.includes('replies') ? { replies: { data: commentsOn(comment.id).map((reply) => view(reply, replyFields)) } } : {}) })));
    }
    const root = facebookRoot(id);
    if (!root || token.kind !== 'page' || token.subject !== root.pageId) return notFound(id);
    const refused = lacking(token, ['pages_read_engagement', 'pages_read_user_content']);
    if (refused) return refused;
    const known = ['id', 'message', 'created_time', 'from', 'parent', 'is_hidden', 'permalink_url', 'can_hide', 'attachment'];
    const unknown = fields.find((name) => !known.includes(name));
    if (unknown) return metaError(100, `(#100) Tried accessing nonexisting field (${unknown}) on node type (Comment)`);
    const stream = request.query.get('filter') === 'stream';
    const found = stream ? descendants(id).sort((a, b) => a.createdTime.localeCompare(b.createdTime)) : commentsOn(id);
    const ordered = request.query.get('order') === 'reverse_chronological' ? [...found].reverse() : found;
    const asked = fields.length > 0 ? fields : ['id', 'message', 'created_time'];
    return paged(request, ordered.map((comment) => {
      const parent = comments.find((entry) => entry.id === comment.parentId);
      return pick({
        id: comment.id,
        message: comment.message,
        created_time: graphTime(comment.createdTime),
        from: { id: comment.authorId, name: authorName(comment) },
        parent: parent ? { id: parent.id } : undefined,
        is_hidden: comment.hidden ?? false,
        can_hide: comment.authorId !== root.pageId,
        permalink_url: `https://www.facebook.com/${root.id}?comment_id=${comment.id}`,
      }, asked);
    }));
  }));

  server.on('POST', '/*/*/replies', versioned((request, token) => {
    const id = segment(request, 2);
    const target = comments.find((comment) => comment.id === id);
    const item = target && instagramMediaOf(target);
    if (!target || !item || !instagramOf(token).includes(item.owner)) return notFound(id);
    const refused = lacking(token, ['instagram_basic', 'instagram_manage_comments', 'pages_read_engagement']);
    if (refused) return refused;
    const message = paramsOf(request).message;
    if (typeof message !== 'string' || !message) return metaError(100, '(#100) The parameter message is required');
    const top = target.parentId === item.id ? target : comments.find((comment) => comment.id === target.parentId)!;
    if (top.hidden) return metaError(100, '(#100) You cannot reply to a hidden comment');
    const reply: FakeComment = { id: `1790${model.internals.next()}`, parentId: top.id, authorId: item.owner, message, createdTime: new Date().toISOString() };
    comments.push(reply);
    return { json: { id: reply.id } };
  }));

  server.on('POST', '/*/*', versioned((request, token) => {
    const id = segment(request, 2);
    const params = paramsOf(request);
    const success = { json: { success: true } };
    const comment = comments.find((entry) => entry.id === id);
    const item = comment && instagramMediaOf(comment);
    if (comment && item) {
      if (!instagramOf(token).includes(item.owner)) return notFound(id);
      const refused = lacking(token, ['instagram_basic', 'instagram_manage_comments', 'pages_read_engagement']);
      if (refused) return refused;
      if (params.hide === undefined) return metaError(100, '(#100) The parameter hide is required');
      comment.hidden = params.hide === true || params.hide === 'true';
      return success;
    }
    if (comment) {
      const root = facebookRoot(id);
      if (!root || token.kind !== 'page' || token.subject !== root.pageId) return notFound(id);
      const refused = lacking(token, ['pages_manage_engagement', 'pages_read_user_content']);
      if (refused) return refused;
      if (params.is_hidden !== undefined) {
        if (comment.authorId === root.pageId) return metaError(100, '(#100) The Page\'s own comments cannot be hidden');
        comment.hidden = params.is_hidden === true || params.is_hidden === 'true';
        return success;
      }
      if (typeof params.message === 'string' && comment.authorId === root.pageId) return (comment.message = params.message), success;
      return metaError(100, '(#100) Only is_hidden, or the message of the Page\'s own comment, can be updated');
    }
    const post = posts.find((entry) => entry.id === id) ?? videos.find((entry) => entry.id === id);
    if (post) {
      if (token.kind !== 'page' || token.subject !== post.pageId) return notFound(id);
      const refused = lacking(token, ['pages_manage_posts']);
      if (refused) return refused;
      const field = 'fileUrl' in post ? 'description' : 'message';
      if (typeof params[field] !== 'string') return metaError(100, `(#100) The parameter ${field} is required to update this ${field === 'description' ? 'video' : 'post'}`);
      if ('fileUrl' in post) post.description = params.description as string;
      else post.message = params.message as string;
      return success;
    }
    const ig = media.find((entry) => entry.id === id);
    if (ig) {
      if (!instagramOf(token).includes(ig.owner)) return notFound(id);
      if (Object.keys(params).some((key) => key !== 'comment_enabled')) return metaError(100, '(#100) Only comment_enabled can be updated on IG Media');
      return success;
    }
    return notFound(id);
  }));

  server.on('DELETE', '/*/*', versioned((request, token) => {
    const id = segment(request, 2);
    const comment = comments.find((entry) => entry.id === id);
    const remove = (gone: FakeComment[]) => {
      for (const entry of gone) comments.splice(comments.indexOf(entry), 1);
    };
    if (comment) {
      const item = instagramMediaOf(comment);
      const root = item ? undefined : facebookRoot(id);
      if (item ? !instagramOf(token).includes(item.owner) : !root || token.kind !== 'page' || token.subject !== root.pageId) return notFound(id);
      const refused = lacking(token, item ? ['instagram_basic', 'instagram_manage_comments', 'pages_read_engagement'] : ['pages_manage_engagement']);
      if (refused) return refused;
      remove([comment, ...descendants(id)]);
      deleted.push({ id, kind: 'comment' });
      return { json: { success: true } };
    }
    const post = posts.find((entry) => entry.id === id) ?? videos.find((entry) => entry.id === id);
    if (post) {
      if (token.kind !== 'page' || token.subject !== post.pageId) return notFound(id);
      const refused = lacking(token, ['pages_manage_posts']);
      if (refused) return refused;
      remove(descendants(id));
      if ('fileUrl' in post) videos.splice(videos.indexOf(post), 1);
      else posts.splice(posts.indexOf(post), 1);
      deleted.push({ id, kind: 'fileUrl' in post ? 'video' : 'post' });
      return { json: { success: true } };
    }
    if (media.some((entry) => entry.id === id)) return metaError(100, `Unsupported delete request. Object with ID '${id}' does not support this operation`, { subcode: 33 });
    return notFound(id);
  }));

  return {
    pageGrants,
    /** Comment listings answer at most `size` comments a page. */
    setCommentPageSize(size: number) {
      pageSize = size;
    },
    /** What was deleted through the API. */
    deleted,
    /** A comment by someone else (`authorId`, `authorName`) on a Page post, a video, an Instagram media, or under a comment. */
    addComment(parentId: string, message: string, options: { authorId?: string; authorName?: string; createdAt?: Date } = {}): FakeComment {
      const comment: FakeComment = { id: `${Date.now() % 100000}${model.internals.next()}`, parentId, authorId: options.authorId ?? '7770001', authorName: options.authorName ?? 'Bob Reader', message, createdTime: (options.createdAt ?? new Date()).toISOString() };
      comments.push(comment);
      return comment;
    },
  };
}
