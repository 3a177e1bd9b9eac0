// An OpenAPI 3 document as a fake's contract (DESIGN.md §9): every request a fake receives is checked against the vendored
// document of its platform: the operation exists for the method and path, path and query parameters are declared and
// match their schemas, required ones are there, and the JSON or form body matches the request body schema (ajv). A
// mismatch is a bug of Herald's request, so the fake refuses it and records it for the test to fail on.
//
//   const contract = openApiContract(document, 'Pinterest API 5.23.0');
//   contract.problems(request, '/pins')      // [] when the request fits, else one sentence per problem
import fs from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { RecordedRequest } from '../helpers/fake-server.js';

type Schema = Record<string, any>;
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
  style?: string;
  explode?: boolean;
}

export interface OpenApiContract {
  /** What in a request the contract refuses, one sentence each; [] when it matches. `path` is relative to the server URL. */
  problems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'form' | 'body'>, path: string): string[];
}

/**
 * Descriptions often use oneOf for alternatives that overlap (the same value in two enums, read by OpenAPI generators as
 * "any of"); strict oneOf would refuse every shared value, so it is checked as anyOf. Ajv's discriminator keyword takes no
 * `mapping`: the alternatives are told apart by their own schemas.
 */
const asAnyOf = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll('"oneOf":', '"anyOf":'));
let documents = 0;

/** A checker for `document` (an OpenAPI 3.0/3.1 object); `name` (with its version) names it in the problems. */
export function openApiContract(document: Schema, name: string): OpenApiContract {
  const id = `contract-${++documents}.json`;
  const instance = (coerceTypes: false | 'array') => {
    const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes });
    (addFormats as unknown as (instance: Ajv) => void)(ajv);
    ajv.addSchema({ ...(asAnyOf(document) as object), $id: id });
    return ajv;
  };
  const exact = instance(false);
  const coercing = instance('array');

  /** A `$ref`'d parameter or body resolved in the document. */
  const resolve = <T>(value: T | { $ref: string }): T => {
    if (value && typeof value === 'object' && '$ref' in value) return value.$ref.slice(2).split('/').reduce((node: any, key: string) => node[key], document) as T;
    return value as T;
  };

  /** Schemas of the document, compiled against it (so their own `$ref`s resolve). */
  const compiled = new Map<string, ValidateFunction>();
  function validator(schema: Schema, coerce: boolean): ValidateFunction {
    const key = `${coerce}:${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      const rebased = JSON.parse(JSON.stringify(schema).replaceAll('"$ref":"#/', `"$ref":"${id}#/`));
      validate = (coerce ? coercing : exact).compile(asAnyOf(rebased) as Schema);
      compiled.set(key, validate);
    }
    return validate;
  }

  const routes = Object.entries(document.paths as Record<string, Record<string, Schema>>).map(([template, operations]) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{([^}]+)\}/g, (_, parameter: string) => `(?<${parameter.replace(/\W/g, '_')}>[^/]+)`)}$`),
    operations,
  }));

  const problemsOf = (validate: ValidateFunction, where: string) => (validate.errors ?? []).map((error) => `${where}${error.instancePath} ${error.message}`);

  return {
    problems(request, path) {
      const method = request.method.toLowerCase();
      const route = routes.find((candidate) => candidate.pattern.test(path) && candidate.operations[method]);
      if (!route) return [`${request.method} ${path} is not an operation of ${name}`];
      const operation = route.operations[method];
      // Parameters shared by every operation of a path are listed on the path itself.
      const shared = (route.operations.parameters ?? []) as unknown as Parameter[];
      const parameters: Parameter[] = [...shared, ...(operation.parameters ?? [])].map(resolve);
      const problems: string[] = [];
      const pathValues = route.pattern.exec(path)!.groups ?? {};
      for (const parameter of parameters) {
        if (parameter.in !== 'path' && parameter.in !== 'query') continue;
        const raw = parameter.in === 'path' ? pathValues[parameter.name.replace(/\W/g, '_')] : request.query.get(parameter.name) ?? undefined;
        if (raw === undefined) {
          if (parameter.required) problems.push(`${parameter.in} parameter ${parameter.name} is required`);
          continue;
        }
        const value = parameter.schema?.type === 'array' && parameter.explode === false ? raw.split(',') : decodeURIComponent(raw);
        const check = validator({ type: 'object', properties: { value: parameter.schema ?? {} } }, true);
        if (!check({ value })) problems.push(...problemsOf(check, `${parameter.in} parameter ${parameter.name}`).map((text) => text.replace('/value', '')));
      }
      for (const key of request.query.keys()) {
        if (!parameters.some((parameter) => parameter.in === 'query' && parameter.name === key)) problems.push(`query parameter ${key} is not in the contract`);
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
    },
  };
}

/** Where a vendored document came from, as its script recorded it (`x-herald-source`). */
export interface ContractSource {
  url: string;
  revision: string;
  version: string;
  retrieved: string;
}

/**
 * A fake's vendored OpenAPI document (`file`, e.g. `new URL('./openapi.json', import.meta.url)`): its recorded source, and
 * what in a request it refuses; `name` names the document in the problems.
 */
export function vendoredOpenApi(file: URL, name: (source: ContractSource) => string): { source: ContractSource; problems: OpenApiContract['problems'] } {
  const document = JSON.parse(fs.readFileSync(file, 'utf8'));
  const source: ContractSource = document['x-herald-source'];
  const checker = openApiContract(document, name(source));
  return { source, problems: (request, path) => checker.problems(request, path) };
}
