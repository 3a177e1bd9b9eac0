// Saved sets (issue 35): presets of channels, text, media and settings per platform that start a new post in one step. A
// set is shown with its `socialPost`, schedulePostTool's input as it is (drafts until type and date are set), and with
// what became of its channels: one disconnected since is left out of it and named in `warnings`.
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, type Integration } from '../../src/db/entities.js';
import { PostSetSchema, type PostSet } from '../../src/db/workflow-entities.js';
import { invalidInput, notFound } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { findProvider } from '../../providers/index.js';
import { canSeeChannel } from './visibility.js';
import { findIntegration } from './integrations.js';

export type SetChannelState = 'connected' | 'needs_reconnection' | 'disabled' | 'disconnected';

export interface PostSetFields {
  name: string;
  channels: string[];
  content: string;
  media: { id: string; path: string; alt?: string }[];
  settings: Record<string, Record<string, unknown>>;
}

export interface PostSetRecord extends Omit<PostSetFields, 'channels'> {
  id: string;
  channels: { id: string; name: string; platform: string; state: SetChannelState }[];
  socialPost: {
    integrationId: string;
    type: 'draft';
    shortLink: false;
    postsAndComments: { content: string; attachments: { id: string; path: string; alt?: string }[] }[];
    settings: { key: string; value: unknown }[];
  }[];
  warnings: string[];
  createdAt: string;
  updatedAt: string;
}

/** Checks a set's fields: its channels are the caller's (404 otherwise), its settings keyed by known platforms. */
export async function checkedSetFields(em: EntityManager, organizationId: string, fields: PostSetFields): Promise<PostSetFields> {
  const channels = [...new Set(fields.channels)];
  for (const id of channels) await findIntegration(em, organizationId, id);
  for (const [platform, values] of Object.entries(fields.settings)) {
    if (!findProvider(platform)) throw invalidInput(`settings.${platform.slice(0, 40)}: not a platform identifier.`, { hint: 'Key settings by platform, such as {"x": {"who_can_reply_post": "everyone"}} (integrationSchema lists each platform\'s).' });
    if (!values || typeof values !== 'object' || Array.isArray(values)) throw invalidInput(`settings.${platform}: must be an object of that platform's settings.`);
  }
  if (!fields.content.trim() && fields.media.length === 0 && channels.length === 0) {
    throw invalidInput('The set is empty: give it channels, a text, media or settings.', { hint: 'A set starts a post: save at least what every such post shares.' });
  }
  const settings = Object.fromEntries(Object.entries(fields.settings).map(([platform, { __type: _type, ...values }]) => [platform, values]));
  return { ...fields, name: fields.name.trim(), channels, settings };
}

export async function findPostSet(em: EntityManager, organizationId: string, id: string): Promise<PostSet> {
  const set = await em.findOne(PostSetSchema, { id, organizationId });
  if (!set) throw notFound(`Set ${id} not found.`, { hint: 'List the sets with listSets (MCP) or GET /sets (REST).' });
  return set;
}

export async function createPostSet(em: EntityManager, organizationId: string, fields: PostSetFields): Promise<PostSet> {
  const now = new Date();
  const set = em.create(PostSetSchema, { id: newId(), organizationId, ...fields, createdAt: now, updatedAt: now });
  await em.persist(set).flush();
  return set;
}

const stateOf = (channel: Integration | undefined): SetChannelState =>
  !channel || channel.deletedAt ? 'disconnected' : channel.refreshNeeded ? 'needs_reconnection' : channel.disabled || channel.inBetweenSteps ? 'disabled' : 'connected';

/** The sets as records: each channel with its state now (one read for all the sets' channels). */
export async function postSetRecords(em: EntityManager, organizationId: string, sets: PostSet[]): Promise<PostSetRecord[]> {
  const ids = [...new Set(sets.flatMap((set) => set.channels))].filter(canSeeChannel);
  const channels = new Map((await em.find(IntegrationSchema, { id: { $in: ids }, organizationId })).map((channel) => [channel.id, channel]));
  return sets.map((set) => {
    const shown = set.channels.filter(canSeeChannel).map((id) => {
      const channel = channels.get(id);
      return { id, name: channel?.name ?? id, platform: channel?.providerIdentifier ?? 'unknown', state: stateOf(channel) };
    });
    const warnings = shown
      .filter((channel) => channel.state !== 'connected')
      .map((channel) =>
        channel.state === 'needs_reconnection'
          ? `Channel "${channel.name}" (${channel.platform}, id ${channel.id}) needs reconnection: its posts fail until it is reconnected in the console.`
          : `Channel "${channel.name}" (${channel.platform}, id ${channel.id}) was ${channel.state === 'disabled' ? 'disabled' : 'disconnected'}: it is left out of socialPost; choose another channel, or connect it again and change the set.`,
      );
    const usable = shown.filter((channel) => channel.state === 'connected' || channel.state === 'needs_reconnection');
    return {
      id: set.id,
      name: set.name,
      channels: shown,
      content: set.content,
      media: set.media,
      settings: set.settings,
      socialPost: usable.map((channel) => ({
        integrationId: channel.id,
        type: 'draft' as const,
        shortLink: false as const,
        postsAndComments: [{ content: set.content, attachments: set.media }],
        settings: Object.entries(set.settings[channel.platform] ?? {}).map(([key, value]) => ({ key, value })),
      })),
      warnings,
      createdAt: set.createdAt.toISOString(),
      updatedAt: set.updatedAt.toISOString(),
    };
  });
}

export async function listPostSets(em: EntityManager, organizationId: string): Promise<PostSet[]> {
  return em.find(PostSetSchema, { organizationId }, { orderBy: { name: 'asc', id: 'asc' } });
}
