// Refreshes the vendored Graph API contract (test/contracts/meta/graph.json) from the machine-readable specs Meta publishes in
// its official SDK code generator, github.com/facebook/facebook-business-sdk-codegen (api_specs/specs/<Node>.json: each node's
// fields with their types, each edge's method, endpoint, return type and params with types and required flags;
// api_specs/specs/enum_types.json: the enums; api_specs/specs/version.txt: the Graph API version). Only what Herald's
// Facebook and Instagram providers call is kept: the operations below, every field and GET edge name of the nodes they reach
// (so `fields=` can be checked, edges included since Graph expands them as fields), and the enums their params use.
//
//   node scripts/contracts/meta.mjs [<directory or raw URL holding api_specs/specs>] [<commit of those files>] [<commit date>]
//
// Without arguments it downloads the files of the main branch. Rerun when Meta releases a Graph API version, read the diff.
// Where the specs are older than, or disagree with, Meta's reference pages, the correction is made here and recorded in the
// output's `x-herald-corrections` with the page it comes from (the fake must not accept what Graph refuses, nor refuse what
// Meta documents).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFile, writeContract } from './common.mjs';

const SOURCE = 'https://raw.githubusercontent.com/facebook/facebook-business-sdk-codegen/main/api_specs/specs';
const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/meta/graph.json');

/** Operations Herald calls, per node type: "METHOD edge" ("METHOD" alone is the node itself). */
export const OPERATIONS = {
  User: ['GET', 'GET accounts', 'GET permissions'],
  Page: ['GET', 'GET published_posts', 'GET videos', 'POST feed', 'POST photos', 'POST videos', 'GET insights'],
  PagePost: ['GET', 'POST', 'DELETE', 'GET comments', 'POST comments', 'GET insights'],
  Photo: ['GET', 'DELETE', 'GET comments', 'POST comments'],
  AdVideo: ['GET', 'POST', 'DELETE', 'GET comments', 'POST comments'],
  Comment: ['GET', 'POST', 'DELETE', 'GET comments', 'POST comments'],
  IGUser: ['GET', 'GET media', 'POST media', 'POST media_publish', 'GET stories', 'GET insights', 'GET content_publishing_limit'],
  IGMedia: ['GET', 'POST', 'GET comments', 'POST comments', 'GET insights'],
  IGComment: ['GET', 'POST', 'DELETE', 'GET replies', 'POST replies'],
  ShadowIGMediaBuilder: ['GET'],
  // Instagram API with Instagram Login (graph.instagram.com).
  IGUserForIGOnlyAPI: ['GET', 'GET media', 'POST media', 'POST mediapublish', 'GET stories', 'GET insights', 'GET content_publishing_limit'],
  IGMediaForIGOnlyAPI: ['GET', 'POST', 'GET comments', 'POST comments', 'GET insights'],
  IGAccessTokenForIGOnlyAPI: ['GET'],
  IGRefreshAccessTokenForIGOnlyAPI: ['GET'],
};
/** Nodes reached only as an edge's answer or a field's type: their fields are kept, no operation. */
const ANSWERS = ['Permission', 'ContentPublishingLimitResponse', 'InsightsResult', 'InstagramInsightsResult', 'ProfilePictureSource', 'Profile', 'IGCommentFromUser'];

const PAGES = {
  accounts: 'https://developers.facebook.com/docs/graph-api/reference/user/accounts/',
  publishing: 'https://developers.facebook.com/docs/instagram-platform/content-publishing',
  audio: 'https://developers.facebook.com/docs/instagram-platform/content-publishing/audio-api (updated 2026-06-16)',
  igOnly: 'https://developers.facebook.com/docs/instagram-platform/reference/instagram-user, …/instagram-media, …/instagram-comment (both logins)',
};

