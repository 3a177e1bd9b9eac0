// Refreshes the vendored Whop API v1 contract (test/contracts/whop/openapi.json) from Whop's official TypeScript SDK,
// github.com/whopio/whopsdk-typescript (@whop/sdk, Apache-2.0), which Stainless generates from Whop's OpenAPI spec. The spec
// itself is published only at the storage URL the SDK's .stats.yml names (openapi_spec_url, dropped from the file since), so
// the operations Herald calls are rebuilt here as an OpenAPI 3.1 document from the SDK's own machine-readable parts:
//   - packages/mcp-server/src/methods.ts: each SDK method's HTTP method and path (`httpMethod`, `httpPath`);
//   - src/resources/<resource>.ts: the method's `query` or `body` parameter and its `...Params` interface, turned into a JSON
//     Schema with the TypeScript compiler (every property typed, optional ones not required, no others allowed), following
//     the types it names (namespaced interfaces, src/resources/shared.ts, src/core/pagination.ts's CursorPageParams).
//
//   node scripts/contracts/whop.mjs [<checkout of whopsdk-typescript, or a git ref to download>] [<commit of that checkout>]
//
// Without arguments it downloads the files of the main branch. The fake (test/fakes/whop.ts) validates every API v1 request
// against the result with the shared OpenAPI checker (test/contracts/openapi.ts); rerun this when @whop/sdk is released.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFile, writeContract } from './common.mjs';
import ts from 'typescript';

const REPOSITORY = 'https://github.com/whopio/whopsdk-typescript';
const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/whop/openapi.json');

/** The SDK methods Herald's Whop provider calls (providers/whop.ts), as methods.ts names them. */
export const OPERATIONS = ['companies.list', 'forums.list', 'forumPosts.list', 'forumPosts.create', 'forumPosts.retrieve', 'forumPosts.update', 'files.create', 'files.retrieve'];

const resourceFile = (resource) => `src/resources/${resource.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}.ts`;

/** Files of the SDK: a local copy of its tree, or GitHub's raw files at a ref (a commit or tag; main by default). */
async function reader(source) {
  const base = source && !/^[\w.-]+$/.test(source) ? source : `https://raw.githubusercontent.com/whopio/whopsdk-typescript/${source ?? 'main'}`;
  return (file) => loadFile(base, file);
}

const parse = (file, text) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

/** Every interface and type alias of a file by its qualified name (namespaces joined with dots). */
function declarations(source, into = new Map(), prefix = '') {
  const visit = (statements, scope) => {
    for (const statement of statements) {
      if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) into.set(scope + statement.name.text, statement);
      else if (ts.isModuleDeclaration(statement) && statement.body && ts.isModuleBlock(statement.body)) visit(statement.body.statements, `${scope}${statement.name.text}.`);
    }
  };
  visit(source.statements, prefix);
  return into;
}

const comment = (node) => ts.getJSDocCommentsAndTags(node).map((doc) => (typeof doc.comment === 'string' ? doc.comment : '')).join(' ').replace(/\s+/g, ' ').trim() || undefined;

