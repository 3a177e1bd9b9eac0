// Lemmy: one post per chosen community on the user's instance, later items as comments replying to the one before.
// API reference: https://join-lemmy.org/api/ (v3, Lemmy 0.19: POST /api/v3/user/login {username_or_email, password,
// totp_2fa_token}, GET /api/v3/site (my_user), GET /api/v3/community?name=, GET /api/v3/search?type_=Communities, POST /api/v3/post,
// POST /api/v3/comment {post_id, content, parent_id}, GET /api/v3/post, GET /api/v3/post/list; pict-rs at POST /pictrs/image),
// https://join-lemmy.org/docs/contributors/09-api-v4.html and LemmyNet/lemmy-js-client 1.0 (v4, Lemmy 1.0: /account/auth/login,
// GET /account, search_term, POST /api/v4/image). Lemmy 1.0 still answers the v3 calls used here, so v3 is the default
// (`apiVersion`); instances on 1.0 can be switched to v4. Comments, moderation, edits and deletion: lemmy-comments.ts.
// Every request is checked in the tests against the request types of Lemmy's client (lemmy-js-client tag 0.19.9, b9cd50f,
// 2025-02-10, for v3; tag 1.0.0-beta.1, c5846ba, 2026-07-03, for v4; vendored in test/contracts/lemmy/). Where they
// differed from the calls above, the client won: v3's Login has no stay_logged_in; v4 spells enums in snake_case, its
// Search has no sort, it deletes with DELETE /post and DELETE /comment, its RemoveComment requires a reason, and its image
// upload (/api/v4/image) takes the file in `images[]` like pict-rs.
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ChannelAuth, ConnectContext, MediaFile, Provider, ProviderContext, StepAttempt } from './types.js';
import { blobOf, currentMetric, firstProblem, idsOf, normalizeInstance, othersMeta, permanent, textOnlyComments, tool } from './shared.js';
import { couldNotConfirm, identify } from './recovery.js';
import { deletePublished, editProblem, editPublished, findComment, moderateComment, readComments } from './lemmy-comments.js';
import { commonMarkLineBreaks } from './safe-markdown.js';

const endpoints = { instance: 'https://lemmy.world', apiVersion: 'v3' };

const personSchema = z.looseObject({ id: z.number(), name: z.string(), display_name: z.string().nullish(), avatar: z.string().nullish() });
const communitySchema = z.looseObject({ id: z.number(), name: z.string(), title: z.string().nullish(), local: z.boolean().optional(), actor_id: z.string().optional(), ap_id: z.string().optional() });
const counts = { score: z.number().optional(), comments: z.number().optional(), upvotes: z.number().optional(), downvotes: z.number().optional() };
const postViewSchema = z.looseObject({
  // `published` in API v3 (Lemmy 0.19), `published_at` in v4 (Lemmy 1.0).
  post: z.looseObject({ id: z.number(), name: z.string(), body: z.string().nullish(), community_id: z.number(), creator_id: z.number(), url: z.string().nullish(), ap_id: z.string().optional(), published: z.string().optional(), published_at: z.string().optional(), ...counts }),
  counts: z.looseObject(counts).optional(),
});
const versionSchema = z.enum(['v3', 'v4']);
type Version = z.infer<typeof versionSchema>;

/**
 * The calls whose paths or parameters differ between API v3 (Lemmy 0.19) and v4 (Lemmy 1.0), as lemmy-js-client has them
 * (tags 0.19.9 and 1.0.0-beta.1): v4 spells its enums in snake_case ("new", "communities"), has no `sort` on search and no
 * `stay_logged_in` before it, deletes with DELETE on the item's path, and takes an image in the same `images[]` field.
 */
export const versions = {
  v3: { login: 'user/login', me: 'site', searchTerm: 'q', searchSort: 'Active', communities: 'Communities', newest: 'New', all: 'All', staysLoggedIn: false, deleteBy: 'POST' },
  v4: { login: 'account/auth/login', me: 'account', searchTerm: 'search_term', searchSort: undefined, communities: 'communities', newest: 'new', all: 'all', staysLoggedIn: true, deleteBy: 'DELETE' },
} as const;

const ERRORS: Record<string, string> = {
  incorrect_login: 'wrong username or password',
  missing_totp_token: 'this account uses two-factor authentication: fill in the current 2FA code',
  incorrect_totp_token: 'the two-factor code is wrong or expired: type the current one',
  email_not_verified: 'the account\'s email address is not verified yet',
  registration_application_pending: 'the account\'s registration is still waiting for approval',
  couldnt_find_community: 'this instance does not know the community: check its name (name or name@instance) with the subreddits tool',
  banned_from_community: 'the account is banned from this community',
  site_ban: 'the account is banned from this instance',
  only_mods_can_post_in_community: 'only moderators may post in this community',
  invalid_url: 'the link is not a valid URL',
  invalid_post_title: 'the post title is not valid (1 to 200 characters, not only spaces)',
  locked: 'the post is locked: comments are closed',
};

