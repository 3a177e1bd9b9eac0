// A fake WordPress site (REST API v2) on 127.0.0.1, built on startFakeServer.
//
//   const wp = await startWordPressFake();          // or { prettyPermalinks: false, role: 'author' }
//   connect fields: wp.fields()                     // { siteUrl, username, applicationPassword }
//   wp.posts / wp.media                             // what was created, as received (a test may add older posts)
//   wp.revokePassword()                              // the only application password revoked: requests become a visitor's
//   { applicationPasswords: false }                  // a site without them (not HTTPS): the index lists none, Basic is ignored
//   wp.server.requestsTo('POST', '/wp-json/wp/v2/posts'), wp.server.failNext(...)
//
// The REST API answers at /wp-json/wp/v2/<route>, and at /?rest_route=/wp/v2/<route> (the form that works without pretty
// permalinks; with `prettyPermalinks: false` /wp-json/ answers an HTML 404 page, as such sites do).
// Refused as WordPress refuses (body `{code, message, data: {status}}`):
//   HTTP Basic with an unknown user (401 invalid_username) or a wrong application password (401 incorrect_password; spaces in
//   the password are ignored, as WordPress does); no credentials: users/me 401 rest_not_logged_in, writes 401 rest_cannot_create.
//   Capabilities by role: an author cannot create pages, a contributor cannot publish nor upload (403 rest_cannot_create,
//   rest_cannot_publish). Media: no Content-Disposition filename (400 rest_upload_no_content_disposition), no bytes
//   (rest_upload_no_data), not an image type (rest_upload_sideload_error). Posts: unknown route (404 rest_no_route), empty title
//   and content (400 empty_content), unknown featured_media (400 rest_invalid_featured_media), unknown term ids or a status
//   outside publish/future/draft/pending/private (400 rest_invalid_param). Media updates (POST media/:id: post, alt_text) need
//   an existing media item (404 rest_post_invalid_id) and an existing post (400 rest_invalid_param).
//   With no application password in use (revokePassword), WordPress ignores Basic credentials, as core does
//   (WP_Application_Passwords::is_in_use): the request is a visitor's, so users/me answers 401 rest_not_logged_in and a
//   create 401 rest_cannot_create.
// Listing posts (GET /wp/v2/<type>): author, search (WP_Query's `s`: each word, case-insensitive, in the title, excerpt or
// content), after with dates_are_gmt (date_gmt after it), status (publish by default; `any` with context=edit); context=edit
// (the user's edit_posts, else 401 rest_forbidden_context) adds title.raw and content.raw, the body as stored; every context
// gives date_gmt, slug, status, author and featured_media (0 without one).
// Slugs (wp_unique_post_slug): the one sent, or one made of the title, lowercased with other characters made dashes; one
// already taken in the type gets -2, -3... appended, and the post's link is made of it.
// Updating a post (POST /wp/v2/<type>/<id>: title, content, categories, tags, the same checks as a create) and deleting one
// (DELETE: to the trash, status `trash`; 410 rest_already_trashed the second time; `force=true` deletes it for good; 404
// rest_post_invalid_id when unknown): someone else's post needs edit_others_posts / delete_others_posts (403 rest_cannot_edit,
// rest_cannot_delete), which authors and contributors lack. `wp.trashed` lists what went to the trash.
// References: developer.wordpress.org/rest-api/reference/posts/, /media/, /using-the-rest-api/authentication/ (read 2026-11).
// Types: post, page, a custom `book` in wp/v2 and a custom `event` in a plugin's own namespace (acme/v1), plus the internal ones.
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { startFakeServer } from '../helpers/fake-server.js';

type Role = 'administrator' | 'editor' | 'author' | 'contributor';

export interface WordPressFakePost {
  id: number;
  type: string;
  /** The JSON body as received. */
  body: Record<string, unknown>;
  link: string;
  author: number;
  /** When it was made, as WordPress's GMT date (`2026-11-23T10:00:00`). */
  date_gmt: string;
  /** Unique within its type (a test's older post may leave it out: then it is made of the title). */
  slug?: string;
  /** How many updates it received. */
  edits?: number;
}

export interface WordPressFakeMedia {
  id: number;
  filename: string;
  mimeType: string;
  bytes: Buffer;
  source_url: string;
  /** The attachment's `post` and `alt_text`, set by a media update. */
  post?: number;
  alt_text?: string;
}