/** Where the specs are older than Meta's reference pages, or name things differently from the API itself. */
function correct(nodes) {
  const corrections = [];
  const note = (what, page) => corrections.push({ correction: what, source: page });
  // The IG-only spec names the publish edge without its underscore; graph.instagram.com serves /<IG_ID>/media_publish.
  const igOnly = nodes.IGUserForIGOnlyAPI.operations;
  igOnly['POST media_publish'] = igOnly['POST mediapublish'];
  delete igOnly['POST mediapublish'];
  note('IGUserForIGOnlyAPI: POST mediapublish is POST media_publish', PAGES.publishing);
  // The IG-only specs answer types that are not in the specs (Media, User, Comment): they are the IG-only media and user, and
  // Instagram comments (fields text, timestamp, from) — the same IG Comment node as with Facebook Login.
  const rename = { Media: 'IGMediaForIGOnlyAPI', User: 'IGUserForIGOnlyAPI', Comment: 'IGComment' };
  for (const name of ['IGUserForIGOnlyAPI', 'IGMediaForIGOnlyAPI']) {
    for (const [key, operation] of Object.entries(nodes[name].operations)) {
      if (rename[operation.returns]) {
        note(`${name}: ${key} answers ${rename[operation.returns]}, not ${operation.returns}`, PAGES.igOnly);
        operation.returns = rename[operation.returns];
      }
    }
    for (const [edge, returns] of Object.entries(nodes[name].edges)) if (rename[returns]) nodes[name].edges[edge] = rename[returns];
  }
  // The accounts edge adds the person's tasks on each Page ("The following fields will be added to each node").
  nodes.User.operations['GET accounts'].addsFields = { tasks: 'list<string>' };
  note('User: GET accounts adds the field tasks to each Page', PAGES.accounts);
  // The Audio API (newer than the specs): GET /ig_audio at the root, and audio_configuration on a Reel container.
  nodes['(root)'] = {
    fields: {},
    edges: { ig_audio: 'Object' },
    operations: {
      'GET ig_audio': {
        returns: 'Object',
        params: [
          { name: 'audio_type', required: true, type: 'igaudio_audio_type_enum_param' },
          { name: 'user_id', required: true, type: 'string' },
          { name: 'search_query', required: false, type: 'string' },
        ],
      },
    },
  };
  nodes.IGUser.operations['POST media'].params.push({ name: 'audio_configuration', required: false, type: 'map' });
  note('GET /ig_audio (audio_type music|original_sound, user_id, search_query) and IGUser POST media audio_configuration are newer than the specs', PAGES.audio);
  return corrections;
}

const load = loadFile;

const key = (api) => (api.endpoint ? `${api.method} ${api.endpoint}` : api.method);

export async function extract(base, revision, date) {
  const nodes = {};
  for (const name of [...Object.keys(OPERATIONS), ...ANSWERS]) {
    const spec = JSON.parse(await load(base, `${name}.json`));
    const wanted = OPERATIONS[name] ?? [];
    const operations = {};
    for (const api of spec.apis.filter((entry) => wanted.includes(key(entry)))) {
      operations[key(api)] = { returns: api.return, params: api.params.map(({ name: param, required, type }) => ({ name: param, required: Boolean(required), type })) };
    }
    const missing = wanted.filter((operation) => !operations[operation]);
    if (missing.length > 0) throw new Error(`${name} has no ${missing.join(', ')}: Meta changed the API, update the providers first`);
    nodes[name] = {
      fields: Object.fromEntries(spec.fields.map((field) => [field.name, field.type])),
      // GET edges and what they answer: Graph expands them inside `fields` ("comments.summary(true)", "replies{id,text}").
      edges: Object.fromEntries(spec.apis.filter((api) => api.method === 'GET' && api.endpoint).map((api) => [api.endpoint, api.return])),
      operations,
    };
  }
  const corrections = correct(nodes);
  const used = new Set(Object.values(nodes).flatMap((node) => Object.values(node.operations).flatMap((operation) => operation.params.map((param) => param.type.replace(/^list<(.*)>$/, '$1')))));
  const enums = Object.fromEntries(
    JSON.parse(await load(base, 'enum_types.json'))
      .filter((entry) => used.has(entry.name))
      .map((entry) => [entry.name, entry.values]),
  );
  enums.igaudio_audio_type_enum_param = ['music', 'original_sound'];
  const version = (await load(base, 'version.txt')).trim();
  return {
    'x-herald-source': {
      url: 'https://github.com/facebook/facebook-business-sdk-codegen/tree/main/api_specs/specs',
      revision,
      date,
      version,
      retrieved: new Date().toISOString().slice(0, 10),
      licence: 'the repository LICENSE (Copyright (c) Meta Platforms, Inc. and affiliates: use, copy, modify and distribute granted)',
    },
    'x-herald-corrections': corrections,
    version,
    nodes,
    enums,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const base = process.argv[2] ?? SOURCE;
  const contract = await extract(base, process.argv[3] ?? 'main', process.argv[4] ?? 'unknown');
  await writeContract(OUTPUT, contract);
  console.log(`Graph API ${contract.version}: ${Object.keys(contract.nodes).length} node types → ${OUTPUT}`);
}
