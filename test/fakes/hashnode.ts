// A fake Hashnode GraphQL API (gql.hashnode.com) on 127.0.0.1, built on startFakeServer. References: apidocs.hashnode.com
// (publishPost, publication.posts with publishedAt) and github.com/Hashnode/gql-skill, read 2026-11.
//
//   const hn = await startHashnodeFake();            // hn.token is the only personal access token accepted
//   SOCIAL_ENDPOINTS={"hashnode":{"gql": hn.url}}
//   hn.posts                                         // every publishPost input as received, with the post made of it
//   hn.server.requestsTo('POST', '/')                // the operations (request.json: {query, variables})
//
// POST / takes {query, variables}. The operation is parsed and checked against the part of Hashnode's public schema written
// below, with the real type, field, argument and input names (from the schema Hashnode's starter kit generates): a field or
// argument that does not exist, a missing required argument, a selection on a scalar or none on an object answer 400
// GRAPHQL_VALIDATION_FAILED; a variable that does not fit its input type (an unknown input field, a missing required one,
// such as PublishPostInput.title) answers 400 BAD_USER_INPUT, as Apollo Server does. Then it runs:
//   me (needs the token: `Authorization: <token>` or `Bearer <token>`, else 200 with UNAUTHENTICATED), tag(slug), post(id),
//   publication(id) with posts(first), and publishPost(input) (token; the publication must be one of the user's, else
//   FORBIDDEN; at most 15 tags, each an existing id or a slug and name; the cover URL http(s), else BAD_USER_INPUT).
// Changes and comments (github.com/Hashnode/gql-skill at ebd06df, 2026-07: schema.graphql and mutations.md, read 2026-11):
//   updatePost(input: UpdatePostInput) and removePost(input: {id}) (token; the post's author only, else FORBIDDEN; a post that
//   is removed or unknown answers NOT_FOUND, also on a second removal, as mutations.md says; a removed post stays readable
//   through post(id)); Post.comments(first, after) with Comment {id, content {markdown html text}, author, dateAdded,
//   replies(first, after)}. The API has no mutation to write, hide or delete a comment.
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { startFakeServer } from '../helpers/fake-server.js';

type Fields = Record<string, { type: string; args?: Record<string, string> }>;

const OBJECTS: Record<string, Fields> = {
  Query: {
    me: { type: 'MyUser!' },
    tag: { type: 'Tag', args: { slug: 'String!' } },
    post: { type: 'Post', args: { id: 'ID!' } },
    publication: { type: 'Publication', args: { id: 'ObjectId', host: 'String' } },
  },
  Mutation: {
    publishPost: { type: 'PublishPostPayload!', args: { input: 'PublishPostInput!' } },
    updatePost: { type: 'UpdatePostPayload!', args: { input: 'UpdatePostInput!' } },
    removePost: { type: 'RemovePostPayload!', args: { input: 'RemovePostInput!' } },
  },
  UpdatePostPayload: { post: { type: 'Post' } },
  RemovePostPayload: { post: { type: 'Post' } },
  CommentConnection: { edges: { type: '[CommentEdge!]!' }, pageInfo: { type: 'PageInfo!' } },
  CommentEdge: { node: { type: 'Comment!' }, cursor: { type: 'String!' } },
  Comment: {
    id: { type: 'ID!' }, content: { type: 'Content!' }, author: { type: 'User!' }, dateAdded: { type: 'DateTime!' }, totalReactions: { type: 'Int!' },
    replies: { type: 'CommentConnection!', args: { first: 'Int!', after: 'String' } },
  },
  Content: { markdown: { type: 'String!' }, html: { type: 'String!' }, text: { type: 'String!' } },
  User: { id: { type: 'ID!' }, username: { type: 'String!' }, name: { type: 'String!' }, profilePicture: { type: 'String' } },
  MyUser: {
    id: { type: 'ID!' }, username: { type: 'String!' }, name: { type: 'String!' }, profilePicture: { type: 'String' }, tagline: { type: 'String' },
    publications: { type: 'UserPublicationsConnection!', args: { first: 'Int!', after: 'String', filter: 'UserPublicationsConnectionFilter' } },
  },
  UserPublicationsConnection: { edges: { type: '[UserPublicationsEdge!]!' }, pageInfo: { type: 'PageInfo!' }, totalDocuments: { type: 'Int!' } },
  UserPublicationsEdge: { node: { type: 'Publication!' }, cursor: { type: 'String!' } },
  Publication: {
    id: { type: 'ID!' }, title: { type: 'String!' }, displayTitle: { type: 'String' }, url: { type: 'String!' },
    posts: { type: 'PublicationPostConnection!', args: { first: 'Int!', after: 'String', filter: 'PublicationPostConnectionFilter' } },
  },
  PublicationPostConnection: { edges: { type: '[PostEdge!]!' }, pageInfo: { type: 'PageInfo!' }, totalDocuments: { type: 'Int!' } },
  PostEdge: { node: { type: 'Post!' }, cursor: { type: 'String!' } },
  Post: {
    id: { type: 'ID!' }, slug: { type: 'String!' }, url: { type: 'String!' }, title: { type: 'String!' }, subtitle: { type: 'String' }, brief: { type: 'String!' },
    views: { type: 'Int!' }, reactionCount: { type: 'Int!' }, responseCount: { type: 'Int!' }, replyCount: { type: 'Int!' }, publishedAt: { type: 'DateTime!' },
    coverImage: { type: 'PostCoverImage' }, tags: { type: '[Tag!]' },
    comments: { type: 'CommentConnection!', args: { first: 'Int!', after: 'String' } },
  },
  PostCoverImage: { url: { type: 'String!' } },
  Tag: { id: { type: 'ID!' }, name: { type: 'String!' }, slug: { type: 'String!' }, postsCount: { type: 'Int!' } },
  PublishPostPayload: { post: { type: 'Post' } },
  PageInfo: { hasNextPage: { type: 'Boolean' }, endCursor: { type: 'String' } },
};

