// Customer preview links (issue 35): an expiring, revocable link, no account needed, showing a customer the upcoming posts
// (scheduled or waiting for approval) of chosen channels or of one customer's channels, dated in a range. Made, listed and
// revoked by a credential with the approve scope (tools/preview-links.ts, the console's Preview links page). The token is
// 256 random bits, answered once, stored and looked up as its SHA-256; what is done through a link
// (tools/internal/preview-link-actions.ts) is recorded under the link's name, never a person's.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CustomerSchema, IntegrationSchema, PostSchema, type Post } from '../../src/db/entities.js';
import { PreviewFeedbackSchema, PreviewLinkSchema, type PreviewFeedback, type PreviewLink } from '../../src/db/preview-link-entities.js';
import { DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId, randomToken, sha256 } from '../../src/lib/crypto.js';
import type { Caller, Services } from '../types.js';
import { credentialRef } from './approval.js';
import { recordChange } from './audit.js';

const TOKEN_PREFIX = 'hpl_';
/** `hpl_` and 32 random bytes in base64url (256 bits). */
const TOKEN_SHAPE = /^hpl_[A-Za-z0-9_-]{43}$/;
/** The longest a link lives: a customer's review, not a standing door into the organization. */
export const MAX_LINK_DAYS = 90;
const DAY_MS = 86_400_000;
/** What a link shows: posts still to go out. Drafts and published posts are the team's own. */
export const PREVIEW_STATES = ['QUEUE', 'AWAITING_APPROVAL'] as const;

export interface PreviewLinkSettings {
  name: string;
  channels?: string[];
  customer?: string;
  from: Date;
  to: Date;
  expiresAt: Date;
  canApprove: boolean;
}

export interface PreviewLinkRecord {
  id: string;
  name: string;
  channels: string[] | null;
  customer: { id: string; name: string } | null;
  from: string;
  to: string;
  expiresAt: string;
  canApprove: boolean;
  state: 'active' | 'expired' | 'revoked';
  createdAt: string;
  createdBy: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  feedback: number;
}

export const linkState = (link: PreviewLink, now: Date): PreviewLinkRecord['state'] =>
  link.revokedAt ? 'revoked' : link.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';

async function toRecords(em: EntityManager, links: PreviewLink[], now: Date): Promise<PreviewLinkRecord[]> {
  const customerIds = [...new Set(links.map((link) => link.customerId).filter((id): id is string => Boolean(id)))];
  const customers = new Map((customerIds.length ? await em.find(CustomerSchema, { id: { $in: customerIds } }) : []).map((customer) => [customer.id, customer.name]));
  const counts = new Map<string, number>();
  if (links.length) {
    const rows = await em.getConnection().execute<{ link_id: string; count: number }[]>(
      'select link_id, count(*)::int as count from preview_feedback where link_id in (select jsonb_array_elements_text(?::jsonb)) group by link_id',
      [JSON.stringify(links.map((link) => link.id))],
    );
    for (const row of rows) counts.set(row.link_id, Number(row.count));
  }
  return links.map((link) => ({
    id: link.id,
    name: link.name,
    channels: link.channelIds ?? null,
    customer: link.customerId ? { id: link.customerId, name: customers.get(link.customerId) ?? '(deleted customer)' } : null,
    from: link.rangeStart.toISOString(),
    to: link.rangeEnd.toISOString(),
    expiresAt: link.expiresAt.toISOString(),
    canApprove: link.canApprove,
    state: linkState(link, now),
    createdAt: link.createdAt.toISOString(),
    createdBy: link.createdByName,
    lastUsedAt: link.lastUsedAt?.toISOString() ?? null,
    revokedAt: link.revokedAt?.toISOString() ?? null,
    feedback: counts.get(link.id) ?? 0,
  }));
}

/**
 * A key limited to channels manages no preview links: a customer's link reaches channels added to the customer later, and
 * the list shows links to channels the key does not see.
 */
export function refuseChannelLimited(caller: Caller): void {
  if (caller.channelIds) throw new DomainError('forbidden', 'A key limited to channels cannot manage preview links.', { hint: 'Use a key with the approve scope and no channel limit, or the Herald console.' });
}

/** The public address of a link's page. */
export const previewUrl = (services: Services, token: string) => `${services.config.publicUrl.replace(/\/$/, '')}/preview/${token}`;

async function checkSettings(em: EntityManager, organizationId: string, settings: PreviewLinkSettings, now: Date): Promise<void> {
  const channels = settings.channels ?? [];
  if ((channels.length > 0) === Boolean(settings.customer)) {
    throw invalidInput('Give either channels or a customer, not both and not neither.', {
      hint: 'channels: the channel ids (GET /integrations) whose posts it shows; or customer: a customer id (customer.id of GET /integrations), for all its channels now and later.',
    });
  }
  const found = new Set((await em.find(IntegrationSchema, { id: { $in: channels }, organizationId, deletedAt: null }, { fields: ['id'] })).map((channel) => channel.id));
  const missing = channels.find((id) => !found.has(id));
  if (missing) throw invalidInput(`Channel ${missing} not found.`, { hint: 'Use channel ids listed by GET /integrations.' });
  if (settings.customer && !(await em.findOne(CustomerSchema, { id: settings.customer, organizationId }))) {
    throw invalidInput(`Customer ${settings.customer} not found.`, { hint: 'Use a customer id listed by GET /integrations (customer.id) or GET /groups.' });
  }
  if (settings.to.getTime() <= settings.from.getTime()) throw invalidInput('to must be after from.', { hint: 'The link shows the posts dated from `from` to `to` (ISO 8601, UTC).' });
  if (settings.expiresAt.getTime() <= now.getTime()) throw invalidInput('expiresAt has passed.', { hint: 'Give a future date and time (ISO 8601).' });
  if (settings.expiresAt.getTime() > now.getTime() + MAX_LINK_DAYS * DAY_MS) {
    throw invalidInput(`expiresAt is more than ${MAX_LINK_DAYS} days away.`, { hint: `A preview link lives at most ${MAX_LINK_DAYS} days: make a new one when it expires.` });
  }
}

