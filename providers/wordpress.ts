// WordPress: HTML posts (or pages, or any custom post type the site exposes) on the user's own site, over the REST API
// with an application password (HTTP Basic). Pictures are uploaded to the media library: the first becomes the featured
// image, the others follow the text with their library URL. The post is created as `publish` when Herald's job runs.
// References: https://developer.wordpress.org/rest-api/reference/posts/#create-a-post (also pages and custom types by
// their rest_base), .../reference/media/#create-a-media-item, .../reference/post-types/, .../reference/categories/,
// .../reference/tags/, .../reference/users/#retrieve-a-user-2 (users/me), .../using-the-rest-api/authentication/
// (application passwords), .../using-the-rest-api/discovery/ (`?rest_route=` on sites without pretty permalinks),
// .../reference/media/#update-a-media-item (`post` attaches an upload to its post), .../reference/posts/#list-posts
// (`after` with `dates_are_gmt`, `status`), all read 2026-11. WordPress core source (wp-includes/user.php
// wp_authenticate_application_password, rest-api.php rest_application_password_check_errors, class-wp-rest-posts-controller
// rest_authorization_required_code): a request without usable credentials is answered as a visitor's (401 rest_not_logged_in,
// 401 rest_cannot_create), which is how a site treats a revoked password once no application password is in use.
// What the site would run (issue 21): the REST `title` is stored and shown as raw HTML, so it is sent escaped; shortcodes run
// wherever a `[` is in the content, so brackets are sent as entities (src/lib/article-content.ts).
// Changing what went out (read 2026-11-27): .../reference/posts/#update-a-post (POST /wp/v2/<rest_base>/<id>: title, content,
// categories, tags; the featured image stays) and .../reference/posts/#delete-a-post (DELETE moves it to the trash, where
// WordPress keeps it 30 days; 410 rest_already_trashed when it is there already; `force=true` only for a type without trash,
// 501 rest_trash_not_supported). The pictures that follow the text are kept at publishing (`meta.pictures`) to write them again.
// A create of unknown outcome (issue 31; read 2026-12-02): .../reference/posts/#schema (`content.raw`, "as it exists in the
// database", and `title.raw` are given in the edit context only; `featured_media`) and .../reference/posts/#list-posts
// (`search`, `author`, `after` with `dates_are_gmt`, `status=any`, `context`); core source class-wp-rest-posts-controller.php
// (get_items_permissions_check: context=edit needs the user's edit_posts, else 401 rest_forbidden_context). The post is
// identified by its whole content as stored (findPost), never by its title alone.
import { z } from 'zod';
import { PlatformHttpError, type PlatformHttpErrorInit, type PlatformRequest } from '../src/lib/platform-http.js';
import type { ConnectContext, MediaFile, Provider, ProviderContext, StepAttempt } from './types.js';
import { basicAuth, noVideo, permanent, tagsSchema } from './shared.js';
import { escapeHtml } from '../src/lib/content.js';
import { withoutShortcodes } from '../src/lib/article-content.js';
import { fileNameOf, htmlArticle, normalizeBaseUrl, picturesOf, saidIn, splitCover, valuesOf } from './articles/common.js';
import { identify, recoveryWindowStart } from './recovery.js';

const keptPictures = z.array(z.object({ id: z.number(), url: z.string(), alt: z.string() }));

const settings = z.object({
  title: z.string().trim().min(1, 'WordPress needs a title for the post').describe('Title of the post'),
  type: z.string().trim().min(1).describe('Post type from postTypes: post, page or a custom type of the site'),
  categories: tagsSchema.optional().describe('Categories from categoriesList, as [{value: id, label: name}] (post types with categories only)'),
  tags: tagsSchema.optional().describe('Tags from tagsList, as [{value: id, label: name}] (post types with tags only)'),
});
type Settings = z.infer<typeof settings>;

const userSchema = z.object({
  id: z.number(),
  name: z.string(),
  slug: z.string(),
  avatar_urls: z.record(z.string(), z.string()).optional(),
  roles: z.array(z.string()).optional(),
  capabilities: z.record(z.string(), z.boolean()).optional(),
});
const typeSchema = z.object({ slug: z.string(), name: z.string(), rest_base: z.string(), rest_namespace: z.string().default('wp/v2'), taxonomies: z.array(z.string()).default([]) });
const termSchema = z.array(z.object({ id: z.number(), name: z.string(), count: z.number().optional() }));
const mediaSchema = z.object({ id: z.number(), source_url: z.string() });
const postSchema = z.object({ id: z.number(), link: z.string() });
const editPostsSchema = z.array(
  z.object({
    id: z.number(),
    link: z.string(),
    date_gmt: z.string().nullish(),
    title: z.object({ raw: z.string().optional() }),
    content: z.object({ raw: z.string().optional() }).optional(),
    featured_media: z.number().optional(),
  }),
);