const INPUTS: Record<string, Record<string, string>> = {
  PublishPostInput: {
    title: 'String!', subtitle: 'String', publicationId: 'ObjectId!', contentMarkdown: 'String!', publishedAt: 'DateTime', coverImageOptions: 'CoverImageOptionsInput',
    slug: 'String', originalArticleURL: 'String', tags: '[PublishPostTagInput!]!', disableComments: 'Boolean', metaTags: 'MetaTagsInput', publishAs: 'ObjectId',
    seriesId: 'ObjectId', settings: 'PublishPostSettingsInput', coAuthors: '[ObjectId!]',
  },
  PublishPostTagInput: { id: 'ObjectId', slug: 'String', name: 'String' },
  UpdatePostInput: {
    id: 'ID!', title: 'String', subtitle: 'String', contentMarkdown: 'String', coverImage: 'String', slug: 'String', tags: '[PublishPostTagInput!]', originalArticleURL: 'String',
    metaTitle: 'String', metaDescription: 'String', ogImage: 'String', disableComments: 'Boolean', isDelisted: 'Boolean', enableToc: 'Boolean', publishAs: 'ObjectId',
    coAuthors: '[ObjectId!]', seriesId: 'ObjectId', publishedAt: 'DateTime',
  },
  RemovePostInput: { id: 'ID!' },
  CoverImageOptionsInput: { coverImageURL: 'String', coverImageAttribution: 'String', coverImagePhotographer: 'String', isCoverAttributionHidden: 'Boolean', stickCoverToBottom: 'Boolean' },
  MetaTagsInput: { title: 'String', description: 'String', image: 'String' },
  PublishPostSettingsInput: { scheduled: 'Boolean', enableTableOfContent: 'Boolean', slugOverridden: 'Boolean', isNewsletterActivated: 'Boolean', delisted: 'Boolean' },
};

// ---- a small GraphQL reader: operations with variables, aliases, arguments (variables and literals) and selections.

interface Selection { alias: string; name: string; args: Record<string, unknown>; selections?: Selection[] }
interface Operation { kind: 'query' | 'mutation'; variables: Record<string, string>; selections: Selection[] }
class GraphqlError extends Error {
  constructor(message: string, readonly code: string, readonly status = 400) {
    super(message);
  }
}
const VARIABLE = Symbol('variable');

