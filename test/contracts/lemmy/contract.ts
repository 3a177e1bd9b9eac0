// Lemmy's own contract for the fake (DESIGN.md §9): every API request is checked against the request types of Lemmy's
// official client, lemmy-js-client, at the tag of the API version it speaks (./v3.json: tag 0.19.9 for /api/v3 of Lemmy
// 0.19; ./v4.json: tag 1.0.0-beta.1 for /api/v4 of Lemmy 1.0), cut and turned into JSON Schema by
// scripts/contracts/lemmy.mjs. As the client sends them: a GET's form goes in the query string, every other call's as a
// JSON body; the call (method and path) must be one of the client's, and the fields those of its request type (ts-rs types
// of Lemmy's Rust structs: a field they lack is not Lemmy's), with required ones present and the declared types and enums.
// Image uploads go to the client's upload path in its multipart field. A mismatch is a bug of Herald's request.
import fs from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import type { RecordedRequest } from '../../helpers/fake-server.js';

export type LemmyApiVersion = 'v3' | 'v4';
interface Contract {
  'x-herald-source': { url: string; revision: string; version: string; retrieved: string };
  operations: Record<string, { request: string | null; response: string }>;
  upload: { path: string; field: string };
  definitions: Record<string, object>;
}

const contracts = Object.fromEntries(
  (['v3', 'v4'] as const).map((version) => [version, JSON.parse(fs.readFileSync(new URL(`./${version}.json`, import.meta.url), 'utf8')) as Contract]),
) as Record<LemmyApiVersion, Contract>;

export const lemmyContractSource = (version: LemmyApiVersion) => contracts[version]['x-herald-source'];
/** Where the client uploads an image (path under /api/vN, or /pictrs/image for v3) and in which multipart field. */
export const lemmyUpload = (version: LemmyApiVersion) => contracts[version].upload;

const validators = new Map<string, ValidateFunction>();
function validator(version: LemmyApiVersion, type: string, query: boolean): ValidateFunction {
  const key = `${version}:${type}:${query}`;
  let validate = validators.get(key);
  if (!validate) {
    // A query string carries text: numbers and booleans are read from it as Lemmy's query parser reads them.
    const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: query });
    validate = ajv.compile({ definitions: contracts[version].definitions, $ref: `#/definitions/${type}` });
    validators.set(key, validate);
  }
  return validate;
}

const said = (validate: ValidateFunction, where: string) =>
  (validate.errors ?? []).map((error) => {
    const field = `${where}${error.instancePath.replaceAll('/', '.')}`;
    if (error.keyword === 'additionalProperties') return `${field}.${(error.params as { additionalProperty: string }).additionalProperty} is not a field of the request`;
    if (error.keyword === 'enum') return `${field} must be one of ${(error.params as { allowedValues: string[] }).allowedValues.join(', ')}`;
    return `${field} ${error.message}`;
  });

/** What the client's contract refuses in an API request, one sentence each; [] when it fits. `path` is under /api/vN. */
export function lemmyContractProblems(version: LemmyApiVersion, request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'body' | 'headers'>, path: string): string[] {
  const contract = contracts[version];
  const operation = contract.operations[`${request.method} ${path}`];
  if (!operation) return [`${request.method} /api/${version}${path} is not a call of lemmy-js-client ${contract['x-herald-source'].revision.split(',')[0]}`];
  if (request.method === 'GET') {
    if (request.body.length > 0) return ['a GET carries its form in the query string, not a body'];
    const query: Record<string, string> = {};
    const problems: string[] = [];
    for (const key of new Set(request.query.keys())) {
      if (request.query.getAll(key).length > 1) problems.push(`query parameter ${key} is sent more than once`);
      query[key] = request.query.get(key)!;
    }
    if (operation.request === null) return [...problems, ...Object.keys(query).map((key) => `query parameter ${key} is not a field of the request`)];
    const validate = validator(version, operation.request, true);
    return validate(query) ? problems : [...problems, ...said(validate, 'query')];
  }
  if (request.query.size > 0) return [`${request.method} ${path} carries its form as a JSON body, not in the query string`];
  if (!String(request.headers['content-type'] ?? '').includes('application/json') || request.json === undefined) return [`${request.method} ${path} needs a JSON body`];
  if (operation.request === null) return [];
  const validate = validator(version, operation.request, false);
  return validate(request.json) ? [] : said(validate, 'body');
}
