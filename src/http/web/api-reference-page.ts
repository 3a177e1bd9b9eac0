// /api-reference: the OpenAPI document rendered as a plain page (no script, no CDN): every operation with its parameters,
// request body and answers. Public, like the document itself.
import type { Router } from 'express';
import type { Services } from '../../../tools/types.js';
import { openApiDocument } from '../openapi.js';
import { html, sendPage, type Markup } from './html.js';
import { consoleLocals } from './session.js';

type Json = Record<string, any>;

const schemaBlock = (schema: unknown): Markup => html`<details><summary>Schema</summary><pre><code>${JSON.stringify(schema, null, 2)}</code></pre></details>`;
const anchor = (method: string, path: string) => `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-');

function operationSection(method: string, path: string, operation: Json): Markup {
  const parameters = (operation.parameters ?? []) as Json[];
  const body = operation.requestBody?.content as Json | undefined;
  const responses = Object.entries(operation.responses as Json);
  return html`<section class="card" id="${anchor(method, path)}" aria-labelledby="${anchor(method, path)}-title">
    <h3 id="${anchor(method, path)}-title"><code>${method.toUpperCase()} ${path}</code> — ${operation.summary}</h3>
    <p>${operation.description ?? ''}</p>
    ${parameters.length
      ? html`<table><thead><tr><th scope="col">Parameter</th><th scope="col">In</th><th scope="col">Required</th><th scope="col">Description</th></tr></thead><tbody>${parameters.map((parameter) =>
          parameter.$ref
            ? html`<tr><td><code>Idempotency-Key</code></td><td>header</td><td>no</td><td>Repeat a create safely for 24 hours (see the top of this page).</td></tr>`
            : html`<tr><td><code>${parameter.name}</code></td><td>${parameter.in}</td><td>${parameter.required ? 'yes' : 'no'}</td><td>${parameter.description ?? parameter.schema?.description ?? ''}</td></tr>`,
        )}</tbody></table>`
      : ''}
    ${body ? Object.entries(body).map(([type, content]) => html`<p><strong>Request body</strong> (<code>${type}</code>)</p>${schemaBlock((content as Json).schema)}`) : ''}
    <p><strong>Answers</strong></p>
    <ul>${responses.map(([status, response]) =>
      (response as Json).$ref
        ? html`<li><code>${status}</code> error body</li>`
        : html`<li><code>${status}</code> ${(response as Json).description}${(response as Json).content ? schemaBlock((response as Json).content['application/json']?.schema) : ''}</li>`,
    )}</ul>
  </section>`;
}

export function apiReferencePage(router: Router, services: Services): void {
  router.get('/api-reference', (_request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const document = openApiDocument(services.config.publicUrl) as Json;
    const operations = Object.entries(document.paths as Json).flatMap(([path, methods]) => Object.entries(methods as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })));
    const tags = [...new Set(operations.map((item) => item.operation.tags?.[0] as string))];
    sendPage(
      response,
      { title: 'API reference', signedIn, csrf, section: 'developer', script: false },
      html`<h1>${document.info.title} ${document.info.version}</h1>
      <p>${document.info.description}</p>
      <p>Base URL: <code>${document.servers[0].url}</code>. Authentication: the API key (or an OAuth token <code>pos_…</code>) in the
      <code>Authorization</code> header, with no prefix. Machine-readable: <a href="/api/public/v1/openapi.json">openapi.json</a> (OpenAPI 3.1).</p>
      <p><strong>Idempotency-Key</strong>: ${document.components.parameters.IdempotencyKey.description}</p>
      <p><strong>Errors</strong> have this body:</p>${schemaBlock(document.components.schemas.Error)}
      <nav aria-label="Operations" class="card"><ul>${operations.map(
        (item) => html`<li><a href="#${anchor(item.method, item.path)}"><code>${item.method.toUpperCase()} ${item.path}</code></a> ${item.operation.summary}</li>`,
      )}</ul></nav>
      ${tags.map((tag) => html`<h2>${tag}</h2>${operations.filter((item) => item.operation.tags?.[0] === tag).map((item) => operationSection(item.method, item.path, item.operation))}`)}`,
    );
  });
}
