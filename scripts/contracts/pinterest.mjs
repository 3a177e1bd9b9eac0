// Refreshes the vendored Pinterest API v5 contract (test/contracts/pinterest/openapi.json) from Pinterest's published OpenAPI
// description, github.com/pinterest/api-description (v5/openapi.json, MIT licence): only the operations Herald calls are kept,
// with every component they reference, so the file stays small and a diff shows what changed for Herald.
//
//   node scripts/contracts/pinterest.mjs [<path or URL of v5/openapi.json>] [<commit or release of that file>]
//
// Without arguments it downloads the file of the main branch. The fake (test/fakes/pinterest.ts) validates every request
// against the result; rerun this when Pinterest publishes a release and look at the diff.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cutOperations, load, writeContract } from './common.mjs';

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

export function extract(spec, source, revision) {
  const { paths, components } = cutOperations(spec, OPERATIONS, 'Pinterest');
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
  await writeContract(OUTPUT, contract);
  console.log(`Pinterest API ${spec.info.version}: ${OPERATIONS.length} operations, ${Object.values(contract.components).reduce((n, kind) => n + Object.keys(kind).length, 0)} components → ${OUTPUT}`);
}
