// Discord's own contract for the fake (DESIGN.md §9): every bot API request is checked against the vendored OpenAPI 3.1
// description (./openapi.json, from github.com/discord/discord-api-spec at the commit named in its `x-herald-source`; refreshed
// with scripts/contracts/discord.mjs) by the shared OpenAPI checker (../openapi.ts), plus two checks of this file:
// - A multipart message (https://discord.com/developers/docs/reference#uploading-files): its `payload_json` part is the JSON
//   body and is checked as one; the other parts must be the `files[n]` the description lists. (The description names the
//   JSON fields as form parts and has no `payload_json`; the reference page documents both ways.)
// - Fields the request schema does not declare: the description leaves its objects open, and Discord drops a field it does
//   not know without a word, so a misspelt one (allowed_mention) would be lost silently. The fake refuses it instead.
// A mismatch is a bug of Herald's request: the fake refuses it and records it for the test to fail on.
import fs from 'node:fs';
import { multipartOf, type RecordedRequest } from '../../helpers/fake-server.js';
import { openApiContract } from '../openapi.js';

type Schema = Record<string, any>;
const document = JSON.parse(fs.readFileSync(new URL('./openapi.json', import.meta.url), 'utf8'));
export const discordContractSource: { url: string; revision: string; committed?: string; version: string; retrieved: string } = document['x-herald-source'];
const name = `Discord HTTP API ${discordContractSource.version} (discord-api-spec ${discordContractSource.revision.slice(0, 7)})`;
// Discord's own formats (snowflake, nonce) are not JSON Schema formats: their patterns and lengths carry the check, so the
// checker is given the document without them (ajv would warn about each one).
const checker = openApiContract(JSON.parse(JSON.stringify(document).replace(/"format":"(snowflake|nonce)",?/g, '').replace(/,}/g, '}')), name);

const resolve = (schema: Schema | undefined): Schema | undefined =>
  schema?.$ref ? (schema.$ref as string).slice(2).split('/').reduce((node: any, key: string) => node?.[key], document) : schema;

const routes = Object.entries(document.paths as Record<string, Record<string, Schema>>).map(([template, operations]) => ({
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  operations,
}));

/** The alternatives of a schema that describe objects (a `oneOf` of null and an object is the object). */
function objectSchemas(schema: Schema | undefined): Schema[] {
  const resolved = resolve(schema);
  if (!resolved) return [];
  const alternatives = [...(resolved.oneOf ?? []), ...(resolved.anyOf ?? [])].flatMap(objectSchemas);
  const own = resolved.properties || resolved.allOf ? [resolved] : [];
  return [...own, ...alternatives];
}

/** Every field of `value` (and of the objects and arrays in it) that its schema does not declare. */
function unknownFields(schema: Schema | undefined, value: unknown, where: string): string[] {
  if (value === null || typeof value !== 'object') return [];
  const resolved = resolve(schema);
  if (!resolved) return [];
  if (Array.isArray(value)) {
    const items = resolved.items ?? [...(resolved.oneOf ?? []), ...(resolved.anyOf ?? [])].map(resolve).find((alternative) => alternative?.items)?.items;
    return items ? value.flatMap((entry, index) => unknownFields(items, entry, `${where}[${index}]`)) : [];
  }
  const candidates = objectSchemas(resolved);
  if (candidates.length !== 1) return [];
  const properties: Record<string, Schema> = {};
  for (const part of [candidates[0], ...(candidates[0].allOf ?? []).map(resolve)]) Object.assign(properties, part?.properties);
  if (Object.keys(properties).length === 0 || candidates[0].additionalProperties) return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([key, inner]) =>
    key in properties ? unknownFields(properties[key], inner, `${where}.${key}`) : [`${where}.${key} is not a field of ${name} (Discord would drop it)`],
  );
}

const FILE_PART = /^files\[\d+\]$/;

/**
 * What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the API base
 * (/api/v10). Async because a multipart body is parsed to check its parts.
 */
export async function discordContractProblems(request: RecordedRequest, path: string): Promise<string[]> {
  const operation = routes.find((route) => route.pattern.test(path) && route.operations[request.method.toLowerCase()])?.operations[request.method.toLowerCase()];
  let checked: RecordedRequest = request;
  const problems: string[] = [];
  if (String(request.headers['content-type'] ?? '').startsWith('multipart/form-data')) {
    const media = operation?.requestBody?.content?.['multipart/form-data'];
    if (!media) return [`${request.method} ${path} takes no multipart body in ${name}`];
    const form = await multipartOf(request);
    if (!form) return ['the multipart body cannot be parsed'];
    const listed = new Set(Object.keys(resolve(media.schema)?.allOf?.map(resolve).find((part: Schema) => part?.properties?.['files[0]'])?.properties ?? {}));
    let payload: unknown = {};
    for (const [field, value] of form.entries()) {
      if (field === 'payload_json' && typeof value === 'string') {
        try {
          payload = JSON.parse(value);
        } catch {
          problems.push('payload_json is not JSON');
        }
      } else if (!(FILE_PART.test(field) && listed.has(field) && typeof value !== 'string')) problems.push(`multipart part ${field} is not payload_json or a file part files[0]…files[9] of ${name}`);
    }
    checked = { ...request, json: payload };
  }
  problems.push(...checker.problems(checked, path));
  const schema = operation?.requestBody?.content?.['application/json']?.schema;
  if (schema && checked.json !== undefined) problems.push(...unknownFields(schema, checked.json, 'body'));
  return problems;
}
