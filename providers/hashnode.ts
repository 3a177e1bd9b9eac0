// Hashnode: Markdown articles in one of the user's publications, over the GraphQL API with a personal access token.
// References (read 2026-11-27): Hashnode's own API reference for agents, github.com/Hashnode/gql-skill at ebd06df (2026-07-29):
// SKILL.md (production endpoint https://gql-beta.hashnode.com, POST at `/`; gql.hashnode.com, which apidocs.hashnode.com and
// ../shared/reference describe, now answers a 301 to a deprecation notice), auth-and-roles.md (`Authorization: Bearer
// <PAT>`), mutations.md (the 9 mutations; publishPost and updatePost are Pro-gated), errors-and-limits.md (codes in
// `extensions.code`; at most 15 tags; request bodies at most 100 KB; pages above 100 clamped) and references/schema.graphql,
// vendored as test/contracts/hashnode/schema.graphql, against which the fake validates every operation and its variables.
// publishPost takes PublishPostInput: tags as PublishPostTagInput {slug, name} (unknown slugs become new tags: no id, no
// lookup), the first picture as `coverImage` (a public URL), the others after the text. Where the reference and the old
// schema differ (coverImageOptions, tags by id), the published schema wins.
// What Hashnode would read as markup (issue 21): the body is GFM Markdown written out by Herald (raw HTML, javascript: links
// and `%[url]` embeds of the text arrive as literal text); title and subtitle are plain text fields.
// Changes and comments: updatePost (UpdatePostInput keyed by `id`, every content field optional) edits the title, subtitle,
// text and tags. The API has no mutation that deletes a post, nor any that writes, hides or deletes a comment: a delete is
// refused with that reason (delete it in the Hashnode dashboard), comments are read from Post.comments(first, after) with
// each Comment's replies.
// A publish of unknown outcome (issue 31): the publication's newest posts (Publication.posts) of this title, told apart by
// Post.content.markdown (schema.graphql: Content! {markdown, html, text}), never by the title alone.
import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { PlatformHttpError, type PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, PlatformComment, Provider, ProviderContext, PublishedRef } from './types.js';
import { currentMetric, noVideo, permanent, pickedId, tagsSchema } from './shared.js';
import { markdownArticle, picturesOf, saidIn, splitCover } from './articles/common.js';
import { identify } from './recovery.js';

const settings = z.object({
  title: z.string().trim().min(1, 'Hashnode needs a title for the article').describe('Article title'),
  subtitle: z.string().trim().optional().describe('Article subtitle'),
  publication: pickedId('Publication id from publications'),
  tags: tagsSchema
    .min(1, 'Hashnode needs at least one tag: look tags up with tagsList')
    .max(15, 'Hashnode takes at most 15 tags: remove some')
    .describe('1 to 15 tags, each a slug (e.g. javascript; tagsList looks them up): an unknown slug makes a new tag'),
});

const ME = 'query Me { me { id username name profilePicture } }';
const PUBLICATIONS = 'query Publications { me { publications(first: 50) { edges { node { id title url } } } } }';
const TAG = 'query Tag($slug: String!) { tag(slug: $slug) { id name slug } }';
const PUBLISH = 'mutation PublishPost($input: PublishPostInput!) { publishPost(input: $input) { post { id slug url } } }';
const RECENT = 'query Recent($id: ObjectId!) { publication(id: $id) { posts(first: 20) { edges { node { id title url publishedAt content { markdown } } } } } }';
const UPDATE = 'mutation UpdatePost($input: UpdatePostInput!) { updatePost(input: $input) { post { id slug url } } }';
const COMMENT_FIELDS = 'id dateAdded content { text } author { id username name profilePicture }';
const COMMENTS = `query Comments($id: ID!, $after: String) { post(id: $id) { comments(first: 50, after: $after) { edges { node { ${COMMENT_FIELDS} replies(first: 50) { edges { node { ${COMMENT_FIELDS} } } } } } pageInfo { hasNextPage endCursor } } } }`;
const STATS = 'query PostStats($id: ID!) { post(id: $id) { id views reactionCount responseCount } }';