export interface WordPressFake {
  server: FakeServer;
  url: string;
  username: string;
  password: string;
  user: { id: number; name: string; slug: string; role: Role };
  /** Replaces the application password (the old one is refused from now on, as after a revocation). */
  setPassword(password: string): void;
  /** Revokes the only application password: WordPress then treats every request as a visitor's. */
  revokePassword(): void;
  posts: WordPressFakePost[];
  /** Posts moved to the trash by a DELETE, in order (a forced delete removes the post from `posts` instead). */
  trashed: WordPressFakePost[];
  media: WordPressFakeMedia[];
  categories: { id: number; name: string; count: number }[];
  tags: { id: number; name: string; count: number }[];
  fields(): Record<string, string>;
  close(): Promise<void>;
}

interface FakeType {
  slug: string;
  name: string;
  rest_base: string;
  namespace?: string;
  taxonomies: string[];
  create: string;
  publish: string;
}

const TYPES: Record<string, FakeType> = {
  post: { slug: 'post', name: 'Posts', rest_base: 'posts', taxonomies: ['category', 'post_tag'], create: 'edit_posts', publish: 'publish_posts' },
  page: { slug: 'page', name: 'Pages', rest_base: 'pages', taxonomies: [], create: 'edit_pages', publish: 'publish_pages' },
  book: { slug: 'book', name: 'Books', rest_base: 'books', taxonomies: ['category'], create: 'edit_posts', publish: 'publish_posts' },
  // A custom type a plugin registers under its own REST namespace.
  event: { slug: 'event', name: 'Events', rest_base: 'events', namespace: 'acme/v1', taxonomies: [], create: 'edit_posts', publish: 'publish_posts' },
  attachment: { slug: 'attachment', name: 'Media', rest_base: 'media', taxonomies: [], create: 'upload_files', publish: 'upload_files' },
  wp_block: { slug: 'wp_block', name: 'Patterns', rest_base: 'blocks', taxonomies: [], create: 'edit_posts', publish: 'publish_posts' },
  nav_menu_item: { slug: 'nav_menu_item', name: 'Navigation Menu Items', rest_base: 'menu-items', taxonomies: [], create: 'edit_theme_options', publish: 'edit_theme_options' },
};

const CAPABILITIES: Record<Role, string[]> = {
  administrator: ['edit_posts', 'publish_posts', 'edit_pages', 'publish_pages', 'upload_files', 'edit_theme_options'],
  editor: ['edit_posts', 'publish_posts', 'edit_pages', 'publish_pages', 'upload_files'],
  author: ['edit_posts', 'publish_posts', 'upload_files'],
  contributor: ['edit_posts'],
};

const wpError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}): FakeReply => ({
  status,
  json: { code, message, data: { status, ...extra } },
});

