// Refreshes the vendored VK API contract (test/contracts/vk/methods.json) from VK's own JSON Schema of its methods,
// github.com/VKCOM/vk-api-schema (MIT): only the methods Herald calls are kept, each with its parameters (names, types,
// required flags, enums, bounds; `$ref`s to objects.json inlined) and the `$ref` of its response, plus the global errors
// the fake answers. The fake (test/fakes/vk.ts) checks every method call against the result.
//
//   node scripts/contracts/vk.mjs [<directory or raw URL holding the repository's files>] [<commit of those files>]
//
// Without arguments it downloads the files of the master branch. Rerun when VK publishes a new API version and read the diff.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFile, writeContract } from './common.mjs';

const SOURCE = 'https://raw.githubusercontent.com/VKCOM/vk-api-schema/master';
const OUTPUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../test/contracts/vk/methods.json');

/** The methods Herald's VK provider calls (providers/vk.ts). */
export const METHODS = [
  'photos.getWallUploadServer',
  'photos.saveWallPhoto',
  'video.save',
  'wall.post',
  'wall.createComment',
  'wall.get',
  'wall.getById',
  'wall.getComments',
  'wall.getComment',
  'wall.edit',
  'wall.editComment',
  'wall.delete',
  'wall.deleteComment',
];
/** The global errors the fake answers for a call outside the contract. */
const ERRORS = ['api_error_method', 'api_error_auth', 'api_error_request', 'api_error_param'];

const load = async (base, file) => JSON.parse(await loadFile(base, file));

/** `../base/objects.json#/definitions/x` inlined (recursively), so the vendored file stands alone. */
async function inline(base, value, from) {
  if (Array.isArray(value)) return Promise.all(value.map((entry) => inline(base, entry, from)));
  if (!value || typeof value !== 'object') return value;
  const out = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$ref' && typeof inner === 'string' && inner.includes('objects.json#/definitions/')) {
      const [file, pointer] = inner.split('#');
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
      const definitions = (await load(base, target)).definitions;
      Object.assign(out, await inline(base, definitions[pointer.split('/').pop()], target));
    } else if (key !== 'description' && key !== 'enumNames') out[key] = await inline(base, inner, from);
  }
  return out;
}

export async function extract(base, revision) {
  const methods = {};
  let version;
  for (const section of [...new Set(METHODS.map((name) => name.split('.')[0]))]) {
    const document = await load(base, `${section}/methods.json`);
    version ??= document.version;
    if (document.version !== version) throw new Error(`${section}/methods.json is for API ${document.version}, others for ${version}`);
    for (const method of document.methods.filter((item) => METHODS.includes(item.name))) {
      methods[method.name] = { access_token_type: method.access_token_type, parameters: await inline(base, method.parameters, `${section}/methods.json`), responses: method.responses };
    }
  }
  const missing = METHODS.filter((name) => !methods[name]);
  if (missing.length > 0) throw new Error(`the schema has no ${missing.join(', ')}: VK changed it, update the provider first`);
  const errors = (await load(base, 'errors.json')).errors;
  return {
    'x-herald-source': { url: 'https://github.com/VKCOM/vk-api-schema', revision, version, retrieved: new Date().toISOString().slice(0, 10), licence: 'MIT, Copyright (c) 2016 VK.com' },
    version,
    methods: Object.fromEntries(METHODS.map((name) => [name, methods[name]])),
    errors: Object.fromEntries(ERRORS.map((name) => [name, { code: errors[name].code, description: errors[name].description }])),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const base = process.argv[2] ?? SOURCE;
  const contract = await extract(base, process.argv[3] ?? 'master');
  await writeContract(OUTPUT, contract);
  console.log(`VK API ${contract.version}: ${METHODS.length} methods → ${OUTPUT}`);
}