const tagSchema = z.object({ id: z.string(), name: z.string(), slug: z.string() });
const edges = <T extends z.ZodType>(node: T) => z.object({ edges: z.array(z.object({ node })) });
const errorSchema = z.object({ message: z.string(), extensions: z.looseObject({ code: z.string().optional() }).optional() });
const answerSchema = z.object({ data: z.unknown().nullish(), errors: z.array(errorSchema).optional() });

/** What a GraphQL error code means for the core: UNAUTHENTICATED reconnects, server errors retry, the rest is refused. */
function graphqlFailure(errors: z.infer<typeof errorSchema>[], status = 200): Partial<PlatformHttpErrorInit> & { status: number; retryable: boolean } {
  const [first] = errors;
  const code = first?.extensions?.code ?? 'INTERNAL_SERVER_ERROR';
  const said = `${first?.message ?? 'no message'} (${code})`;
  switch (code) {
    case 'UNAUTHENTICATED':
      return { status: 401, retryable: false, message: `the personal access token was refused (${said}): create one in Hashnode Settings, Developer, and reconnect` };
    case 'FORBIDDEN':
      return { status: 403, retryable: false, message: /pro plan/i.test(said) ? `${said}: upgrade the publication to Pro in the Hashnode dashboard to publish through the API` : `${said}: the account may not publish in that publication` };
    case 'INTERNAL_SERVER_ERROR':
      return { status: status >= 500 ? status : 502, retryable: true, message: `Hashnode had an internal error (${said})` };
    default:
      return { status: status === 200 ? 400 : status, retryable: false, message: said };
  }
}

function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  try {
    const errors = answerSchema.parse(JSON.parse(body)).errors;
    if (errors?.length) return status >= 500 || status === 429 ? { message: graphqlFailure(errors, status).message } : graphqlFailure(errors, status);
  } catch {
    /* not a GraphQL answer */
  }
  return { message: saidIn(status, body) };
}

type Api = Pick<ConnectContext, 'fetch' | 'endpoints'> & { token: string };

const apiOf = (context: ProviderContext): Api => ({ fetch: context.fetch, endpoints: context.endpoints, token: context.auth.accessToken });

/** One GraphQL operation; errors in a 200 answer are failures like any other. */
async function gql<T>(api: Api, query: string, variables: Record<string, unknown>, schema: z.ZodType<T>): Promise<T> {
  const size = Buffer.byteLength(JSON.stringify({ query, variables }));
  if (size > 100_000) throw permanent(`the article is ${Math.ceil(size / 1000)} KB as sent and Hashnode takes at most 100 KB a request: shorten it`);
  const response = await api.fetch({ method: 'POST', url: api.endpoints.gql, headers: { authorization: `Bearer ${api.token}` }, json: { query, variables }, schema: answerSchema, classify });
  const { data, errors } = response.data;
  if (errors?.length) throw new PlatformHttpError({ bodyExcerpt: response.text.slice(0, 500), ...graphqlFailure(errors) });
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new PlatformHttpError({ status: 502, retryable: false, bodyExcerpt: response.text.slice(0, 500), message: `Hashnode answered with an unexpected shape: ${parsed.error.issues[0]?.message}` });
  return parsed.data;
}

const lookUpTag = async (api: Api, slug: string) => (await gql(api, TAG, { slug }, z.object({ tag: tagSchema.nullable() }))).tag;

/** A tag slug as Hashnode writes them: lower case, words joined by hyphens. */
const slugOf = (text: string) => text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');

/**
 * The tags as PublishPostTagInput ({slug, name}): Hashnode finds a tag by its slug and makes a new one for an unknown slug.
 * A tag id (what tagsList answered before Hashnode's schema took tags by slug only) is matched to its tag through the slug
 * of its label; one that does not match is refused, naming it.
 */
async function tagInputs(api: Api, tags: { value: string; label: string }[]) {
  const inputs = [];
  for (const tag of tags) {
    const value = tag.value.trim();
    const label = tag.label.trim();
    if (/^[0-9a-f]{24}$/i.test(value)) {
      const found = label ? await lookUpTag(api, slugOf(label)) : null;
      if (found?.id !== value) throw permanent(`Hashnode takes tags by slug now, and the tag id ${value}${label ? ` ("${label}")` : ''} could not be matched to one: choose the tag again (tagsList answers slugs)`);
      inputs.push({ slug: found.slug });
      continue;
    }
    const slug = slugOf(value);
    inputs.push(label && label !== value ? { slug, name: label } : { slug });
  }
  return inputs;
}

