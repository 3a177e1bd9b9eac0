// The AT Protocol contract of the Bluesky fakes: every XRPC request they receive is checked against the official lexicons,
// as a real PDS (and the video service) checks it with @atproto/xrpc-server, and every answer they give is checked too, so
// the fakes speak the documented shapes.
//
// Source: the lexicons shipped in @atproto/api 0.19.19 (npm, published 2026-06-04; `lexicons`, a @atproto/lexicon
// `Lexicons` of github.com/bluesky-social/atproto/tree/main/lexicons), pinned in package.json. Checked per request:
//   - query parameters (`assertValidXrpcParams`), decoded from the query string by the lexicon's types as xrpc-server does;
//   - JSON input bodies (`assertValidXrpcInput`), and the content type of binary inputs (uploadBlob `*/*`, uploadVideo
//     `video/mp4`);
//   - the records of com.atproto.repo.createRecord / putRecord / applyWrites against their collection's lexicon
//     (`assertValidRecord`: app.bsky.feed.post with facets, embeds, reply refs), as the PDS validates known collections;
//   - the fake's own JSON answers (`assertValidXrpcOutput`).
// A request that does not match answers 400 InvalidRequest with the lexicon's message (what a real PDS answers) and is
// recorded in `violations`, which the tests assert empty: a call whose failure Herald swallows still fails the test.
import { jsonToLex, lexicons } from '@atproto/api';
import type { FakeHandler, FakeReply, FakeServer, RecordedRequest } from '../helpers/fake-server.js';

type ParamDef = { type: string; items?: { type: string } };

/** Query parameters as typed values, the way xrpc-server decodes them (integers, booleans, arrays by the lexicon). */
function decodeParams(nsid: string, query: URLSearchParams): Record<string, unknown> {
  const definition = lexicons.getDef(nsid) as { parameters?: { properties?: Record<string, ParamDef> } } | undefined;
  const properties = definition?.parameters?.properties ?? {};
  const decode = (type: string | undefined, value: string): unknown => {
    if (type === 'integer') return /^-?\d+$/.test(value) ? Number(value) : value;
    if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
    return value;
  };
  const params: Record<string, unknown> = {};
  for (const key of new Set(query.keys())) {
    const property = properties[key];
    params[key] = property?.type === 'array' ? query.getAll(key).map((value) => decode(property.items?.type, value)) : decode(property?.type, query.get(key)!);
  }
  return params;
}

const WRITE_TYPES: Record<string, string> = {
  'com.atproto.repo.applyWrites#create': 'create',
  'com.atproto.repo.applyWrites#update': 'update',
};

/** The records a request writes, with their collection (createRecord, putRecord, the creates and updates of applyWrites). */
function recordsOf(nsid: string, body: any): { collection: string; record: any }[] {
  if (nsid === 'com.atproto.repo.createRecord' || nsid === 'com.atproto.repo.putRecord') return [{ collection: body?.collection, record: body?.record }];
  if (nsid === 'com.atproto.repo.applyWrites') {
    return ((body?.writes ?? []) as any[]).filter((write) => WRITE_TYPES[write?.$type]).map((write) => ({ collection: write.collection, record: write.value }));
  }
  return [];
}

/** What is wrong with the request under the lexicon of `nsid`, or undefined when it matches. */
export function lexiconProblem(nsid: string, request: RecordedRequest): string | undefined {
  const definition = lexicons.getDef(nsid) as { type: string; input?: { encoding: string } } | undefined;
  if (!definition) return `${nsid} is not a method of the AT Protocol lexicons`;
  try {
    lexicons.assertValidXrpcParams(nsid, decodeParams(nsid, request.query));
    if (definition.type === 'query' && request.method !== 'GET') return `${nsid} is a query: it is called with GET, not ${request.method}`;
    if (definition.type === 'procedure') {
      if (request.method !== 'POST') return `${nsid} is a procedure: it is called with POST, not ${request.method}`;
      const encoding = definition.input?.encoding;
      const contentType = String(request.headers['content-type'] ?? '').split(';')[0].trim();
      if (encoding === 'application/json') {
        if (request.json === undefined) return `${nsid} takes a JSON body (content-type application/json)`;
        lexicons.assertValidXrpcInput(nsid, request.json);
        for (const { collection, record } of recordsOf(nsid, request.json)) {
          if (!lexicons.getDef(collection)) continue; // a collection the PDS does not know is stored unvalidated
          lexicons.assertValidRecord(collection, jsonToLex({ $type: collection, ...record }));
        }
      } else if (encoding && encoding !== '*/*' && contentType !== encoding) {
        return `${nsid} takes a body of type ${encoding}, not ${contentType || 'none'}`;
      } else if (!encoding && request.body.length > 0) {
        return `${nsid} takes no body`;
      }
    }
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
}

/**
 * Registers XRPC methods on a fake server with the lexicon check around them: `on('com.atproto.repo.createRecord', handler)`.
 * The HTTP method comes from the lexicon (query: GET, procedure: POST).
 */
export function lexiconRoutes(server: FakeServer, violations: string[]) {
  /** `outputDiffers`: why the real service's answer departs from the lexicon (the platform wins); its answer is then not checked. */
  return (nsid: string, handler: FakeHandler, options: { outputDiffers?: string } = {}) => {
    const definition = lexicons.getDef(nsid) as { type: string } | undefined;
    if (!definition) throw new Error(`the fake registers ${nsid}, which the lexicons do not define`);
    const method = definition.type === 'procedure' ? 'POST' : 'GET';
    server.on(method, `/xrpc/${nsid}`, async (request): Promise<FakeReply> => {
      const problem = lexiconProblem(nsid, request);
      if (problem) {
        violations.push(`${nsid}: ${problem}`);
        return { status: 400, json: { error: 'InvalidRequest', message: problem } };
      }
      const reply = await handler(request);
      if ((reply.status ?? 200) === 200 && reply.json !== undefined && !options.outputDiffers) {
        try {
          lexicons.assertValidXrpcOutput(nsid, jsonToLex(reply.json));
        } catch (error) {
          violations.push(`${nsid}: the fake's own answer does not match the lexicon: ${(error as Error).message}`);
        }
      }
      return reply;
    });
  };
}