export async function startWordPressFake(options: { prettyPermalinks?: boolean; role?: Role; applicationPasswords?: boolean } = {}): Promise<WordPressFake> {
  const server = await startFakeServer();
  const pretty = options.prettyPermalinks ?? true;
  const username = 'editor';
  let password = 'abcd EFGH 1234 ijkl MNOP 5678';
  let inUse = true;
  const user = { id: 7, name: 'Eddie Editor', slug: 'eddie', role: options.role ?? ('editor' as Role) };
  const posts: WordPressFakePost[] = [];
  const trashed: WordPressFakePost[] = [];
  const media: WordPressFakeMedia[] = [];
  const categories = [{ id: 3, name: 'News', count: 12 }, { id: 5, name: 'Guides', count: 4 }];
  const tags = [{ id: 11, name: 'herald', count: 2 }, { id: 12, name: 'publishing', count: 9 }];
  let nextId = 100;
  const can = (capability: string) => CAPABILITIES[user.role].includes(capability);

  /** The user of a request: 'none' without credentials, or the error reply for wrong ones. */
  function authenticate(request: RecordedRequest): 'ok' | 'none' | FakeReply {
    const header = request.headers.authorization;
    // Core ignores Basic credentials where application passwords are unavailable (no HTTPS) or none is in use.
    if (!header || !inUse || options.applicationPasswords === false) return 'none';
    if (!header.startsWith('Basic ')) return wpError(401, 'rest_not_logged_in', 'You are not currently logged in.');
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const name = decoded.slice(0, decoded.indexOf(':'));
    const secret = decoded.slice(decoded.indexOf(':') + 1);
    if (name !== username) return wpError(401, 'invalid_username', 'Unknown username. Check again or try your email address.');
    if (secret.replace(/[^a-z\d]/gi, '') !== password.replace(/[^a-z\d]/gi, '')) {
      return wpError(401, 'incorrect_password', 'The provided password is an invalid application password.');
    }
    return 'ok';
  }

  const userView = () => ({
    id: user.id,
    username,
    name: user.name,
    slug: user.slug,
    link: `${server.url}/author/${user.slug}/`,
    avatar_urls: { '24': `${server.url}/avatar-24.png`, '48': `${server.url}/avatar-48.png`, '96': `${server.url}/avatar-96.png` },
    roles: [user.role],
    capabilities: Object.fromEntries(CAPABILITIES[user.role].map((capability) => [capability, true])),
  });

  function createMedia(request: RecordedRequest): FakeReply {
    if (!can('upload_files')) return wpError(403, 'rest_cannot_create', 'Sorry, you are not allowed to upload files.');
    const disposition = String(request.headers['content-disposition'] ?? '');
    const filename = /filename="?([^";]+)"?/.exec(disposition)?.[1];
    if (!filename) return wpError(400, 'rest_upload_no_content_disposition', 'No Content-Disposition supplied.');
    if (request.body.length === 0) return wpError(400, 'rest_upload_no_data', 'No data supplied.');
    const mimeType = String(request.headers['content-type'] ?? '');
    if (!mimeType.startsWith('image/')) return wpError(500, 'rest_upload_sideload_error', 'Sorry, you are not allowed to upload this file type.');
    const item = { id: ++nextId, filename, mimeType, bytes: request.body, source_url: `${server.url}/wp-content/uploads/2026/11/${filename}` };
    media.push(item);
    return { status: 201, json: { id: item.id, type: 'attachment', media_type: 'image', mime_type: mimeType, source_url: item.source_url, link: `${server.url}/?attachment_id=${item.id}` } };
  }

  const mayChangeOthers = () => user.role === 'administrator' || user.role === 'editor';

  function updatePost(type: FakeType, id: string, request: RecordedRequest): FakeReply {
    const post = posts.find((candidate) => String(candidate.id) === id && candidate.type === type.slug && candidate.body.status !== 'trash');
    if (!post) return wpError(404, 'rest_post_invalid_id', 'Invalid post ID.');
    if (post.author !== user.id && !mayChangeOthers()) return wpError(403, 'rest_cannot_edit', 'Sorry, you are not allowed to edit this post.');
    const body = { ...post.body, ...((request.json ?? {}) as Record<string, unknown>) };
    if (!String(body.title ?? '').trim() && !String(body.content ?? '').trim()) return wpError(400, 'empty_content', 'Content, title, and excerpt are empty.');
    for (const [key, known] of [['categories', categories], ['tags', tags]] as const) {
      const ids = body[key] as unknown[] | undefined;
      if (ids !== undefined && (!Array.isArray(ids) || ids.some((termId) => !known.some((term) => term.id === termId)))) {
        return wpError(400, 'rest_invalid_param', `Invalid parameter(s): ${key}`, { params: { [key]: `${key}[0] is not a valid term id.` } });
      }
    }
    post.body = body;
    post.edits = (post.edits ?? 0) + 1;
    return { json: { id: post.id, type: type.slug, status: body.status, link: post.link, title: { raw: body.title, rendered: body.title }, author: post.author, featured_media: body.featured_media ?? 0 } };
  }

  function deletePost(type: FakeType, id: string, request: RecordedRequest): FakeReply {
    const post = posts.find((candidate) => String(candidate.id) === id && candidate.type === type.slug);
    if (!post) return wpError(404, 'rest_post_invalid_id', 'Invalid post ID.');
    if (post.author !== user.id && !mayChangeOthers()) return wpError(403, 'rest_cannot_delete', 'Sorry, you are not allowed to delete this post.');
    const previous = { id: post.id, type: type.slug, status: post.body.status, link: post.link, title: { raw: post.body.title, rendered: post.body.title } };
    if (request.query.get('force') === 'true') {
      posts.splice(posts.indexOf(post), 1);
      return { json: { deleted: true, previous } };
    }
    if (post.body.status === 'trash') return wpError(410, 'rest_already_trashed', 'The post has already been deleted.');
    post.body = { ...post.body, status: 'trash' };
    trashed.push(post);
    return { json: { ...previous, status: 'trash' } };
  }

  const slugOf = (text: string) => text.toLowerCase().replace(/<[^>]*>/g, '').replace(/&[a-z#\d]+;/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  const slugOfPost = (post: WordPressFakePost) => post.slug ?? slugOf(String(post.body.title ?? ''));
  /** wp_unique_post_slug: a slug taken in the type gets the first free suffix from -2 on. */
  function uniqueSlug(type: FakeType, wanted: string): string {
    const taken = new Set(posts.filter((post) => post.type === type.slug).map(slugOfPost));
    if (!taken.has(wanted)) return wanted;
    let suffix = 2;
    while (taken.has(`${wanted}-${suffix}`)) suffix += 1;
    return `${wanted}-${suffix}`;
  }

  function createPost(type: FakeType, request: RecordedRequest): FakeReply {
    if (!can(type.create)) return wpError(403, 'rest_cannot_create', 'Sorry, you are not allowed to create posts as this user.');
    const body = (request.json ?? {}) as Record<string, unknown>;
    const status = body.status ?? 'draft';
    if (!['publish', 'future', 'draft', 'pending', 'private'].includes(String(status))) {
      return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): status', { params: { status: 'status is not one of publish, future, draft, pending, private.' } });
    }
    if (status === 'publish' && !can(type.publish)) return wpError(403, 'rest_cannot_publish', 'Sorry, you are not allowed to publish posts in this post type.');
    if (!String(body.title ?? '').trim() && !String(body.content ?? '').trim()) return wpError(400, 'empty_content', 'Content, title, and excerpt are empty.');
    if (body.featured_media !== undefined && !media.some((item) => item.id === body.featured_media)) return wpError(400, 'rest_invalid_featured_media', 'Invalid featured media ID.');
    for (const [key, known] of [['categories', categories], ['tags', tags]] as const) {
      const ids = body[key] as unknown[] | undefined;
      if (ids !== undefined && (!Array.isArray(ids) || ids.some((id) => !known.some((term) => term.id === id)))) {
        return wpError(400, 'rest_invalid_param', `Invalid parameter(s): ${key}`, { params: { [key]: `${key}[0] is not a valid term id.` } });
      }
    }
    const id = ++nextId;
    const slug = uniqueSlug(type, slugOf(String(body.slug ?? '') || String(body.title ?? '')) || String(id));
    const link = `${server.url}/${type.slug === 'post' ? '' : `${type.slug}/`}${slug}/`;
    const date_gmt = new Date().toISOString().slice(0, 19);
    posts.push({ id, type: type.slug, body, link, slug, author: user.id, date_gmt });
    return { status: 201, json: { id, type: type.slug, status, link, title: { raw: body.title, rendered: body.title }, author: user.id, featured_media: body.featured_media ?? 0 } };
  }

  const namespaceOf = (type: { namespace?: string }) => type.namespace ?? 'wp/v2';

  function route(method: string, path: string, request: RecordedRequest): FakeReply {
    const who = authenticate(request);
    if (who !== 'ok' && who !== 'none') return who;
    if (method === 'GET' && (path === '/' || path === '')) {
      // The REST API index: core adds application-passwords to `authentication` only where they are available.
      const authentication = options.applicationPasswords === false ? [] : { 'application-passwords': { endpoints: { authorization: `${server.url}/wp-admin/authorize-application.php` } } };
      return { json: { name: 'Eddie\'s site', url: server.url, namespaces: ['wp/v2', 'acme/v1'], authentication } };
    }
    const namespace = path.startsWith('/acme/v1/') ? 'acme/v1' : 'wp/v2';
    const [resource, sub] = path.slice(namespace.length + 2).split('/');
    if (method === 'GET' && resource === 'users' && sub === 'me') return who === 'ok' ? { json: userView() } : wpError(401, 'rest_not_logged_in', 'You are not currently logged in.');
    if (method === 'GET' && resource === 'types' && !sub) {
      return { json: Object.fromEntries(Object.entries(TYPES).map(([slug, type]) => [slug, { slug: type.slug, name: type.name, rest_base: type.rest_base, taxonomies: type.taxonomies, rest_namespace: namespaceOf(type), hierarchical: slug === 'page' }])) };
    }
    if (method === 'GET' && (resource === 'categories' || resource === 'tags') && !sub) {
      const search = request.query.get('search')?.toLowerCase();
      return { json: (resource === 'categories' ? categories : tags).filter((term) => !search || term.name.toLowerCase().includes(search)) };
    }
    if (resource === 'media' && !sub && method === 'POST') return who === 'ok' ? createMedia(request) : wpError(401, 'rest_cannot_create', 'Sorry, you are not allowed to upload files.');
    if (resource === 'media' && sub && method === 'POST') {
      if (who !== 'ok') return wpError(401, 'rest_cannot_edit', 'Sorry, you are not allowed to edit this post.');
      const item = media.find((candidate) => String(candidate.id) === sub);
      if (!item) return wpError(404, 'rest_post_invalid_id', 'Invalid post ID.');
      const update = (request.json ?? {}) as { post?: unknown; alt_text?: unknown };
      if (update.post !== undefined && !posts.some((post) => post.id === update.post)) return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): post', { params: { post: 'Invalid post ID.' } });
      if (typeof update.post === 'number') item.post = update.post;
      if (typeof update.alt_text === 'string') item.alt_text = update.alt_text;
      return { json: { id: item.id, type: 'attachment', post: item.post ?? null, alt_text: item.alt_text ?? '', source_url: item.source_url } };
    }
    const type = Object.values(TYPES).find((candidate) => candidate.rest_base === resource && namespaceOf(candidate) === namespace && candidate.slug !== 'attachment');
    if (type && !sub && method === 'POST') return who === 'ok' ? createPost(type, request) : wpError(401, 'rest_cannot_create', 'Sorry, you are not allowed to create posts as this user.');
    if (type && sub && method === 'POST') return who === 'ok' ? updatePost(type, sub, request) : wpError(401, 'rest_cannot_edit', 'Sorry, you are not allowed to edit this post.');
    if (type && sub && method === 'DELETE') return who === 'ok' ? deletePost(type, sub, request) : wpError(401, 'rest_cannot_delete', 'Sorry, you are not allowed to delete this post.');
    if (type && !sub && method === 'GET') {
      if (request.query.get('context') === 'edit' && who !== 'ok') return wpError(401, 'rest_forbidden_context', 'Sorry, you are not allowed to edit posts in this post type.');
      const search = request.query.get('search') ?? '';
      const author = request.query.get('author');
      const after = request.query.get('after');
      if (after && request.query.get('dates_are_gmt') !== 'true') return wpError(400, 'fake_needs_gmt', 'This fake compares `after` with date_gmt only: send dates_are_gmt=true.');
      const statuses = (request.query.get('status') ?? 'publish').split(',');
      if (statuses.includes('any') && request.query.get('context') !== 'edit') return wpError(400, 'rest_invalid_param', 'Invalid parameter(s): status');
      const words = search.toLowerCase().split(/\s+/).filter(Boolean);
      const searched = (post: WordPressFakePost) => {
        const text = ['title', 'excerpt', 'content'].map((field) => String(post.body[field] ?? '')).join('\n').toLowerCase();
        return words.every((word) => text.includes(word));
      };
      const found = posts
        .filter((post) => post.type === type.slug && (!author || String(post.author) === author) && searched(post))
        .filter((post) => !after || post.date_gmt > after.replace(/Z$|\.\d+Z$/, '').slice(0, 19))
        .filter((post) => statuses.includes('any') || statuses.includes(String(post.body.status ?? 'draft')))
        .reverse();
      const edit = request.query.get('context') === 'edit';
      return {
        json: found.map((post) => ({
          id: post.id,
          link: post.link,
          date_gmt: post.date_gmt,
          slug: slugOfPost(post),
          status: post.body.status ?? 'draft',
          author: post.author,
          featured_media: post.body.featured_media ?? 0,
          title: { ...(edit ? { raw: post.body.title } : {}), rendered: post.body.title },
          ...(edit ? { content: { raw: post.body.content, rendered: post.body.content } } : {}),
        })),
      };
    }
    return wpError(404, 'rest_no_route', 'No route was found matching the URL and request method.');
  }

  const pretty404: FakeReply = { status: 404, headers: { 'content-type': 'text/html' }, body: '<!doctype html><title>Page not found</title>' };
  for (const method of ['GET', 'POST', 'DELETE']) {
    for (const pattern of ['/wp-json/', '/wp-json/wp/v2/*', '/wp-json/wp/v2/*/*', '/wp-json/acme/v1/*']) {
      server.on(method, pattern, (request) => (pretty ? route(method, request.path.replace(/^\/wp-json/, ''), request) : pretty404));
    }
    server.on(method, '/', (request) => {
      const restRoute = request.query.get('rest_route');
      return restRoute ? route(method, restRoute, request) : { body: '<!doctype html><title>Home</title>', headers: { 'content-type': 'text/html' } };
    });
  }

  return {
    server,
    url: server.url,
    username,
    get password() {
      return password;
    },
    user,
    setPassword(value) {
      password = value;
    },
    revokePassword() {
      inUse = false;
    },
    posts,
    trashed,
    media,
    categories,
    tags,
    fields: () => ({ siteUrl: server.url, username, applicationPassword: password }),
    close: () => server.close(),
  };
}
