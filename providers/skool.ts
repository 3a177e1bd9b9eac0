// Skool: posts in a community group, with comments. UNOFFICIAL: Skool has no public API. Herald calls the endpoints the
// skool.com web app uses, with the browser session's cookies (auth_token, client_id); they can change without notice,
// and the connection ends with the session. There is no API reference page: the calls follow the web app as Postiz's
// Skool provider documents it (gitroomhq/postiz-app, libraries/nestjs-libraries/src/integrations/social/skool.provider.ts):
// GET /self, GET /users/{id}/groups, GET /groups/{id}, GET /labels/{id}, POST /files → presigned PUT, POST /posts?follow=true.
// Title and content are sent as plain text, as the web app sends them. With no known way to list a group's posts by author and
// time, a post whose answer was lost is not looked up: the step has no recover and the item stops with "could not confirm".
import { z } from 'zod';
import type { PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, MediaFile, Provider, ProviderContext, PublishItem, PublishedRef } from './types.js';
import { jwtExpiry, pickedId, putPresigned, tool } from './shared.js';

const endpoints = { api: 'https://api2.skool.com', web: 'https://www.skool.com' };

const selfSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  first_name: z.string().nullish(),
  last_name: z.string().nullish(),
  metadata: z.looseObject({ picture_profile: z.string().nullish() }).nullish(),
});
const groupSchema = z.looseObject({ id: z.string(), name: z.string(), metadata: z.looseObject({ display_name: z.string().nullish(), labels: z.string().nullish() }).nullish() });
const labelSchema = z.looseObject({ id: z.string(), metadata: z.looseObject({ display_name: z.string().nullish() }).nullish() });
const fileSchema = z.looseObject({ write_url: z.string(), acl: z.string().optional(), content_type: z.string().optional(), file: z.looseObject({ id: z.string() }) });
const postSchema = z.looseObject({ id: z.string(), name: z.string().nullish() });

/** Skool's answers in words a user can act on; a refused session means the cookies are no longer valid. */
function classifySkool(status: number, body: string): Partial<PlatformHttpErrorInit> {
  const said = body.slice(0, 200) || 'no answer body';
  if (status === 401 || (status === 403 && /auth|session|login/i.test(body))) {
    return { status: 401, retryable: false, message: `Skool refused the session (${said}); the cookies expired or were signed out: connect the channel again with fresh cookies` };
  }
  if (/must be admin or level/i.test(body)) return { message: `this account may not post in this group (${said}): Skool requires a higher level or admin rights` };
  if (/cannot post to this label/i.test(body)) return { message: `this account may not post in this category (${said}): pick another label with the label tool` };
  return { message: `${said} (HTTP ${status})` };
}

type CookieContext = Pick<ProviderContext, 'fetch' | 'endpoints'> & { auth: { accessToken: string; data: Record<string, string> } };

/** The session cookies as the web app sends them: the auth_token is the channel's token, the client_id its data. */
const cookieOf = (context: CookieContext) => `auth_token=${context.auth.accessToken}; client_id=${context.auth.data.clientId ?? ''}`;

async function call<T>(context: CookieContext, path: string, schema: z.ZodType<T>, json?: unknown): Promise<T> {
  const response = await context.fetch({
    url: `${context.endpoints.api}/${path}`,
    headers: { cookie: cookieOf(context) },
    json,
    schema,
    classify: classifySkool,
  });
  return response.data;
}

