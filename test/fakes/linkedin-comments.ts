// The comments and post changes of the fake LinkedIn (test/fakes/linkedin.ts), kept apart so that file stays readable.
// References (read 2026-11-27): learn.microsoft.com/linkedin/marketing/community-management/shares/comments-api (GET and POST
// /rest/socialActions/{postUrn or commentUrn}/comments with start/count paging, `parentComment` for a reply, one level of
// nesting; DELETE and PARTIAL_UPDATE of …/comments/{commentId}?actor= by the comment's own actor; commentsSummary), and
// …/shares/posts-api (PARTIAL_UPDATE of /rest/posts/{urn} with {patch: {$set: {commentary}}}: 204; DELETE /rest/posts/{urn}
// with X-RestLi-Method: DELETE: 204). Refuses: a reader without r_organization_social on the post's author (403), a writer
// who is not the actor (403), a reply whose parentComment is not the comment of the path or is itself a reply (422), an
// unescaped little text (422), a patch of anything but commentary (422), an unknown post or comment (404).
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import type { FakeComment, FakePost } from './linkedin.js';

type Handler = (request: RecordedRequest, scopes: Set<string>) => FakeReply | Promise<FakeReply>;

export interface CommentRouteDeps {
  server: FakeServer;
  authed: (handler: Handler) => (request: RecordedRequest) => FakeReply | Promise<FakeReply>;
  denied: (what: string) => FakeReply;
  restError: (status: number, code: string, message: string) => FakeReply;
  canWriteAs: (urn: string, scopes: Set<string>) => boolean;
  canReadAs: (urn: string, scopes: Set<string>) => boolean;
  urnSegment: (request: RecordedRequest, index: number) => string | undefined;
  unescape: (text: string) => string | undefined;
  posts: FakePost[];
  comments: FakeComment[];
  newId: () => string;
}

export function commentEntity(comment: FakeComment, comments: FakeComment[]) {
  const replies = comments.filter((reply) => reply.parentComment === comment.urn).length;
  return {
    id: comment.id,
    $URN: comment.urn,
    actor: comment.actor,
    object: comment.object,
    ...(comment.parentComment ? { parentComment: comment.parentComment } : {}),
    message: { text: comment.message, attributes: [] },
    created: { actor: comment.actor, time: comment.createdAt },
    lastModified: { actor: comment.actor, time: comment.createdAt },
    commentsSummary: { aggregatedTotalComments: replies, totalFirstLevelComments: replies },
  };
}