/** Types that are not content a post can be: media, blocks, templates, navigation, fonts. */
const internalType = (slug: string) => slug === 'attachment' || slug.startsWith('wp_') || slug.startsWith('nav_');

const CREDENTIAL_CODES: Record<string, string> = {
  incorrect_password: 'the application password was refused: create one in Users, Profile, Application Passwords (the login password does not work here) and reconnect the channel',
  invalid_username: 'WordPress knows no user by that name: use the login name (or email) of the account that created the application password',
  invalid_email: 'WordPress knows no user with that email: use the login name of the account that created the application password',
  application_passwords_disabled: 'application passwords are turned off on this site: turn them on (a security plugin or the site settings disable them), then reconnect',
  application_passwords_disabled_for_user: 'application passwords are turned off for this user: allow them for the account, then reconnect',
  // Stock WordPress answers a visitor's request so when the credentials were not taken for an application password: a login
  // password, a revoked application password, a password of another user.
  rest_not_logged_in:
    'WordPress did not accept the user name and application password: use an application password of this user, created in Users, Profile, Application Passwords (the login password does not work here), and reconnect',
};

/** WordPress's error body `{code, message, data: {status}}` made into words naming the fix. */
function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  let code: string | undefined;
  try {
    code = (JSON.parse(body) as { code?: string }).code;
  } catch {
    if (status === 404) return { retryable: false, message: `the site answered a page, not the REST API (HTTP 404): check the site URL, and that /wp-json/ is not blocked` };
  }
  const said = saidIn(status, body);
  if (code && CREDENTIAL_CODES[code]) return { status: 401, retryable: false, message: `${CREDENTIAL_CODES[code]} (${code})` };
  if (code && (code.startsWith('rest_cannot_') || code === 'rest_forbidden') && status === 401) {
    // WordPress answers 401 (not 403) when the request is a visitor's: the application password is no longer taken.
    return {
      status: 401,
      retryable: false,
      message: `WordPress no longer accepts the application password (${said}, ${code}): it was revoked or changed; create a new one in Users, Profile, Application Passwords and reconnect the channel`,
    };
  }
  if (code && (code.startsWith('rest_cannot_') || code === 'rest_forbidden')) {
    return {
      status: 403,
      retryable: false,
      message: `the WordPress user may not do this: ${said}, ${code}. Give the user a role that can publish this post type and upload files (an Author publishes posts; pages need an Editor or Administrator)`,
    };
  }
  if (code === 'rest_no_route') return { retryable: false, message: `the site has no such REST route (${code}): check the site URL and the post type (postTypes lists them)` };
  return { message: code ? `${said}, ${code}` : said };
}

interface Site {
  fetch: ConnectContext['fetch'];
  root: string;
  username: string;
  password: string;
}

const siteOf = (context: ProviderContext): Site => ({
  fetch: context.fetch,
  root: context.auth.data.restRoot,
  username: context.auth.data.username,
  password: context.auth.accessToken,
});

/** A call to `route` under the REST namespace (wp/v2, or the one a custom post type is registered in). */
async function wp<T>(site: Site, route: string, request: Omit<PlatformRequest<T>, 'url' | 'classify'> = {}, namespace = 'wp/v2'): Promise<T> {
  const response = await site.fetch<T>({ ...request, url: `${site.root}/${namespace}/${route}`, headers: { authorization: basicAuth(site.username, site.password), ...request.headers }, classify });
  return response.data;
}

async function postType(site: Site, wanted: string) {
  const types = await wp(site, 'types', { schema: z.record(z.string(), typeSchema) });
  const found = Object.values(types).find((type) => !internalType(type.slug) && (type.slug === wanted || type.rest_base === wanted));
  if (!found) throw permanent(`the site has no post type "${wanted}": choose one from postTypes (${Object.values(types).filter((type) => !internalType(type.slug)).map((type) => type.slug).join(', ')})`);
  return found;
}

