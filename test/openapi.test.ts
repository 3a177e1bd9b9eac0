// The OpenAPI 3.1 document: generated from the tools' zod schemas, valid for a maintained validator, covering every REST
// route the express app serves (found by walking the app's router), public, and rendered on the console.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { setupToken } from './helpers/setup-link.js';
import { ConsoleClient } from './helpers/console-client.js';
import { createApp } from '../src/http/app.js';
import { openApiPath } from '../src/http/openapi.js';
import { tools } from '../tools/index.js';

let herald: Herald;
let document: any;

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
  match(path: string): boolean;
}

/** Every REST route of the app: routes of the routers mounted on the REST base, and app routes under it. */
function restRoutes(): { method: string; path: string }[] {
  const app = createApp(herald.services, herald.sessions) as unknown as { router: { stack: Layer[] } };
  const base = '/api/public/v1';
  const routes: { method: string; path: string }[] = [];
  const add = (layer: Layer, prefix: string) => {
    const paths = [layer.route!.path].flat();
    for (const path of paths) {
      if (!(prefix + path).startsWith(base)) continue;
      for (const method of Object.keys(layer.route!.methods)) routes.push({ method, path: (prefix + path).slice(base.length) });
    }
  };
  for (const layer of app.router.stack) {
    if (layer.route) add(layer, '');
    // A router mounted on the REST base matches its paths and nothing else (routers mounted at / match everything).
    else if (layer.handle.stack && layer.match(`${base}/is-connected`) && !layer.match('/not-rest')) for (const inner of layer.handle.stack) if (inner.route) add(inner, base);
  }
  return routes;
}

/** A maintained OpenAPI validator from node_modules, when the project has one (see the report: none is installed yet). */
async function loadValidator(): Promise<((document: unknown) => Promise<{ valid: boolean; errors?: unknown }>) | undefined> {
  const seriousme = '@seriousme/openapi-schema-validator';
  const swaggerParser = '@apidevtools/swagger-parser';
  try {
    const { Validator } = (await import(seriousme)) as { Validator: new () => { validate(document: unknown): Promise<{ valid: boolean; errors?: unknown }> } };
    return (value) => new Validator().validate(value);
  } catch {
    // not installed
  }
  try {
    const parser = ((await import(swaggerParser)) as { default: { validate(document: unknown): Promise<unknown> } }).default;
    return async (value) => {
      try {
        await parser.validate(structuredClone(value));
        return { valid: true };
      } catch (error) {
        return { valid: false, errors: (error as Error).message };
      }
    };
  } catch {
    return undefined;
  }
}
const validator = await loadValidator();

beforeAll(async () => {
  herald = await startHerald();
  const response = await fetch(`${herald.url}/api/public/v1/openapi.json`);
  expect(response.status).toBe(200);
  document = await response.json();
});

afterAll(async () => {
  await herald?.stop();
});

describe('GET /api/public/v1/openapi.json', () => {
  it.skipIf(!validator)('validates with a maintained OpenAPI 3.1 validator', async () => {
    const result = await validator!(document);
    expect(result.errors ?? null).toBeNull();
    expect(result.valid).toBe(true);
  });

  it('covers every REST route of the express app, each with its method', () => {
    const routes = restRoutes();
    // One route per tool with a REST binding, plus the document itself.
    expect(routes).toHaveLength(tools.filter((tool) => tool.rest).length + 1);
    const missing = routes.filter((route) => !document.paths[openApiPath(route.path)]?.[route.method]);
    expect(missing).toEqual([]);
    // And nothing more: every documented operation is served.
    const documented = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((method) => `${method} ${path}`));
    expect(documented.sort()).toEqual([...new Set(routes.map((route) => `${route.method} ${openApiPath(route.path)}`))].sort());
  });

  it('is OpenAPI 3.1 with the auth scheme, the error body on every operation, and is served without a key at both bases', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: `${herald.url}/api/public/v1` }]);
    expect(document.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'Authorization', description: expect.any(String) });
    expect(document.security).toEqual([{ apiKey: [] }]);
    expect(document.components.schemas.Error.required.sort()).toEqual(['code', 'message', 'requestId', 'statusCode']);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods as Record<string, any>)) {
        if (path === '/openapi.json') continue;
        expect(operation.responses['401'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/Error' });
        expect(operation.operationId, `${method} ${path}`).toEqual(expect.any(String));
      }
    }
    const hosted = await fetch(`${herald.url}/public/v1/openapi.json`);
    expect(hosted.status).toBe(200);
  });

  it('takes its schemas from the tools: create-post body, path parameters, query parameters, multipart, idempotency header', () => {
    const create = document.paths['/posts'].post;
    expect(create.requestBody.content['application/json'].schema.required.sort()).toEqual(['posts', 'type']);
    expect(create.requestBody.content['application/json'].schema.properties.type.enum).toEqual(['draft', 'schedule', 'now']);
    expect(create.responses['200'].content['application/json'].schema.type).toBe('array');
    expect(create.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(create.responses['422']).toBeDefined();

    const status = document.paths['/posts/{id}/status'].put;
    expect(status.parameters[0]).toMatchObject({ name: 'id', in: 'path', required: true });
    expect(status.requestBody.content['application/json'].schema.properties).not.toHaveProperty('id');

    const list = document.paths['/posts'].get;
    expect(list.parameters.map((parameter: any) => [parameter.name, parameter.in, parameter.required])).toEqual([
      ['startDate', 'query', true],
      ['endDate', 'query', true],
      ['customer', 'query', false],
      ['cursor', 'query', false],
      ['limit', 'query', false],
    ]);
    expect(document.paths['/upload'].post.requestBody.content['multipart/form-data'].schema.required).toEqual(['file']);
    expect(document.paths['/integrations/{identifier}/connect'].post.requestBody.content['application/json'].schema.type).toBe('object');
    expect(document.paths['/integrations'].get.responses['200'].content['application/json'].schema.items.properties.health).toBeDefined();
    expect(document.paths['/generate-video'].post.responses['202']).toBeDefined();
    expect(JSON.stringify(document)).not.toContain('"$schema"');
  });
});

describe('the readable rendering', () => {
  it('is linked from the Developer page and lists every operation, without scripts', async () => {
    const browser = new ConsoleClient(herald.url);
    await browser.signUp({ email: 'owner@example.com', password: 'correct horse battery', invitation: await setupToken(herald) });
    const developer = await browser.get('/developer');
    expect(developer.text).toContain('href="/api-reference"');
    expect(developer.text).toContain('href="/api/public/v1/openapi.json"');
    const page = await browser.get('/api-reference');
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script');
    expect(page.text).toContain('<code>POST /posts/validate</code>');
    expect(page.text).toContain('<code>GET /webhooks/{id}/deliveries</code>');
    const operations = Object.values(document.paths).reduce((count: number, methods) => count + Object.keys(methods as object).length, 0);
    expect(page.text.match(/<section class="card" id=/g)).toHaveLength(operations);
  });
});
