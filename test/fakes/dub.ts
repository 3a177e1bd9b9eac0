// A fake Dub API (https://dub.co/docs/api-reference): POST /links, GET /links/info, GET /analytics, as the real one answers
// and refuses them: a workspace API key as Bearer (401 unauthorized), `url` required (422), `externalId` unique per
// workspace (409 conflict), `ext_`-prefixed externalId on /links/info, and clicks analytics grouped by timeseries
// ([{start, clicks}], one point per day) for one linkId.
import { startFakeServer, type FakeReply, type FakeServer } from '../helpers/fake-server.js';

export interface DubFakeLink {
  id: string;
  domain: string;
  key: string;
  url: string;
  shortLink: string;
  externalId: string | null;
}

export interface DubFake {
  server: FakeServer;
  url: string;
  apiKey: string;
  links: DubFakeLink[];
  /** Clicks per link id and day (YYYY-MM-DD), answered by /analytics. */
  clicks: Map<string, Map<string, number>>;
  close(): Promise<void>;
}

const dubError = (status: number, code: string, message: string): FakeReply => ({ status, json: { error: { code, message, doc_url: `https://dub.co/docs/api-reference/errors#${code}` } } });

export async function startDubFake(): Promise<DubFake> {
  const server = await startFakeServer();
  const apiKey = 'dub_test_key_123';
  const links: DubFakeLink[] = [];
  const clicks = new Map<string, Map<string, number>>();
  let counter = 0;
  const authorized = (headers: Record<string, unknown>) => headers.authorization === `Bearer ${apiKey}`;
  const unauthorized = dubError(401, 'unauthorized', 'Unauthorized: Invalid API key.');

  server.on('POST', '/links', (request) => {
    if (!authorized(request.headers)) return unauthorized;
    const body = request.json as { url?: unknown; domain?: unknown; externalId?: unknown } | undefined;
    if (typeof body?.url !== 'string' || !/^https?:\/\//.test(body.url)) return dubError(422, 'unprocessable_entity', 'url: Invalid URL');
    const externalId = typeof body.externalId === 'string' ? body.externalId : null;
    if (externalId && links.some((link) => link.externalId === externalId)) return dubError(409, 'conflict', 'A link with this externalId already exists.');
    const domain = typeof body.domain === 'string' ? body.domain : 'dub.sh';
    const key = `k${String(++counter).padStart(6, '0')}`;
    const link = { id: `link_${counter}`, domain, key, url: body.url, shortLink: `https://${domain}/${key}`, externalId };
    links.push(link);
    return { json: { ...link, archived: false, createdAt: new Date().toISOString() } };
  });

  server.on('GET', '/links/info', (request) => {
    if (!authorized(request.headers)) return unauthorized;
    const externalId = request.query.get('externalId');
    if (!externalId?.startsWith('ext_')) return dubError(400, 'bad_request', 'externalId must be prefixed with ext_');
    const link = links.find((item) => item.externalId === externalId.slice(4));
    return link ? { json: link } : dubError(404, 'not_found', 'Link not found.');
  });

  server.on('GET', '/analytics', (request) => {
    if (!authorized(request.headers)) return unauthorized;
    const query = request.query;
    if (query.get('event') !== 'clicks' || query.get('groupBy') !== 'timeseries') return dubError(400, 'bad_request', 'only clicks grouped by timeseries here');
    const linkId = query.get('linkId') ?? '';
    if (!links.some((link) => link.id === linkId)) return dubError(404, 'not_found', 'Link not found.');
    const start = new Date(query.get('start') ?? '');
    const end = new Date(query.get('end') ?? '');
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return dubError(422, 'unprocessable_entity', 'start and end must be dates');
    const points = [];
    for (let day = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()); day <= end.getTime(); day += 86_400_000) {
      const date = new Date(day).toISOString();
      points.push({ start: date, clicks: clicks.get(linkId)?.get(date.slice(0, 10)) ?? 0 });
    }
    return { json: points };
  });

  return { server, url: server.url, apiKey, links, clicks, close: () => server.close() };
}
