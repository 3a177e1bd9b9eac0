// Checks a request against X's own contract: the OpenAPI document X publishes at https://api.x.com/2/openapi.json, vendored
// in x-openapi.json (version and date in x-openapi.json.source.json; scripts/refresh-contracts.mjs renews it). The method and
// path must be an operation of the document; path and query parameters, and the JSON or multipart body, must match its
// schemas (validated with ajv); a query parameter the operation does not list is refused, as X refuses it.
//
// Where the document and X's documentation pages disagree, the documentation wins, because it is what Herald follows:
// the document (2.167) names the Post fields parameter `post.fields` and the reply link `referenced_posts`, while
// docs.x.com ("Fields", https://docs.x.com/x-api/fundamentals/fields; "Data Dictionary",
// https://docs.x.com/x-api/fundamentals/data-dictionary, 2026-07-24; "Expansions",
// https://docs.x.com/x-api/fundamentals/expansions) still list `tweet.fields`, `referenced_tweets` and
// `referenced_tweets.id`. So the Post fields parameter is checked as `tweet.fields` with the documented values, and Post
// expansions against the documented list; `post.fields` itself is refused (the pages do not list it).
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const DOCUMENT_ID = 'x-openapi.json';

/** `tweet.fields` as the Data Dictionary lists the Post object's fields. */
export const DOCUMENTED_TWEET_FIELDS = [
  'id', 'text', 'edit_history_tweet_ids', 'article', 'attachments', 'author_id', 'card_uri', 'community_id', 'context_annotations',
  'conversation_id', 'created_at', 'display_text_range', 'edit_controls', 'entities', 'geo', 'in_reply_to_user_id', 'lang',
  'non_public_metrics', 'note_tweet', 'organic_metrics', 'paid_partnership', 'possibly_sensitive', 'promoted_metrics',
  'public_metrics', 'referenced_tweets', 'reply_settings', 'withheld', 'scopes', 'media_metadata',
];

/** Post expansions as the Expansions page lists them. */
export const DOCUMENTED_POST_EXPANSIONS = [
  'author_id', 'referenced_tweets.id', 'referenced_tweets.id.author_id', 'in_reply_to_user_id', 'attachments.media_keys',
  'attachments.poll_ids', 'geo.place_id', 'entities.mentions.username', 'edit_history_tweet_ids',
];

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Record<string, any>;
}

interface Operation {
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, any> }> };
}

export interface ContractRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  contentType: string;
  json?: unknown;
  /** The multipart fields: strings as sent, files as `File`. */
  form?: FormData;
}

