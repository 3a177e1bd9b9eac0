// listmonk: an HTML email campaign to one subscriber list of the user's own listmonk server, created then started at once.
// References: https://listmonk.app/docs/apis/apis/ (auth: API users, `Authorization: token api_user:token`, error bodies
// `{message}`), .../apis/campaigns/ (POST /api/campaigns, PUT /api/campaigns/{id}/status, GET /api/campaigns/{id} with views,
// clicks, bounces), .../apis/lists/, .../apis/templates/; the OpenAPI document listmonk publishes (knadh/listmonk
// docs/swagger/collections.yaml at 911e0b7, 2026-07-21, vendored in test/contracts/listmonk/); the server's source (knadh/listmonk: internal/auth/auth.go answers a
// wrong token 403 "invalid API credentials"; cmd/campaigns.go limits the subject to 5000 characters and the name to 2000).
// listmonk ≥ 4 authenticates API users only (Admin, Users: an "API" user and its token), not the login password.
// Campaigns have no preview-text field: the preview becomes the email's hidden preheader, the first thing in the body.
// Pictures stay at their public URL (readers' mail clients load them): the first above the text, the others after it.
// What listmonk would run (issue 21): campaign bodies are Go html/templates and subjects with `{{` Go text/templates
// (models.go CompileTemplate), so braces are sent inert; a subject is one header line. The campaign carries the tag
// `herald-<post id>`, a marker only the admin sees, by which a create of unknown outcome is found again.
import { z } from 'zod';
import { withoutGoTemplatesInHtml, withoutGoTemplatesInText } from '../src/lib/article-content.js';
import { escapeHtml } from '../src/lib/content.js';
import type { PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, Provider, ProviderContext } from './types.js';
import { currentMetric, noVideo } from './shared.js';
import { envelope, htmlArticle, messageIn, normalizeBaseUrl, picturesOf, plainRefusal, saidIn, splitCover } from './articles/common.js';
import { recoveryWindowStart } from './recovery.js';

const settings = z.object({
  subject: z.string().trim().min(1, 'listmonk needs a subject for the email').max(5000, 'listmonk takes subjects of at most 5000 characters').describe('Email subject'),
  preview: z.string().trim().optional().describe('Preview text mail clients show after the subject (a hidden preheader)'),
  list: z.string().trim().regex(/^\d+$/, 'list is an id from the list tool').describe('Subscriber list id from list'),
  template: z.string().trim().regex(/^\d+$/, 'template is an id from the templates tool').optional().describe('Campaign template id from templates (the default template otherwise)'),
});

const profileSchema = envelope(z.object({ id: z.number(), username: z.string(), name: z.string().nullish(), email: z.string().nullish(), avatar: z.string().nullish() }));
const campaignSchema = z.object({
  id: z.number(),
  name: z.string(),
  subject: z.string(),
  status: z.string(),
  lists: z.array(z.object({ id: z.number() })).default([]),
  tags: z.array(z.string()).nullish(),
  created_at: z.string().nullish(),
});
const statsSchema = envelope(z.object({ status: z.string(), sent: z.number(), to_send: z.number(), views: z.number(), clicks: z.number(), bounces: z.number().default(0) }));
const listsSchema = envelope(z.object({ results: z.array(z.object({ id: z.number(), name: z.string(), type: z.string().optional(), optin: z.string().optional(), subscriber_count: z.number().optional() })) }));
const templatesSchema = envelope(z.array(z.object({ id: z.number(), name: z.string(), type: z.string(), is_default: z.boolean().optional() })));

/** listmonk answers `{message}`; a wrong API user or token is 403 "invalid API credentials". */
function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  const said = messageIn(body) ?? '';
  if (status === 403 && /invalid API credentials|invalid session/i.test(said)) {
    return { status: 401, retryable: false, message: `the API user or its token was refused (${saidIn(status, body)}): create an API user in Admin, Users (listmonk 4 or later) and use its name and token` };
  }
  const permission = /permission denied: (\S+)/i.exec(said)?.[1];
  if (status === 403 && permission) return { retryable: false, message: `the API user's role lacks the "${permission}" permission: add it to the role in Admin, User roles` };
  if (status === 404 && !said) return { retryable: false, message: `the server has no such API (HTTP 404): check the listmonk URL, and that listmonk is version 4 or later` };
  return plainRefusal(status, body);
}

type Server = Pick<ConnectContext, 'fetch'> & { url: string; username: string; token: string };

const serverOf = (context: ProviderContext): Server => ({ fetch: context.fetch, url: context.auth.data.url, username: context.auth.data.username, token: context.auth.accessToken });

async function call<T>(server: Server, path: string, schema: z.ZodType<T>, request: { method?: 'POST' | 'PUT'; json?: unknown; query?: Record<string, string | number | boolean> } = {}): Promise<T> {
  const response = await server.fetch({ ...request, url: `${server.url}/api/${path}`, headers: { authorization: `token ${server.username}:${server.token}` }, schema, classify });
  return response.data;
}

/** The preview text as a preheader: shown by mail clients after the subject, hidden in the message itself. */
const preheader = (preview: string | undefined) =>
  preview ? `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${escapeHtml(preview)}</div>` : '';