/** A new link; its URL (with the token) is in this answer only. */
export async function createPreviewLink(services: Services, em: EntityManager, caller: Caller, settings: PreviewLinkSettings): Promise<{ link: PreviewLinkRecord; url: string }> {
  const now = services.now();
  await checkSettings(em, caller.organizationId, settings, now);
  const token = `${TOKEN_PREFIX}${randomToken(32)}`;
  const link = em.create(PreviewLinkSchema, {
    id: newId(),
    organizationId: caller.organizationId,
    name: settings.name,
    tokenHash: sha256(token),
    channelIds: settings.channels?.length ? [...new Set(settings.channels)] : null,
    customerId: settings.customer ?? null,
    rangeStart: settings.from,
    rangeEnd: settings.to,
    expiresAt: settings.expiresAt,
    canApprove: settings.canApprove,
    createdBy: credentialRef(caller),
    createdByName: caller.name ?? 'an owner',
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  });
  await em.flush();
  const [record] = await toRecords(em, [link], now);
  await recordChange(em, caller.organizationId, {
    action: 'preview_link.created',
    target: { kind: 'preview_link', id: link.id },
    did: `made the preview link "${link.name}"${link.canApprove ? ' (it may approve)' : ''}`,
    changes: { name: link.name, channels: record.channels, customer: link.customerId, from: record.from, to: record.to, expiresAt: record.expiresAt, canApprove: link.canApprove },
  });
  return { link: record, url: previewUrl(services, token) };
}

export async function listPreviewLinks(services: Services, em: EntityManager, organizationId: string): Promise<PreviewLinkRecord[]> {
  const links = await em.find(PreviewLinkSchema, { organizationId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 200 });
  return toRecords(em, links, services.now());
}

export async function findPreviewLink(em: EntityManager, organizationId: string, id: string): Promise<PreviewLink> {
  const link = await em.findOne(PreviewLinkSchema, { id, organizationId });
  if (!link) throw notFound(`Preview link ${id} not found.`, { hint: 'Use an id listed by GET /preview-links.' });
  return link;
}

export async function previewLinkRecord(services: Services, em: EntityManager, link: PreviewLink): Promise<PreviewLinkRecord> {
  return (await toRecords(em, [link], services.now()))[0];
}

/** Revokes a link: its page and its forms answer 410 from now on. Revoking a revoked link changes nothing. */
export async function revokePreviewLink(services: Services, em: EntityManager, organizationId: string, id: string): Promise<PreviewLinkRecord> {
  const link = await findPreviewLink(em, organizationId, id);
  if (!link.revokedAt) {
    link.revokedAt = services.now();
    await em.flush();
    await recordChange(em, organizationId, { action: 'preview_link.revoked', target: { kind: 'preview_link', id: link.id }, did: `revoked the preview link "${link.name}"`, changes: {} });
  }
  return previewLinkRecord(services, em, link);
}

/**
 * The link a token opens: `missing` for a token of no link (malformed, tampered, unknown), else the link whatever its state
 * (the page says a revoked or expired link is over). Looked up by the token's hash: the token itself is never compared.
 */
export async function linkOfToken(em: EntityManager, token: string): Promise<PreviewLink | 'missing'> {
  if (!TOKEN_SHAPE.test(token)) return 'missing';
  return (await em.findOne(PreviewLinkSchema, { tokenHash: sha256(token) })) ?? 'missing';
}

/** The channels a link shows now: its own (those not deleted), or every channel of its customer. */
export async function linkChannelIds(em: EntityManager, link: PreviewLink): Promise<string[]> {
  const where = link.customerId ? { customerId: link.customerId } : { id: { $in: link.channelIds ?? [] } };
  const channels = await em.find(IntegrationSchema, { organizationId: link.organizationId, deletedAt: null, ...where }, { fields: ['id'] });
  return channels.map((channel) => channel.id);
}

/** The root posts a link shows (upcoming, of its channels, in its range), soonest first. */
export async function linkPosts(em: EntityManager, link: PreviewLink): Promise<Post[]> {
  const channels = await linkChannelIds(em, link);
  if (channels.length === 0) return [];
  return em.find(
    PostSchema,
    {
      organizationId: link.organizationId,
      integrationId: { $in: channels },
      position: 0,
      deletedAt: null,
      state: { $in: [...PREVIEW_STATES] },
      publishDate: { $gte: link.rangeStart, $lte: link.rangeEnd },
    },
    { orderBy: { publishDate: 'asc', id: 'asc' }, limit: 200 },
  );
}

/** What was done through a link (newest first), or on one post through any link (`postId`). */
export async function linkFeedback(em: EntityManager, organizationId: string, where: { linkId?: string; postId?: string }, limit = 200): Promise<PreviewFeedback[]> {
  return em.find(PreviewFeedbackSchema, { organizationId, ...where }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit });
}

/** Records the link's use at most once a minute (not a write per page view). */
export async function touchLink(em: EntityManager, link: PreviewLink, now: Date): Promise<void> {
  if (link.lastUsedAt && now.getTime() - link.lastUsedAt.getTime() < 60_000) return;
  await em.nativeUpdate(PreviewLinkSchema, { id: link.id }, { lastUsedAt: now });
  link.lastUsedAt = now;
}
