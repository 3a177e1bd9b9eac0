// Refreshes the vendored Slack Web API contract (test/contracts/slack/openapi.json) from the OpenAPI 2 (Swagger) description
// Slack publishes, github.com/slackapi/slack-api-specs (web-api/slack_web_openapi_v2_without_examples.json, MIT licence), for
// the methods Herald calls, converted to the OpenAPI 3 shape the shared checker reads (test/contracts/openapi.ts):
// - Each method becomes `POST /<method>`, its query and formData parameters the properties of an
//   application/x-www-form-urlencoded body (closed: an argument the method does not list is refused), and of an
//   application/json body when the method consumes JSON. Slack takes every method's arguments as a POST form, and JSON on
//   the methods that list it (https://docs.slack.dev/apis/web-api/, "POST bodies"), which is how Herald calls them all.
// - The `token` argument stays optional: Herald sends the token as `Authorization: Bearer`, which the docs prefer ("Tokens
//   should be passed as an HTTP Authorization header or alternatively, as a POST parameter"); the fake checks that header.
// - Arguments Slack documents as "a JSON-based array/object, presented as a URL-encoded string" (blocks, attachments,
//   metadata, files) are strings in a form and arrays/objects in a JSON body.
// Slack stopped updating that description in October 2020 (its last change, commit dfea73e; the repository's last commit,
// bc08db4 of 2021-09-07, only edits the README). What Slack added or corrected since is taken from the method's reference page
// on docs.slack.dev, listed below in DOCUMENTED with the page, the date it was read and why; each such operation carries it in
// `x-herald-docs`, so the file says which parts come from the description and which from the pages.
//
//   node scripts/contracts/slack.mjs [<path or URL of the description>] [<commit of that file>] [<date of that commit>]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { load, writeContract } from './common.mjs';

const SOURCE = 'https://raw.githubusercontent.com/slackapi/slack-api-specs/master/web-api/slack_web_openapi_v2_without_examples.json';
const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/slack/openapi.json');
const READ = '2026-11-27';

/** The Web API methods Herald's Slack provider calls (providers/slack/*.ts). */
export const METHODS = [
  'oauth.v2.access',
  'team.info',
  'conversations.list',
  'conversations.join',
  'conversations.history',
  'conversations.replies',
  'chat.postMessage',
  'chat.update',
  'chat.delete',
  'chat.getPermalink',
  'files.getUploadURLExternal',
  'files.completeUploadExternal',
];

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';
const metadata = {
  type: 'object',
  required: ['event_type', 'event_payload'],
  properties: { event_type: { type: 'string', minLength: 1 }, event_payload: { type: 'object' } },
  description: 'JSON object with event_type and event_payload fields, presented as a URL-encoded string (https://docs.slack.dev/messaging/message-metadata).',
};
/** Arguments whose value is JSON: a string in a form, the value itself in a JSON body. */
const JSON_VALUED = {
  blocks: { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
  attachments: { type: 'array', items: { type: 'object' } },
  metadata,
  files: { type: 'array', minItems: 1, items: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string' }, title: { type: 'string' } } } },
};
const docs = (method) => `https://docs.slack.dev/reference/methods/${method}`;

/**
 * What Slack's reference pages say beyond the 2020 description, for the methods Herald calls: `add` arguments (name → schema),
 * `required` (the full list, when it differs), `consumes` (when it differs), or a whole `method` the description lacks.
 */
export const DOCUMENTED = {
  'oauth.v2.access': {
    why: 'token rotation (2021) added grant_type and refresh_token, PKCE added code_verifier; code is optional since a refresh has none; the page lists POST with form or JSON',
    add: { grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token'] }, refresh_token: { type: 'string' }, code_verifier: { type: 'string' } },
    required: [],
    consumes: [FORM, JSON_TYPE],
  },
  'conversations.history': { why: 'message metadata (2022) added include_all_metadata', add: { include_all_metadata: { type: 'boolean' } } },
  'conversations.replies': { why: 'message metadata (2022) added include_all_metadata', add: { include_all_metadata: { type: 'boolean' } } },
  'chat.postMessage': { why: 'message metadata (2022) added metadata', add: { metadata } },
  'chat.update': { why: 'message metadata (2022) added metadata ("if you don\'t include this field, the message\'s previous metadata will be retained")', add: { metadata } },
  'chat.delete': {
    why: 'the page types ts as a string ("1405894322.002768") where the description says number, and requires channel and ts, which the description leaves optional',
    add: { ts: { type: 'string' } },
    required: ['channel', 'ts'],
  },
  'files.getUploadURLExternal': {
    why: 'newer than the description (the upload flow that replaced files.upload, with files.completeUploadExternal); not in it',
    method: {
      consumes: [FORM, JSON_TYPE],
      required: ['filename', 'length'],
      properties: {
        token: { type: 'string' },
        filename: { type: 'string', minLength: 1 },
        length: { type: 'integer', minimum: 1 },
        alt_txt: { type: 'string', maxLength: 1000 },
        snippet_type: { type: 'string' },
      },
    },
  },
  'files.completeUploadExternal': {
    why: 'newer than the description (finishes the upload started by files.getUploadURLExternal); not in it',
    method: {
      consumes: [FORM, JSON_TYPE],
      required: ['files'],
      properties: {
        token: { type: 'string' },
        files: JSON_VALUED.files,
        channel_id: { type: 'string' },
        channels: { type: 'string' },
        thread_ts: { type: 'string' },
        initial_comment: { type: 'string' },
        blocks: JSON_VALUED.blocks,
      },
    },
  },
};

/** A Swagger 2 parameter as a JSON Schema. */
const schemaOf = (parameter) => ({
  type: parameter.type ?? 'string',
  ...(parameter.enum ? { enum: parameter.enum } : {}),
  ...(parameter.description ? { description: parameter.description } : {}),
});

/** The method as the description has it: its arguments, the required ones and the content types it takes. */
function described(spec, method) {
  const item = spec.paths[`/${method}`];
  const [verb, operation] = Object.entries(item ?? {})[0] ?? [];
  if (!operation) return undefined;
  const properties = {};
  const required = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === 'header') continue; // the token as a "header" named token: sent as Authorization: Bearer instead
    properties[parameter.name] = schemaOf(parameter);
    // A required token is met by the Authorization header (which the fake checks), so it is not required in the body.
    if (parameter.required && parameter.name !== 'token') required.push(parameter.name);
  }
  properties.token ??= { type: 'string' };
  return { verb, consumes: operation.consumes ?? [FORM], properties, required, description: operation.description };
}

/** The body schema of one content type: JSON-valued arguments are strings in a form. */
function bodySchema(properties, required, type) {
  const shaped = Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => {
      const value = JSON_VALUED[name] && schema.type !== 'object' && schema.type !== 'array' ? JSON_VALUED[name] : schema;
      if (type === FORM && (value.type === 'object' || value.type === 'array')) return [name, { type: 'string', description: 'JSON, presented as a URL-encoded string' }];
      return [name, value];
    }),
  );
  return { type: 'object', additionalProperties: false, ...(required.length > 0 ? { required } : {}), properties: shaped };
}

