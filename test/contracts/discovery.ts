// A Google API Discovery document (https://developers.google.com/discovery/v1/reference/apis) as a fake's contract (DESIGN.md
// §9). A Discovery document is not OpenAPI: a method is an `httpMethod` on `servicePath` + `path` (with `{+name}` path parameters
// matched by their `pattern`), its query parameters have a `type` (string, integer, boolean, number), `enum`, `repeated`,
// `minimum`/`maximum` and `required`, and its body is `request: {$ref}` into `schemas`. A method with `supportsMediaUpload` is
// also served at its `mediaUpload.protocols` paths with `uploadType` (the resumable upload's first request, its metadata as the
// JSON body and the file's type and size in X-Upload-Content-Type/-Length, checked against `accept` and `maxSize`).
//
// Bodies are checked with ajv after converting the schemas to JSON Schema. Google's APIs refuse a JSON field they do not know
// ("Invalid JSON payload received. Unknown name …: Cannot find field."), so an object with `properties` takes no others; a
// property whose `annotations.required` names the method is required for it.
//
//   const contract = discoveryContract([document], 'YouTube Data API v3');
//   contract.problems(request, '/youtube/v3/videos')   // [] when the request fits, else one sentence per problem
import { Ajv, type ValidateFunction } from 'ajv';
import type { RecordedRequest } from '../helpers/fake-server.js';

type Schema = Record<string, any>;
interface Parameter {
  type?: string;
  location: 'path' | 'query';
  required?: boolean;
  repeated?: boolean;
  enum?: string[];
  pattern?: string;
  minimum?: string;
  maximum?: string;
}
interface Method {
  id: string;
  path: string;
  httpMethod: string;
  parameters?: Record<string, Parameter>;
  request?: { $ref: string };
  supportsMediaUpload?: boolean;
  mediaUpload?: { accept: string[]; maxSize?: string; protocols: Record<string, { path: string }> };
}
interface Route {
  method: Method;
  document: Schema;
  pattern: RegExp;
  /** Path parameter name → regex group name. */
  groups: Map<string, string>;
  /** The media upload protocol this route serves, when it is one. */
  upload?: 'simple' | 'resumable';
}

export interface DiscoveryContract {
  /** What in a request the contract refuses, one sentence each; [] when it matches. `path` is the path on the API's host. */
  problems(request: Pick<RecordedRequest, 'method' | 'query' | 'json' | 'body' | 'headers'>, path: string): string[];
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A Discovery schema as JSON Schema (`$ref`s into `#/definitions`), objects closed to fields they do not list. */
function jsonSchema(schema: Schema, methodId: string): Schema {
  if (schema.$ref) return { $ref: `#/definitions/${schema.$ref}` };
  const type = schema.type as string | undefined;
  if (type === 'any' || !type) return {};
  if (type === 'array') return { type: 'array', ...(schema.items ? { items: jsonSchema(schema.items, methodId) } : {}) };
  if (type === 'object') {
    const properties = Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, inner]) => [name, jsonSchema(inner, methodId)]));
    const required = Object.entries((schema.properties ?? {}) as Record<string, Schema>)
      .filter(([, inner]) => (inner.annotations?.required as string[] | undefined)?.includes(methodId))
      .map(([name]) => name);
    return {
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: schema.additionalProperties ? jsonSchema(schema.additionalProperties, methodId) : !schema.properties,
    };
  }
  // 64-bit integers travel as strings; Google also reads them from JSON numbers.
  if (type === 'string' && /^u?int64$/.test(schema.format ?? '')) return { type: ['string', 'integer'], ...(schema.enum ? { enum: schema.enum } : {}) };
  return { type, ...(schema.enum ? { enum: schema.enum } : {}) };
}