/** Lemmy's `{error: "snake_case_code", message?}` answers (400 for most), in words a user can act on. */
function classifyLemmy(status: number, body: string): Partial<PlatformHttpErrorInit> {
  let code = '';
  try {
    code = String((JSON.parse(body) as { error?: unknown }).error ?? '');
  } catch {
    /* not JSON */
  }
  if (status === 429 || code === 'rate_limit_error') return { retryable: true, message: `the instance's rate limit was reached (${code || status})` };
  if (code === 'not_logged_in' || (status === 401 && code !== 'incorrect_login')) return { status: 401, retryable: false, message: `the instance refused the login token (${code || status})` };
  const said = ERRORS[code];
  return { message: said ? `${said} (${code})` : `${code || body.slice(0, 200) || 'no answer body'} (HTTP ${status})` };
}

export type ApiContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: Pick<ChannelAuth, 'accessToken' | 'data'> };

export const versionOf = (context: Pick<ProviderContext, 'endpoints'>): Version => versionSchema.catch('v3').parse(context.endpoints.apiVersion);
export const instanceOf = (context: ApiContext) => normalizeInstance(context.auth.data.instanceUrl || context.endpoints.instance);

export async function api<T>(context: ApiContext, path: string, schema: z.ZodType<T>, options: { json?: unknown; query?: Record<string, string | number | undefined>; method?: 'PUT' | 'DELETE' } = {}): Promise<T> {
  const response = await context.fetch({
    method: options.method,
    url: `${instanceOf(context)}/api/${versionOf(context)}/${path}`,
    query: options.query,
    headers: context.auth.accessToken ? { authorization: `Bearer ${context.auth.accessToken}` } : {},
    json: options.json,
    schema,
    classify: classifyLemmy,
  });
  return response.data;
}

/** Logs in (the JWT is the channel's token; the password stays encrypted with the channel to log in again when Lemmy drops the token). */
async function login(context: ApiContext, fields: { username: string; password: string; totp?: string }): Promise<string> {
  const { jwt } = await api({ ...context, auth: { ...context.auth, accessToken: '' } }, versions[versionOf(context)].login, z.object({ jwt: z.string().nullish() }), {
    json: { username_or_email: fields.username, password: fields.password, totp_2fa_token: fields.totp || undefined, stay_logged_in: versions[versionOf(context)].staysLoggedIn || undefined },
  });
  if (!jwt) throw permanent('the instance answered the login without a token: the account may be waiting for approval or email verification');
  return jwt;
}

async function me(context: ApiContext) {
  const schema = z.looseObject({ my_user: z.looseObject({ local_user_view: z.looseObject({ person: personSchema }) }).nullish(), local_user_view: z.looseObject({ person: personSchema }).optional() });
  const answer = await api(context, versions[versionOf(context)].me, schema);
  const person = (answer.local_user_view ?? answer.my_user?.local_user_view)?.person;
  if (!person) throw permanent('the instance did not recognise the login token', 401);
  return person;
}

/** A community's name as Lemmy resolves it from any instance: `name` for local ones, `name@host` for federated ones. */
function qualifiedName(community: z.infer<typeof communitySchema>): string {
  const actor = community.ap_id ?? community.actor_id;
  return community.local !== false || !actor ? community.name : `${community.name}@${new URL(actor).host}`;
}