export function extract(spec, source, revision, committed) {
  const paths = {};
  for (const method of METHODS) {
    const extra = DOCUMENTED[method];
    let shape = described(spec, method);
    const origin = [];
    if (shape) origin.push(`slack-api-specs (${shape.verb.toUpperCase()} in the description)`);
    if (extra?.method) shape = { ...extra.method, properties: { ...extra.method.properties } };
    else if (!shape) throw new Error(`the description has no ${method} and DOCUMENTED does not describe it: describe it from ${docs(method)}`);
    else if (extra) {
      Object.assign(shape.properties, extra.add);
      if (extra.required) shape.required = extra.required;
      if (extra.consumes) shape.consumes = extra.consumes;
    }
    const content = Object.fromEntries(shape.consumes.filter((type) => type === FORM || type === JSON_TYPE).map((type) => [type, { schema: bodySchema(shape.properties, shape.required, type) }]));
    paths[`/${method}`] = {
      post: {
        operationId: method,
        'x-herald-origin': extra?.method ? 'docs.slack.dev' : origin.join(', '),
        ...(extra ? { 'x-herald-docs': { url: docs(method), read: READ, why: extra.why } } : {}),
        requestBody: { required: shape.required.length > 0, content },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: spec.info.title, version: spec.info.version },
    'x-herald-source': {
      url: /^https?:/.test(source) ? source : `https://raw.githubusercontent.com/slackapi/slack-api-specs/${revision}/web-api/slack_web_openapi_v2_without_examples.json`,
      revision,
      ...(committed ? { committed } : {}),
      version: spec.info.version,
      converted: 'Swagger 2 → OpenAPI 3 request bodies by scripts/contracts/slack.mjs, with the docs.slack.dev pages named in x-herald-docs',
      retrieved: new Date().toISOString().slice(0, 10),
      licence: 'MIT, Copyright (c) 2017 SlackAPI',
    },
    servers: [{ url: `https://${spec.host}${spec.basePath}` }],
    paths,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2] ?? SOURCE;
  const spec = await load(source);
  const contract = extract(spec, source, process.argv[3] ?? 'master', process.argv[4]);
  await writeContract(OUTPUT, contract);
  console.log(`Slack Web API ${spec.info.version}: ${METHODS.length} methods (${Object.keys(DOCUMENTED).length} completed from docs.slack.dev) → ${OUTPUT}`);
}
