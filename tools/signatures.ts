// Signatures (REST /signatures; issue 35): text added at the end or start of every post when it is created, a channel's own
// or the organization's default. Applied by the create itself (tools/internal/signature.ts), so a preview shows it and the
// platform's length rules count it.
import { z } from 'zod';
import { SignatureSchema, type Signature } from '../src/db/workflow-entities.js';
import { defineTool, readOnly } from './types.js';
import { idParam, wrapped } from './shapes.js';
import { findIntegration, listIntegrations } from './internal/integrations.js';
import { checkedSignature, clearSignature, setSignature, SIGNATURE_MAX_LENGTH } from './internal/signature.js';
import { recordChange } from './internal/audit.js';
import { canSeeChannel } from './internal/visibility.js';

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

const channelParam = idParam.describe('"default" for the organization\'s default, else a channel id (integrationList)');

export const signatureSchema = z.object({
  channel: z.string().describe('"default", or the channel id'),
  channelName: z.string().optional(),
  text: z.string().describe('Plain text, shown as typed; each line a paragraph'),
  position: z.enum(['end', 'start']),
  updatedAt: z.string(),
});

const DEFAULT = 'default';

/** `"default"` as the organization's row (''), else a channel the caller may see. */
async function targetOf(em: Parameters<typeof findIntegration>[0], organizationId: string, channel: string): Promise<{ integrationId: string; name?: string }> {
  if (channel === DEFAULT) return { integrationId: '' };
  const integration = await findIntegration(em, organizationId, channel);
  return { integrationId: integration.id, name: integration.name };
}

const recordOf = (signature: Signature, name?: string): z.infer<typeof signatureSchema> => ({
  channel: signature.integrationId || DEFAULT,
  ...(name ? { channelName: name } : {}),
  text: signature.text,
  position: signature.position,
  updatedAt: signature.updatedAt.toISOString(),
});

export const setSignatureTool = defineTool({
  name: 'setSignature',
  title: 'Set a signature',
  description:
    'PUT /signatures/{channel}: text Herald adds at the end (or start) of each new post on a channel ("default": every channel without its own). ' +
    'Added once when a post is created (the last thread item for end, the first for start), counted in the platform\'s length; settings signature: false leaves it out of one post.',
  annotations: writes,
  mcp: true,
  scope: 'channels:manage',
  input: z.object({
    channel: channelParam,
    text: z.string().max(SIGNATURE_MAX_LENGTH * 2).describe(`Plain text, at most ${SIGNATURE_MAX_LENGTH} characters`),
    position: z.enum(['end', 'start']).default('end'),
  }),
  output: signatureSchema,
  rest: { method: 'PUT', path: '/signatures/:channel' },
  handler: async (input, { em, caller }) => {
    const target = await targetOf(em, caller.organizationId, input.channel);
    const signature = await setSignature(em, caller.organizationId, target.integrationId, checkedSignature(input.text, input.position));
    await recordChange(em, caller.organizationId, {
      action: 'signature.set',
      target: { kind: 'signature', id: signature.integrationId || DEFAULT },
      integrationId: target.integrationId || null,
      did: `set the signature of ${target.name ? `the channel "${target.name}"` : 'the organization (default)'}`,
      changes: { position: signature.position, length: signature.text.length },
    });
    return recordOf(signature, target.name);
  },
});

export const clearSignatureTool = defineTool({
  name: 'clearSignature',
  title: 'Clear a signature',
  description: 'DELETE /signatures/{channel}: new posts on the channel get the default signature again (or none, for "default"). Posts already made keep theirs.',
  annotations: { ...writes, destructiveHint: true },
  mcp: true,
  scope: 'channels:manage',
  input: z.object({ channel: channelParam }),
  output: z.object({ channel: z.string(), cleared: z.boolean().describe('false: there was none') }),
  rest: { method: 'DELETE', path: '/signatures/:channel' },
  handler: async (input, { em, caller }) => {
    const target = await targetOf(em, caller.organizationId, input.channel);
    const cleared = await clearSignature(em, caller.organizationId, target.integrationId);
    if (cleared) {
      await recordChange(em, caller.organizationId, {
        action: 'signature.cleared',
        target: { kind: 'signature', id: target.integrationId || DEFAULT },
        integrationId: target.integrationId || null,
        did: `cleared the signature of ${target.name ? `the channel "${target.name}"` : 'the organization (default)'}`,
      });
    }
    return { channel: input.channel, cleared };
  },
});

export const listSignaturesTool = defineTool({
  name: 'listSignatures',
  title: 'List signatures',
  description: 'GET /signatures: the organization\'s default ("default") and each channel\'s own signature. validatePostTool shows a post with its signature.',
  annotations: readOnly,
  // REST and the console: an agent sees a channel's signature in validatePostTool's preview.
  mcp: false,
  input: z.object({}),
  output: wrapped(z.array(signatureSchema)),
  rest: { method: 'GET', path: '/signatures', toInput: () => ({}), toResponse: (output) => output.output },
  handler: async (_input, { em, caller }) => {
    const rows = await em.find(SignatureSchema, { organizationId: caller.organizationId }, { orderBy: { integrationId: 'asc' } });
    const names = new Map((await listIntegrations(em, caller.organizationId)).map((channel) => [channel.id, channel.name]));
    // A channel the caller may not see (or that was disconnected) is left out, as everywhere.
    const shown = rows.filter((row) => row.integrationId === '' || (canSeeChannel(row.integrationId) && names.has(row.integrationId)));
    return { output: shown.map((row) => recordOf(row, names.get(row.integrationId))) };
  },
});

export const signatureTools = [setSignatureTool, clearSignatureTool, listSignaturesTool];
