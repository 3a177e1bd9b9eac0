// Refreshes the platform contracts vendored under test/contracts/ (DESIGN.md §9: fakes validate what Herald sends against the
// platform's own machine-readable contract, pinned to a dated version). Needs internet, so it is run by hand, never by a test:
//
//   node scripts/refresh-contracts.mjs            # every contract
//   node scripts/refresh-contracts.mjs x          # only the named ones
//
// Each contract is one entry of CONTRACTS: where the platform publishes it, the file it is vendored to, and a check that the
// download is the document expected (not an error page). Next to each file the script writes `<file>.source.json`: the source
// URL, the retrieval date, the document's own version and the SHA-256 of the bytes, so a reviewer sees what is pinned. To add a
// platform, add an entry (and its validator under test/contracts/); keep the vendored file exactly as downloaded.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** @type {({ name: string, url: string, file: string, version: (text: string) => string } | { name: string, script: string })[]} */
export const CONTRACTS = [
  {
    // X API v2: the OpenAPI document X serves for its SDKs and docs (docs.x.com builds its API reference from the same file).
    name: 'x',
    url: 'https://api.x.com/2/openapi.json',
    file: 'test/contracts/x-openapi.json',
    version: (text) => {
      const document = JSON.parse(text);
      if (typeof document.openapi !== 'string' || !document.paths?.['/2/tweets']) throw new Error('not the X API OpenAPI document');
      return String(document.info?.version ?? 'unknown');
    },
  },
  {
    // Pinterest API v5: the OpenAPI description Pinterest publishes (github.com/pinterest/api-description, MIT), cut down to
    // the operations Herald calls by its own script, which records source, revision and date inside the file.
    name: 'pinterest',
    script: 'scripts/contracts/pinterest.mjs',
  },
  {
    // Hashnode's GraphQL API (gql-beta.hashnode.com, the endpoint that replaced gql.hashnode.com): the schema Hashnode publishes
    // for agents in github.com/Hashnode/gql-skill (skills/gql-api/references/schema.graphql). test/fakes/hashnode.ts validates
    // every operation and its variables against it with graphql-js.
    name: 'hashnode',
    url: 'https://raw.githubusercontent.com/Hashnode/gql-skill/main/skills/gql-api/references/schema.graphql',
    file: 'test/contracts/hashnode/schema.graphql',
    version: (text) => {
      if (!/input PublishPostInput \{/.test(text) || !/type Mutation \{/.test(text)) throw new Error("not Hashnode's GraphQL schema");
      return 'gql-skill main';
    },
  },
  {
    // VK API: the JSON Schema of VK's methods (github.com/VKCOM/vk-api-schema, MIT), cut down to the methods Herald calls by its
    // own script, which records source, revision, API version and date inside the file (test/contracts/vk/methods.json).
    name: 'vk',
    script: 'scripts/contracts/vk.mjs',
  },
  {
    // Lemmy API v3 (Lemmy 0.19) and v4 (Lemmy 1.0): the request types of Lemmy's official client (github.com/LemmyNet/
    // lemmy-js-client, tags 0.19.9 and 1.0.0-beta.1: src/http.ts for method and path, src/types for the fields) as JSON
    // Schema, made by its own script, which records tag, commit and date inside test/contracts/lemmy/v3.json and v4.json.
    name: 'lemmy',
    script: 'scripts/contracts/lemmy.mjs',
  },
];

/** A contract with its own script (it extracts part of a larger document): run it as it is run by hand. */
async function runScript(contract) {
  const { execFileSync } = await import('node:child_process');
  execFileSync(process.execPath, [path.join(root, contract.script)], { stdio: 'inherit' });
}

async function refresh(contract) {
  const response = await fetch(contract.url, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${contract.url} answered HTTP ${response.status}`);
  const text = await response.text();
  const version = contract.version(text);
  const target = path.join(root, contract.file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, text);
  const source = {
    url: contract.url,
    retrieved: new Date().toISOString().slice(0, 10),
    version,
    sha256: createHash('sha256').update(text).digest('hex'),
  };
  fs.writeFileSync(`${target}.source.json`, `${JSON.stringify(source, null, 2)}\n`);
  return source;
}

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !CONTRACTS.some((contract) => contract.name === name));
if (unknown.length > 0) {
  console.error(`Unknown contract(s): ${unknown.join(', ')}. Known: ${CONTRACTS.map((contract) => contract.name).join(', ')}`);
  process.exit(2);
}
let failed = false;
for (const contract of CONTRACTS.filter((item) => wanted.length === 0 || wanted.includes(item.name))) {
  try {
    if (contract.script) {
      await runScript(contract);
      continue;
    }
    const source = await refresh(contract);
    console.log(`${contract.name}: ${contract.file} version ${source.version} (${source.sha256.slice(0, 12)}…)`);
  } catch (error) {
    failed = true;
    console.error(`${contract.name}: not refreshed: ${error.message}`);
  }
}
process.exit(failed ? 1 : 0);