async function communityId(context: ApiContext, name: string): Promise<number> {
  const cleaned = name.trim().replace(/^!/, '').replace(/^\/?c\//, '');
  const { community_view: view } = await api(context, 'community', z.object({ community_view: z.looseObject({ community: communitySchema }) }), { query: { name: cleaned } });
  return view.community.id;
}

/** The post's picture on the instance's image store: pict-rs behind /pictrs/image (v3) or /api/v4/image (v4). */
async function uploadImage(context: ProviderContext, file: MediaFile): Promise<string> {
  const { bytes, mimeType } = await file.load();
  const form = new FormData();
  const name = file.url.split(/[?#]/)[0].split('/').pop() || `image.${mimeType.split('/')[1] ?? 'png'}`;
  const blob = blobOf(bytes, mimeType);
  const instance = instanceOf(context);
  const headers = { authorization: `Bearer ${context.auth.accessToken}` };
  if (versionOf(context) === 'v4') {
    form.append('images[]', blob, name);
    const { data } = await context.fetch({ method: 'POST', url: `${instance}/api/v4/image`, headers, multipart: form, schema: z.looseObject({ image_url: z.string() }), classify: classifyLemmy, timeoutMs: 120_000 });
    return data.image_url;
  }
  form.append('images[]', blob, name);
  const { data } = await context.fetch({ method: 'POST', url: `${instance}/pictrs/image`, headers, multipart: form, schema: z.looseObject({ msg: z.string().optional(), files: z.array(z.looseObject({ file: z.string() })).optional() }), classify: classifyLemmy, timeoutMs: 120_000 });
  if (!data.files?.[0]) throw new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: data.msg ?? '', message: `the instance's image store refused the picture (${data.msg ?? 'no file in the answer'})` });
  return `${instance}/pictrs/image/${data.files[0].file}`;
}

interface CommunityEntry {
  subreddit: string;
  id: string;
  title: string;
  url?: string;
}

const entriesOf = (context: ProviderContext) => ((context.settings.subreddit ?? []) as { value: CommunityEntry }[]).map(({ value }) => value);

/**
 * A post whose answer was lost is looked for among the community's newest posts: same author and title, published since the
 * attempt began (Lemmy keeps no marker of ours), identified by its link and body as the instance stores them (issue 31). An
 * older post with the same title is never taken for it: one inside the clock-skew allowance before the attempt whose body or
 * link differs stops the item with "could not confirm" (providers/recovery.ts identify). An answer without publication
 * times stops it too, instead of guessing.
 */
async function findPost(context: ProviderContext, community: number, body: { name: string; body: string; url?: string }, attempt: StepAttempt): Promise<number | undefined> {
  const list = await api(context, 'post/list', z.looseObject({ posts: z.array(postViewSchema).optional(), items: z.array(postViewSchema).optional() }), { query: { community_id: community, sort: versions[versionOf(context)].newest, limit: 20 } });
  const candidates = (list.posts ?? list.items ?? [])
    .filter(({ post }) => String(post.creator_id) === context.auth.internalId && post.name === body.name)
    .map(({ post }) => {
      const published = post.published ?? post.published_at;
      if (!published) throw couldNotConfirm('the instance', 'the connection was lost before it answered, and its post list has no publication times', 'the community');
      // Lemmy 0.19 writes times without a zone: they are UTC.
      const created = /[zZ]|[+-]\d\d:?\d\d$/.test(published) ? published : `${published}Z`;
      return { item: post.id, created, whole: (post.url ?? undefined) === body.url && (post.body ?? '') === body.body };
    });
  return identify(attempt, candidates, 'Lemmy', `posts titled "${body.name}"`, 'the community');
}

const postUrl = (context: ProviderContext, id: string) => `${instanceOf(context)}/post/${id}`;

const lemmy: Provider = {
  identifier: 'lemmy',
  name: 'Lemmy',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'instanceUrl', label: 'Instance URL', type: 'url', required: true, endpoint: 'instance', description: 'The address of your Lemmy instance; leave empty for the one shown' },
      { key: 'username', label: 'Username or email', type: 'text', required: true },
      { key: 'password', label: 'Password', type: 'password', required: true },
      {
        key: 'totp',
        label: 'Two-factor code',
        type: 'text',
        required: false,
        description: 'Only for accounts with two-factor authentication: the current 6-digit code. Such accounts must be connected again when the instance ends the session.',
      },
    ],
  },
  endpoints,
  maxLength: () => 10000,
  rules:
    'The post is made once in each chosen community (resolved by name on your instance), each with its own title and optional link. ' +
    'It takes at most one picture, uploaded to the instance and used as the post\'s image (or as the thumbnail of a link post); no video. ' +
    'Later items are comments, each replying to the one before, and take text only.',
  settings: z.object({
    subreddit: z
      .array(
        z.object({
          value: z.object({
            subreddit: z.string().min(1).describe('Community name (name or name@instance), from the subreddits tool'),
            id: z.string().min(1).describe('Community id, from the subreddits tool'),
            title: z.string().min(1).max(200).describe('Title of the post in this community'),
            url: z.string().optional().describe('Link attached to the post'),
          }),
        }),
      )
      .min(1)
      .describe('The communities to post to, at least one'),
  }),
  chain: 'comments',
  recordsSteps: true,
  validate: (items) =>
    firstProblem(items, ({ images, videos }) => (videos > 0 || images > 1 ? 'has more than one picture or a video; Lemmy takes one picture per post.' : undefined), 'first') ??
    textOnlyComments(items, 'Lemmy'),
  tools: [
    {
      ...tool('subreddits', 'Searches communities known to the instance: {id, subreddit, name} items; use subreddit and id in the subreddit setting.', [
        { key: 'word', type: 'string', description: 'Part of the community name' },
      ]),
      async run(context, data) {
        const { communities } = await api(context, 'search', z.looseObject({ communities: z.array(z.looseObject({ community: communitySchema })).default([]) }), {
          query: { [versions[versionOf(context)].searchTerm]: data.word ?? '', type_: versions[versionOf(context)].communities, sort: versions[versionOf(context)].searchSort, limit: 10 },
        });
        return communities.map(({ community }) => ({ id: String(community.id), subreddit: qualifiedName(community), name: community.title || community.name }));
      },
    },
  ],

  async connect(context: ConnectContext, fields) {
    const instanceUrl = normalizeInstance(fields.instanceUrl || context.endpoints.instance);
    const base: ApiContext = { ...context, auth: { accessToken: '', data: { instanceUrl } } };
    const accessToken = await login(base, { username: fields.username ?? '', password: fields.password ?? '', totp: fields.totp });
    const person = await me({ ...base, auth: { accessToken, data: { instanceUrl } } });
    return {
      internalId: String(person.id),
      name: person.display_name || person.name,
      profile: `${person.name}@${new URL(instanceUrl).host}`,
      picture: person.avatar ?? undefined,
      accessToken,
      data: { instanceUrl, username: fields.username ?? '', password: fields.password ?? '', ...(fields.totp ? { twoFactor: 'true' } : {}) },
    };
  },

  // A dropped token is replaced by logging in again; accounts with two-factor authentication cannot, and must be connected again.
  async refresh(context) {
    const { username, password, twoFactor } = context.auth.data;
    if (twoFactor || !username || !password) throw permanent('the Lemmy session ended and needs a new two-factor code', 401);
    return { accessToken: await login(context, { username, password }) };
  },

  async publish(context, item) {
    const picture = item.media[0] ? await context.step('image', () => uploadImage(context, item.media[0]), async () => undefined) : undefined;
    const ids: number[] = [];
    for (const [index, entry] of entriesOf(context).entries()) {
      const community = await communityId(context, entry.subreddit);
      const url = entry.url || picture;
      const body = { community_id: community, name: entry.title, body: commonMarkLineBreaks(item.text), url, custom_thumbnail: entry.url && picture ? picture : undefined, nsfw: false };
      ids.push(
        await context.step(
          `post:${index}`,
          async () => (await api(context, 'post', z.object({ post_view: postViewSchema }), { json: body })).post_view.post.id,
          (attempt) => findPost(context, community, { name: entry.title, body: body.body, url }, attempt),
        ),
      );
    }
    const [first, ...others] = ids.map(String);
    return { id: first, url: postUrl(context, first), ...othersMeta(others) };
  },

  async comment(context, item, { root, parent, toComment }) {
    // A reply to someone's comment goes under that comment, on the one community post it was left on.
    const targets = toComment
      ? [{ postId: parent.meta?.post ?? root.id, parentId: parent.id }]
      : idsOf(root).map((postId, index) => ({ postId, parentId: parent.id === root.id ? undefined : idsOf(parent)[index] }));
    const ids: number[] = [];
    for (const [index, { postId, parentId }] of targets.entries()) {
      const body = { post_id: Number(postId), content: commonMarkLineBreaks(item.text), ...(parentId ? { parent_id: Number(parentId) } : {}) };
      ids.push(
        await context.step(
          `comment:${index}`,
          async () => (await api(context, 'comment', z.object({ comment_view: z.looseObject({ comment: z.looseObject({ id: z.number() }) }) }), { json: body })).comment_view.comment.id,
          ({ startedAt }) => findComment(context, postId, parentId, body.content, startedAt),
        ),
      );
    }
    const [first, ...others] = ids.map(String);
    return { id: first, url: `${instanceOf(context)}/comment/${first}`, ...othersMeta(others) };
  },

  comments: (context, post, since) => readComments(context, post, since),
  hideComment: (context, comment, hidden, post) => moderateComment(context, comment, hidden, post),
  editPublished,
  deletePublished,
  editProblem,

  async postAnalytics(context, post) {
    let score = 0;
    let comments = 0;
    for (const id of idsOf(post)) {
      const { post_view: view } = await api(context, 'post', z.object({ post_view: postViewSchema }), { query: { id } });
      score += view.counts?.score ?? view.post.score ?? 0;
      comments += view.counts?.comments ?? view.post.comments ?? 0;
    }
    return [currentMetric('Score', score), currentMetric('Comments', comments)];
  },
};

export default lemmy;
