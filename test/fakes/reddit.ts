// A fake Reddit (www + oauth hosts and the media S3 bucket on one real HTTP server), from the shapes of reddit.com/dev/api,
// the OAuth2 wiki and PRAW's media upload.
//
//   const fake = await startRedditFake();
//   SOCIAL_ENDPOINTS={"reddit": fake.endpoints}; REDDIT_CLIENT_ID / _SECRET = fake.authority.clientId / clientSecret
//   fake.submissions, fake.comments, fake.objects (S3 uploads by key), fake.subreddits (mutable: flairs, rules)
//   fake.setImageListingDelay(n): an image submission shows in the user's listing only after n listing reads
//
// Refuses what Reddit refuses: a User-Agent that is not `web:herald.<app>:<version>`, or, on the oauth host, without
// `(by /u/<the token's user>)` (403 like Reddit's blocked agents; only GET /api/v1/me, which tells the username, may leave it out); a token request without HTTP Basic (401), a bad code or
// refresh token as HTTP 200 `{error: "invalid_grant"}`; an authorize without duration=permanent; a bearer token that is
// dead (401). Form endpoints answer their refusals as HTTP 200 `{json: {errors: [[CODE, message, field]]}}`: api_type other
// than json, an unknown subreddit, a missing title or one over 300 characters, a self post without text or with more than
// 40,000 characters, a comment of more than 10,000 (reddit.com/dev/api; Reddit's posting limits), a link without
// url, an image whose url is not an object uploaded through a lease, a missing or unknown flair where the subreddit
// requires one, a comment on an unknown thing. The S3 form refuses an upload missing a lease field or with the file before
// the fields (403 XML, as S3 does).
//
// Comments and changes (reference 2026-11: reddit.com/dev/api GET /comments/{article}, GET /api/morechildren, POST
// /api/editusertext, /api/del, /api/remove, /api/approve, GET /r/{sr}/about user_is_moderator; comment fields as in
// Pyprohly/reddit-api-doc-notes): the tree answers `[t3 listing, t1 listing]` with `replies` '' or a Listing and, past
// `fake.setTreeLimit(n)` top-level comments, a `more` stub whose children /api/morechildren answers flat. Each call checks the
// token's scopes as granted at authorization (read for reading, edit for editusertext and del, modposts for remove and
// approve: a 403 with `WWW-Authenticate: ... error="insufficient_scope"`, as Reddit answers); editusertext and del refuse
// another user's thing (403), editusertext a link or image post (403: it has no body); remove and approve refuse an account
// that does not moderate the subreddit (403). A deleted thing shows with author and body "[deleted]"; a delete of one already
// deleted answers `{}` like the first.
import { randomBytes } from 'node:crypto';
import { basicCredentials, bearerOf, createOAuthAuthority, OAuthRefusal } from './oauth-authority.js';
import { startFakeServer, multipartOf, type FakeHandler, type FakeReply, type RecordedRequest } from '../helpers/fake-server.js';

export interface FakeSubreddit {
  name: string;
  title: string;
  submissionType: 'any' | 'self' | 'link';
  flairRequired: boolean;
  flairs: { id: string; text: string }[];
  /** The connected account moderates this subreddit. */
  moderator?: boolean;
}

export interface FakeSubmission {
  id: string;
  subreddit: string;
  title: string;
  kind: string;
  text: string;
  url: string;
  flairId: string;
  createdUtc: number;
  author: string;
  score: number;
  numComments: number;
  /** Listing reads before an image submission shows (Reddit makes media posts asynchronously). */
  hiddenReads: number;
  deleted?: boolean;
}

export interface FakeComment {
  id: string;
  parentId: string;
  linkId: string;
  body: string;
  author: string;
  /** Seconds since the epoch, as Reddit's created_utc. */
  createdUtc: number;
  deleted?: boolean;
  /** Removed by a moderator (shown to moderators with `removed: true`). */
  removed?: boolean;
}

const AGENT = /^web:herald\.[\w-]+:\d+\.\d+\.\d+(?: \(by \/u\/([\w-]+)\))?$/;
const base36 = () => Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, '0');
const formErrors = (...errors: [string, string, string][]): FakeReply => ({ json: { json: { errors } } });
const listing = (children: unknown[], kind: string): FakeReply => ({ json: { kind: 'Listing', data: { after: null, before: null, dist: children.length, children: children.map((data) => ({ kind, data })) } } });

