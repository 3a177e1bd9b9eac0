// Meta's own contract for the Graph API fake (DESIGN.md §9): every Graph request is checked against the vendored cut of the
// node and edge specs Meta publishes in its SDK code generator (./graph.json, from github.com/facebook/facebook-business-sdk-
// codegen api_specs/specs at the revision named in its `x-herald-source`, with the corrections from Meta's reference pages it
// lists in `x-herald-corrections`; refreshed with scripts/contracts/meta.mjs). A request names a node the fake knows the type
// of and an operation of that type (GET/POST/DELETE on the node, or on one of its edges); every parameter is one the operation
// declares, or one Graph takes on any request (access_token, appsecret_proof, fields, pretty; limit/after/before on a list);
// required ones are present; each value has its declared type as Graph reads it (a JSON body's own types, or a query string:
// integers as digits, booleans true/false/1/0, lists comma-separated or as JSON, maps as JSON, enums from enum_types.json);
// and `fields` names only fields or edges of the node type the operation answers, nested `{…}` checked against the type of
// the field or edge they expand, modifiers (`.summary(true)`, `.limit(0)`) on edges only. A request that does not fit is
// answered with Graph's error (code 100, OAuthException for a parameter or field, GraphMethodException subcode 33 for an
// operation the node does not have) and is a bug of Herald.
import fs from 'node:fs';

interface Param {
  name: string;
  required: boolean;
  type: string;
}
interface Operation {
  returns: string;
  params: Param[];
  addsFields?: Record<string, string>;
}
interface NodeType {
  fields: Record<string, string>;
  edges: Record<string, string>;
  operations: Record<string, Operation>;
}
interface Contract {
  'x-herald-source': { url: string; revision: string; date: string; version: string; retrieved: string };
  'x-herald-corrections': { correction: string; source: string }[];
  version: string;
  nodes: Record<string, NodeType>;
  enums: Record<string, string[]>;
}

const contract = JSON.parse(fs.readFileSync(new URL('./graph.json', import.meta.url), 'utf8')) as Contract;
export const metaContractSource = contract['x-herald-source'];
export const metaContractCorrections = contract['x-herald-corrections'];
export const metaContractVersion = contract.version;
export const metaNodeTypes = Object.keys(contract.nodes);
/** A root edge of the Graph API (GET /ig_audio), which hangs off no node. */
export const isRootEdge = (name: string) => contract.nodes['(root)']?.edges[name] !== undefined;

/** Graph's refusal: the body's message, type and subcode (the fake adds code 100 and fbtrace_id), and what was wrong. */
export interface MetaContractRefusal {
  message: string;
  type: 'OAuthException' | 'GraphMethodException';
  subcode?: number;
  problems: string[];
}

/** One Graph request as the fake sees it: the node's type, the edge (if any), and every parameter (query, form or JSON). */
export interface GraphRequestShape {
  method: string;
  node: string;
  id: string;
  edge?: string;
  params: Record<string, unknown>;
}

