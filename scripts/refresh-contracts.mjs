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
    // Forem API v1 (DEV): the OpenAPI 3 document Forem generates with rswag (forem/forem swagger/v1/api_v1.json, also in
    // forem/forem-docs, rendered at developers.forem.com/api/v1), cut down to Herald's operations by its own script, with
    // the corrections from Forem's controller it records inside the file.
    name: 'devto',
    script: 'scripts/contracts/devto.mjs',
  },
  {
    // listmonk: the OpenAPI 3 document in its repository (knadh/listmonk docs/swagger/collections.yaml, YAML, read with the
    // `yaml` package), cut down to Herald's operations by its own script, with the corrections from listmonk's source it
    // records inside the file (GET /api/profile, which the document leaves out).
    name: 'listmonk',
    script: 'scripts/contracts/listmonk.mjs',
  },
  {
    // Discord HTTP API v10: the OpenAPI 3.1 description Discord publishes (github.com/discord/discord-api-spec, MIT), cut down
    // to the operations Herald calls by its own script, which records source, commit and date inside the file.
    name: 'discord',
    script: 'scripts/contracts/discord.mjs',
  },
  {
    // Slack Web API: the Swagger 2 description Slack publishes (github.com/slackapi/slack-api-specs, MIT; not updated since
    // October 2020), converted to OpenAPI 3 request bodies for the methods Herald calls and completed from the docs.slack.dev
    // method pages for what is newer, by its own script (the pages it relies on are listed there, with the date read).
    name: 'slack',
    script: 'scripts/contracts/slack.mjs',
  },
  {
    // YouTube Data API v3 and YouTube Analytics API v2: Google's Discovery documents, cut down to the methods Herald calls by
    // their own script (source and revision recorded in each file's `x-herald-source`); test/fakes/youtube.ts validates every
    // request against them with test/contracts/discovery.ts.
    name: 'youtube',
    script: 'scripts/contracts/youtube.mjs',
  },
  {
    // Google Business Profile: the Discovery documents of mybusiness v4 (local posts), My Business Account Management v1, My
    // Business Business Information v1 and Business Profile Performance v1, cut down likewise; test/fakes/gmb.ts validates.
    name: 'gmb',
    script: 'scripts/contracts/gmb.mjs',
  },
  {
    // Telegram Bot API: no OpenAPI; the reference page core.telegram.org/bots/api as rendered to JSON by
    // github.com/PaulSonOfLars/telegram-bot-api-spec (api.json, regenerated from the page), cut down to the methods Herald calls
    // by its own script, which records the source revision, the Bot API version and its release date inside the file.
    name: 'telegram',
    script: 'scripts/contracts/telegram.mjs',
  },
  {
    // Whop API v1: its OpenAPI spec is published only at a storage URL its SDKs' .stats.yml used to name; the official SDK
    // github.com/whopio/whopsdk-typescript (Stainless, generated from that spec) carries the same facts in machine-readable
    // form (methods.ts: HTTP method and path; the resources' Params interfaces), which its script rebuilds as OpenAPI 3.1 for
    // the operations Herald calls, recording the SDK release and commit inside the file.
    name: 'whop',
    script: 'scripts/contracts/whop.mjs',
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
  {
    // Meta Graph API (Facebook Pages, Instagram with Facebook Login and with Instagram Login): the node and edge specs Meta
    // publishes in its SDK code generator (github.com/facebook/facebook-business-sdk-codegen api_specs/specs), cut down to the
    // nodes and operations Herald calls by its own script, which records revision, date, Graph version and its corrections
    // from Meta's reference pages inside test/contracts/meta/graph.json.
    name: 'meta',
    script: 'scripts/contracts/meta.mjs',
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