/** The JSON Schema of TypeScript types, collecting the named ones as components. */
function converter(known) {
  const schemas = {};
  /** The qualified name a reference means from inside `scope` (innermost namespace first), `Shared.X` as shared.ts's X. */
  const resolve = (name, scope) => {
    const bare = name.replace(/^Shared\./, '');
    const parts = scope.split('.').filter(Boolean);
    for (let depth = parts.length; depth >= 0; depth--) {
      const candidate = [...parts.slice(0, depth), bare].join('.');
      if (known.has(candidate)) return candidate;
    }
    throw new Error(`type ${name} (from ${scope || 'top level'}) is not among the files read`);
  };
  const named = (name) => {
    if (!(name in schemas)) {
      schemas[name] = {};
      const declaration = known.get(name);
      const scope = name.split('.').slice(0, -1).join('.');
      schemas[name] = { ...(comment(declaration) ? { description: comment(declaration) } : {}), ...(ts.isInterfaceDeclaration(declaration) ? object(declaration, scope) : schema(declaration.type, scope)) };
    }
    return { $ref: `#/components/schemas/${name}` };
  };
  const object = (declaration, scope) => {
    const properties = {};
    const required = [];
    for (const heritage of declaration.heritageClauses ?? []) {
      for (const type of heritage.types) {
        const parent = object(known.get(resolve(type.expression.getText(), scope)), scope);
        Object.assign(properties, parent.properties);
        required.push(...parent.required);
      }
    }
    for (const member of declaration.members ?? []) {
      if (ts.isIndexSignatureDeclaration(member)) return { type: 'object', additionalProperties: schema(member.type, scope) };
      if (!ts.isPropertySignature(member)) continue;
      const key = member.name.getText().replace(/^['"]|['"]$/g, '');
      properties[key] = { ...schema(member.type, scope), ...(comment(member) ? { description: comment(member) } : {}) };
      if (!member.questionToken) required.push(key);
    }
    return { type: 'object', properties, required, additionalProperties: false };
  };
  const schema = (node, scope) => {
    switch (node.kind) {
      case ts.SyntaxKind.StringKeyword:
        return { type: 'string' };
      case ts.SyntaxKind.NumberKeyword:
        return { type: 'number' };
      case ts.SyntaxKind.BooleanKeyword:
        return { type: 'boolean' };
      case ts.SyntaxKind.UnknownKeyword:
      case ts.SyntaxKind.AnyKeyword:
        return {};
    }
    if (ts.isLiteralTypeNode(node)) {
      if (node.literal.kind === ts.SyntaxKind.NullKeyword) return { type: 'null' };
      if (ts.isStringLiteral(node.literal) || ts.isNumericLiteral(node.literal)) return { const: ts.isStringLiteral(node.literal) ? node.literal.text : Number(node.literal.text) };
      return { const: node.literal.kind === ts.SyntaxKind.TrueKeyword };
    }
    if (ts.isParenthesizedTypeNode(node)) return schema(node.type, scope);
    if (ts.isArrayTypeNode(node)) return { type: 'array', items: schema(node.elementType, scope) };
    if (ts.isTypeLiteralNode(node)) return object(node, scope);
    if (ts.isUnionTypeNode(node)) {
      const members = node.types.filter((type) => type.kind !== ts.SyntaxKind.UndefinedKeyword).map((type) => schema(type, scope));
      if (members.every((member) => 'const' in member || member.type === 'null')) {
        return { enum: members.map((member) => ('const' in member ? member.const : null)) };
      }
      return members.length === 1 ? members[0] : { anyOf: members };
    }
    if (ts.isTypeReferenceNode(node)) {
      const name = node.typeName.getText();
      if (name === 'Array' && node.typeArguments?.length === 1) return { type: 'array', items: schema(node.typeArguments[0], scope) };
      return named(resolve(name, scope));
    }
    throw new Error(`unsupported type ${node.getText()} in ${scope}`);
  };
  return { schemas, named };
}

/** The `query` or `body` parameter of an SDK resource method, and the name of its Params type. */
function parameterOf(source, method) {
  let found;
  const visit = (node) => {
    if (ts.isMethodDeclaration(node) && node.name.getText() === method && node.body) {
      for (const parameter of node.parameters) {
        const name = parameter.name.getText();
        if (name !== 'query' && name !== 'body') continue;
        const type = ts.isUnionTypeNode(parameter.type) ? parameter.type.types.find(ts.isTypeReferenceNode) : parameter.type;
        found = { in: name, type: type.typeName.getText() };
      }
      found ??= { in: undefined };
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (!found) throw new Error(`the SDK has no method ${method} in ${source.fileName}`);
  return found;
}

export async function extract(read, revision) {
  const methodsText = await read('packages/mcp-server/src/methods.ts');
  const version = JSON.parse(await read('package.json').catch(() => '{}')).version ?? 'unknown';
  const known = new Map();
  declarations(parse('pagination.ts', await read('src/core/pagination.ts')), known);
  declarations(parse('shared.ts', await read('src/resources/shared.ts')), known);
  const resources = {};
  for (const resource of new Set(OPERATIONS.map((operation) => operation.split('.')[0]))) {
    resources[resource] = parse(resourceFile(resource), await read(resourceFile(resource)));
    declarations(resources[resource], known);
  }
  const { schemas, named } = converter(known);
  const paths = {};
  for (const operation of OPERATIONS) {
    const entry = new RegExp(`fullyQualifiedName: '${operation.replace('.', '\\.')}',\\s*httpMethod: '(\\w+)',\\s*httpPath: '([^']+)'`).exec(methodsText);
    if (!entry) throw new Error(`the SDK has no method ${operation}: Whop changed it, update the provider first`);
    const [, method, route] = entry;
    const [resource, name] = operation.split('.');
    const given = parameterOf(resources[resource], name);
    const parameters = [...route.matchAll(/\{(\w+)\}/g)].map(([, key]) => ({ name: key, in: 'path', required: true, schema: { type: 'string' } }));
    let requestBody;
    if (given.in === 'query') {
      named(given.type);
      const query = schemas[given.type];
      for (const [key, value] of Object.entries(query.properties)) {
        const { description, ...rest } = value;
        // A query string carries no null: the SDK leaves a null parameter out.
        const type = rest.anyOf ? { anyOf: rest.anyOf.filter((option) => option.type !== 'null') } : rest.enum ? { enum: rest.enum.filter((option) => option !== null) } : rest;
        parameters.push({ name: key, in: 'query', required: query.required.includes(key), ...(description ? { description } : {}), schema: type.anyOf?.length === 1 ? type.anyOf[0] : type });
      }
      delete schemas[given.type];
    } else if (given.in === 'body') requestBody = { required: true, content: { 'application/json': { schema: named(given.type) } } };
    paths[route] = { ...paths[route], [method]: { operationId: operation, parameters, ...(requestBody ? { requestBody } : {}), responses: { 200: { description: 'OK' } } } };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Whop API v1 (the operations Herald calls, from @whop/sdk request types)', version },
    'x-herald-source': {
      url: REPOSITORY,
      revision,
      version: `@whop/sdk ${version}`,
      retrieved: new Date().toISOString().slice(0, 10),
      files: ['packages/mcp-server/src/methods.ts', 'src/core/pagination.ts', 'src/resources/shared.ts', ...Object.keys(resources).map(resourceFile)],
      licence: 'Apache-2.0, Whop',
    },
    servers: [{ url: 'https://api.whop.com/api/v1' }],
    paths,
    components: { schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2];
  const contract = await extract(await reader(source), process.argv[3] ?? source ?? 'main');
  await writeContract(OUTPUT, contract);
  console.log(`Whop API v1 from @whop/sdk ${contract.info.version}: ${OPERATIONS.length} operations, ${Object.keys(contract.components.schemas).length} schemas → ${OUTPUT}`);
}