export async function startRedditFake(options: { username?: string } = {}) {
  const server = await startFakeServer();
  const { url } = server;
  const username = options.username ?? 'herald_bot';
  const authority = createOAuthAuthority({ clientId: 'reddit-client-id', clientSecret: 'reddit-secret', expiresIn: 3600 });
  authority.setSubject('t2_user1');
  const subreddits: FakeSubreddit[] = [
    { name: 'typescript', title: 'TypeScript', submissionType: 'any', flairRequired: false, flairs: [] },
    { name: 'selfhosted', title: 'Self-hosted', submissionType: 'any', flairRequired: true, flairs: [{ id: 'flair-release', text: 'Release' }, { id: 'flair-question', text: 'Question' }] },
  ];
  const submissions: FakeSubmission[] = [];
  const comments: FakeComment[] = [];
  const leases = new Map<string, Record<string, string>>();
  const objects = new Map<string, { bytes: Buffer; contentType: string }>();
  let imageListingDelay = 0;
  let treeLimit = Infinity;
  /** The scopes granted with each access and refresh token, as Reddit keeps them. */
  const scopesOf = new Map<string, string[]>();

  const permalink = (post: FakeSubmission) => `/r/${post.subreddit}/comments/${post.id}/${post.title.toLowerCase().replace(/\W+/g, '_').slice(0, 40)}/`;

  /** Checks the User-Agent; on the oauth host also the bearer token and that the agent names its user. */
  const guarded =
    (handler: FakeHandler, options: { oauth: boolean }): FakeHandler =>
    (request) => {
      const agent = AGENT.exec(String(request.headers['user-agent'] ?? ''));
      if (!agent) return { status: 403, json: { message: 'Forbidden', error: 403, reason: 'Blocked: use a unique and descriptive User-Agent (platform:app:version (by /u/name))' } };
      if (!options.oauth) return handler(request);
      if (!authority.subjectOf(bearerOf(request.headers.authorization))) return { status: 401, json: { message: 'Unauthorized', error: 401 } };
      // Only the profile call, made before the username is known, may leave the user out of the agent.
      if (agent[1] !== username && !(request.path === '/api/v1/me' && agent[1] === undefined)) return { status: 403, json: { message: 'Forbidden', error: 403, reason: `User-Agent must name the user: (by /u/${username})` } };
      return handler(request);
    };
  const www = (method: string, path: string, handler: FakeHandler) => server.on(method, path, guarded(handler, { oauth: false }));
  const oauth = (method: string, path: string, handler: FakeHandler) => server.on(method, path, guarded(handler, { oauth: true }));
  /** An oauth call that also needs `scope` among the token's granted scopes. */
  const scoped = (method: string, path: string, scope: string, handler: FakeHandler) =>
    oauth(method, path, (request) =>
      (scopesOf.get(bearerOf(request.headers.authorization) ?? '') ?? []).includes(scope)
        ? handler(request)
        : { status: 403, headers: { 'www-authenticate': `Bearer realm="reddit", error="insufficient_scope"` }, json: { message: 'Forbidden', error: 403 } },
    );
  const forbidden: FakeReply = { status: 403, json: { message: 'Forbidden', error: 403 } };

  server.on('GET', '/api/v1/authorize', (request) => {
    const query = request.query;
    if (query.get('duration') !== 'permanent') return { status: 400, body: 'duration must be permanent for a refresh token' };
    if (query.get('response_type') !== 'code') return { status: 400, body: 'response_type must be code' };
    if (!(query.get('scope') ?? '').split(' ').includes('submit')) return { status: 400, body: 'scope must include submit' };
    try {
      return { status: 302, headers: { location: authority.approveQuery(query) } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { status: 400, body: `${error.error}: ${error.description}` };
      throw error;
    }
  });

  www('POST', '/api/v1/access_token', (request) => {
    const { id, secret } = basicCredentials(request.headers.authorization);
    if (id !== authority.clientId || secret !== authority.clientSecret) return { status: 401, json: { message: 'Unauthorized', error: 401 } };
    const form = request.form ?? new URLSearchParams();
    try {
      if (form.get('grant_type') === 'authorization_code') {
        const issued = authority.redeemCode({ code: form.get('code') ?? undefined, redirectUri: form.get('redirect_uri') ?? undefined });
        for (const token of [issued.accessToken, issued.refreshToken]) if (token) scopesOf.set(token, (issued.scope ?? '').split(' '));
        return { json: { access_token: issued.accessToken, token_type: 'bearer', expires_in: issued.expiresIn, scope: issued.scope, refresh_token: issued.refreshToken } };
      }
      if (form.get('grant_type') === 'refresh_token') {
        const issued = authority.redeemRefreshToken(form.get('refresh_token') ?? undefined);
        const granted = scopesOf.get(form.get('refresh_token') ?? '') ?? [];
        scopesOf.set(issued.accessToken, granted);
        return { json: { access_token: issued.accessToken, token_type: 'bearer', expires_in: issued.expiresIn, scope: granted.join(' ') } };
      }
      return { json: { error: 'unsupported_grant_type' } };
    } catch (error) {
      if (error instanceof OAuthRefusal) return { json: { error: error.error } };
      throw error;
    }
  });

  const account = { id: 'user1', name: username, icon_img: `${url}/avatar.png?size=256&amp;s=abc`, snoovatar_img: '', link_karma: 120, comment_karma: 45 };
  oauth('GET', '/api/v1/me', () => ({ json: account }));

  oauth('POST', '/api/media/asset.json', (request) => {
    const filepath = request.form?.get('filepath');
    const mimetype = request.form?.get('mimetype') ?? '';
    if (!filepath || !mimetype.startsWith('image/')) return { status: 400, json: { message: 'filepath and an image mimetype are required', error: 400 } };
    const assetId = randomBytes(6).toString('hex');
    const fields: Record<string, string> = { acl: 'public-read', key: `rte_images/${assetId}/${filepath}`, 'X-Amz-Credential': 'fake', 'X-Amz-Signature': randomBytes(8).toString('hex'), 'Content-Type': mimetype, success_action_status: '201' };
    leases.set(fields.key, fields);
    return { json: { args: { action: `${url}/s3`, fields: Object.entries(fields).map(([name, value]) => ({ name, value })) }, asset: { asset_id: assetId, processing_state: 'incomplete', websocket_url: `wss://ws.example/${assetId}`, payload: { filepath } } } };
  });

  server.on('POST', '/s3', async (request) => {
    const form = await multipartOf(request);
    const entries = form ? [...form.entries()] : [];
    const key = form?.get('key');
    const lease = typeof key === 'string' ? leases.get(key) : undefined;
    const s3Error = (code: string, message: string): FakeReply => ({ status: 403, headers: { 'content-type': 'application/xml' }, body: `<?xml version="1.0"?><Error><Code>${code}</Code><Message>${message}</Message></Error>` });
    if (!lease) return s3Error('AccessDenied', 'Invalid according to Policy: no lease for this key');
    if (Object.entries(lease).some(([name, value]) => form!.get(name) !== value)) return s3Error('AccessDenied', 'Invalid according to Policy: Policy Condition failed');
    const fileIndex = entries.findIndex(([name]) => name === 'file');
    if (fileIndex !== entries.length - 1) return s3Error('InvalidArgument', 'the file must be the last field of the form');
    const file = entries[fileIndex][1] as File;
    objects.set(lease.key, { bytes: Buffer.from(await file.arrayBuffer()), contentType: lease['Content-Type'] });
    return { status: 201, headers: { 'content-type': 'application/xml' }, body: `<PostResponse><Location>${url}/s3/${encodeURIComponent(lease.key)}</Location><Key>${lease.key}</Key></PostResponse>` };
  });

  oauth('POST', '/api/submit', (request) => {
    const form = request.form ?? new URLSearchParams();
    if (form.get('api_type') !== 'json') return { json: { jquery: [[0, 1, 'call', ['body']]], success: false } };
    const sub = subreddits.find((item) => item.name.toLowerCase() === (form.get('sr') ?? '').toLowerCase());
    if (!sub) return formErrors(['SUBREDDIT_NOEXIST', "Hmm, that community doesn't exist. Try checking the spelling.", 'sr']);
    const title = form.get('title') ?? '';
    if (!title.trim()) return formErrors(['NO_TEXT', 'we need something here', 'title']);
    if (title.length > 300) return formErrors(['TOO_LONG', 'this is too long (max: 300)', 'title']);
    const kind = form.get('kind') ?? '';
    const text = form.get('text') ?? '';
    const link = form.get('url') ?? '';
    if (kind === 'self' && !text) return formErrors(['NO_TEXT', 'we need something here', 'text']);
    if ([...text].length > 40_000) return formErrors(['TOO_LONG', 'this is too long (max: 40000)', 'text']);
    if (kind === 'self' && sub.submissionType === 'link') return formErrors(['NO_SELFS', "This community doesn't allow text posts", 'sr']);
    if (kind === 'link' && !/^https?:\/\//.test(link)) return formErrors(['NO_URL', 'a url is required', 'url']);
    if (kind === 'image' && !objects.has(decodeURIComponent(link.replace(`${url}/s3/`, '')))) return formErrors(['BAD_IMAGE', 'the image url is not an uploaded media asset', 'url']);
    if (!['self', 'link', 'image'].includes(kind)) return formErrors(['INVALID_OPTION', `kind ${kind} is not supported here`, 'kind']);
    const flairId = form.get('flair_id') ?? '';
    if (sub.flairRequired && !flairId) return formErrors(['SUBMIT_VALIDATION_FLAIR_REQUIRED', 'Your post must contain post flair.', 'flair']);
    if (flairId && !sub.flairs.some((flair) => flair.id === flairId)) return formErrors(['BAD_FLAIR_TEMPLATE_ID', 'That flair template does not exist', 'flair']);
    const post: FakeSubmission = { id: base36(), subreddit: sub.name, title, kind, text, url: link, flairId, createdUtc: Date.now() / 1000, author: username, score: 1, numComments: 0, hiddenReads: kind === 'image' ? imageListingDelay : 0 };
    submissions.push(post);
    if (kind === 'image') return { json: { json: { errors: [], data: { user_submitted_page: `https://www.reddit.com/user/${username}/submitted/`, websocket_url: `wss://ws.example/${post.id}` } } } };
    return { json: { json: { errors: [], data: { url: `https://www.reddit.com${permalink(post)}`, drafts_count: 0, id: post.id, name: `t3_${post.id}` } } } };
  });

  const subredditOfComment = (comment: FakeComment) => submissions.find((item) => `t3_${item.id}` === comment.linkId)?.subreddit ?? 'x';
  const commentData = (comment: FakeComment) => ({
    id: comment.id,
    name: `t1_${comment.id}`,
    parent_id: comment.parentId,
    link_id: comment.linkId,
    subreddit: subredditOfComment(comment),
    body: comment.deleted ? '[deleted]' : comment.body,
    author: comment.deleted ? '[deleted]' : comment.author,
    ...(comment.deleted ? {} : { author_fullname: `t2_${comment.author}` }),
    created_utc: comment.createdUtc,
    edited: false,
    ...(subreddits.find((sub) => sub.name === subredditOfComment(comment))?.moderator ? { removed: comment.removed ?? false } : {}),
    permalink: `/r/${subredditOfComment(comment)}/comments/${comment.linkId.slice(3)}/_/${comment.id}/`,
  });

  oauth('POST', '/api/comment', (request) => {
    const form = request.form ?? new URLSearchParams();
    if (form.get('api_type') !== 'json') return { json: { jquery: [], success: false } };
    const thing = form.get('thing_id') ?? '';
    const text = form.get('text') ?? '';
    const post = thing.startsWith('t3_') ? submissions.find((item) => item.id === thing.slice(3)) : undefined;
    const parent = thing.startsWith('t1_') ? comments.find((item) => item.id === thing.slice(3)) : undefined;
    if (!post && !parent) return formErrors(['NO_THING_ID', 'that thing does not exist', 'parent']);
    if (!text.trim()) return formErrors(['NO_TEXT', 'we need something here', 'text']);
    if ([...text].length > 10_000) return formErrors(['TOO_LONG', 'this is too long (max: 10000)', 'text']);
    const comment: FakeComment = { id: base36(), parentId: thing, linkId: post ? thing : parent!.linkId, body: text, author: username, createdUtc: Date.now() / 1000 };
    comments.push(comment);
    const linked = submissions.find((item) => `t3_${item.id}` === comment.linkId);
    if (linked) linked.numComments += 1;
    return { json: { json: { errors: [], data: { things: [{ kind: 't1', data: commentData(comment) }] } } } };
  });

  const submissionData = (post: FakeSubmission) => ({
    id: post.id,
    name: `t3_${post.id}`,
    title: post.title,
    subreddit: post.subreddit,
    created_utc: post.createdUtc,
    permalink: permalink(post),
    url: post.url || `https://www.reddit.com${permalink(post)}`,
    score: post.score,
    num_comments: post.numComments,
    link_flair_template_id: post.flairId || null,
  });

  oauth('GET', '/user/*/submitted', (request) => {
    if (request.path.split('/')[2] !== username) return { status: 403, json: { message: 'Forbidden', error: 403 } };
    const visible = [...submissions].reverse().filter((post) => {
      if (post.hiddenReads > 0) {
        post.hiddenReads -= 1;
        return false;
      }
      return true;
    });
    return listing(visible.slice(0, Number(request.query.get('limit') ?? 25)).map(submissionData), 't3');
  });

  oauth('GET', '/user/*/comments', () => listing([...comments].reverse().map(commentData), 't1'));

  oauth('GET', '/api/info', (request) => {
    const ids = (request.query.get('id') ?? '').split(',');
    if (ids.every((id) => id.startsWith('t1_'))) return listing(comments.filter((item) => ids.includes(`t1_${item.id}`)).map(commentData), 't1');
    return listing(submissions.filter((post) => ids.includes(`t3_${post.id}`)).map(submissionData), 't3');
  });

  oauth('GET', '/subreddits/search', (request) => {
    const word = (request.query.get('q') ?? '').toLowerCase();
    return listing(subreddits.filter((sub) => sub.name.includes(word)).map((sub) => ({ display_name: sub.name, display_name_prefixed: `r/${sub.name}`, title: sub.title, submission_type: sub.submissionType })), 't5');
  });

  const subredditOf = (request: RecordedRequest, segment: number) => subreddits.find((sub) => sub.name.toLowerCase() === request.path.split('/')[segment].toLowerCase());
  oauth('GET', '/r/*/about', (request) => {
    const sub = subredditOf(request, 2);
    return sub ? { json: { kind: 't5', data: { display_name: sub.name, title: sub.title, submission_type: sub.submissionType, allow_images: true, user_is_moderator: sub.moderator ?? false } } } : { status: 404, json: { message: 'Not Found', error: 404 } };
  });
  oauth('GET', '/api/v1/*/post_requirements', (request) => {
    const sub = subredditOf(request, 3);
    return sub ? { json: { is_flair_required: sub.flairRequired, title_text_max_length: 300 } } : { status: 404, json: { message: 'Not Found', error: 404 } };
  });
  oauth('GET', '/r/*/api/link_flair_v2', (request) => {
    const sub = subredditOf(request, 2);
    if (!sub) return { status: 404, json: { message: 'Not Found', error: 404 } };
    if (sub.flairs.length === 0) return { status: 403, json: { message: 'Forbidden', error: 403 } };
    return { json: sub.flairs.map((flair) => ({ id: flair.id, text: flair.text, type: 'text', text_editable: false, background_color: '', text_color: 'dark' })) };
  });

  /** A comment node with its replies as Reddit nests them ('' when none). */
  const commentNode = (comment: FakeComment): unknown => {
    const replies = comments.filter((item) => item.parentId === `t1_${comment.id}`);
    return { kind: 't1', data: { ...commentData(comment), replies: replies.length > 0 ? { kind: 'Listing', data: { after: null, before: null, children: replies.map(commentNode) } } : '' } };
  };
  const moreNode = (parentId: string, rest: FakeComment[]) => ({ kind: 'more', data: { count: rest.length, name: `t1_${rest[0].id}`, id: rest[0].id, parent_id: parentId, depth: 0, children: rest.map((item) => item.id) } });

  scoped('GET', '/comments/*', 'read', (request) => {
    const post = submissions.find((item) => item.id === request.path.split('/')[2]);
    if (!post) return { status: 404, json: { message: 'Not Found', error: 404 } };
    const focus = request.query.get('comment');
    const top = focus ? comments.filter((item) => item.id === focus) : comments.filter((item) => item.parentId === `t3_${post.id}`);
    const shown = top.slice(0, treeLimit).map(commentNode);
    const rest = top.slice(treeLimit);
    const children = rest.length > 0 ? [...shown, moreNode(`t3_${post.id}`, rest)] : shown;
    return { json: [listing([submissionData(post)], 't3').json, { kind: 'Listing', data: { after: null, before: null, children } }] };
  });

  scoped('GET', '/api/morechildren', 'read', (request) => {
    if (request.query.get('api_type') !== 'json') return { json: { jquery: [], success: false } };
    const linkId = request.query.get('link_id') ?? '';
    if (!submissions.some((item) => `t3_${item.id}` === linkId)) return formErrors(['NO_THING_ID', 'that link does not exist', 'link_id']);
    const ids = (request.query.get('children') ?? '').split(',').filter(Boolean);
    if (ids.length === 0) return formErrors(['BAD_NUMBER', 'children is required', 'children']);
    // The asked comments and everything under them, flat, each naming its parent.
    const things: unknown[] = [];
    const add = (comment: FakeComment) => {
      things.push({ kind: 't1', data: { ...commentData(comment), replies: '' } });
      for (const reply of comments.filter((item) => item.parentId === `t1_${comment.id}`)) add(reply);
    };
    for (const comment of comments.filter((item) => item.linkId === linkId && ids.includes(item.id))) add(comment);
    return { json: { json: { errors: [], data: { things } } } };
  });

  /** The account's own submission or comment named by a fullname, or why Reddit refuses it. */
  const ownThing = (fullname: string): { post?: FakeSubmission; comment?: FakeComment } | undefined => {
    const post = fullname.startsWith('t3_') ? submissions.find((item) => item.id === fullname.slice(3)) : undefined;
    const comment = fullname.startsWith('t1_') ? comments.find((item) => item.id === fullname.slice(3)) : undefined;
    if (post && post.author === username) return { post };
    if (comment && comment.author === username) return { comment };
    return undefined;
  };

  scoped('POST', '/api/editusertext', 'edit', (request) => {
    const form = request.form ?? new URLSearchParams();
    if (form.get('api_type') !== 'json') return { json: { jquery: [], success: false } };
    const text = form.get('text') ?? '';
    const own = ownThing(form.get('thing_id') ?? '');
    if (!own || own.post?.deleted || own.comment?.deleted) return forbidden;
    if (own.post) {
      if (own.post.kind !== 'self') return forbidden;
      if ([...text].length > 40_000) return formErrors(['TOO_LONG', 'this is too long (max: 40000)', 'text']);
      own.post.text = text;
      return { json: { json: { errors: [], data: { things: [{ kind: 't3', data: { ...submissionData(own.post), selftext: text } }] } } } };
    }
    if (!text.trim()) return formErrors(['NO_TEXT', 'we need something here', 'text']);
    if ([...text].length > 10_000) return formErrors(['TOO_LONG', 'this is too long (max: 10000)', 'text']);
    own.comment!.body = text;
    return { json: { json: { errors: [], data: { things: [{ kind: 't1', data: commentData(own.comment!) }] } } } };
  });

  scoped('POST', '/api/del', 'edit', (request) => {
    const own = ownThing(request.form?.get('id') ?? '');
    if (!own) return forbidden;
    if (own.post) own.post.deleted = true;
    if (own.comment) own.comment.deleted = true;
    return { json: {} };
  });

  for (const action of ['remove', 'approve'] as const) {
    scoped('POST', `/api/${action}`, 'modposts', (request) => {
      const id = request.form?.get('id') ?? '';
      const comment = id.startsWith('t1_') ? comments.find((item) => item.id === id.slice(3)) : undefined;
      const sub = comment && subreddits.find((item) => item.name === subredditOfComment(comment));
      if (!comment || !sub?.moderator) return forbidden;
      comment.removed = action === 'remove';
      return { json: {} };
    });
  }

  return {
    server,
    url,
    username,
    authority,
    endpoints: { www: url, oauth: url },
    subreddits,
    submissions,
    comments,
    objects,
    setImageListingDelay(reads: number) {
      imageListingDelay = reads;
    },
    /** Top-level comments the tree shows before a `more` stub. */
    setTreeLimit(limit: number) {
      treeLimit = limit;
    },
    /** Someone else's comment under `parent` (a submission id as t3_…, or a comment as t1_…). */
    addComment(parent: string, body: string, author = 'bob', secondsAgo = 0): FakeComment {
      const linkId = parent.startsWith('t3_') ? parent : comments.find((item) => `t1_${item.id}` === parent)!.linkId;
      const comment: FakeComment = { id: base36(), parentId: parent, linkId, body, author, createdUtc: Date.now() / 1000 - secondsAgo };
      comments.push(comment);
      return comment;
    },
    close: () => server.close(),
  };
}

export type RedditFake = Awaited<ReturnType<typeof startRedditFake>>;
