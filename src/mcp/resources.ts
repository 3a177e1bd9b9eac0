// MCP resources of an organization, read through the same internal operations as the tools:
//   herald://integrations                  the channels (state, platform rules, limits, settings schema)
//   herald://integrations/{id}             one channel
//   herald://posts/{id}                    a post: its items, state, links, errors, approval, and each item as the platform receives it
//   herald://media                         the media library (newest 100)
//   herald://platforms/{identifier}        a platform's rules, limits, settings schema and helper tools
//   herald://channels/{id}/best-times      when to post on a channel, from its own posts' engagement (bestTimesTool)
//   herald://comments                      the newest 100 comments people left on published posts (tools/internal/comments.ts)
//   herald://posts/{id}/comments           the comments on one post
//   herald://audit                         the audit trail, newest 100 first; herald://audit?cursor=… the next page
// A client subscribed to a post gets notifications/resources/updated when it is published, fails, is approved, rejected
// or edited, whichever Herald process did it and whichever holds its stream (`resourceUpdates`). A client subscribed to
// comments gets it when a comment is stored or changes state: the comment table's trigger (Migration20261127200000) writes
// the update into the session's stream in the transaction that stored it, from `comments:*` / `comments:<root post id>`.
import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import type { Handle } from './surface.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, type Integration } from '../db/entities.js';
import { DomainError } from '../errors.js';
import { invalidParams } from './errors.js';
import { findProvider, providers } from '../../providers/index.js';
import type { Provider } from '../../providers/types.js';
import { asCaller, canSeeChannel } from '../../tools/internal/visibility.js';
import type { Caller, Services } from '../../tools/types.js';
import { channelStatus, findIntegration, formatPostingTime, listIntegrations } from '../../tools/internal/integrations.js';
import { settingsJsonSchema, settingsRecord } from '../../tools/internal/settings-record.js';
import { listMedia } from '../../tools/internal/media.js';
import { postView } from '../../tools/internal/post-view.js';
import { requesterLabel } from '../../tools/internal/approval.js';
import type { PostChange, PostChanges } from '../lib/events.js';
import type { Logger } from '../lib/logger.js';
import { notifySession, type SessionContext } from './sessions.js';
import { platformName } from '../../tools/internal/channel-health.js';
import { channelZone, organizationZone } from '../../tools/internal/time-zones.js';
import { bestTimes } from '../../tools/internal/best-times.js';
import { listComments } from '../../tools/internal/comments.js';
import { findPost } from '../../tools/internal/posts.js';
import { listAudit } from '../../tools/internal/audit-query.js';

const JSON_TYPE = 'application/json';

const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'herald://integrations/{id}',
    name: 'channel',
    title: 'Channel',
    description: 'One connected channel: its state (active, disabled, needs_reconnection, choose_account), platform rules, maxLength and settings schema. Complete `id` for the channel ids.',
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: 'herald://posts/{id}',
    name: 'post',
    title: 'Post',
    description:
      'A post (any item id of its chain): state, publishStatus, every item with its link and error, the approval decision, and a preview of each item exactly as the platform receives it with its length against the limit. Subscribe to learn when it is published, fails or is decided.',
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: 'herald://posts/{id}/comments',
    name: 'post-comments',
    title: 'Comments on a post',
    description: 'The comments and replies people left on one published post (newest 100), with state and Herald\'s reply. Subscribe to hear of new ones.',
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: 'herald://platforms/{identifier}',
    name: 'platform',
    title: 'Platform rules',
    description: 'A platform\'s posting rules, maxLength, thread or comment style, settings schema and helper tools (the same as integrationSchema).',
    mimeType: JSON_TYPE,
  },
  {
    uriTemplate: 'herald://channels/{id}/best-times',
    name: 'best-times',
    title: 'Best posting times',
    description:
      "When to post on a channel, from the organization's own published posts and their engagement: weekday × hour slots in the channel's time zone with posts and median engagement per slot, or why there is not enough data (the same as bestTimesTool).",
    mimeType: JSON_TYPE,
  },
];