function termIds(entries: Settings['categories'], what: string, helper: string): number[] | undefined {
  const values = valuesOf(entries);
  if (values.length === 0) return undefined;
  const wrong = values.find((value) => !/^\d+$/.test(value));
  if (wrong) throw permanent(`the ${what} "${wrong}" is not an id: use the ids that ${helper} answers`);
  return values.map(Number);
}

async function upload(site: Site, file: MediaFile, index: number) {
  const { bytes, mimeType } = await file.load();
  const filename = fileNameOf(file, mimeType, index);
  const media = await wp(site, 'media', {
    method: 'POST',
    body: bytes,
    headers: { 'content-type': mimeType, 'content-disposition': `attachment; filename="${filename.replace(/"/g, '')}"` },
    schema: mediaSchema,
    timeoutMs: 120_000,
  });
  return { id: media.id, url: media.source_url, alt: file.alt ?? '' };
}

/**
 * The post a create of unknown outcome made (DESIGN.md §9 "Recovery identifies exactly one item"): by this user, titled as
 * sent, dated since the attempt began (less the clock skew), and identified by its whole content as WordPress stores it
 * (`content.raw`, read with context=edit and the credentials) and its featured image. WordPress keeps no marker of Herald's
 * that stock sites expose (post meta is listed only when a plugin registers it), so the content is what only this post
 * carries. A post of the same title whose content differs is never taken for it: dated since the attempt began it is this
 * one as WordPress filtered it (kses for users without unfiltered_html), dated just before it (inside the skew allowance)
 * it may be an older one, and the item stops with "could not confirm". No post of this title in the window: none was made.
 */
async function findPost(site: Site, type: z.infer<typeof typeSchema>, authorId: string, sent: { title: string; content: string; featured_media?: number }, attempt: StepAttempt) {
  const since = recoveryWindowStart(attempt.startedAt);
  const query = { author: authorId, search: sent.title, after: since.toISOString(), dates_are_gmt: true, status: 'any', context: 'edit', per_page: 20, orderby: 'date', order: 'desc' };
  const posts = await wp(site, type.rest_base, { query, schema: editPostsSchema }, type.rest_namespace);
  const candidates = posts
    .filter((post) => post.title.raw === sent.title)
    .map((post) => ({
      item: { id: post.id, link: post.link },
      created: post.date_gmt ? `${post.date_gmt}Z` : undefined,
      whole: post.content?.raw === sent.content && (post.featured_media ?? 0) === (sent.featured_media ?? 0),
    }));
  return identify(attempt, candidates, 'WordPress', `posts titled "${sent.title}"`, 'the site');
}

/** Attaches the uploads to their post (`post` on the media item), with their alt text; the post is out already, so a refusal is a warning. */
async function attach(site: Site, uploads: { id: number; alt: string }[], postId: number): Promise<string[]> {
  try {
    for (const media of uploads) {
      await wp(site, `media/${media.id}`, { method: 'POST', json: { post: postId, ...(media.alt ? { alt_text: media.alt } : {}) }, schema: z.object({ id: z.number() }) });
    }
    return [];
  } catch (error) {
    if (!(error instanceof PlatformHttpError) || error.retryable) throw error;
    return [`WordPress published the post but did not attach its pictures to it in the media library: ${error.message}`];
  }
}

async function terms(context: ProviderContext, taxonomy: 'categories' | 'tags', data: Record<string, string>) {
  const list = await wp(siteOf(context), taxonomy, { query: { per_page: 100, search: data.search || undefined, orderby: 'count', order: 'desc' }, schema: termSchema });
  return list.map((term) => ({ id: String(term.id), name: term.name }));
}

/** Whether the REST API index announces application passwords (core lists them only where they are available). */
async function offersApplicationPasswords(site: Site): Promise<boolean> {
  const index = await site.fetch({ url: `${site.root}/`, schema: z.object({ authentication: z.record(z.string(), z.unknown()).or(z.array(z.unknown())).optional() }), classify }).catch(() => undefined);
  const authentication = index?.data.authentication;
  // Unreadable index: nothing shows they are off, so the credentials are what the person checks.
  return !index || (authentication !== undefined && !Array.isArray(authentication) && 'application-passwords' in authentication);
}

async function me(site: Site) {
  return wp(site, 'users/me', { query: { context: 'edit' }, schema: userSchema });
}