export function addCommentRoutes(deps: CommentRouteDeps): void {
  const { server, authed, denied, restError, canWriteAs, canReadAs, urnSegment, unescape, posts, comments, newId } = deps;
  /** The path's target: a post, or a top-level comment (whose post is then the one of the comment). */
  const targetOf = (request: RecordedRequest) => {
    const urn = urnSegment(request, 3);
    const post = posts.find((candidate) => candidate.urn === urn);
    if (post) return { post, parent: undefined };
    const parent = comments.find((comment) => comment.urn === urn);
    const ofParent = parent && posts.find((candidate) => candidate.urn === parent.object);
    return ofParent ? { post: ofParent, parent } : undefined;
  };

  server.on('POST', '/rest/socialActions/*/comments', authed((request, scopes) => {
    const target = targetOf(request);
    if (!target) return restError(404, 'NOT_FOUND', 'post or comment not found (is its URN URL-encoded?)');
    const { actor, message, object, parentComment } = request.json ?? {};
    if (object !== target.post.urn) return restError(422, 'UNPROCESSABLE_ENTITY', '/object :: must be the URN of the post commented on');
    if (target.parent) {
      if (parentComment !== target.parent.urn) return restError(422, 'UNPROCESSABLE_ENTITY', '/parentComment :: must be the comment URN of the path');
      if (target.parent.parentComment) return restError(422, 'UNPROCESSABLE_ENTITY', '/parentComment :: replies nest one level: reply to the top-level comment');
    } else if (parentComment !== undefined) return restError(422, 'UNPROCESSABLE_ENTITY', '/parentComment :: the path must be the parent comment');
    if (typeof actor !== 'string' || !canWriteAs(actor, scopes)) return denied('socialActions.comments.CREATE');
    const text = typeof message?.text === 'string' ? unescape(message.text) : '';
    if (text === undefined) return restError(422, 'UNPROCESSABLE_ENTITY', '/message/text :: reserved characters must be escaped (little text format)');
    if (!text.trim() || text.length > 1250) return restError(422, 'UNPROCESSABLE_ENTITY', '/message/text :: 1 to 1250 characters');
    const id = newId();
    const comment: FakeComment = { id, urn: `urn:li:comment:(${target.post.activity},${id})`, object: target.post.urn, actor, message: message.text, text, createdAt: Date.now(), ...(target.parent ? { parentComment: target.parent.urn } : {}) };
    comments.push(comment);
    return { status: 201, headers: { 'x-restli-id': id }, json: commentEntity(comment, comments) };
  }));

  server.on('GET', '/rest/socialActions/*/comments', authed((request, scopes) => {
    const target = targetOf(request);
    if (!target) return restError(404, 'NOT_FOUND', 'post or comment not found');
    if (!canReadAs(target.post.author, scopes)) return denied('socialActions.comments.GET_ALL');
    const start = Number(request.query.get('start') ?? 0);
    const count = Number(request.query.get('count') ?? 10);
    if (!Number.isInteger(count) || count < 1 || count > 100) return restError(400, 'ILLEGAL_ARGUMENT', 'count must be 1 to 100');
    const all = comments.filter((comment) => comment.object === target.post.urn && comment.parentComment === target.parent?.urn);
    return { json: { paging: { start, count, total: all.length }, elements: all.slice(start, start + count).map((comment) => commentEntity(comment, comments)) } };
  }));

  /** The comment of `…/comments/{id}` under the path's post, and the actor the query names (who must be its author). */
  const ownComment = (request: RecordedRequest, scopes: Set<string>): FakeComment | FakeReply => {
    const post = posts.find((candidate) => candidate.urn === urnSegment(request, 3));
    const comment = post && comments.find((candidate) => candidate.object === post.urn && candidate.id === request.path.split('/')[5]);
    if (!comment) return restError(404, 'NOT_FOUND', 'comment not found');
    const actor = request.query.get('actor') ?? '';
    if (actor !== comment.actor || !canWriteAs(actor, scopes)) return denied('socialActions.comments.DELETE');
    return comment;
  };

  server.on('DELETE', '/rest/socialActions/*/comments/*', authed((request, scopes) => {
    const comment = ownComment(request, scopes);
    if (!('urn' in comment)) return comment;
    for (const gone of comments.filter((candidate) => candidate === comment || candidate.parentComment === comment.urn)) comments.splice(comments.indexOf(gone), 1);
    return { status: 204 };
  }));

  server.on('POST', '/rest/socialActions/*/comments/*', authed((request, scopes) => {
    if (request.headers['x-restli-method'] !== 'PARTIAL_UPDATE') return restError(400, 'ILLEGAL_ARGUMENT', 'X-RestLi-Method: PARTIAL_UPDATE is required');
    const comment = ownComment(request, scopes);
    if (!('urn' in comment)) return comment;
    const message = request.json?.patch?.message?.$set?.text;
    const text = typeof message === 'string' ? unescape(message) : undefined;
    if (text === undefined || !text.trim()) return restError(422, 'UNPROCESSABLE_ENTITY', '/patch/message/$set/text :: little text of 1 to 1250 characters');
    Object.assign(comment, { message, text });
    return { status: 204 };
  }));

  const ownPost = (request: RecordedRequest, scopes: Set<string>, what: string): FakePost | FakeReply => {
    const post = posts.find((candidate) => candidate.urn === urnSegment(request, 3));
    if (!post) return restError(404, 'NOT_FOUND', 'post not found (is its URN URL-encoded?)');
    if (!canWriteAs(post.author, scopes)) return denied(what);
    return post;
  };

  server.on('POST', '/rest/posts/*', authed((request, scopes) => {
    if (request.headers['x-restli-method'] !== 'PARTIAL_UPDATE') return restError(400, 'ILLEGAL_ARGUMENT', 'X-RestLi-Method: PARTIAL_UPDATE is required');
    const post = ownPost(request, scopes, 'posts.PARTIAL_UPDATE');
    if (!('urn' in post)) return post;
    const set = request.json?.patch?.$set ?? {};
    const other = Object.keys(request.json?.patch ?? {}).filter((key) => key !== '$set').concat(Object.keys(set).filter((key) => key !== 'commentary'));
    if (other.length > 0) return restError(422, 'UNPROCESSABLE_ENTITY', `/patch :: only commentary can be updated here (${other.join(', ')})`);
    const text = typeof set.commentary === 'string' ? unescape(set.commentary) : undefined;
    if (text === undefined || text.length > 3000) return restError(422, 'UNPROCESSABLE_ENTITY', '/patch/$set/commentary :: little text of at most 3000 characters');
    Object.assign(post, { commentary: set.commentary, text });
    return { status: 204 };
  }));

  server.on('DELETE', '/rest/posts/*', authed((request, scopes) => {
    if (request.headers['x-restli-method'] !== 'DELETE') return restError(400, 'ILLEGAL_ARGUMENT', 'X-RestLi-Method: DELETE is required');
    const post = ownPost(request, scopes, 'posts.DELETE');
    if (!('urn' in post)) return post;
    posts.splice(posts.indexOf(post), 1);
    for (const gone of comments.filter((comment) => comment.object === post.urn)) comments.splice(comments.indexOf(gone), 1);
    return { status: 204 };
  }));
}
