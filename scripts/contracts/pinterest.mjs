// Refreshes the vendored Pinterest API v5 contract (test/contracts/pinterest/openapi.json) from Pinterest's published OpenAPI
// description, github.com/pinterest/api-description (v5/openapi.json, MIT licence): only the operations Herald calls are kept,
// with every component they reference, so the file stays small and a diff shows what changed for Herald.
//
//   node scripts/contracts/pinterest.mjs [<path or URL of v5/openapi.json>] [<commit or release of that file>]
//
// Without arguments it downloads the file of the main branch. The fake (test/fakes/pinterest.ts) validates every request
// against the result; rerun this when Pinterest publishes a release and look at the diff.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = 'https://raw.githubusercontent.com/pinterest/api-description/main/v5/openapi.json';
const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/pinterest/openapi.json');

/** The operations Herald's Pinterest provider calls (providers/pinterest/*.ts). */
export const OPERATIONS = [
  ['post', '/oauth/token'],
  ['get', '/user_account'],
  ['get', '/user_account/analytics'],
  ['get', '/boards'],
  ['get', '/pins'],
  ['post', '/pins'],
  ['patch', '/pins/{pin_id}'],
  ['delete', '/pins/{pin_id}'],
  ['get', '/pins/{pin_id}/analytics'],
  ['post', '/media'],
  ['get', '/media/{media_id}'],
];

async function load(source) {
  if (/^https?:/.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return response.json();
  }
  return JSON.parse(await fs.readFile(source, 'utf8'));
}

/** Every `#/components/...` reference reachable from `value`, followed through the components themselves. */
function references(spec, value, found = new Set()) {
  if (Array.isArray(value)) for (const entry of value) references(spec, entry, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/') && !found.has(inner)) {
        found.add(inner);
        const [, , kind, name] = inner.split('/');
        references(spec, spec.components[kind][name], found);
      } else references(spec, inner, found);
    }
  }
  return found;
}

export function extract(spec, source, revision) {
  const paths = {};
  for (const [method, route] of OPERATIONS) {
    const operation = spec.paths[route]?.[method];
    if (!operation) throw new Error(`the spec has no ${method.toUpperCase()} ${route}: Pinterest changed it, update the provider first`);
    paths[route] = { ...paths[route], [method]: operation };
  }
  const components = {};
  for (const reference of [...references(spec, paths)].sort()) {
    const [, , kind, name] = reference.split('/');
    components[kind] = { ...components[kind], [name]: spec.components[kind][name] };
  }
  return {
    openapi: spec.openapi,
    info: { ...spec.info, description: undefined },
    'x-herald-source': { url: source, revision, version: spec.info.version, retrieved: new Date().toISOString().slice(0, 10), licence: 'MIT, Copyright 2021 Pinterest, Inc.' },
    servers: spec.servers,
    paths,
    components,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2] ?? SOURCE;
  const spec = await load(source);
  const contract = extract(spec, source, process.argv[3] ?? 'main');
  await fs.mkdir(path.dirname(OUTPUT), { recursive: true });
  await fs.writeFile(OUTPUT, `${JSON.stringify(contract, null, 1)}\n`);
  console.log(`Pinterest API ${spec.info.version}: ${OPERATIONS.length} operations, ${Object.values(contract.components).reduce((n, kind) => n + Object.keys(kind).length, 0)} components → ${OUTPUT}`);
}
