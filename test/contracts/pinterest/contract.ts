// Pinterest's own contract for the fake: every request to the API is checked against the vendored OpenAPI description
// (./openapi.json, from github.com/pinterest/api-description at the revision named in its `x-herald-source`; refreshed with
// scripts/contracts/pinterest.mjs): the operation exists for the method and path, path and query parameters are declared and
// match their schemas, required ones are there, and the JSON or form body matches the request body schema. A mismatch is a
// bug of Herald's request, so the fake refuses it (400) and records it for the test to fail on.
import fs from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { RecordedRequest } from '../../helpers/fake-server.js';

type Schema = Record<string, any>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
  style?: string;
  explode?: boolean;
}

const contract = JSON.parse(fs.readFileSync(new URL('./openapi.json', import.meta.url), 'utf8'));
export const pinterestContractSource: { url: string; revision: string; version: string; retrieved: string } = contract['x-herald-source'];

// Ajv's discriminator keyword takes no `mapping`: the oneOf alternatives are told apart by their own schemas (each fixes source_type).
const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: false });
(addFormats as unknown as (instance: Ajv) => void)(ajv);
/**
 * Pinterest's description uses oneOf for alternatives that overlap (the same metric type in two enums, read by OpenAPI
 * generators as "any of"); strict oneOf would refuse every shared value, so it is checked as anyOf.
 */
const asAnyOf = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll('"oneOf":', '"anyOf":'));
ajv.addSchema({ ...(asAnyOf(contract) as object), $id: 'pinterest.json' });
const coercing = new Ajv({ strict: false, allErrors: true, coerceTypes: 'array' });
(addFormats as unknown as (instance: Ajv) => void)(coercing);
coercing.addSchema({ ...(asAnyOf(contract) as object), $id: 'pinterest.json' });

/** A `$ref`'d parameter or body resolved in the contract. */
const resolve = <T>(value: T | { $ref: string }): T => {
  if (value && typeof value === 'object' && '$ref' in value) return value.$ref.slice(2).split('/').reduce((node: any, key: string) => node[key], contract) as T;
  return value as T;
};

/** Schemas of the contract, compiled against it (so their own `$ref`s resolve). */
const compiled = new Map<string, ValidateFunction>();
function validator(schema: Schema, coerce: boolean): ValidateFunction {
  const key = `${coerce}:${JSON.stringify(schema)}`;
  let validate = compiled.get(key);
  if (!validate) {
    // `$ref`s inside the schema point into the contract document.
    const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', '"$ref":"pinterest.json#/'));
    validate = (coerce ? coercing : ajv).compile(asAnyOf(rebased) as Schema);
    compiled.set(key, validate);
  }
  return validate;
}

const routes = Object.entries(contract.paths as Record<string, Record<string, Schema>>).map(([template, operations]) => ({
  template,
  pattern: new RegExp(`^${template.replace(/\{([^}]+)\}/g, '(?<$1>[^/]+)')}$`),
  operations,
}));

const problemsOf = (validate: ValidateFunction, where: string) => (validate.errors ?? []).map((error) => `${where}${error.instancePath} ${error.message}`);

/** What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the API base (/v5). */
export function contractProblems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'form' | 'body'>, path: string): string[] {
  const method = request.method.toLowerCase();
  const route = routes.find((candidate) => candidate.pattern.test(path) && candidate.operations[method]);
  if (!route) return [`${request.method} ${path} is not an operation of Pinterest API ${pinterestContractSource.version}`];
  const operation = route.operations[method];
  const parameters: Parameter[] = (operation.parameters ?? []).map(resolve);
  const problems: string[] = [];
  const pathValues = route.pattern.exec(path)!.groups ?? {};
  for (const parameter of parameters) {
    const raw = parameter.in === 'path' ? pathValues[parameter.name] : parameter.in === 'query' ? request.query.get(parameter.name) ?? undefined : undefined;
    if (parameter.in !== 'path' && parameter.in !== 'query') continue;
    if (raw === undefined) {
      if (parameter.required) problems.push(`${parameter.in} parameter ${parameter.name} is required`);
      continue;
    }
    const value = parameter.schema?.type === 'array' && parameter.explode === false ? raw.split(',') : decodeURIComponent(raw);
    const holder = { value };
    const check = validator({ type: 'object', properties: { value: parameter.schema ?? {} } }, true);
    if (!check(holder)) problems.push(...problemsOf(check, `${parameter.in} parameter ${parameter.name}`).map((text) => text.replace('/value', '')));
  }
  for (const name of request.query.keys()) {
    if (!parameters.some((parameter) => parameter.in === 'query' && parameter.name === name)) problems.push(`query parameter ${name} is not in the contract`);
  }
  const body = operation.requestBody ? resolve<Schema>(operation.requestBody) : undefined;
  if (body) {
    const [type, media] = Object.entries(body.content as Record<string, { schema: Schema }>)[0];
    const value = type === 'application/json' ? request.json : request.form ? Object.fromEntries(request.form) : undefined;
    if (value === undefined) {
      if (body.required) problems.push(`the request needs a ${type} body`);
    } else {
      const check = validator(media.schema, type !== 'application/json');
      if (!check(value)) problems.push(...problemsOf(check, 'body'));
    }
  } else if (request.body.length > 0) problems.push(`${request.method} ${route.template} takes no body`);
  return problems;
}
