// What the contract scripts share: reading a source (a URL, or a local copy when there is no internet), writing the cut-down
// contract, and for OpenAPI documents, cutting out the operations Herald calls with every component they reach.
import fs from 'node:fs/promises';
import path from 'node:path';

/** The text of `source`: fetched when it is a URL, read when it is a path (a local copy of the same file). */
export async function loadText(source) {
  if (/^https?:/.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return response.text();
  }
  return fs.readFile(source, 'utf8');
}

/** The text of `file` under `base`: a URL (a repository's raw files at a revision) or a local copy of that tree. */
export function loadFile(base, file) {
  return loadText(/^https?:/.test(base) ? `${base}/${file}` : path.join(base, file));
}

/** `source` parsed as JSON (or by `parse`, e.g. a YAML parser). */
export async function load(source, parse = JSON.parse) {
  return parse(await loadText(source));
}

/** Writes the contract as the vendored file (one-space JSON, as every contract under test/contracts/ is). */
export async function writeContract(file, contract) {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, `${JSON.stringify(contract, null, 1)}\n`);
}

/** Every `#/components/...` reference reachable from `value`, followed through the components themselves. */
export function references(spec, value, found = new Set()) {
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

/**
 * The `[method, route]` operations of an OpenAPI document (with their path's shared parameters) and the components they
 * reach; `shape.operation` and `shape.component` may trim what is kept of each (e.g. drop examples or responses).
 * `platform` names who changed the document when an operation is missing.
 */
export function cutOperations(spec, operations, platform, shape = {}) {
  const { operation: keepOperation = (value) => value, component: keepComponent = (value) => value } = shape;
  const paths = {};
  for (const [method, route] of operations) {
    const item = spec.paths[route];
    const operation = item?.[method];
    if (!operation) throw new Error(`the document has no ${method.toUpperCase()} ${route}: ${platform} changed it, update the provider first`);
    paths[route] = { ...(item.parameters ? { parameters: item.parameters } : {}), ...paths[route], [method]: keepOperation(operation) };
  }
  const components = {};
  for (const reference of [...references(spec, paths)].sort()) {
    const [, , kind, name] = reference.split('/');
    components[kind] = { ...components[kind], [name]: keepComponent(spec.components[kind][name]) };
  }
  return { paths, components };
}