function parse(source: string): Operation {
  const tokens = source.match(/\.\.\.|[{}()[\]:!$=@]|"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|[_A-Za-z][_0-9A-Za-z]*/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected)) throw new GraphqlError(`Syntax Error: Expected "${expected ?? 'a token'}", found ${token ?? '<EOF>'}.`, 'GRAPHQL_PARSE_FAILED');
    return token;
  };
  const type = (): string => {
    let name: string;
    if (peek() === '[') {
      take('[');
      name = `[${type()}]`;
      take(']');
    } else {
      name = take();
    }
    return peek() === '!' ? `${name}${take('!')}` : name;
  };
  const value = (): unknown => {
    const token = take();
    if (token === '$') return { [VARIABLE]: take() };
    if (token === '{') {
      const object: Record<string, unknown> = {};
      while (peek() !== '}') object[take()] = (take(':'), value());
      take('}');
      return object;
    }
    if (token === '[') {
      const list = [];
      while (peek() !== ']') list.push(value());
      take(']');
      return list;
    }
    if (token.startsWith('"')) return JSON.parse(token);
    if (/^-?\d/.test(token)) return Number(token);
    return token === 'true' ? true : token === 'false' ? false : token === 'null' ? null : token;
  };
  const selectionSet = (): Selection[] => {
    take('{');
    const selections: Selection[] = [];
    while (peek() !== '}') {
      let name = take();
      let alias = name;
      if (peek() === ':') {
        take(':');
        name = take();
      }
      const args: Record<string, unknown> = {};
      if (peek() === '(') {
        take('(');
        while (peek() !== ')') args[take()] = (take(':'), value());
        take(')');
      }
      selections.push({ alias, name, args, selections: peek() === '{' ? selectionSet() : undefined });
    }
    take('}');
    return selections;
  };
  let kind: Operation['kind'] = 'query';
  const variables: Record<string, string> = {};
  if (peek() === 'query' || peek() === 'mutation') {
    kind = take() as Operation['kind'];
    if (peek() !== '(' && peek() !== '{') take();
    if (peek() === '(') {
      take('(');
      while (peek() !== ')') {
        take('$');
        const name = take();
        take(':');
        variables[name] = type();
      }
      take(')');
    }
  }
  const selections = selectionSet();
  if (at !== tokens.length) throw new GraphqlError('Syntax Error: one operation per request.', 'GRAPHQL_PARSE_FAILED');
  return { kind, variables, selections };
}

const named = (type: string) => type.replace(/[[\]!]/g, '');

/** Validates the selections against OBJECTS, the way a GraphQL server does before running anything. */
function check(selections: Selection[], typeName: string, variables: Record<string, string>): void {
  for (const selection of selections) {
    const field = OBJECTS[typeName][selection.name];
    if (!field) throw new GraphqlError(`Cannot query field "${selection.name}" on type "${typeName}".`, 'GRAPHQL_VALIDATION_FAILED');
    for (const [arg, given] of Object.entries(selection.args)) {
      const expected = field.args?.[arg];
      if (!expected) throw new GraphqlError(`Unknown argument "${arg}" on field "${typeName}.${selection.name}".`, 'GRAPHQL_VALIDATION_FAILED');
      const variable = (given as Record<symbol, string> | null)?.[VARIABLE];
      if (variable !== undefined && !variables[variable]) throw new GraphqlError(`Variable "$${variable}" is not defined.`, 'GRAPHQL_VALIDATION_FAILED');
      if (variable !== undefined && named(variables[variable]) !== named(expected)) {
        throw new GraphqlError(`Variable "$${variable}" of type "${variables[variable]}" used in position expecting type "${expected}".`, 'GRAPHQL_VALIDATION_FAILED');
      }
    }
    for (const [arg, expected] of Object.entries(field.args ?? {})) {
      if (expected.endsWith('!') && !(arg in selection.args)) {
        throw new GraphqlError(`Field "${selection.name}" argument "${arg}" of type "${expected}" is required, but it was not provided.`, 'GRAPHQL_VALIDATION_FAILED');
      }
    }
    const child = named(field.type);
    if (OBJECTS[child] && !selection.selections) throw new GraphqlError(`Field "${selection.name}" of type "${field.type}" must have a selection of subfields.`, 'GRAPHQL_VALIDATION_FAILED');
    if (!OBJECTS[child] && selection.selections) throw new GraphqlError(`Field "${selection.name}" must not have a selection since type "${field.type}" has no subfields.`, 'GRAPHQL_VALIDATION_FAILED');
    if (selection.selections) check(selection.selections, child, variables);
  }
}

