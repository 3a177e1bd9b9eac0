// A fake Hashnode GraphQL API (gql-beta.hashnode.com) on 127.0.0.1, built on startFakeServer. Its contract is the schema
// Hashnode publishes (test/contracts/hashnode/schema.graphql: github.com/Hashnode/gql-skill at ebd06df, 2026-07-29, with
// SKILL.md, auth-and-roles.md, mutations.md and errors-and-limits.md read 2026-11-27).
//
//   const hn = await startHashnodeFake();            // hn.token is the only personal access token accepted
//   SOCIAL_ENDPOINTS={"hashnode":{"gql": hn.url}}
//   hn.posts                                         // every publishPost input as received, with the post made of it
//   hn.server.requestsTo('POST', '/')                // the operations (request.json: {query, variables})
//
// POST / takes {query, variables} (at most 100 KB, else 413). graphql-js parses the operation and validates it against the
// schema (an unknown field, argument, type or mutation, a missing argument or selection: 400 GRAPHQL_VALIDATION_FAILED;
// deeper than 10 levels: the same), then coerces the variables to their input types (an input field not in the schema or
// a missing required one, an ObjectId that is not 24 hex digits: 400 BAD_USER_INPUT), as Apollo Server does. Then it runs:
//   me (needs the token: `Authorization: Bearer <token>`, the prefix optional and case-insensitive, else 200 with
//   UNAUTHENTICATED), tag(slug), post(id), publication(id) with posts(first, after), publishPost(input) (token; the
//   publication must be one of the user's, else FORBIDDEN; at most 15 tags, each a slug, an unknown slug made a new tag;
//   coverImage an http(s) URL, else BAD_USER_INPUT) and updatePost(input) (the post's author only, else FORBIDDEN; an unknown
//   post NOT_FOUND); Post.content (its markdown as received, the last update's once updated); Post.comments(first, after)
//   with each Comment's replies(first, after). Page sizes above 100 are clamped,
//   not refused. The API has no mutation to delete a post, nor to write, hide or delete a comment (mutations.md: all 9).
import fs from 'node:fs';
import { buildSchema, executeSync, GraphQLError, GraphQLScalarType, Kind, parse, validate, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from 'graphql';
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { startFakeServer } from '../helpers/fake-server.js';

class GraphqlError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

let contract: GraphQLSchema | undefined;

/** Hashnode's schema, read once; its ObjectId scalar refuses what is not 24 hex digits, as Hashnode's does. */
function schema(): GraphQLSchema {
  if (contract) return contract;
  contract = buildSchema(fs.readFileSync(new URL('../contracts/hashnode/schema.graphql', import.meta.url), 'utf8'));
  const objectId = contract.getType('ObjectId') as GraphQLScalarType;
  objectId.parseValue = (value: unknown) => {
    if (typeof value !== 'string' || !/^[0-9a-f]{24}$/i.test(value)) throw new GraphQLError(`Invalid ObjectId: ${JSON.stringify(value)}`);
    return value;
  };
  return contract;
}

/** How deep the operation's selections go (errors-and-limits.md: at most 10). */
function depth(set: SelectionSetNode | undefined, document: DocumentNode): number {
  if (!set) return 0;
  let deepest = 0;
  for (const selection of set.selections) {
    const inner = selection.kind === Kind.FRAGMENT_SPREAD
      ? document.definitions.find((definition) => definition.kind === Kind.FRAGMENT_DEFINITION && definition.name.value === selection.name.value)
      : selection;
    deepest = Math.max(deepest, depth(inner && 'selectionSet' in inner ? inner.selectionSet : undefined, document));
  }
  return deepest + 1;
}

const refusal = (status: number, code: string, errors: readonly { message: string }[]): FakeReply => ({
  status,
  json: { errors: errors.map(({ message }) => ({ message, extensions: { code } })) },
});

/** Runs one request as Apollo Server in front of Hashnode's schema would, with `root` resolving the fields. */
function run(request: RecordedRequest, root: Record<string, unknown>): FakeReply {
  if (request.body.length > 100_000) return { status: 413, body: 'request entity too large' };
  const body = request.json as { query?: unknown; variables?: Record<string, unknown> } | undefined;
  if (typeof body?.query !== 'string' || !body.query.trim()) return refusal(400, 'BAD_REQUEST', [{ message: 'GraphQL operations must contain a non-empty `query`.' }]);
  let document: DocumentNode;
  try {
    document = parse(body.query);
  } catch (error) {
    return refusal(400, 'GRAPHQL_PARSE_FAILED', [error as GraphQLError]);
  }
  const invalid = validate(schema(), document);
  if (invalid.length > 0) return refusal(400, 'GRAPHQL_VALIDATION_FAILED', invalid);
  const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  if (operation && depth(operation.selectionSet, document) > 10) return refusal(400, 'GRAPHQL_VALIDATION_FAILED', [{ message: 'Query depth exceeds the maximum of 10.' }]);
  const result = executeSync({ schema: schema(), document, rootValue: root, variableValues: body.variables ?? {} });
  // Variables that do not fit their types stop the request before anything runs: no data, 400 BAD_USER_INPUT.
  if (!('data' in result) || result.data === undefined) return refusal(400, 'BAD_USER_INPUT', result.errors ?? []);
  if (!result.errors?.length) return { json: { data: result.data } };
  const errors = result.errors.map((error) => {
    const original = error.originalError;
    const code = original instanceof GraphqlError ? original.code : original instanceof GraphQLError ? 'BAD_USER_INPUT' : 'INTERNAL_SERVER_ERROR';
    return { message: error.message, path: error.path, extensions: { code } };
  });
  return { json: { errors, data: result.data } };
}

// ---- the fake

export interface HashnodeFakePost {
  id: string;
  slug: string;
  url: string;
  title: string;
  publicationId: string;
  /** The PublishPostInput as received. */
  input: Record<string, unknown>;
  views: number | null;
  reactionCount: number;
  responseCount: number;
  /** When it was published (ISO 8601); a test may add older posts. */
  publishedAt: string;
  /** The UpdatePostInputs received, in order. */
  updates?: Record<string, unknown>[];
  /** Written by another member: the token's user may not update it. */
  foreign?: boolean;
}

export interface HashnodeFakeComment {
  id: string;
  postId: string;
  parentId?: string;
  text: string;
  author: { id: string; username: string; name: string };
  dateAdded: string;
}

export interface HashnodeFake {
  server: FakeServer;
  url: string;
  token: string;
  user: { id: string; username: string; name: string; profilePicture: string };
  publications: { id: string; title: string; url: string }[];
  tags: { id: string; name: string; slug: string }[];
  posts: HashnodeFakePost[];
  comments: HashnodeFakeComment[];
  /** A comment by someone (Ann by default) on a post, or a reply under a comment (`parentId`). */
  addComment(postId: string, text: string, options?: { parentId?: string; author?: HashnodeFakeComment['author']; secondsAgo?: number }): HashnodeFakeComment;
  close(): Promise<void>;
}

export async function startHashnodeFake(): Promise<HashnodeFake> {
  const server = await startFakeServer();
  const token = 'hn-pat-6f1e2d3c-4b5a';
  const user = { id: '64a1f0c2e4b0a1b2c3d4e5f6', username: 'heraldwriter', name: 'Herald Writer', profilePicture: `${server.url}/avatar.png` };
  const publications = [{ id: '64a1f0c2e4b0a1b2c3d4e5aa', title: 'Herald Blog', url: 'https://blog.herald.example' }];
  const tags = [
    { id: '56744721958ef13879b94cad', name: 'JavaScript', slug: 'javascript' },
    { id: '56744723958ef13879b9549b', name: 'Web Development', slug: 'web-development' },
  ];
  const posts: HashnodeFakePost[] = [];
  let next = 0x6a603fb103e2cb323e7851f0n;

  const unauthenticated = () => new GraphqlError('You must be logged in to perform this action.', 'UNAUTHENTICATED');
  const comments: HashnodeFakeComment[] = [];
  /** A cursor connection over `items` (the cursor is the index after the last one given). */
  const connection = <T>(items: T[], view: (item: T) => unknown) => ({ first, after }: { first: number; after?: string | null }) => {
    const size = Math.min(first, 100); // errors-and-limits.md: clamped, not refused
    const start = after ? Number(after) : 0;
    const page = items.slice(start, start + size);
    return { edges: page.map((item, index) => ({ node: view(item), cursor: String(start + index + 1) })), pageInfo: { hasNextPage: start + size < items.length, endCursor: String(start + page.length) }, totalDocuments: items.length };
  };
  const commentView = (comment: HashnodeFakeComment): unknown => ({
    id: comment.id,
    content: { markdown: comment.text, html: `<p>${comment.text}</p>`, text: comment.text },
    author: { ...comment.author, profilePicture: null },
    dateAdded: comment.dateAdded,
    totalReactions: 0,
    replies: connection(comments.filter((item) => item.parentId === comment.id), commentView),
  });
  const postView = (post: HashnodeFakePost) => ({
    ...post,
    // The Markdown as received (the last update's, once updated); html and text are rough renderings of it.
    content: contentOf(String([...(post.updates ?? [])].reverse().find((update) => typeof update.contentMarkdown === 'string')?.contentMarkdown ?? post.input.contentMarkdown ?? '')),
    brief: '',
    replyCount: 0,
    readTimeInMinutes: 1,
    coverImage: typeof post.input.coverImage === 'string' ? { url: post.input.coverImage } : null,
    tags: ((post.input.tags ?? []) as { slug: string }[]).map(({ slug }) => tags.find((tag) => tag.slug === slug)).filter(Boolean).map((tag) => ({ ...tag, postsCount: 100, followersCount: 0 })),
    comments: connection(comments.filter((item) => item.postId === post.id && !item.parentId), commentView),
  });
  /** Post.content (Content!: markdown, html and text). */
  function contentOf(markdown: string) {
    return { markdown, html: `<p>${markdown}</p>`, text: markdown };
  }
  /** The post a change names, or why Hashnode refuses it. */
  const ownPost = (id: unknown, authorized: boolean) => {
    if (!authorized) throw unauthenticated();
    const post = posts.find((candidate) => candidate.id === id);
    if (!post) throw new GraphqlError('Post not found.', 'NOT_FOUND');
    if (post.foreign) throw new GraphqlError('Only the author of the post or a publication admin can do this.', 'FORBIDDEN');
    return post;
  };

  /** Tags as PublishPostTagInput ({slug, name?}): at most 15; an unknown slug becomes a new tag (mutations.md). */
  function tagsOf(given: { slug: string; name?: string | null }[] | undefined | null) {
    if (!given) return;
    if (given.length > 15) throw new GraphqlError('A post can have at most 15 tags.', 'BAD_USER_INPUT');
    for (const tag of given) {
      if (!/^[a-z0-9-]+$/.test(tag.slug)) throw new GraphqlError(`Invalid tag slug "${tag.slug}".`, 'BAD_USER_INPUT');
      if (!tags.some((known) => known.slug === tag.slug)) tags.push({ id: (next++).toString(16), slug: tag.slug, name: tag.name ?? tag.slug });
    }
  }

  function publishPost(input: Record<string, unknown>, received: Record<string, unknown>, authorized: boolean) {
    if (!authorized) throw unauthenticated();
    const publication = publications.find((candidate) => candidate.id === input.publicationId);
    if (!publication) throw new GraphqlError('You are not allowed to publish in this publication.', 'FORBIDDEN');
    tagsOf(input.tags as { slug: string }[] | undefined);
    if (input.coverImage != null && !/^https?:\/\//.test(String(input.coverImage))) throw new GraphqlError('Invalid cover image URL.', 'BAD_USER_INPUT');
    const slug = String(input.title).toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const post: HashnodeFakePost = { id: (next++).toString(16), slug, url: `${publication.url}/${slug}`, title: String(input.title), publicationId: publication.id, input: received, views: 0, reactionCount: 0, responseCount: 0, publishedAt: new Date().toISOString() };
    posts.push(post);
    return { post: postView(post) };
  }

  server.on('POST', '/', (request: RecordedRequest): FakeReply => {
    const variables = ((request.json as { variables?: Record<string, unknown> } | undefined)?.variables ?? {}) as Record<string, Record<string, unknown>>;
    const authorized = String(request.headers.authorization ?? '').replace(/^bearer /i, '') === token;
    return run(request, {
      me: () => {
        if (!authorized) throw unauthenticated();
        return { ...user, email: 'writer@herald.example', badges: [], publications: connection(publications, (node) => ({ ...node, displayTitle: null })) };
      },
      tag: ({ slug }: { slug: string }) => {
        const tag = tags.find((candidate) => candidate.slug === slug);
        return tag ? { ...tag, postsCount: 100, followersCount: 0 } : null;
      },
      post: ({ id }: { id: string }) => {
        const post = posts.find((candidate) => candidate.id === id);
        return post ? postView(post) : null;
      },
      publication: ({ id }: { id?: string }) => {
        const publication = publications.find((candidate) => candidate.id === id);
        if (!publication) return null;
        const mine = posts.filter((post) => post.publicationId === publication.id).reverse();
        return { ...publication, displayTitle: null, posts: connection(mine, postView) };
      },
      publishPost: ({ input }: { input: Record<string, unknown> }) => publishPost(input, variables.input ?? input, authorized),
      updatePost: ({ input }: { input: Record<string, unknown> }) => {
        const post = ownPost(input.id, authorized);
        if (input.title != null && !String(input.title).trim()) throw new GraphqlError('Title cannot be empty.', 'BAD_USER_INPUT');
        tagsOf(input.tags as { slug: string }[] | undefined);
        post.updates = [...(post.updates ?? []), variables.input ?? input];
        if (typeof input.title === 'string') post.title = input.title;
        return { post: postView(post) };
      },
    });
  });

  let nextComment = 0;
  const addComment: HashnodeFake['addComment'] = (postId, text, options = {}) => {
    const comment: HashnodeFakeComment = {
      id: `65c0ffee00000000000000${(nextComment++).toString(16).padStart(2, '0')}`,
      postId,
      parentId: options.parentId,
      text,
      author: options.author ?? { id: '64b000000000000000000a11', username: 'ann', name: 'Ann' },
      dateAdded: new Date(Date.now() - (options.secondsAgo ?? 0) * 1000).toISOString(),
    };
    comments.push(comment);
    return comment;
  };
  return { server, url: server.url, token, user, publications, tags, posts, comments, addComment, close: () => server.close() };
}