const ANY_REQUEST = ['access_token', 'appsecret_proof', 'fields', 'pretty'];
const LIST_REQUEST = ['limit', 'after', 'before'];

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** What is wrong with one value for its declared type (undefined when it fits). */
function valueProblem(type: string, value: unknown, what: string): string | undefined {
  const list = /^list<(.*)>$/.exec(type);
  if (list || type === 'list') {
    const items = Array.isArray(value) ? value : typeof value === 'string' ? (value.trim().startsWith('[') ? parseJson(value) : value.split(',')) : undefined;
    if (!Array.isArray(items)) return `${what} must be a list, got ${JSON.stringify(value)}`;
    if (!list) return undefined;
    for (const [index, item] of items.entries()) {
      const problem = valueProblem(list[1], item, `${what}[${index}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  const enumValues = contract.enums[type];
  if (enumValues) return enumValues.includes(String(value)) ? undefined : `${what} must be one of ${enumValues.join(', ')}, got ${JSON.stringify(value)}`;
  const text = typeof value === 'string' ? value : undefined;
  switch (type) {
    case 'string':
      return typeof value === 'string' || typeof value === 'number' ? undefined : `${what} must be a string, got ${JSON.stringify(value)}`;
    case 'int':
    case 'unsigned int': {
      const fits = (typeof value === 'number' && Number.isInteger(value)) || (text !== undefined && /^-?\d+$/.test(text));
      if (!fits) return `${what} must be an integer, got ${JSON.stringify(value)}`;
      return type === 'unsigned int' && Number(value) < 0 ? `${what} must not be negative` : undefined;
    }
    case 'float':
      return typeof value === 'number' || (text !== undefined && text.trim() !== '' && Number.isFinite(Number(text))) ? undefined : `${what} must be a number, got ${JSON.stringify(value)}`;
    case 'bool':
      return typeof value === 'boolean' || (text !== undefined && ['true', 'false', '1', '0'].includes(text)) ? undefined : `${what} must be a boolean, got ${JSON.stringify(value)}`;
    case 'datetime':
      return typeof value === 'number' || (text !== undefined && (/^\d+$/.test(text) || !Number.isNaN(Date.parse(text)))) ? undefined : `${what} must be a Unix time or an ISO 8601 date, got ${JSON.stringify(value)}`;
    case 'map': {
      const object = typeof value === 'string' ? parseJson(value) : value;
      return object && typeof object === 'object' && !Array.isArray(object) ? undefined : `${what} must be a JSON object, got ${JSON.stringify(value)}`;
    }
    case 'file':
      return `${what} is a file upload, which Herald never sends`;
    default:
      // Object and the specs' own named types (page_attire, …) are not described further by the specs.
      return undefined;
  }
}

interface FieldSelection {
  name: string;
  modifiers: string;
  children?: FieldSelection[];
}

/** Graph's field syntax: "a,b{c,d{e}},f.summary(true).limit(0)". */
function parseFields(text: string): FieldSelection[] {
  let index = 0;
  const list = (): FieldSelection[] => {
    const out: FieldSelection[] = [];
    while (index < text.length) {
      const name = /^[a-z0-9_]*/i.exec(text.slice(index))![0];
      index += name.length;
      let modifiers = '';
      while (text[index] === '.') {
        const modifier = /^\.[a-z_]+\([^)]*\)/i.exec(text.slice(index))?.[0];
        if (!modifier) throw new Error(`bad modifier after ${name}`);
        modifiers += modifier;
        index += modifier.length;
      }
      const selection: FieldSelection = { name, modifiers };
      if (text[index] === '{') {
        index++;
        selection.children = list();
        if (text[index] !== '}') throw new Error(`unclosed {…} after ${name}`);
        index++;
      }
      out.push(selection);
      if (text[index] === ',') index++;
      else break;
    }
    return out;
  };
  const selections = list();
  if (index !== text.length) throw new Error(`unexpected ${JSON.stringify(text.slice(index))}`);
  return selections;
}

/** Problems of `fields` against a node type (its fields and GET edges; `adds`: fields an edge adds to each node it answers). */
function fieldProblems(type: string, selections: FieldSelection[], adds: Record<string, string> = {}, path = ''): string[] {
  const node = contract.nodes[type];
  if (!node) return []; // a type the specs do not describe (Object): not checked further
  return selections.flatMap((selection) => {
    const where = `${path}${selection.name}`;
    const fieldType = node.fields[selection.name] ?? adds[selection.name];
    const edgeType = node.edges[selection.name];
    if (!selection.name) return [`an empty name in fields${path ? ` under ${path}` : ''}`];
    if (fieldType === undefined && edgeType === undefined) return [`(#100) Tried accessing nonexisting field (${where}) on node type (${type})`];
    if (selection.modifiers && edgeType === undefined) return [`${where}${selection.modifiers}: modifiers apply to edges, and ${selection.name} is a field of ${type}`];
    if (!selection.children) return [];
    const inner = edgeType ?? fieldType!.replace(/^list<(.*)>$/, '$1');
    return fieldProblems(inner, selection.children, {}, `${where}.`);
  });
}

const refusal = (type: MetaContractRefusal['type'], problems: string[], subcode?: number): MetaContractRefusal => ({
  message: problems.length === 1 ? problems[0] : `(#100) ${problems.join('; ')}`,
  type,
  ...(subcode ? { subcode } : {}),
  problems,
});

/** What Graph would refuse in this request; undefined when it fits the contract. */
export function metaContractRefusal(request: GraphRequestShape): MetaContractRefusal | undefined {
  const node = contract.nodes[request.node];
  if (!node) return refusal('GraphMethodException', [`${request.node} is not a node type of the contract`], 33);
  const key = request.edge ? `${request.method} ${request.edge}` : request.method;
  const operation = node.operations[key];
  if (!operation) {
    const known = request.edge ? node.edges[request.edge] !== undefined || Object.keys(node.operations).some((name) => name.endsWith(` ${request.edge}`)) : false;
    return refusal('GraphMethodException', [
      `Unsupported ${request.method.toLowerCase()} request. Object with ID '${request.id}' (${request.node}) does not support ${request.edge ? `${request.method} on its ${request.edge} edge` : 'this operation'}${known ? '' : ' in the contract'}`,
    ], 33);
  }
  const problems: string[] = [];
  const isList = request.method === 'GET' && request.edge !== undefined;
  for (const [name, value] of Object.entries(request.params)) {
    if (value === undefined) continue;
    const param = operation.params.find((candidate) => candidate.name === name);
    if (!param) {
      if (ANY_REQUEST.includes(name) || (isList && LIST_REQUEST.includes(name))) continue;
      problems.push(`(#100) ${name} is not a parameter of ${key} on ${request.node}`);
      continue;
    }
    const problem = valueProblem(param.type, value, `(#100) Param ${name}`);
    if (problem) problems.push(problem);
  }
  for (const param of operation.params) {
    const value = request.params[param.name];
    if (param.required && (value === undefined || value === '')) problems.push(`(#100) The parameter ${param.name} is required`);
  }
  const fields = request.params.fields;
  if (typeof fields === 'string' && fields !== '') {
    try {
      problems.push(...fieldProblems(operation.returns, parseFields(fields), operation.addsFields));
    } catch (error) {
      problems.push(`(#100) fields is not Graph's field syntax: ${(error as Error).message}`);
    }
  }
  return problems.length > 0 ? refusal('OAuthException', problems) : undefined;
}