/** Not found: -32602 with the uri in `data`, as the MCP spec asks of resources/read. */
const notFound = (uri: string, why = 'Resource not found') => invalidParams(`${why}: ${uri}`, { uri });

function platformRecord(provider: Provider) {
  const record = settingsRecord(provider, false);
  return {
    identifier: provider.identifier,
    name: provider.name,
    uri: `herald://platforms/${provider.identifier}`,
    publishing: Boolean(provider.publish),
    chain: provider.chain,
    editor: provider.editor,
    lengthMethod: provider.lengthMethod,
    maxLength: record.maxLength,
    maxLengthPremium: provider.maxLength({ isPremium: true }),
    rules: record.rules,
    settings: record.settings,
    tools: record.tools,
    analytics: Boolean(provider.analytics),
    mediaByUrl: Boolean(provider.mediaByUrl),
  };
}

function channelRecord(integration: Integration, organizationDefault: string) {
  const provider = findProvider(integration.providerIdentifier);
  return {
    id: integration.id,
    uri: `herald://integrations/${integration.id}`,
    name: integration.name,
    platform: integration.providerIdentifier,
    profile: integration.profile,
    picture: integration.picture ?? '',
    state: channelStatus(integration),
    disabled: integration.disabled,
    customerId: integration.customerId ?? null,
    timeZone: channelZone(integration, organizationDefault),
    // Wall-clock times of their own zone (09:00 stays 09:00 across daylight-saving changes); UTC for times set before zones.
    postingTimes: { timeZone: integration.postingTimesZone ?? 'UTC', times: integration.postingTimes.map(formatPostingTime) },
    maxLength: provider?.maxLength({ isPremium: integration.additionalSettings.premium === true, channel: integration.additionalSettings }) ?? null,
    rules: provider?.rules ?? null,
    settings: provider ? settingsJsonSchema(provider) : null,
    chain: provider?.chain ?? null,
    publishing: Boolean(provider?.publish),
    platformUri: `herald://platforms/${integration.providerIdentifier}`,
  };
}

