// A fake platform: a real HTTP server on 127.0.0.1 with per-route handlers, recording every request it receives.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON or form data when it is one, else undefined. */
  json?: any;
  form?: URLSearchParams;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Buffer;
}

export type FakeHandler = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Registers (or replaces) the handler of `METHOD /path` (path without query; `*` matches one segment). */
  on(method: string, path: string, handler: FakeHandler): void;
  /** Makes the next `times` calls of a route answer `reply` before the normal handler applies again. */
  failNext(method: string, path: string, reply: FakeReply, times?: number): void;
  requestsTo(method: string, path: string): RecordedRequest[];
  /** Every answer waits this long before it is sent (a slow platform). */
  setDelay(ms: number): void;
  /**
   * Puts routes under the platform's contract (DESIGN.md §9): every route registered afterwards for which `check` answers a
   * function runs it first; a request with problems is recorded ("METHOD path: problem") in the list answered here, which
   * tests require to stay empty, and answered by `refuse` (the platform's own error shape) instead of its handler.
   */
  underContract(
    check: (method: string, path: string) => ((request: RecordedRequest) => string[] | Promise<string[]>) | undefined,
    refuse: (problems: string[], request: RecordedRequest) => FakeReply,
  ): string[];
  close(): Promise<void>;
}

/** The body of a request parsed as form data (multipart/form-data, as its content type says); undefined when it cannot be parsed. */
export function multipartOf(request: RecordedRequest): Promise<FormData | undefined> {
  return new Response(new Uint8Array(request.body), { headers: { 'content-type': String(request.headers['content-type'] ?? '') } })
    .formData()
    .catch(() => undefined);
}

function matches(pattern: string, path: string): boolean {
  const a = pattern.split('/');
  const b = path.split('/');
  return a.length === b.length && a.every((part, index) => part === '*' || part === b[index]);
}

export async function startFakeServer(): Promise<FakeServer> {
  const routes: { method: string; path: string; handler: FakeHandler }[] = [];
  const failures: { method: string; path: string; reply: FakeReply; times: number }[] = [];
  const requests: RecordedRequest[] = [];
  let delayMs = 0;
  const server = http.createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const url = new URL(incoming.url ?? '/', 'http://127.0.0.1');
    const body = Buffer.concat(chunks);
    const contentType = String(incoming.headers['content-type'] ?? '');
    const recorded: RecordedRequest = { method: incoming.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: incoming.headers, body };
    if (contentType.includes('application/json') && body.length > 0) {
      try {
        recorded.json = JSON.parse(body.toString('utf8'));
      } catch {
        /* left undefined: the handler sees the raw body */
      }
    }
    if (contentType.includes('application/x-www-form-urlencoded')) recorded.form = new URLSearchParams(body.toString('utf8'));
    requests.push(recorded);
    let reply: FakeReply;
    const failure = failures.find((item) => item.method === recorded.method && matches(item.path, recorded.path) && item.times > 0);
    if (failure) {
      failure.times -= 1;
      reply = failure.reply;
    } else {
      const route = routes.find((item) => item.method === recorded.method && matches(item.path, recorded.path));
      reply = route ? await route.handler(recorded) : { status: 404, json: { error: `fake has no route ${recorded.method} ${recorded.path}` } };
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const headers: Record<string, string> = { ...reply.headers };
    let payload: string | Buffer = '';
    if (reply.json !== undefined) {
      headers['content-type'] ??= 'application/json';
      payload = JSON.stringify(reply.json);
    } else if (reply.body !== undefined) payload = reply.body;
    outgoing.writeHead(reply.status ?? 200, headers);
    outgoing.end(payload);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const fake: FakeServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    on(method, path, handler) {
      const index = routes.findIndex((route) => route.method === method && route.path === path);
      if (index >= 0) routes.splice(index, 1);
      routes.push({ method, path, handler });
    },
    underContract(check, refuse) {
      const violations: string[] = [];
      const register = fake.on;
      fake.on = (method, path, handler) => {
        const problemsOf = check(method, path);
        register(method, path, !problemsOf ? handler : async (request) => {
          const problems = await problemsOf(request);
          if (problems.length === 0) return handler(request);
          violations.push(...problems.map((problem) => `${request.method} ${request.path}: ${problem}`));
          return refuse(problems, request);
        });
      };
      return violations;
    },
    failNext(method, path, reply, times = 1) {
      failures.push({ method, path, reply, times });
    },
    setDelay(ms) {
      delayMs = ms;
    },
    requestsTo(method, path) {
      return requests.filter((request) => request.method === method && matches(path, request.path));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}
