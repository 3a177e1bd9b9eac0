// Cuts a Google API Discovery document (https://developers.google.com/discovery/v1/reference/apis) down to the methods Herald
// calls, with every schema their request and response reach, and writes it under test/contracts/<platform>/ with its source
// recorded in `x-herald-source`. Used by scripts/contracts/youtube.mjs and scripts/contracts/gmb.mjs; the fakes check every
// request against the result with test/contracts/discovery.ts.
import path from 'node:path';
import { load, writeContract } from './common.mjs';

/** Every method of a Discovery resource tree, by its id (e.g. youtube.videos.insert). */
function methodsOf(node, found = new Map(), trail = []) {
  for (const [name, method] of Object.entries(node.methods ?? {})) found.set(method.id, { trail, name, method });
  for (const [name, resource] of Object.entries(node.resources ?? {})) methodsOf(resource, found, [...trail, name]);
  return found;
}

/** Every schema name reachable from `value` through `$ref`, followed through the schemas themselves. */
function references(document, value, found = new Set()) {
  if (Array.isArray(value)) for (const entry of value) references(document, entry, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && !found.has(inner)) {
        found.add(inner);
        references(document, document.schemas[inner], found);
      } else references(document, inner, found);
    }
  }
  return found;
}

export function cutDiscovery(document, methodIds, source) {
  const all = methodsOf(document);
  const resources = {};
  for (const id of methodIds) {
    const entry = all.get(id);
    if (!entry) throw new Error(`${document.id} has no method ${id}: Google changed it, update the provider first`);
    let node = { resources };
    for (const name of entry.trail) node = ((node.resources ??= {})[name] ??= {});
    (node.methods ??= {})[entry.name] = entry.method;
  }
  const schemas = {};
  for (const name of [...references(document, resources)].sort()) schemas[name] = document.schemas[name];
  const { kind, discoveryVersion, id, name, version, revision, title, rootUrl, servicePath, baseUrl, batchPath, documentationLink, parameters } = document;
  return {
    kind,
    discoveryVersion,
    id,
    name,
    version,
    revision,
    title,
    documentationLink,
    rootUrl,
    servicePath,
    baseUrl,
    batchPath,
    'x-herald-source': { ...source, retrieved: source.retrieved ?? new Date().toISOString().slice(0, 10), revision: revision ?? 'unknown' },
    parameters,
    resources,
    schemas,
  };
}

/**
 * Refreshes each API of `apis` ({file, url, methods}) into `directory`. Arguments: `<file>=<path or URL>` reads that API from
 * elsewhere (a copy in a repository; then only the APIs named are refreshed), `--origin=<text>` says where that copy comes
 * from (repository and commit) and `--retrieved=<date>` when it was read; both are recorded.
 */
export async function refreshAll(apis, directory, argv) {
  const overrides = Object.fromEntries(argv.filter((arg) => arg.includes('=') && !arg.startsWith('--')).map((arg) => arg.split(/=(.*)/s).slice(0, 2)));
  const origin = argv.find((arg) => arg.startsWith('--origin='))?.slice('--origin='.length);
  const retrieved = argv.find((arg) => arg.startsWith('--retrieved='))?.slice('--retrieved='.length);
  const named = Object.keys(overrides);
  const unknown = named.filter((file) => !apis.some((api) => api.file === file));
  if (unknown.length > 0) throw new Error(`unknown API file(s) ${unknown.join(', ')}; known: ${apis.map((api) => api.file).join(', ')}`);
  for (const api of apis.filter((candidate) => named.length === 0 || named.includes(candidate.file))) {
    const from = overrides[api.file] ?? api.url;
    const document = await load(from);
    const source = { url: api.url, ...(from !== api.url ? { copy: from.startsWith('http') ? from : path.basename(from), ...(origin ? { origin } : {}) } : {}), ...(retrieved ? { retrieved } : {}) };
    const cut = cutDiscovery(document, api.methods, source);
    const target = path.join(directory, `${api.file}.json`);
    await writeContract(target, cut);
    console.log(`${document.id} revision ${document.revision}: ${api.methods.length} methods, ${Object.keys(cut.schemas).length} schemas → ${target}`);
  }
}