/** Checks a variable's value against its input type, as variable coercion does. */
function coerce(value: unknown, type: string, path: string): void {
  if (value === undefined || value === null) {
    if (type.endsWith('!')) throw new GraphqlError(`Variable "${path}" of required type "${type}" was not provided.`, 'BAD_USER_INPUT');
    return;
  }
  const bare = type.endsWith('!') ? type.slice(0, -1) : type;
  if (bare.startsWith('[')) {
    if (!Array.isArray(value)) throw new GraphqlError(`Variable "${path}" got invalid value; expected a list.`, 'BAD_USER_INPUT');
    value.forEach((item, index) => coerce(item, bare.slice(1, -1), `${path}[${index}]`));
    return;
  }
  const input = INPUTS[bare];
  if (!input) {
    const scalar = bare === 'Int' ? typeof value === 'number' : bare === 'Boolean' ? typeof value === 'boolean' : typeof value === 'string';
    if (!scalar) throw new GraphqlError(`Variable "${path}" got invalid value ${JSON.stringify(value)}; ${bare} cannot represent it.`, 'BAD_USER_INPUT');
    return;
  }
  for (const key of Object.keys(value as object)) {
    if (!input[key]) throw new GraphqlError(`Variable "${path}" got invalid value; Field "${key}" is not defined by type "${bare}".`, 'BAD_USER_INPUT');
  }
  for (const [key, fieldType] of Object.entries(input)) {
    const field = (value as Record<string, unknown>)[key];
    if ((field === undefined || field === null) && fieldType.endsWith('!')) throw new GraphqlError(`Variable "${path}" got invalid value; Field "${key}" of required type "${fieldType}" was not provided.`, 'BAD_USER_INPUT');
    coerce(field, fieldType, `${path}.${key}`);
  }
}