/** What a resource URI names, or undefined when it is not one of Herald's. */
function parseResourceUri(
  uri: string,
): { kind: 'integrations' | 'media' | 'comments' } | { kind: 'audit'; cursor?: string } | { kind: 'integration' | 'post' | 'platform' | 'best-times' | 'postComments'; id: string } | undefined {
  if (uri === 'herald://comments') return { kind: 'comments' };
  const audit = /^herald:\/\/audit(?:\?cursor=([\w-]{1,500}))?$/.exec(uri);
  if (audit) return { kind: 'audit', cursor: audit[1] };
  const comments = /^herald:\/\/posts\/([^/?#]+)\/comments$/.exec(uri);
  if (comments) {
    try {
      return { kind: 'postComments', id: decodeURIComponent(comments[1]) };
    } catch {
      return undefined;
    }
  }
  const bestTimesUri = /^herald:\/\/channels\/([^/?#]+)\/best-times$/.exec(uri);
  if (bestTimesUri) {
    try {
      return { kind: 'best-times', id: decodeURIComponent(bestTimesUri[1]) };
    } catch {
      return undefined;
    }
  }
  const match = /^herald:\/\/(integrations|media|posts|platforms)(?:\/([^/?#]+))?$/.exec(uri);
  if (!match) return undefined;
  const [, collection, rawId] = match;
  let id: string | undefined;
  try {
    id = rawId === undefined ? undefined : decodeURIComponent(rawId);
  } catch {
    return undefined;
  }
  if (collection === 'integrations') return id === undefined ? { kind: 'integrations' } : { kind: 'integration', id };
  if (collection === 'media') return id === undefined ? { kind: 'media' } : undefined;
  if (id === undefined) return undefined;
  return { kind: collection === 'posts' ? 'post' : 'platform', id };
}

/** A resource as `caller` sees it: a channel (or its post) outside a key's channel limit does not exist for it. */
export function readResource(services: Services, caller: Caller, uri: string): Promise<unknown> {
  return asCaller(caller, () => readVisibleResource(services, caller, uri));
}

async function readVisibleResource(services: Services, caller: Caller, uri: string): Promise<unknown> {
  const target = parseResourceUri(uri);
  if (!target) throw notFound(uri);
  const em = services.orm.em.fork();
  const organizationId = caller.organizationId;
  switch (target.kind) {
    case 'integrations': {
      const zone = await organizationZone(em, organizationId);
      return { channels: (await listIntegrations(em, organizationId)).map((integration) => channelRecord(integration, zone)) };
    }
    case 'integration': {
      const integration = canSeeChannel(target.id) ? await em.findOne(IntegrationSchema, { id: target.id, organizationId, deletedAt: null }) : null;
      if (!integration) throw notFound(uri, 'Channel not found');
      return channelRecord(integration, await organizationZone(em, organizationId));
    }
    case 'media':
      return listMedia(em, organizationId, 0, 100);
    case 'best-times': {
      // findIntegration: the lookup that channel-limited credentials restrict.
      const integration = await findIntegration(em, organizationId, target.id).catch((error: unknown) => {
        throw error instanceof DomainError && error.code === 'not_found' ? notFound(uri, 'Channel not found') : error;
      });
      return bestTimes(em, integration, services.now(), services.config.defaultPostingTimes);
    }
    case 'comments':
      return { uri, ...(await listComments(em, organizationId, { page: 0, pageSize: 100 })) };
    case 'audit': {
      // A key limited to channels sees its channels' events only (listAudit, through asCaller above).
      const page = await listAudit(em, organizationId, { cursor: target.cursor, limit: 100 });
      return { uri, ...page, next: page.nextCursor ? `herald://audit?cursor=${page.nextCursor}` : null };
    }
    case 'postComments': {
      try {
        const root = (await findPost(em, organizationId, target.id)).rootPostId;
        return { uri, postId: root, ...(await listComments(em, organizationId, { post: root, page: 0, pageSize: 100 })) };
      } catch (error) {
        if (error instanceof DomainError && error.code === 'not_found') throw notFound(uri, 'Post not found');
        throw error;
      }
    }
    case 'platform': {
      const provider = findProvider(target.id);
      if (!provider) throw notFound(uri, 'Unknown platform');
      return platformRecord(provider);
    }
    case 'post': {
      try {
        const view = await postView(em, organizationId, target.id);
        const approval = view.record.approval;
        return {
          ...view.record,
          uri: `herald://posts/${view.record.id}`,
          approval: approval
            ? { ...approval, status: approval.decision ?? 'pending', requestedBy: requesterLabel(approval) }
            : null,
          preview: view.preview,
        };
      } catch (error) {
        if (error instanceof DomainError && error.code === 'not_found') throw notFound(uri, 'Post not found');
        throw error;
      }
    }
  }
}

/**
 * What a subscription to `uri` waits for, as the deliveries match it (a post's root id, `comments:*`, `comments:<root>`, or
 * the URI itself). Reading checks that the resource exists in this organization (a URI the caller cannot read is refused as
 * resources/read refuses it); posts and comments change on their own.
 */
export async function subscriptionKey(services: Services, caller: Caller, uri: string): Promise<string> {
  const content = (await readResource(services, caller, uri)) as { id?: string; postId?: string };
  const target = parseResourceUri(uri)!;
  return target.kind === 'post' ? content.id! : target.kind === 'comments' ? 'comments:*' : target.kind === 'postComments' ? `comments:${content.postId}` : uri;
}

/** A session's subscriptions, kept in its state (sessions live in Postgres): the client's URI → the root post it names. */
type Subscriptions = Record<string, string>;

const subscriptionsOf = (session: SessionContext): Subscriptions => (session.state.subscriptions as Subscriptions | undefined) ?? {};

/**
 * Delivers post changes to the subscribed sessions of the organization, whichever process holds their streams: the update
 * is stored as an event of the session's stream and its holder is told (the same path as the worker's notifications).
 */
export function resourceUpdates(em: () => EntityManager, logger: Logger): PostChanges {
  return {
    async publish(change: PostChange) {
      // Only the sessions subscribed to the post (knex reads `?` as a placeholder: no jsonb `?` operator here).
      const rows = await em()
        .getConnection()
        .execute<{ id: string; subscriptions: Subscriptions }[]>(
          `select id, state->'subscriptions' as subscriptions from mcp_session where organization_id = ? and state->'subscriptions' is not null
             and exists (select 1 from jsonb_each_text(state->'subscriptions') s where s.value = ?)`,
          [change.organizationId, change.postId],
        );
      for (const row of rows) {
        for (const [uri, root] of Object.entries(row.subscriptions ?? {})) {
          if (root !== change.postId) continue;
          await notifySession(em(), row.id, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } }).catch((error: Error) =>
            logger.warn({ err: error.message, sessionId: row.id }, 'could not deliver a resource update'),
          );
        }
      }
    },
  };
}

/** The resource handlers of one request's server; subscriptions live in the session's state. */
export class ResourceSubscriptions {
  constructor(
    private readonly services: Services,
    private readonly caller: Caller,
    private readonly session: SessionContext,
  ) {}

  /** `subscriptions`: resources/subscribe and unsubscribe (2025-11-25 sessions; 2026-07-28 clients use subscriptions/listen). */
  register(handle: Handle, subscriptions: boolean): void {
    const { services, caller, session } = this;
    handle('resources/list', async () => {
      const em = services.orm.em.fork();
      const list: Resource[] = [
        { uri: 'herald://integrations', name: 'channels', title: 'Channels', description: 'The organization\'s connected channels with state, platform rules, limits and settings schema.', mimeType: JSON_TYPE },
        { uri: 'herald://comments', name: 'comments', title: 'Comments', description: 'The newest 100 comments people left on published posts, with state (new, answered, hidden, deleted). Subscribe to hear of new ones; answer with replyToComment.', mimeType: JSON_TYPE },
        { uri: 'herald://audit', name: 'audit', title: 'Audit trail', description: 'Who changed what, when, how and from where: the newest 100 events; `next` names the following page (herald://audit?cursor=…). Never holds secrets.', mimeType: JSON_TYPE },
        { uri: 'herald://media', name: 'media', title: 'Media library', description: 'The newest 100 files of the media library: use a path as an attachment.', mimeType: JSON_TYPE },
        ...(await asCaller(caller, () => listIntegrations(em, caller.organizationId))).map((integration) => ({
          uri: `herald://integrations/${integration.id}`,
          name: `channel-${integration.id}`,
          title: `${integration.name} (${platformName(integration)})`,
          description: `Channel ${integration.name}: state ${channelStatus(integration)}, platform rules, limits and settings.`,
          mimeType: JSON_TYPE,
        })),
        ...providers.map((provider) => ({
          uri: `herald://platforms/${provider.identifier}`,
          name: `platform-${provider.identifier}`,
          title: `${provider.name} rules`,
          description: `What ${provider.name} accepts: rules, maxLength, settings, helper tools.`,
          mimeType: JSON_TYPE,
        })),
      ];
      return { resources: list };
    });
    handle('resources/templates/list', async () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
    handle('resources/read', async ({ uri }: { uri: string }) => {
      const content = await readResource(services, caller, uri);
      return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(content, null, 2) }] };
    });
    if (!subscriptions) return;
    handle('resources/subscribe', async ({ uri }: { uri: string }) => {
      const key = await subscriptionKey(services, caller, uri);
      await session.updateState({ subscriptions: { ...subscriptionsOf(session), [uri]: key } });
      return {};
    });
    handle('resources/unsubscribe', async ({ uri }: { uri: string }) => {
      const { [uri]: _gone, ...rest } = subscriptionsOf(session);
      await session.updateState({ subscriptions: rest });
      return {};
    });
  }
}
