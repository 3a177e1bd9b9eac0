// Saved sets (REST /sets; issue 35): presets that start a new post in one step. An agent lists them (listSets, MCP) and
// passes a set's `socialPost` to schedulePostTool as it is (type and date changed to schedule it); the console's composer
// opens filled from a set and saves one from what it holds.
import { z } from 'zod';
import { defineTool, readOnly } from './types.js';
import { deletionOutput, idParam, mediaReference } from './shapes.js';
import { checkedSetFields, createPostSet, findPostSet, listPostSets, postSetRecords } from './internal/post-sets.js';
import { recordChange } from './internal/audit.js';
import { invalidInput } from '../src/errors.js';
import { parseInput } from './runner.js';

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const setFields = z.object({
  name: z.string().trim().min(1, 'is required').max(100),
  channels: z.array(idParam).max(50).describe('Channel ids (integrationList)'),
  content: z.string().max(100_000).describe('HTML, as a post\'s content'),
  media: z.array(mediaReference).max(20),
  settings: z.record(z.string(), z.record(z.string(), z.unknown())).describe('Per platform identifier: its settings, e.g. {"x": {"who_can_reply_post": "everyone"}}'),
});

export const postSetSchema = z.object({
  id: z.string(),
  name: z.string(),
  channels: z.array(z.object({ id: z.string(), name: z.string(), platform: z.string(), state: z.enum(['connected', 'needs_reconnection', 'disabled', 'disconnected']) })),
  content: z.string(),
  media: z.array(z.object({ id: z.string(), path: z.string(), alt: z.string().optional() })),
  settings: z.record(z.string(), z.record(z.string(), z.unknown())),
  socialPost: z
    .array(z.object({}).loose())
    .describe("schedulePostTool's socialPost as it is: one draft per usable channel; set type and date to schedule it"),
  warnings: z.array(z.string()).describe('Channels disconnected, disabled or needing reconnection since the set was saved'),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const one = async (em: Parameters<typeof postSetRecords>[0], organizationId: string, set: Parameters<typeof postSetRecords>[2][number]) => (await postSetRecords(em, organizationId, [set]))[0];

export const listSetsTool = defineTool({
  name: 'listSets',
  title: 'Sets',
  // Every byte of tools/list is sent each turn (budget): each set's socialPost and its description in the answer say the rest.
  description: 'Saved presets for schedulePostTool',
  // A read-only tool's destructive and idempotent hints mean nothing (MCP: they apply when readOnlyHint is false): left at
  // MCP's defaults, so tools/list does not carry them.
  annotations: { readOnlyHint: true, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  mcp: true,
  input: z.object({}),
  output: z.object({ sets: z.array(postSetSchema) }),
  rest: { method: 'GET', path: '/sets', toInput: () => ({}), toResponse: (output) => output.sets },
  handler: async (_input, { em, caller }) => ({ sets: await postSetRecords(em, caller.organizationId, await listPostSets(em, caller.organizationId)) }),
});

export const showPostSetTool = defineTool({
  name: 'showPostSet',
  title: 'Show a set',
  description: "GET /sets/{id}: the set, its channels' states now, and socialPost: schedulePostTool's input (POST /posts takes the same after mapping) as it is.",
  annotations: readOnly,
  mcp: false,
  input: z.object({ id: idParam }),
  output: postSetSchema,
  rest: { method: 'GET', path: '/sets/:id' },
  handler: async (input, { em, caller }) => one(em, caller.organizationId, await findPostSet(em, caller.organizationId, input.id)),
});

export const createPostSetTool = defineTool({
  name: 'createPostSet',
  title: 'Save a set',
  description: 'POST /sets {name, channels, content, media, settings}: saves a preset a new post starts from (the console composer, or schedulePostTool with its socialPost).',
  annotations: writes,
  mcp: false,
  acceptsIdempotencyKey: true,
  input: setFields.extend({ channels: setFields.shape.channels.default([]), content: setFields.shape.content.default(''), media: setFields.shape.media.default([]), settings: setFields.shape.settings.default({}) }),
  output: postSetSchema,
  rest: { method: 'POST', path: '/sets' },
  handler: async (input, { em, caller }) => {
    const set = await createPostSet(em, caller.organizationId, await checkedSetFields(em, caller.organizationId, input));
    await recordChange(em, caller.organizationId, { action: 'post_set.created', target: { kind: 'post_set', id: set.id }, did: `saved the set "${set.name}"` });
    return one(em, caller.organizationId, set);
  },
});

export const changePostSetTool = defineTool({
  name: 'changePostSet',
  title: 'Change a set',
  description: 'PUT /sets/{id}: replaces the fields given (name, channels, content, media, settings); the others stay.',
  annotations: { ...writes, idempotentHint: true },
  mcp: false,
  input: setFields.partial().extend({ id: idParam }),
  output: postSetSchema,
  rest: { method: 'PUT', path: '/sets/:id' },
  handler: async (input, { em, caller }) => {
    const set = await findPostSet(em, caller.organizationId, input.id);
    const fields = await checkedSetFields(em, caller.organizationId, {
      name: input.name ?? set.name,
      channels: input.channels ?? set.channels,
      content: input.content ?? set.content,
      media: input.media ?? set.media,
      settings: input.settings ?? set.settings,
    });
    Object.assign(set, fields, { updatedAt: new Date() });
    await em.flush();
    await recordChange(em, caller.organizationId, { action: 'post_set.changed', target: { kind: 'post_set', id: set.id }, did: `changed the set "${set.name}"`, changes: { fields: Object.keys(input).filter((key) => key !== 'id') } });
    return one(em, caller.organizationId, set);
  },
});

export const deletePostSetTool = defineTool({
  name: 'deletePostSet',
  title: 'Delete a set',
  description: 'DELETE /sets/{id}: the set is gone; posts started from it stay.',
  annotations: { ...writes, destructiveHint: true, idempotentHint: true },
  mcp: false,
  input: z.object({ id: idParam }),
  output: deletionOutput,
  rest: { method: 'DELETE', path: '/sets/:id' },
  handler: async (input, { em, caller }) => {
    const set = await findPostSet(em, caller.organizationId, input.id);
    await em.remove(set).flush();
    await recordChange(em, caller.organizationId, { action: 'post_set.deleted', target: { kind: 'post_set', id: set.id }, did: `deleted the set "${set.name}"` });
    return { id: input.id, deleted: true };
  },
});

const actions = ['create', 'change', 'delete'] as const;

/** The MCP tool that saves sets (listSets reads them): each action runs the REST operation's own handler. */
export const postSetTool = defineTool({
  name: 'postSetTool',
  title: 'Save a set',
  description: 'Saves (create), changes or deletes a set of listSets.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  mcp: true,
  input: z.object({ action: z.enum(actions), id: idParam.optional(), set: z.record(z.string(), z.unknown()).optional() }),
  listedInput: z.object({
    action: z.enum(actions),
    id: z.string().optional(),
    set: z.record(z.string(), z.unknown()).optional().describe('name channels:[id] content media settings:{platform:{key:value}}'),
  }),
  output: z.object({ set: postSetSchema.optional(), deleted: z.boolean().optional() }),
  handler: async (input, context) => {
    if (input.action === 'create') {
      return { set: await createPostSetTool.handler(parseInput(createPostSetTool.input, input.set ?? {}, 'create needs set.name.'), context) };
    }
    if (!input.id) throw invalidInput(`id: ${input.action} needs the set's id.`, { hint: 'listSets gives the ids.' });
    if (input.action === 'delete') return { deleted: (await deletePostSetTool.handler({ id: input.id }, context)).deleted };
    return { set: await changePostSetTool.handler(parseInput(changePostSetTool.input, { ...(input.set ?? {}), id: input.id }), context) };
  },
});

export const postSetTools = [listSetsTool, showPostSetTool, createPostSetTool, changePostSetTool, deletePostSetTool, postSetTool];