const filenameOf = (file: MediaFile, index: number, mimeType: string) => {
  const last = file.url.split(/[?#]/)[0].split('/').pop();
  return last && /\.[a-z0-9]+$/i.test(last) ? decodeURIComponent(last) : `attachment-${index + 1}.${mimeType.split('/')[1] ?? 'bin'}`;
};

/** Each file: a record (a recorded step) with its presigned URL, then the bytes PUT there (repeating a PUT is harmless). */
async function uploadFiles(context: ProviderContext, media: MediaFile[]): Promise<string> {
  const ids: string[] = [];
  for (const [index, file] of media.entries()) {
    // The bytes are loaded once, and only when a step still needs them (a re-run skips recorded steps).
    let loaded: ReturnType<MediaFile['load']> | undefined;
    const load = () => (loaded ??= file.load());
    const record = await context.step(`file:${index}`, async () => {
      const { bytes, mimeType } = await load();
      const created = await call(context, 'files', fileSchema, {
        file_name: filenameOf(file, index, mimeType),
        content_type: mimeType,
        content_length: bytes.length,
        content_disposition: '',
        ref: '',
        owner_id: context.auth.internalId,
        large_thumbnail: false,
      });
      return { id: created.file.id, writeUrl: created.write_url, acl: created.acl ?? null, contentType: created.content_type ?? mimeType };
    });
    await context.step(`put:${index}`, async () => {
      const { bytes } = await load();
      await putPresigned(context, record.writeUrl, { 'content-type': record.contentType, ...(record.acl ? { 'x-amz-acl': record.acl } : {}) }, bytes, 'Skool');
      return true;
    });
    ids.push(record.id);
  }
  return ids.join(',');
}

async function createPost(context: ProviderContext, item: PublishItem, body: Record<string, unknown>, metadata: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const attachments = await uploadFiles(context, item.media);
  return context.step('post', async () => {
    const created = await call(context, 'posts?follow=true', postSchema, { ...body, metadata: { content: item.text, attachments, action: 0, video_ids: '', ...metadata } });
    return { id: created.id, name: created.name ?? created.id };
  });
}

const groupOf = (context: ProviderContext) => String(context.settings.group ?? '');

/** The address of a post: skool.com/{group's slug}/{post's slug}. */
async function postUrl(context: ProviderContext, name: string): Promise<string> {
  const group = await call(context, `groups/${encodeURIComponent(groupOf(context))}`, groupSchema);
  return `${context.endpoints.web}/${group.name}/${name}`;
}

const skool: Provider = {
  identifier: 'skool',
  name: 'Skool',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'authToken', label: 'auth_token cookie', type: 'password', required: true, description: 'Value of the auth_token cookie of skool.com (browser developer tools → Application → Cookies)' },
      { key: 'clientId', label: 'client_id cookie', type: 'password', required: true, description: 'Value of the client_id cookie of skool.com' },
    ],
  },
  endpoints,
  maxLength: () => 5000,
  rules:
    'Unofficial: Skool has no public API, so Herald uses the web app\'s own endpoints with your browser session cookies; they may change without notice, ' +
    'and the channel must be connected again when the Skool session ends. A post has a required title and goes in the chosen group and category label ' +
    '(from the groups and label tools), with pictures, videos or files attached. Later items are comments, each replying to the one before.',
  settings: z.object({
    group: pickedId('Group id from groups'),
    label: pickedId('Label (category) id from label'),
    title: z.string().min(1).describe('Title of the post'),
  }),
  chain: 'comments',
  recordsSteps: true,
  tools: [
    {
      ...tool('groups', 'Lists the Skool groups of the account: {id, name} items, the id to use as the group setting.'),
      async run(context) {
        const { groups } = await call(context, `users/${encodeURIComponent(context.auth.internalId)}/groups?offset=0&limit=30`, z.object({ groups: z.array(groupSchema) }));
        return groups.map((group) => ({ id: group.id, name: group.metadata?.display_name || group.name }));
      },
    },
    {
      ...tool('label', 'Lists the category labels of a Skool group: {id, name} items, the id to use as the label setting.', [
        { key: 'group', type: 'string', description: 'Group id from groups' },
      ]),
      async run(context, data) {
        const group = await call(context, `groups/${encodeURIComponent(data.group ?? data.id ?? '')}`, groupSchema);
        const ids = (group.metadata?.labels ?? '').split(',').filter(Boolean);
        const labels = [];
        for (const id of ids) labels.push(await call(context, `labels/${encodeURIComponent(id)}`, labelSchema));
        return labels.map((label) => ({ id: label.id, name: label.metadata?.display_name || label.id }));
      },
    },
  ],

  async connect(context: ConnectContext, fields) {
    const accessToken = (fields.authToken ?? '').trim();
    const clientId = (fields.clientId ?? '').trim();
    const self = await call({ ...context, auth: { accessToken, data: { clientId } } }, 'self', selfSchema);
    const name = [self.first_name, self.last_name].filter(Boolean).join(' ');
    return { internalId: self.id, name: name || self.name, profile: self.name, picture: self.metadata?.picture_profile ?? undefined, accessToken, expiresAt: jwtExpiry(accessToken) /* the session's end, when the auth_token is a JWT */, data: { clientId } };
  },

  async publish(context, item) {
    const label = String(context.settings.label ?? '');
    const created = await createPost(context, item, { post_type: 'generic', group_id: groupOf(context) }, {
      title: String(context.settings.title ?? ''),
      ...(label && label !== 'none' ? { labels: label } : {}),
    });
    return { id: created.id, url: await postUrl(context, created.name) };
  },

  async comment(context, item, { root, parent }): Promise<PublishedRef> {
    const created = await createPost(context, item, { post_type: 'comment', group_id: groupOf(context), root_id: root.id, parent_id: parent.id }, { title: '' });
    return { id: created.id, url: root.url };
  },
};

export default skool;