const commentNode = z.object({ id: z.string(), dateAdded: z.string(), content: z.object({ text: z.string() }), author: z.object({ id: z.string(), username: z.string(), name: z.string().nullish(), profilePicture: z.string().nullish() }) });
const commentsSchema = z.object({
  post: z
    .object({
      comments: z.object({
        edges: z.array(z.object({ node: commentNode.extend({ replies: edges(commentNode) }) })),
        pageInfo: z.object({ hasNextPage: z.boolean().nullish(), endCursor: z.string().nullish() }),
      }),
    })
    .nullable(),
});

/** A post's comments and their replies (up to 10 pages of 50), oldest first. */
async function commentsOf(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const found: PlatformComment[] = [];
  const toComment = (node: z.infer<typeof commentNode>, parentId?: string): PlatformComment => ({
    id: node.id,
    parentId,
    author: { id: node.author.id, name: node.author.name || node.author.username, handle: node.author.username, url: `https://hashnode.com/@${node.author.username}`, picture: node.author.profilePicture ?? undefined },
    text: node.content.text.trim(),
    createdAt: node.dateAdded,
    url: post.url ? `${post.url}#comment-${node.id}` : undefined,
    byAccount: node.author.id === context.auth.internalId,
  });
  let after: string | undefined;
  for (let page = 0; page < 10; page++) {
    const answer = await gql(apiOf(context), COMMENTS, { id: post.id, after }, commentsSchema);
    if (!answer.post) break;
    for (const { node } of answer.post.comments.edges) found.push(toComment(node), ...node.replies.edges.map((reply) => toComment(reply.node, node.id)));
    if (!answer.post.comments.pageInfo.hasNextPage || !answer.post.comments.pageInfo.endCursor) break;
    after = answer.post.comments.pageInfo.endCursor;
  }
  return found.sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

const hashnode: Provider = {
  identifier: 'hashnode',
  name: 'Hashnode',
  editor: 'markdown',
  article: true,
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [{ key: 'accessToken', label: 'Personal access token', type: 'password', required: true, description: 'From Hashnode Settings, Developer.' }],
  },
  endpoints: { gql: 'https://gql-beta.hashnode.com' },
  // Hashnode takes request bodies up to 100 KB (errors-and-limits.md): the text, its JSON escapes and the other fields.
  maxLength: () => 90000,
  rules:
    'An article (Markdown, or HTML with headings, emphasis, lists, quotes, code, tables and pictures), published at once in a publication of the account (from publications), with a required title, an optional subtitle ' +
    'and 1 to 15 tags by slug (tagsList looks them up; an unknown slug makes a new tag). The first picture becomes the cover, the others follow the text; ' +
    'Hashnode loads them from their public URL. No video, one item (no comments). Hashnode requires a Pro publication for API publishing and editing. ' +
    "Edits change the title, subtitle, text and tags; Hashnode's API cannot delete a post. Views (when the publication shows them), reactions and responses are the post analytics.",
  settings,
  chain: 'none',
  mediaByUrl: true,
  recordsSteps: true,
  validate: (items) => noVideo(items, 'Hashnode'),
  tools: [
    {
      methodName: 'publications',
      description: 'Lists the Hashnode publications of the account (ids for the publication setting).',
      dataSchema: [],
      run: async (context) => {
        const { me } = await gql(apiOf(context), PUBLICATIONS, {}, z.object({ me: z.object({ publications: edges(z.object({ id: z.string(), title: z.string(), url: z.string().nullish() })) }) }));
        return me.publications.edges.map(({ node }) => ({ id: node.id, name: node.title, url: node.url ?? undefined }));
      },
    },
    {
      methodName: 'tagsList',
      description: 'Looks Hashnode tags up by slug (e.g. javascript,webdev): answers the ones that exist, each with the slug to use as the value in the tags setting.',
      dataSchema: [{ key: 'slug', type: 'string', description: 'One tag slug or several, comma separated' }],
      run: async (context, data) => {
        const slugs = (data.slug ?? '').split(',').map((slug) => slug.trim().toLowerCase()).filter(Boolean);
        if (slugs.length === 0) throw invalidInput('tagsList needs the slug of a tag: send data {slug: "javascript"} (several comma separated).');
        const found = [];
        for (const slug of slugs.slice(0, 15)) {
          const tag = await lookUpTag(apiOf(context), slug);
          if (tag) found.push({ id: tag.slug, name: tag.name, slug: tag.slug });
        }
        return found;
      },
    },
  ],

  async connect(context, fields) {
    const token = (fields.accessToken ?? '').trim();
    const { me } = await gql({ ...context, token }, ME, {}, z.object({ me: z.object({ id: z.string(), username: z.string(), name: z.string().nullish(), profilePicture: z.string().nullish() }) }));
    return { internalId: me.id, name: me.name?.trim() || me.username, profile: me.username, picture: me.profilePicture ?? undefined, accessToken: token };
  },

  async publish(context, item) {
    const options = settings.parse(context.settings);
    const api = apiOf(context);
    const { cover, rest } = splitCover(picturesOf(item.media, 'Hashnode'));
    const input = {
      title: options.title,
      ...(options.subtitle ? { subtitle: options.subtitle } : {}),
      publicationId: options.publication,
      contentMarkdown: markdownArticle(item.text, rest, { tables: true, lineBreak: '\\\n' }),
      tags: await tagInputs(api, options.tags),
      ...(cover ? { coverImage: cover.url } : {}),
    };
    const post = await context.step(
      'publish',
      async () => (await gql(api, PUBLISH, { input }, z.object({ publishPost: z.object({ post: z.object({ id: z.string(), slug: z.string(), url: z.string() }) }) }))).publishPost.post,
      async (attempt) => {
        // The lost post is this title published since the attempt began, told from an older post of the same title by its
        // Markdown (Hashnode keeps no marker of ours): one dated inside the clock skew before the attempt whose Markdown differs
        // may be an older post, so the item stops with "could not confirm" (providers/recovery.ts identify).
        const node = z.object({ id: z.string(), title: z.string(), url: z.string(), publishedAt: z.string(), content: z.object({ markdown: z.string() }).nullish() });
        const { publication } = await gql(api, RECENT, { id: options.publication }, z.object({ publication: z.object({ posts: edges(node) }).nullable() }));
        const candidates = (publication?.posts.edges ?? [])
          .map((edge) => edge.node)
          .filter((post) => post.title === options.title)
          .map((post) => ({ item: { id: post.id, slug: '', url: post.url }, created: post.publishedAt, whole: post.content?.markdown === input.contentMarkdown }));
        return identify(attempt, candidates, 'Hashnode', `posts titled "${options.title}"`, 'the publication');
      },
    );
    return { id: post.id, url: post.url };
  },

  // Setting the same content again is harmless: an interrupted edit is simply made again.
  async editPublished(context, ref, item) {
    const options = settings.parse(context.settings);
    const api = apiOf(context);
    const { rest } = splitCover(picturesOf(item.media, 'Hashnode'));
    const input = {
      id: ref.id,
      title: options.title,
      subtitle: options.subtitle ?? '',
      contentMarkdown: markdownArticle(item.text, rest, { tables: true, lineBreak: '\\\n' }),
      tags: await tagInputs(api, options.tags),
    };
    const post = await context.step('edit', async () => (await gql(api, UPDATE, { input }, z.object({ updatePost: z.object({ post: z.object({ id: z.string(), url: z.string() }) }) }))).updatePost.post, async () => undefined);
    return { id: post.id, url: post.url };
  },

  unchangeable: { delete: "Hashnode's API has no way to delete a post (its mutations publish, edit and manage drafts only): delete it in the Hashnode dashboard." },

  comments: (context, post) => commentsOf(context, post),

  async postAnalytics(context, post) {
    const stats = (await gql(apiOf(context), STATS, { id: post.id }, z.object({ post: z.object({ views: z.number().nullish(), reactionCount: z.number(), responseCount: z.number() }).nullable() }))).post;
    if (!stats) return [];
    return [...(stats.views == null ? [] : [currentMetric('Views', stats.views)]), currentMetric('Reactions', stats.reactionCount), currentMetric('Responses', stats.responseCount)];
  },
};

export default hashnode;