/** The selected part of a resolved value; a field may be a function of its arguments. */
function project(value: unknown, selections: Selection[] | undefined, variables: Record<string, unknown>): unknown {
  if (value === null || value === undefined || !selections) return value ?? null;
  if (Array.isArray(value)) return value.map((item) => project(item, selections, variables));
  const out: Record<string, unknown> = {};
  for (const selection of selections) {
    const args = Object.fromEntries(Object.entries(selection.args).map(([key, given]) => [key, (given as Record<symbol, string> | null)?.[VARIABLE] !== undefined ? variables[(given as Record<symbol, string>)[VARIABLE]] : given]));
    const field = (value as Record<string, unknown>)[selection.name];
    out[selection.alias] = project(typeof field === 'function' ? field(args) : field, selection.selections, variables);
  }
  return out;
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
  views: number;
  reactionCount: number;
  responseCount: number;
  /** When it was published (ISO 8601); a test may add older posts. */
  publishedAt: string;
  /** The UpdatePostInputs received, in order. */
  updates?: Record<string, unknown>[];
  removed?: boolean;
  /** Written by another member: the token's user may neither update nor remove it. */
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

  const unauthenticated = () => new GraphqlError('You must be logged in to perform this action.', 'UNAUTHENTICATED', 200);
  const comments: HashnodeFakeComment[] = [];
  /** A cursor connection over `items` (the cursor is the index after the last one given). */
  const connection = <T>(items: T[], view: (item: T) => unknown) => ({ first, after }: { first: number; after?: string }) => {
    if (first > 50) throw new GraphqlError('first must be at most 50.', 'BAD_USER_INPUT', 200);
    const start = after ? Number(after) : 0;
    const page = items.slice(start, start + first);
    return { edges: page.map((item, index) => ({ node: view(item), cursor: String(start + index + 1) })), pageInfo: { hasNextPage: start + first < items.length, endCursor: String(start + page.length) } };
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
    brief: '',
    replyCount: 0,
    coverImage: null,
    tags: [],
    comments: connection(comments.filter((item) => item.postId === post.id && !item.parentId), commentView),
  });
  /** The post a change names, or why Hashnode refuses it. */
  const ownPost = (id: unknown, authorized: boolean) => {
    if (!authorized) throw unauthenticated();
    const post = posts.find((candidate) => candidate.id === id && !candidate.removed);
    if (!post) throw new GraphqlError('Post not found.', 'NOT_FOUND', 200);
    if (post.foreign) throw new GraphqlError('Only the author of the post or a publication admin can do this.', 'FORBIDDEN', 200);
    return post;
  };

  function publishPost(input: Record<string, unknown>, authorized: boolean) {
    if (!authorized) throw unauthenticated();
    const publication = publications.find((candidate) => candidate.id === input.publicationId);
    if (!publication) throw new GraphqlError('You are not allowed to publish in this publication.', 'FORBIDDEN', 200);
    const given = input.tags as Record<string, string>[];
    if (given.length > 15) throw new GraphqlError('A post can have at most 15 tags.', 'BAD_USER_INPUT', 200);
    for (const tag of given) {
      if (tag.id ? !tags.some((known) => known.id === tag.id) : !(tag.slug && tag.name)) throw new GraphqlError('Either a tag id, or its slug and name, must be given.', 'BAD_USER_INPUT', 200);
    }
    const cover = (input.coverImageOptions as { coverImageURL?: string } | undefined)?.coverImageURL;
    if (cover !== undefined && !/^https?:\/\//.test(cover)) throw new GraphqlError('Invalid cover image URL.', 'BAD_USER_INPUT', 200);
    const slug = String(input.title).toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const post: HashnodeFakePost = { id: (next++).toString(16), slug, url: `${publication.url}/${slug}`, title: String(input.title), publicationId: publication.id, input, views: 0, reactionCount: 0, responseCount: 0, publishedAt: new Date().toISOString() };
    posts.push(post);
    return { post: postView(post) };
  }

  server.on('POST', '/', (request: RecordedRequest): FakeReply => {
    const body = request.json as { query?: string; variables?: Record<string, unknown> } | undefined;
    const header = String(request.headers.authorization ?? '');
    const authorized = header === token || header === `Bearer ${token}`;
    try {
      if (typeof body?.query !== 'string') throw new GraphqlError('GraphQL operations must contain a non-empty `query`.', 'BAD_REQUEST');
      const operation = parse(body.query);
      check(operation.selections, operation.kind === 'mutation' ? 'Mutation' : 'Query', operation.variables);
      const variables = body.variables ?? {};
      for (const [name, type] of Object.entries(operation.variables)) coerce(variables[name], type, `$${name}`);
      const root = {
        me: () => {
          if (!authorized) throw unauthenticated();
          return { ...user, tagline: null, publications: () => ({ edges: publications.map((node) => ({ node: { ...node, displayTitle: null, posts: null }, cursor: node.id })), pageInfo: {}, totalDocuments: publications.length }) };
        },
        tag: ({ slug }: { slug: string }) => {
          const tag = tags.find((candidate) => candidate.slug === slug);
          return tag ? { ...tag, postsCount: 100 } : null;
        },
        post: ({ id }: { id: string }) => {
          const post = posts.find((candidate) => candidate.id === id);
          return post ? postView(post) : null;
        },
        publication: ({ id }: { id?: string }) => {
          const publication = publications.find((candidate) => candidate.id === id);
          if (!publication) return null;
          const mine = posts.filter((post) => post.publicationId === publication.id).reverse();
          return { ...publication, displayTitle: null, posts: ({ first }: { first: number }) => ({ edges: mine.slice(0, first).map((post) => ({ node: postView(post), cursor: post.id })), pageInfo: {}, totalDocuments: mine.length }) };
        },
        publishPost: ({ input }: { input: Record<string, unknown> }) => publishPost(input, authorized),
        updatePost: ({ input }: { input: Record<string, unknown> }) => {
          const post = ownPost(input.id, authorized);
          if (input.title !== undefined && !String(input.title).trim()) throw new GraphqlError('Title cannot be empty.', 'BAD_USER_INPUT', 200);
          post.updates = [...(post.updates ?? []), input];
          if (typeof input.title === 'string') post.title = input.title;
          return { post: postView(post) };
        },
        removePost: ({ input }: { input: { id: string } }) => {
          const post = ownPost(input.id, authorized);
          post.removed = true;
          return { post: postView(post) };
        },
      };
      return { json: { data: project(root, operation.selections, variables) } };
    } catch (error) {
      if (!(error instanceof GraphqlError)) throw error;
      return { status: error.status, json: { errors: [{ message: error.message, extensions: { code: error.code } }], ...(error.status === 200 ? { data: null } : {}) } };
    }
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
