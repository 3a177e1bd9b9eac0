// A fake listmonk (≥ 4) server on 127.0.0.1, built on startFakeServer. References: listmonk.app/docs/apis/campaigns/ (tags,
// created_at) and the server's source (knadh/listmonk models: bodies and subjects compiled as Go templates), read 2026-11.
// Every request to /api is first checked against listmonk's own OpenAPI 3 document (docs/swagger/collections.yaml), vendored
// in test/contracts/listmonk/openapi.json (knadh/listmonk 911e0b7, 2026-07-21, after v6.2.0; with the corrections from the
// server's source listed in it): a request outside the contract is answered 400 {message} and recorded in
// `contractViolations`, which the tests require to stay empty.
//
//   const lm = await startListmonkFake();            // or { permissions: [...] } to take some away from the API user's role
//   connect fields: lm.fields()                      // { url, username, password } (the API user and its token)
//   lm.campaigns                                     // every campaign created: the JSON body as received, its status and stats
//
// Auth as listmonk's middleware: `Authorization: token user:token` or HTTP Basic with the same pair; anything else answers
// 403 {message: "invalid API credentials"} (no header: "invalid session"). A route the role lacks answers 403
// "permission denied: <permission>". Answers are {data: ...}; refusals {message} with 400, as cmd/campaigns.go words them:
//   GET  /api/profile                 the API user
//   GET  /api/lists                   {results, total, per_page, page} (per_page=all)
//   GET  /api/templates               every template (campaign, campaign_visual, tx); bodies blank with no_body=true
//   POST /api/campaigns               name 1–2000 and subject 1–5000 characters, lists of known ids, type regular|optin,
//                                      content_type richtext|html|markdown|plain|visual, template_id of a campaign template,
//                                      tags (strings), a body and a subject whose {{ }} template actions parse (the
//                                      server compiles both as Go templates: an unclosed action is refused, a closed one
//                                      would run) → the campaign as a draft
//   GET  /api/campaigns               newest first, `query` matching the name or subject
//   GET  /api/campaigns/:id           the campaign with sent, to_send, views, clicks, bounces (tests set them)
//   PUT  /api/campaigns/:id/status    {status: running} starts a draft or paused campaign (campaigns:send); others refused
import type { FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';
import { startFakeServer } from '../helpers/fake-server.js';
import { contractProblems } from '../contracts/listmonk/contract.js';

export interface ListmonkFakeCampaign {
  id: number;
  /** The JSON body as received. */
  body: Record<string, unknown>;
  status: string;
  sent: number;
  to_send: number;
  views: number;
  clicks: number;
  bounces: number;
  /** When it was created (ISO 8601); a test may add older campaigns. */
  created_at: string;
}

export interface ListmonkFake {
  server: FakeServer;
  url: string;
  username: string;
  token: string;
  permissions: Set<string>;
  lists: { id: number; name: string; subscriber_count: number; type: string; optin: string }[];
  campaigns: ListmonkFakeCampaign[];
  /** Requests listmonk's OpenAPI contract refused, as "METHOD path: problem". */
  contractViolations: string[];
  fields(): Record<string, string>;
  close(): Promise<void>;
}

const ALL_PERMISSIONS = ['lists:get_all', 'campaigns:get_all', 'campaigns:manage_all', 'campaigns:send', 'templates:get'];
const bad = (message: string, status = 400): FakeReply => ({ status, json: { message } });

export async function startListmonkFake(options: { permissions?: string[] } = {}): Promise<ListmonkFake> {
  const server = await startFakeServer();
  // Every route of the API is registered behind the contract check (paths in the contract are relative to /api).
  const contractViolations = server.underContract(
    (_method, path) => (path.startsWith('/api/') ? (request) => contractProblems(request, request.path.slice('/api'.length)) : undefined),
    (problems) => bad(`Invalid request: ${problems.join('; ')}`),
  );
  const username = 'herald-api';
  const token = 'x7Qm2pVtL9sKcW4rZbN8yHdF3gJ6aE1u';
  const permissions = new Set(options.permissions ?? ALL_PERMISSIONS);
  const lists = [
    { id: 1, name: 'Default list', subscriber_count: 2, type: 'private', optin: 'single' },
    { id: 3, name: 'Newsletter', subscriber_count: 1250, type: 'public', optin: 'double' },
  ];
  const templates = [
    { id: 1, name: 'Default campaign template', type: 'campaign', is_default: true },
    { id: 2, name: 'Default archive template', type: 'campaign', is_default: false },
    { id: 4, name: 'Default visual template', type: 'campaign_visual', is_default: false },
    { id: 5, name: 'Sample transactional template', type: 'tx', is_default: false },
  ];
  const campaigns: ListmonkFakeCampaign[] = [];

  const guarded = (permission: string | undefined, handler: (request: RecordedRequest) => FakeReply) => (request: RecordedRequest): FakeReply => {
    const header = String(request.headers.authorization ?? '').trim();
    if (!header) return bad('invalid session', 403);
    const pair = header.startsWith('token ') ? header.slice(6).trim() : header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : undefined;
    if (pair === undefined) return bad('unknown Authorization scheme', 403);
    if (pair !== `${username}:${token}`) return bad('invalid API credentials', 403);
    if (permission && !permissions.has(permission)) return bad(`permission denied: ${permission}`, 403);
    return handler(request);
  };

  const view = (campaign: ListmonkFakeCampaign) => ({
    id: campaign.id,
    uuid: `00000000-0000-4000-8000-${String(campaign.id).padStart(12, '0')}`,
    name: campaign.body.name,
    subject: campaign.body.subject,
    type: campaign.body.type ?? 'regular',
    content_type: campaign.body.content_type,
    status: campaign.status,
    lists: (campaign.body.lists as number[]).map((id) => ({ id, name: lists.find((list) => list.id === id)!.name })),
    template_id: campaign.body.template_id ?? 1,
    sent: campaign.sent,
    to_send: campaign.to_send,
    views: campaign.views,
    clicks: campaign.clicks,
    bounces: campaign.bounces,
    tags: Array.isArray(campaign.body.tags) ? campaign.body.tags : [],
    created_at: campaign.created_at,
  });

  function create(request: RecordedRequest): FakeReply {
    const body = (request.json ?? {}) as Record<string, unknown>;
    const text = (key: string) => (typeof body[key] === 'string' ? (body[key] as string) : '');
    if (text('name').length < 1 || text('name').length > 2000) return bad('Invalid length for name.');
    if (text('subject').length < 1 || text('subject').length > 5000) return bad('Invalid length for subject.');
    const ids = Array.isArray(body.lists) ? (body.lists as unknown[]) : [];
    if (ids.length === 0 || ids.some((id) => !lists.some((list) => list.id === id))) return bad('Invalid list IDs.');
    if (body.type !== undefined && body.type !== 'regular' && body.type !== 'optin') return bad('Invalid campaign type.');
    if (!['richtext', 'html', 'markdown', 'plain', 'visual'].includes(text('content_type'))) body.content_type = 'richtext';
    if (body.template_id !== undefined && !templates.some((template) => template.id === body.template_id && template.type === 'campaign')) return bad('Template not found.');
    for (const key of ['body', 'subject']) {
      // Go templates: every {{ opens an action that must close (a lone }} is text); a literal {{ is written {{"{{"}} (or as entities).
      const actions = text(key).replace(/\{\{"\{\{"\}\}/g, '');
      if (/\{\{(?![\s\S]*?\}\})/.test(actions)) return bad(`Error compiling template: unclosed action in ${key}`);
    }
    if (body.tags !== undefined && (!Array.isArray(body.tags) || body.tags.some((tag) => typeof tag !== 'string'))) return bad('Invalid tags.');
    const campaign: ListmonkFakeCampaign = { id: campaigns.length + 1, body, status: 'draft', sent: 0, to_send: 0, views: 0, clicks: 0, bounces: 0, created_at: new Date().toISOString() };
    campaigns.push(campaign);
    return { json: { data: view(campaign) } };
  }

  const campaignOf = (request: RecordedRequest) => campaigns.find((campaign) => campaign.id === Number(request.path.split('/')[3]));

  server.on('GET', '/api/profile', guarded(undefined, () => ({ json: { data: { id: 2, username, name: 'Herald API', type: 'api', status: 'enabled', email: null, avatar: null } } })));
  server.on('GET', '/api/lists', guarded('lists:get_all', () => ({ json: { data: { results: lists, total: lists.length, per_page: lists.length, page: 1 } } })));
  server.on('GET', '/api/templates', guarded('templates:get', (request) => {
    const noBody = request.query.get('no_body') === 'true';
    return { json: { data: templates.map((template) => ({ ...template, body: noBody ? '' : '{{ template "content" . }}' })) } };
  }));
  server.on('POST', '/api/campaigns', guarded('campaigns:manage_all', create));
  server.on('GET', '/api/campaigns', guarded('campaigns:get_all', (request) => {
    const query = request.query.get('query') ?? '';
    const found = campaigns.filter((campaign) => String(campaign.body.name).includes(query) || String(campaign.body.subject).includes(query)).reverse();
    return { json: { data: { results: found.map(view), total: found.length, per_page: 20, page: 1 } } };
  }));
  server.on('GET', '/api/campaigns/*', guarded('campaigns:get_all', (request) => {
    const campaign = campaignOf(request);
    return campaign ? { json: { data: view(campaign) } } : bad('Campaign not found.', 404);
  }));
  server.on('PUT', '/api/campaigns/*/status', guarded('campaigns:send', (request) => {
    const campaign = campaignOf(request);
    if (!campaign) return bad('Campaign not found.', 404);
    const wanted = (request.json as { status?: string } | undefined)?.status;
    if (wanted !== 'running') return bad('Invalid status.');
    if (campaign.status !== 'draft' && campaign.status !== 'paused') return bad("Can't change campaign status.");
    campaign.status = 'running';
    campaign.to_send = lists.filter((list) => (campaign.body.lists as number[]).includes(list.id)).reduce((total, list) => total + list.subscriber_count, 0);
    return { json: { data: view(campaign) } };
  }));

  return {
    server,
    url: server.url,
    username,
    token,
    permissions,
    lists,
    campaigns,
    contractViolations,
    fields: () => ({ url: server.url, username, password: token }),
    close: () => server.close(),
  };
}
