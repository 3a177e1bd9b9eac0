// REST /keys: the organization's named API keys, for an owner (organization:manage). Like GitHub's fine-grained tokens: a
// name, scopes, optionally channels or customers, an expiry, its own limits and gate; the secret is answered once.
import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { idParam } from './shapes.js';
import { createKey, listKeys, revokeKey, rotateKey, updateKey } from './internal/api-keys.js';
import { AGENT_PRESET, API_SCOPES, API_SCOPE_DESCRIPTIONS } from './internal/scopes.js';

const scopeList = API_SCOPES.map((scope) => `${scope} (${API_SCOPE_DESCRIPTIONS[scope]})`).join('; ');

const keySchema = z.object({
  id: z.string(),
  name: z.string(),
  organizationKey: z.boolean().describe('The organization key (owner key): every scope, minted by key:create in the CLI'),
  scopes: z.array(z.string()),
  channels: z.array(z.string()).nullable().describe('Channel ids it may see and post to; null: not limited by channel'),
  customers: z.array(z.string()).nullable().describe('Customers whose channels (now and later) it may see and post to'),
  expiresAt: z.string().nullable(),
  requestsPerMinute: z.number().nullable().describe('Its own REST request limit per minute, on top of the organization\'s'),
  postsPerHour: z.number().nullable().describe('Its own post-creation limit per hour, on top of the organization\'s'),
  approvalRequired: z.boolean().nullable().describe('Its posts wait for approval: true always, false never, null the organization\'s rule'),
  lastFour: z.string().describe('The last four characters of the secret, to tell keys apart'),
  createdAt: z.string(),
  rotatedAt: z.string().nullable(),
  lastUsed: z.object({ at: z.string(), address: z.string().nullable(), client: z.string().nullable() }).nullable().describe('Recorded at most once a minute'),
});
const withSecret = z.object({ key: keySchema, secret: z.string().describe('The key (hrld_…), shown only in this answer: store it now') });

const settings = {
  scopes: z.array(z.enum(API_SCOPES)).max(10).describe(`The key's scopes (default: ${AGENT_PRESET.join(', ')}, the agent preset). ${scopeList}`),
  channels: z.array(idParam).max(500).nullable().describe('Limit it to these channel ids (other channels answer 404 to it); null: no channel limit'),
  customers: z.array(idParam).max(200).nullable().describe('Limit it to the channels of these customers, including channels added later'),
  expiresAt: z.iso.datetime({ offset: true }).nullable().describe('When it stops working (ISO 8601); null: never'),
  requestsPerMinute: z.number().int().min(1).max(100000).nullable(),
  postsPerHour: z.number().int().min(1).max(100000).nullable(),
  approvalRequired: z.boolean().nullable().describe('Its posts wait for approval (true), never (false), or follow the organization\'s rule (null)'),
};
const nameField = z.string().trim().min(1, 'is required: name the key after who uses it (e.g. "Claude Desktop – Acme")').max(100);
const manage = 'organization:manage' as const;

export const listKeysTool = defineTool({
  name: 'listKeys',
  title: 'List API keys',
  description: 'GET /keys: the organization\'s live API keys (never their secrets), with scopes, channel limits, expiry, limits and last use. Needs organization:manage.',
  annotations: readOnly,
  mcp: false,
  scope: manage,
  input: z.object({}),
  output: z.object({ keys: z.array(keySchema) }),
  rest: { method: 'GET', path: '/keys' },
  handler: async (_input, { em, caller }) => ({ keys: await listKeys(em, caller) }),
});

export const createKeyTool = defineTool({
  name: 'createKey',
  title: 'Create an API key',
  description:
    'POST /keys {name, scopes?, channels?, customers?, expiresAt?, requestsPerMinute?, postsPerHour?, approvalRequired?}: a new named key. ' +
    `Without scopes it gets the agent preset (${AGENT_PRESET.join(', ')}): what to give an agent. The secret is in this answer only. Needs organization:manage.`,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  mcp: false,
  scope: manage,
  acceptsIdempotencyKey: true,
  input: z.object({ name: nameField, ...Object.fromEntries(Object.entries(settings).map(([field, schema]) => [field, schema.optional()])) } as {
    name: typeof nameField;
  } & { [Field in keyof typeof settings]: z.ZodOptional<(typeof settings)[Field]> }),
  output: withSecret,
  rest: { method: 'POST', path: '/keys', status: 201 },
  handler: async (input, context) => {
    return createKey(context.em, context.caller, input, context.services.now());
  },
});

export const updateKeyTool = defineTool({
  name: 'updateKey',
  title: 'Change an API key',
  description: 'PUT /keys/{id} {name?, scopes?, channels?, customers?, expiresAt?, requestsPerMinute?, postsPerHour?, approvalRequired?}: changes a key; its secret stays. Needs organization:manage.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: false,
  scope: manage,
  input: z.object({ id: idParam, name: nameField.optional(), ...Object.fromEntries(Object.entries(settings).map(([field, schema]) => [field, schema.optional()])) } as {
    id: typeof idParam;
    name: z.ZodOptional<typeof nameField>;
  } & { [Field in keyof typeof settings]: z.ZodOptional<(typeof settings)[Field]> }),
  output: keySchema,
  rest: { method: 'PUT', path: '/keys/:id' },
  handler: async ({ id, ...change }, context) => {
    return updateKey(context.em, context.caller, id, change, context.services.now());
  },
});

export const rotateKeyTool = defineTool({
  name: 'rotateKey',
  title: 'Rotate an API key',
  description: 'POST /keys/{id}/rotate: a new secret for the same key (same name, scopes, limits); the old secret stops working at once. The new secret is in this answer only. Needs organization:manage.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  mcp: false,
  scope: manage,
  input: z.object({ id: idParam }),
  output: withSecret,
  rest: { method: 'POST', path: '/keys/:id/rotate', toInput: ({ params }) => ({ id: params.id }) },
  handler: async ({ id }, context) => {
    return rotateKey(context.em, context.caller, id, context.services.now());
  },
});

export const revokeKeyTool = defineTool({
  name: 'revokeKey',
  title: 'Revoke an API key',
  description: 'DELETE /keys/{id}: the key stops working at once (REST and MCP). Needs organization:manage.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: false,
  scope: manage,
  input: z.object({ id: idParam }),
  output: z.object({ revoked: keySchema }),
  rest: { method: 'DELETE', path: '/keys/:id', toInput: ({ params }) => ({ id: params.id }) },
  handler: async ({ id }, context) => {
    return { revoked: await revokeKey(context.em, context.caller, id, context.services.now()) };
  },
});

export const keyTools = [listKeysTool, createKeyTool, updateKeyTool, rotateKeyTool, revokeKeyTool];