// Every `#/components/...` reference is made absolute, so any schema of the document compiles on its own against it.
const text = readFileSync(new URL('./x-openapi.json', import.meta.url), 'utf8').replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`);
const document = JSON.parse(text) as { info: { version: string }; paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, any>> };
export const X_OPENAPI_VERSION = document.info.version;

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
ajv.addSchema(document, DOCUMENT_ID);
const compiled = new Map<string, ValidateFunction>();
function validator(key: string, schema: Record<string, any>): ValidateFunction {
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(schema)));
  return validate;
}

const resolve = <T>(value: T | { $ref: string }): T => {
  if (!value || typeof value !== 'object' || !('$ref' in value)) return value as T;
  const [, pointer] = value.$ref.split('#');
  return pointer.split('/').slice(1).reduce((node: any, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')], document) as T;
};

/** The operation of `method path`: a literal path wins over a templated one (`/2/users/me` over `/2/users/{id}`). */
function operationOf(method: string, path: string): { template: string; operation: Operation; params: Record<string, string> } | undefined {
  const segments = path.split('/');
  const candidates = Object.entries(document.paths)
    .filter(([template, item]) => item[method.toLowerCase()] && template.split('/').length === segments.length)
    .map(([template, item]) => {
      const parts = template.split('/');
      const params: Record<string, string> = {};
      const matches = parts.every((part, index) => {
        if (/^\{.+\}$/.test(part)) return (params[part.slice(1, -1)] = decodeURIComponent(segments[index])) !== '';
        return part === segments[index];
      });
      return matches ? { template, operation: item[method.toLowerCase()], params, templated: parts.filter((part) => part.startsWith('{')).length } : undefined;
    })
    .filter((candidate) => candidate !== undefined)
    .sort((a, b) => a.templated - b.templated);
  return candidates[0];
}

/** The operation's parameters with the documentation's names and values where they differ from the document. */
function parametersOf(operation: Operation): Parameter[] {
  return (operation.parameters ?? []).map((entry) => {
    const parameter = resolve(entry);
    if (parameter.name === 'post.fields') {
      return { ...parameter, name: 'tweet.fields', schema: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: DOCUMENTED_TWEET_FIELDS } } };
    }
    if ('$ref' in entry && entry.$ref.endsWith('/PostExpansionsParameter')) {
      return { ...parameter, schema: { ...parameter.schema, items: { type: 'string', enum: DOCUMENTED_POST_EXPANSIONS } } };
    }
    return parameter;
  });
}

/** A query or path value as its schema types it: form style without explode, so arrays are comma-separated. */
function typed(value: string, schema: Record<string, any>): unknown {
  const resolved = resolve(schema);
  if (resolved.type === 'array') return value.split(',').map((item) => typed(item, resolved.items ?? {}));
  if (resolved.type === 'integer' || resolved.type === 'number') return value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  if (resolved.type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

function detail(params: Record<string, unknown>): string {
  if ('allowedValues' in params) return ` (${(params.allowedValues as string[]).join(', ')})`;
  if ('additionalProperty' in params) return ` (${String(params.additionalProperty)})`;
  return '';
}

const describe = (where: string, validate: ValidateFunction) =>
  (validate.errors ?? []).slice(0, 5).map((error) => `${where}${error.instancePath} ${error.message}${detail(error.params)}`);

function checkBody(operation: Operation, key: string, request: ContractRequest): string[] {
  const body = operation.requestBody;
  const hasBody = request.json !== undefined || request.form !== undefined || request.contentType !== '';
  if (!body) return hasBody && request.contentType !== '' ? [`the operation takes no body (got ${request.contentType})`] : [];
  const mediaType = request.contentType.split(';')[0].trim();
  const content = body.content[mediaType];
  if (!content) return body.required || hasBody ? [`the body must be ${Object.keys(body.content).join(' or ')} (got ${mediaType || 'none'})`] : [];
  let value: unknown = request.json;
  if (mediaType === 'multipart/form-data') {
    if (!request.form) return ['the multipart body could not be read'];
    const schema = resolve(content.schema);
    value = Object.fromEntries(
      [...request.form.entries()].map(([name, field]) => [name, typeof field === 'string' ? typed(field, schema.properties?.[name] ?? {}) : '(file)']),
    );
  }
  const validate = validator(`${key} body ${mediaType}`, content.schema);
  return validate(value) ? [] : describe('body', validate);
}

/** What is wrong with the request by X's contract (an empty list when nothing is). */
export function contractProblems(request: ContractRequest): string[] {
  const found = operationOf(request.method, request.path);
  if (!found) return [`X's OpenAPI document ${X_OPENAPI_VERSION} has no operation ${request.method} ${request.path}`];
  const { template, operation, params } = found;
  const key = `${request.method} ${template}`;
  const problems: string[] = [];
  const parameters = parametersOf(operation);
  for (const parameter of parameters.filter((item) => item.in === 'path')) {
    const validate = validator(`${key} path ${parameter.name}`, parameter.schema);
    if (!validate(typed(params[parameter.name] ?? '', parameter.schema))) problems.push(...describe(`path parameter ${parameter.name}`, validate));
  }
  const query = parameters.filter((item) => item.in === 'query');
  for (const name of new Set(request.query.keys())) {
    const parameter = query.find((item) => item.name === name);
    if (!parameter) {
      problems.push(`the query parameter [${name}] is not one of [${query.map((item) => item.name).join(',')}]`);
      continue;
    }
    const values = request.query.getAll(name);
    if (values.length > 1) problems.push(`the query parameter [${name}] is given ${values.length} times`);
    const validate = validator(`${key} query ${name}`, parameter.schema);
    if (!validate(typed(values[0], parameter.schema))) problems.push(...describe(`query parameter ${name}`, validate));
  }
  for (const parameter of query.filter((item) => item.required && !request.query.has(item.name))) problems.push(`the query parameter [${parameter.name}] is required`);
  problems.push(...checkBody(operation, key, request));
  return problems.map((problem) => `${request.method} ${request.path}: ${problem}`);
}