/** A checker for one API host: `documents` are Discovery documents of APIs served there; `name` names them in problems. */
export function discoveryContract(documents: Schema[], name: string): DiscoveryContract {
  const routes: Route[] = [];
  const add = (document: Schema, method: Method, template: string, upload?: Route['upload']) => {
    const groups = new Map<string, string>();
    const source = template
      .split(/(\{\+?[^}]+\})/)
      .map((part) => {
        const match = /^\{(\+?)([^}]+)\}$/.exec(part);
        if (!match) return escape(part);
        const group = `p${groups.size}`;
        groups.set(match[2], group);
        const pattern = method.parameters?.[match[2]]?.pattern?.replace(/^\^/, '').replace(/\$$/, '');
        return `(?<${group}>${pattern ?? (match[1] ? '.+' : '[^/]+')})`;
      })
      .join('');
    routes.push({ method, document, pattern: new RegExp(`^/${source.replace(/^\//, '')}$`), groups, upload });
  };
  const walk = (document: Schema, node: Schema) => {
    for (const method of Object.values((node.methods ?? {}) as Record<string, Method>)) {
      add(document, method, `${document.servicePath ?? ''}${method.path}`);
      if (method.supportsMediaUpload && method.mediaUpload) {
        for (const [protocol, { path }] of Object.entries(method.mediaUpload.protocols)) add(document, method, path, protocol as Route['upload']);
      }
    }
    for (const resource of Object.values((node.resources ?? {}) as Record<string, Schema>)) walk(document, resource);
  };
  for (const document of documents) walk(document, document);

  const ajv = new Ajv({ strict: false, allErrors: true });
  const compiled = new Map<string, ValidateFunction>();
  const bodyValidator = (route: Route) => {
    const key = route.method.id;
    let validate = compiled.get(key);
    if (!validate) {
      const definitions = Object.fromEntries(Object.entries(route.document.schemas as Record<string, Schema>).map(([schemaName, schema]) => [schemaName, jsonSchema(schema, key)]));
      validate = ajv.compile({ definitions, ...jsonSchema(route.method.request!, key) });
      compiled.set(key, validate);
    }
    return validate;
  };

  function valueProblem(parameter: Parameter, value: string): string | undefined {
    if (parameter.type === 'integer' || parameter.type === 'number') {
      if (!(parameter.type === 'integer' ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/).test(value)) return `must be an ${parameter.type === 'integer' ? 'integer' : 'number'}, not "${value}"`;
      if (parameter.minimum !== undefined && Number(value) < Number(parameter.minimum)) return `must be at least ${parameter.minimum}, not ${value}`;
      if (parameter.maximum !== undefined && Number(value) > Number(parameter.maximum)) return `must be at most ${parameter.maximum}, not ${value}`;
    }
    if (parameter.type === 'boolean' && value !== 'true' && value !== 'false') return `must be true or false, not "${value}"`;
    if (parameter.enum && !parameter.enum.includes(value)) return `must be one of ${parameter.enum.join(', ')}, not "${value}"`;
    if (parameter.location === 'query' && parameter.pattern && !new RegExp(parameter.pattern).test(value)) return `does not match ${parameter.pattern}`;
    return undefined;
  }

  return {
    problems(request, path) {
      const candidates = routes.filter((route) => route.pattern.test(path));
      const route = candidates.find((candidate) => candidate.method.httpMethod === request.method.toUpperCase());
      if (!route) return [candidates.length ? `${request.method} ${path} is not a method of ${name} (that path takes ${[...new Set(candidates.map((candidate) => candidate.method.httpMethod))].join(', ')})` : `${request.method} ${path} is not a method of ${name}`];
      const { method } = route;
      const problems: string[] = [];
      const values = route.pattern.exec(path)!.groups ?? {};
      const parameters = { ...(route.document.parameters ?? {}), ...(method.parameters ?? {}) } as Record<string, Parameter>;
      for (const [parameterName, parameter] of Object.entries(parameters)) {
        const given = parameter.location === 'path' ? [values[route.groups.get(parameterName) ?? ''] ?? ''].filter(Boolean) : request.query.getAll(parameterName);
        if (given.length === 0) {
          if (parameter.required) problems.push(`${method.id}: ${parameter.location} parameter ${parameterName} is required`);
          continue;
        }
        if (given.length > 1 && !parameter.repeated) problems.push(`${method.id}: query parameter ${parameterName} is given ${given.length} times but is not repeated`);
        for (const value of given) {
          const problem = valueProblem(parameter, parameter.location === 'path' ? decodeURIComponent(value) : value);
          if (problem) problems.push(`${method.id}: ${parameter.location} parameter ${parameterName} ${problem}`);
        }
      }
      for (const key of new Set(request.query.keys())) {
        if (!(key in parameters) || parameters[key].location !== 'query') problems.push(`${method.id}: query parameter ${key} is not in the contract`);
      }
      if (route.upload) {
        const uploadType = request.query.get('uploadType');
        const allowed = route.upload === 'resumable' ? ['resumable'] : ['media', 'multipart', 'resumable'];
        if (!uploadType || !allowed.includes(uploadType)) problems.push(`${method.id}: a media upload needs uploadType ${allowed.join(' or ')}`);
        if (uploadType === 'resumable') {
          const type = String(request.headers['x-upload-content-type'] ?? '');
          const size = Number(request.headers['x-upload-content-length']);
          const accepted = method.mediaUpload!.accept.some((pattern) => new RegExp(`^${escape(pattern).replace('\\*', '[^/]+')}$`).test(type));
          if (!accepted) problems.push(`${method.id}: X-Upload-Content-Type "${type}" is not one of ${method.mediaUpload!.accept.join(', ')}`);
          if (request.headers['x-upload-content-length'] !== undefined && (!Number.isInteger(size) || size < 0 || (method.mediaUpload!.maxSize && size > Number(method.mediaUpload!.maxSize)))) {
            problems.push(`${method.id}: X-Upload-Content-Length ${request.headers['x-upload-content-length']} is not a size up to ${method.mediaUpload!.maxSize}`);
          }
        }
      }
      const hasBody = request.body.length > 0;
      if (method.request) {
        if (!hasBody) {
          if (!route.upload) problems.push(`${method.id}: the request needs a JSON ${method.request.$ref} body`);
        } else if (request.json === undefined) problems.push(`${method.id}: the body is not JSON (a ${method.request.$ref} is expected)`);
        else {
          const validate = bodyValidator(route);
          if (!validate(request.json)) {
            problems.push(...(validate.errors ?? []).map((error) => `${method.id}: body${error.instancePath} ${error.message}${error.params && 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : ''}`));
          }
        }
      } else if (hasBody) problems.push(`${method.id} takes no body`);
      return problems;
    },
  };
}
