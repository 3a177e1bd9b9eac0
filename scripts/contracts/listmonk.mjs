// Refreshes the vendored listmonk API contract (test/contracts/listmonk/openapi.json) from the OpenAPI 3 document listmonk
// publishes in its repository, github.com/knadh/listmonk (docs/swagger/collections.yaml, AGPL-3.0): only the operations Herald
// calls are kept, with every component they reference, so the file stays small and a diff shows what changed for Herald.
//
//   node scripts/contracts/listmonk.mjs [<path or URL of collections.yaml>] [<revision of that file>] [<URL a local file came from>]
//
// Without arguments it downloads the file of the master branch. The document is YAML: it is read with the `yaml` package.
// The fake (test/fakes/listmonk.ts) validates every request against the result; rerun this when listmonk releases and look
// at the diff.
//
// CORRECTIONS are applied after the cut and listed in the file's `x-herald-corrections`: places where the published
// document says less than, or other than, what listmonk's own server does (the server wins over its document).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cutOperations, load, writeContract } from './common.mjs';
import { parse } from 'yaml';

const SOURCE = 'https://raw.githubusercontent.com/knadh/listmonk/master/docs/swagger/collections.yaml';
const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/listmonk/openapi.json');

/** The operations Herald's listmonk provider calls (providers/listmonk.ts); paths are relative to the server URL (…/api). */
export const OPERATIONS = [
  ['get', '/lists'],
  ['get', '/templates'],
  ['post', '/campaigns'],
  ['get', '/campaigns'],
  ['get', '/campaigns/{id}'],
  ['put', '/campaigns/{id}/status'],
];

const CORRECTIONS = [
  {
    at: 'paths./profile.get',
    reason: 'undocumented in collections.yaml, served by listmonk ≥ 4: cmd/handlers.go routes GET /api/profile to GetUserProfile (cmd/users.go), which answers {data: <the authenticated user>} for any API user',
    apply: (contract) => {
      contract.paths['/profile'] = {
        get: {
          description: 'the authenticated user (GetUserProfile)',
          operationId: 'getUserProfile',
          responses: { 200: { description: 'the user', content: { 'application/json': { schema: { type: 'object', properties: { data: { type: 'object' } } } } } } },
        },
      };
    },
  },
  {
    at: 'components.schemas.CampaignRequest.properties',
    reason: 'the YAML nests `headers` and `template_id` under `send_at` (an indentation slip) and leaves out `body` and `altbody`; models/campaigns.go has them all at the top level and `send_at` as a timestamp',
    apply: (contract) => {
      const properties = contract.components.schemas.CampaignRequest.properties;
      const { headers, template_id } = properties.send_at.properties ?? {};
      properties.send_at = { type: 'string', format: 'date-time' };
      Object.assign(properties, { headers, template_id, body: { type: 'string' }, altbody: { type: 'string', nullable: true } });
    },
  },
];

export function extract(spec, source, revision) {
  const { paths, components } = cutOperations(spec, OPERATIONS, 'listmonk');
  const contract = {
    openapi: spec.openapi,
    info: { title: spec.info.title, version: spec.info.version },
    'x-herald-source': { url: source, revision, version: spec.info.version, retrieved: new Date().toISOString().slice(0, 10), licence: 'AGPL-3.0, Copyright Kailash Nadh' },
    'x-herald-corrections': CORRECTIONS.map(({ at, reason }) => ({ at, reason })),
    servers: spec.servers,
    paths,
    components: JSON.parse(JSON.stringify(components)),
  };
  for (const correction of CORRECTIONS) correction.apply(contract);
  return contract;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const source = process.argv[2] ?? SOURCE;
  const spec = await load(source, parse);
  const contract = extract(spec, process.argv[4] ?? source, process.argv[3] ?? 'master');
  await writeContract(OUTPUT, contract);
  console.log(`listmonk API ${spec.info.version}: ${OPERATIONS.length + 1} operations, ${Object.values(contract.components).reduce((n, kind) => n + Object.keys(kind).length, 0)} components → ${OUTPUT}`);
}