const wordpress: Provider = {
  identifier: 'wordpress',
  name: 'WordPress',
  editor: 'html',
  article: true,
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'siteUrl', label: 'Site URL', type: 'url', required: true, description: 'The address of the site, e.g. https://blog.example.com' },
      { key: 'username', label: 'Username', type: 'text', required: true },
      {
        key: 'applicationPassword',
        label: 'Application password',
        type: 'password',
        required: true,
        description: 'Created in Users, Profile, Application Passwords (not the login password).',
      },
    ],
  },
  // The site is the user's own: its URL comes from the connect form.
  endpoints: {},
  // As the connect form's refusal of a wrong password says (CREDENTIAL_CODES).
  revokedCredentials:
    'WordPress no longer accepts its application password (it was revoked or changed): create a new application password for this WordPress user in Users, Profile, Application Passwords (the login password does not work here) and reconnect the channel with it',
  maxLength: () => 100000,
  rules:
    'An article (Markdown, or HTML with headings h1–h6, emphasis, ordered and nested lists, quotes, code blocks, tables and pictures) published at once on the site, with a required title and post type (post, page or a custom type, from postTypes); ' +
    'categories and tags (ids from categoriesList and tagsList) for types that have them. Pictures are uploaded to the media library: ' +
    'the first becomes the featured image, the others follow the text. No video, one item (no comments). The user needs a role that can publish (Author or above). The title and text show as written: HTML tags and [shortcodes] in them are not run.',
  settings,
  chain: 'none',
  mediaByUrl: false,
  recordsSteps: true,
  validate: (items) => noVideo(items, 'WordPress'),
  tools: [
    {
      methodName: 'postTypes',
      description: 'Lists the post types of the site (post, page and custom types): use the id as the type setting.',
      dataSchema: [],
      run: async (context) => {
        const types = await wp(siteOf(context), 'types', { schema: z.record(z.string(), typeSchema) });
        return Object.values(types).filter((type) => !internalType(type.slug)).map((type) => ({ id: type.slug, name: type.name }));
      },
    },
    {
      methodName: 'categoriesList',
      description: 'Lists the categories of the site (100 most used, or those matching search): use the ids in the categories setting.',
      dataSchema: [{ key: 'search', type: 'string', description: 'Part of a category name (optional)' }],
      run: (context, data) => terms(context, 'categories', data),
    },
    {
      methodName: 'tagsList',
      description: 'Lists the tags of the site (100 most used, or those matching search): use the ids in the tags setting.',
      dataSchema: [{ key: 'search', type: 'string', description: 'Part of a tag name (optional)' }],
      run: (context, data) => terms(context, 'tags', data),
    },
  ],

  async connect(context, fields) {
    const siteUrl = normalizeBaseUrl(fields.siteUrl ?? '');
    const credentials = { fetch: context.fetch, username: (fields.username ?? '').trim(), password: fields.applicationPassword ?? '' };
    let site: Site = { ...credentials, root: `${siteUrl}/wp-json` };
    let user: z.infer<typeof userSchema>;
    try {
      try {
        user = await me(site);
      } catch (error) {
        // Sites without pretty permalinks answer /wp-json/ with a page; their REST API lives at ?rest_route=.
        if (!(error instanceof PlatformHttpError) || error.status !== 404 || /"code"/.test(error.bodyExcerpt)) throw error;
        site = { ...credentials, root: `${siteUrl}/?rest_route=` };
        user = await me(site);
      }
    } catch (error) {
      if (error instanceof PlatformHttpError && /"rest_not_logged_in"/.test(error.bodyExcerpt) && !(await offersApplicationPasswords(site))) {
        throw permanent(
          'this site does not offer application passwords (its REST API index lists no application-passwords authentication): WordPress offers them only on sites served over HTTPS (or set up as a local environment), and a plugin can turn them off; serve the site over HTTPS or turn them on, then create one in Users, Profile, Application Passwords',
          401,
        );
      }
      throw error;
    }
    if (user.capabilities && user.capabilities.publish_posts !== true) {
      const role = user.roles?.join(', ') || 'no role';
      throw permanent(`the user "${user.slug}" (${role}) cannot publish posts: give the account the Author, Editor or Administrator role, then connect again`, 403);
    }
    return {
      internalId: `${user.id}@${siteUrl}`,
      name: user.name,
      profile: user.slug,
      picture: user.avatar_urls?.['96'] ?? Object.values(user.avatar_urls ?? {}).at(-1),
      accessToken: credentials.password,
      data: { siteUrl, restRoot: site.root, username: credentials.username, userId: String(user.id) },
    };
  },

  async publish(context, item) {
    const options = settings.parse(context.settings);
    const site = siteOf(context);
    const type = await postType(site, options.type);
    const categories = termIds(options.categories, 'category', 'categoriesList');
    const tags = termIds(options.tags, 'tag', 'tagsList');
    if (categories && !type.taxonomies.includes('category')) throw permanent(`the post type "${type.slug}" has no categories: remove them from the settings`);
    if (tags && !type.taxonomies.includes('post_tag')) throw permanent(`the post type "${type.slug}" has no tags: remove them from the settings`);
    const uploaded = [];
    for (const [index, file] of picturesOf(item.media, 'WordPress').entries()) {
      // A lost upload answer is uploaded again: the worst left behind is an unused copy in the media library.
      uploaded.push(await context.step(`upload:${index}`, () => upload(site, file, index), async () => undefined));
    }
    const { cover, rest } = splitCover(uploaded);
    // The title is stored and shown as raw HTML: sent as text, brackets included (shortcodes stay inert wherever a theme runs them).
    const title = withoutShortcodes(escapeHtml(options.title));
    const content = withoutShortcodes(htmlArticle(item.text, rest));
    const post = await context.step(
      'post',
      () =>
        wp(
          site,
          type.rest_base,
          { method: 'POST', json: { title, content, status: 'publish', featured_media: cover?.id, categories, tags }, schema: postSchema },
          type.rest_namespace,
        ),
      (attempt) => findPost(site, type, context.auth.data.userId, { title, content, featured_media: cover?.id }, attempt),
    );
    const warnings = await attach(site, uploaded, post.id);
    return { id: String(post.id), url: post.link, ...(rest.length ? { meta: { pictures: JSON.stringify(rest) } } : {}), ...(warnings.length ? { warnings } : {}) };
  },

  // The title, text, categories and tags are updated in place; the post type of a published post cannot change.
  editProblem: (before, after) =>
    (before.type ?? 'post') !== (after.type ?? 'post') ? `the post type of a published WordPress post cannot change (it is "${String(before.type ?? 'post')}").` : undefined,

  async editPublished(context, ref, item) {
    const options = settings.parse(context.settings);
    const site = siteOf(context);
    const type = await postType(site, options.type);
    const categories = termIds(options.categories, 'category', 'categoriesList');
    const tags = termIds(options.tags, 'tag', 'tagsList');
    if (item.media.length > 1 && !ref.meta?.pictures) {
      throw permanent('this post went out before Herald kept the addresses of its pictures, so its text cannot be written again with them: edit it in WordPress');
    }
    const pictures = ref.meta?.pictures ? keptPictures.parse(JSON.parse(ref.meta.pictures)) : [];
    const body = { title: withoutShortcodes(escapeHtml(options.title)), content: withoutShortcodes(htmlArticle(item.text, pictures)), categories, tags };
    // Writing the same title and text again is harmless: a lost answer is simply repeated.
    const post = await context.step('edit', () => wp(site, `${type.rest_base}/${encodeURIComponent(ref.id)}`, { method: 'POST', json: body, schema: postSchema }, type.rest_namespace));
    return { id: ref.id, url: post.link, meta: ref.meta };
  },

  async deletePublished(context, ref) {
    const site = siteOf(context);
    const type = await postType(site, settings.parse(context.settings).type);
    const route = `${type.rest_base}/${encodeURIComponent(ref.id)}`;
    const gone = (error: unknown) => error instanceof PlatformHttpError && (error.status === 410 || (error.status === 404 && /rest_post_invalid_id/.test(error.bodyExcerpt)));
    await context.step('delete', async () => {
      try {
        await wp(site, route, { method: 'DELETE' }, type.rest_namespace);
      } catch (error) {
        if (gone(error)) return true;
        if (!(error instanceof PlatformHttpError && error.status === 501 && /rest_trash_not_supported/.test(error.bodyExcerpt))) throw error;
        // This post type has no trash: deleting it is what was asked, so it is deleted for good.
        await wp(site, route, { method: 'DELETE', query: { force: true } }, type.rest_namespace).catch((again: unknown) => {
          if (!gone(again)) throw again;
        });
      }
      return true;
    });
  },
};

export default wordpress;
