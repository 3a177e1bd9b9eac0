// Slack's own contract for the fake (DESIGN.md §9): every Web API call is checked against ./openapi.json, the methods Herald
// calls from the Swagger 2 description Slack publishes (github.com/slackapi/slack-api-specs, last updated October 2020),
// converted to OpenAPI 3 request bodies and completed from the docs.slack.dev reference pages for what Slack added since
// (each such method names its page in `x-herald-docs`); refreshed with scripts/contracts/slack.mjs. The shared OpenAPI checker
// (../openapi.ts) reads the body of the content type the request was sent with: a JSON body is checked against the method's
// JSON arguments (refused on a method that takes forms only), a form against its form arguments. Arguments are closed: one the
// method does not list is refused, like a missing required one or a value of another type. A mismatch is a bug of Herald's
// call, so the fake refuses it and records it for the test to fail on.
import fs from 'node:fs';
import type { RecordedRequest } from '../../helpers/fake-server.js';
import { openApiContract, type OpenApiContract } from '../openapi.js';

type Schema = Record<string, any>;
const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

const document = JSON.parse(fs.readFileSync(new URL('./openapi.json', import.meta.url), 'utf8'));
export const slackContractSource: { url: string; revision: string; committed?: string; version: string; retrieved: string } = document['x-herald-source'];
const name = `Slack Web API ${slackContractSource.version} (slack-api-specs ${slackContractSource.revision.slice(0, 7)} + docs.slack.dev)`;

/** The document with each method's body in one content type only, since the checker reads the first one listed. */
function onlyContent(type: string): Schema {
  const paths = Object.fromEntries(
    Object.entries(document.paths as Record<string, { post: Schema }>).map(([route, { post }]) => {
      const media = post.requestBody?.content?.[type];
      return [route, { post: { ...post, requestBody: media ? { ...post.requestBody, content: { [type]: media } } : undefined } }];
    }),
  );
  return { ...document, paths };
}
const checkers: Record<string, OpenApiContract> = { [FORM]: openApiContract(onlyContent(FORM), name), [JSON_TYPE]: openApiContract(onlyContent(JSON_TYPE), name) };

/** What in a call of `method` (e.g. chat.postMessage) the contract refuses, one sentence each; [] when it matches. */
export function slackContractProblems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'form' | 'body' | 'headers'>, method: string): string[] {
  const operation: Schema | undefined = document.paths[`/${method}`]?.post;
  if (!operation) return [`${method} is not a method of ${name}`];
  const content: Record<string, { schema: Schema }> = operation.requestBody?.content ?? {};
  const type = request.json !== undefined ? JSON_TYPE : request.form ? FORM : undefined;
  if (!type && request.body.length > 0) return [`${method}'s arguments must be a form (${FORM}) or JSON body, not ${String(request.headers['content-type'] ?? 'an untyped body')}`];
  if (type && !content[type]) return [`${method} takes ${Object.keys(content).join(' or ')} arguments, not ${type}`];
  // Ajv says only "must NOT have additional properties": name the arguments the method does not take instead.
  const known = content[type ?? FORM]?.schema.properties ?? {};
  const given = type === JSON_TYPE && request.json && typeof request.json === 'object' ? Object.keys(request.json) : [...(request.form?.keys() ?? [])];
  const unknown = given.filter((key) => !(key in known)).map((key) => `${key} is not an argument of ${method} in ${name}`);
  const problems = [...unknown, ...checkers[type ?? FORM].problems(request, `/${method}`).filter((problem) => !(unknown.length > 0 && problem === 'body must NOT have additional properties'))];
  // In a form, an argument Slack reads as JSON (blocks, metadata, files) is a string that must parse as JSON.
  if (type === FORM) {
    const json = content[JSON_TYPE]?.schema.properties ?? {};
    for (const [key, value] of request.form!.entries()) {
      if (!['object', 'array'].includes(json[key]?.type)) continue;
      try {
        JSON.parse(value);
      } catch {
        problems.push(`body/${key} must be JSON presented as a URL-encoded string`);
      }
    }
  }
  return problems;
}