const listmonk: Provider = {
  identifier: 'listmonk',
  name: 'listmonk',
  editor: 'html',
  article: true,
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'url', label: 'listmonk URL', type: 'url', required: true, description: 'The address of your listmonk, e.g. https://news.example.com' },
      { key: 'username', label: 'API user', type: 'text', required: true, description: 'An API user created in Admin, Users (listmonk 4 or later).' },
      { key: 'password', label: 'API token', type: 'password', required: true, description: "The API user's token (login passwords do not work on the API)." },
    ],
  },
  // The server is the user's own: its URL comes from the connect form.
  endpoints: {},
  maxLength: () => 100_000_000,
  rules:
    'An email campaign (Markdown, or HTML with headings, emphasis, lists, quotes, code, tables and pictures) to one subscriber list (from list), created and started at once, with a required subject (at most 5000 characters), ' +
    'an optional preview text (a hidden preheader) and an optional template (from templates). Pictures stay at their public URL: the first above the text, ' +
    "the others after it, so PUBLIC_URL must be public. Text is sent as written: {{ }} in the subject, preview or text shows as braces, it is not run as a listmonk template. No video, one item. " +
    'Sent, views, clicks and bounces are the post analytics. The API user needs the campaigns:manage and campaigns:send permissions.',
  settings,
  chain: 'none',
  mediaByUrl: true,
  recordsSteps: true,
  validate: (items) => noVideo(items, 'listmonk'),
  tools: [
    {
      methodName: 'list',
      description: 'Lists the subscriber lists of the listmonk server (ids for the list setting).',
      dataSchema: [],
      run: async (context) => {
        const { data } = await call(serverOf(context), 'lists', listsSchema, { query: { per_page: 'all' } });
        return data.results.map((list) => ({ id: String(list.id), name: list.name, subscribers: list.subscriber_count, type: list.type, optin: list.optin }));
      },
    },
    {
      methodName: 'templates',
      description: 'Lists the campaign templates of the listmonk server (ids for the template setting).',
      dataSchema: [],
      run: async (context) => {
        // no_body is required by listmonk's published contract (docs/swagger/collections.yaml); the bodies are not needed here.
        const { data } = await call(serverOf(context), 'templates', templatesSchema, { query: { no_body: true } });
        return data.filter((template) => template.type === 'campaign').map((template) => ({ id: String(template.id), name: template.name, default: template.is_default === true }));
      },
    },
  ],

  async connect(context, fields) {
    const server: Server = { fetch: context.fetch, url: normalizeBaseUrl(fields.url ?? ''), username: (fields.username ?? '').trim(), token: fields.password ?? '' };
    const { data: user } = await call(server, 'profile', profileSchema);
    return {
      internalId: `${user.id}@${server.url}`,
      name: user.name?.trim() || user.username,
      profile: user.username,
      picture: user.avatar ?? undefined,
      accessToken: server.token,
      data: { url: server.url, username: server.username },
    };
  },

  async publish(context, item) {
    const options = settings.parse(context.settings);
    const server = serverOf(context);
    const { cover, rest } = splitCover(picturesOf(item.media, 'listmonk'));
    // A subject is one header line; its text shows as written, never run as a template.
    const subject = options.subject.replace(/\s+/g, ' ').trim();
    const marker = `herald-${item.postId}`;
    const campaign = {
      name: subject.slice(0, 2000),
      subject: withoutGoTemplatesInText(subject),
      lists: [Number(options.list)],
      type: 'regular',
      content_type: 'html',
      messenger: 'email',
      tags: [marker],
      body: withoutGoTemplatesInHtml(preheader(options.preview) + htmlArticle(item.text, rest, cover ? [cover] : [])),
      ...(options.template ? { template_id: Number(options.template) } : {}),
    };
    const created = await context.step(
      'campaign',
      async () => (await call(server, 'campaigns', envelope(campaignSchema), { method: 'POST', json: campaign })).data.id,
      async ({ startedAt }) => {
        // The lost attempt's campaign carries this post's marker; one made before the attempt began is not it. Newest first is
        // listmonk's default order: no `order` is sent, as the contract's values (ASC|DESC) are not the ones the server reads
        // (internal/core/core.go compares asc|desc and falls back to desc).
        const { data } = await call(server, 'campaigns', envelope(z.object({ results: z.array(campaignSchema) })), { query: { query: campaign.name, order_by: 'created_at', per_page: 20, no_body: true } });
        const since = recoveryWindowStart(startedAt).getTime();
        return data.results.find((found) => found.tags?.includes(marker) && (!found.created_at || Date.parse(found.created_at) >= since))?.id;
      },
    );
    await context.step(
      'start',
      async () => (await call(server, `campaigns/${created}/status`, envelope(campaignSchema), { method: 'PUT', json: { status: 'running' } })).data.status,
      async () => {
        // Started already when it is no longer a draft; a draft is started (again).
        const { data } = await call(server, `campaigns/${created}`, statsSchema, { query: { no_body: true } });
        return data.status === 'draft' ? undefined : data.status;
      },
    );
    return { id: String(created), url: `${server.url}/admin/campaigns/${created}` };
  },

  async postAnalytics(context, post) {
    const { data } = await call(serverOf(context), `campaigns/${encodeURIComponent(post.id)}`, statsSchema, { query: { no_body: true } });
    return [currentMetric('Sent', data.sent), currentMetric('Views', data.views), currentMetric('Clicks', data.clicks), currentMetric('Bounces', data.bounces)];
  },
};

export default listmonk;
