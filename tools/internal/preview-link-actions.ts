// What whoever holds a customer preview link may do (tools/internal/preview-links.ts): open it (rate-limited per address
// and per link), and on one of its posts comment, approve or ask for changes. Each act runs as the link (a caller of kind
// `preview_link`), so the audit trail and the notifications name the link, never a person account.
//
// - comment: kept on the post (the console's post page, "Customer comments"), a notification and an audit event.
// - approve: only with the link's approve power and only for a post waiting for approval, through the approval gate's own
//   code path (approvePost: its date kept, duplicates refused, never by the credential that created the post).
// - ask for changes (a message): with the approve power, a post waiting for approval is rejected back to draft with the
//   message as the reason (rejectPost); otherwise (a scheduled post, or a link without the power) the post stays as it is
//   and the message is a visible comment marked "changes requested", with a notification: the team decides.
// Posts are addressed on the page by a reference made for the link (an HMAC of the link and the post), never by an id
// that means anything elsewhere.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post } from '../../src/db/entities.js';
import { PreviewFeedbackSchema, type PreviewFeedback, type PreviewFeedbackKind, type PreviewLink } from '../../src/db/preview-link-entities.js';
import { conflict, DomainError, invalidInput, notFound } from '../../src/errors.js';
import { newId, safeEqual } from '../../src/lib/crypto.js';
import { consumeRateLimit, HOUR_MS, MINUTE_MS, perWindow } from '../../src/lib/rate-limit.js';
import type { Caller, CallerOrigin, Services } from '../types.js';
import { approvePost, rejectPost, type Decider } from './approval.js';
import { recordChange } from './audit.js';
import { notify } from './notifications.js';
import { linkChannelIds, linkOfToken, linkPosts, linkState, touchLink } from './preview-links.js';
import { asCaller } from './visibility.js';

/** Requests of one address to preview pages per minute (guessing tokens costs the guesser), and acts of one link per hour. */
export const PREVIEW_REQUESTS_PER_MINUTE = 120;
export const PREVIEW_ACTS_PER_HOUR = 60;
export const MAX_MESSAGE = 2000;

export type PreviewAct = 'comment' | 'approve' | 'changes';

/** The link's name as the trail, the notifications and the post's approval record say it. */
export const linkLabel = (link: Pick<PreviewLink, 'name'>) => `The preview link "${link.name}"`;

/** A post's reference on a link's page: meaningless anywhere else, and another link's reference of the same post differs. */
export const postRef = (services: Services, link: PreviewLink, postId: string) => services.secrets.mac('preview-post', `${link.id}|${postId}`).slice(0, 32);

/** The token every form of a link's page carries (the page has no cookie: this is its CSRF protection). */
export const formToken = (services: Services, link: PreviewLink) => services.secrets.mac('preview-form', `${link.id}|${link.tokenHash}`);

function rateLimited(what: string, state: { limit: number; windowSeconds: number; resetSeconds: number }): DomainError {
  return new DomainError('rate_limited', `Too many ${what}: at most ${state.limit} ${perWindow(state.windowSeconds)}.`, {
    hint: `Wait ${state.resetSeconds} seconds and try again.`,
    details: { retryAfter: state.resetSeconds },
  });
}

/**
 * The live link a token opens, counted against the address's rate limit (and, for an act, the link's): 404 for a token of
 * no link, 410 for a revoked or expired one. Nothing is done for a refused request.
 */
export async function openPreviewLink(services: Services, token: string, address: string, act = false): Promise<PreviewLink> {
  const em = services.orm.em.fork();
  const now = services.now();
  const byAddress = await consumeRateLimit(em, `preview-address:${address}`, 'preview_requests', PREVIEW_REQUESTS_PER_MINUTE, now, MINUTE_MS);
  if (!byAddress.allowed) throw rateLimited('requests to preview links from this address', byAddress);
  const link = await linkOfToken(em, token);
  if (link === 'missing') throw notFound('This preview link does not exist.', { hint: 'Check that the whole link was copied, or ask whoever sent it for a new one.' });
  const state = linkState(link, now);
  if (state !== 'active') {
    throw notFound(state === 'revoked' ? 'This preview link was revoked.' : 'This preview link has expired.', { status: 410, hint: 'Ask whoever sent it for a new link.' });
  }
  if (act) {
    const byLink = await consumeRateLimit(em, `preview-link:${link.id}`, 'preview_acts', PREVIEW_ACTS_PER_HOUR, now, HOUR_MS);
    if (!byLink.allowed) throw rateLimited('comments and decisions through this link', byLink);
  }
  await touchLink(em, link, now);
  return link;
}

/** The link as the caller its acts run as: it sees only its channels, holds no scope, and is nobody's account. */
export function linkCaller(link: PreviewLink, channelIds: string[], origin: Omit<CallerOrigin, 'via'>): Caller {
  return {
    organizationId: link.organizationId,
    credentialId: link.id,
    credentialKind: 'preview_link',
    scopes: [],
    name: linkLabel(link),
    channelIds,
    origin: { via: 'preview_link', ...origin },
  };
}

/** The post a reference names among the link's posts, or 404 (another channel's, another organization's, out of range). */
export async function postOfRef(services: Services, em: EntityManager, link: PreviewLink, ref: string): Promise<Post> {
  const post = (await linkPosts(em, link)).find((candidate) => safeEqual(postRef(services, link, candidate.id), ref));
  if (!post) throw notFound('This post is not on this preview link.', { hint: 'Open the link again: the post may have been published, moved out of its dates or deleted.' });
  return post;
}

function message(text: string, required: boolean): string {
  const trimmed = text.trim();
  if (required && !trimmed) throw invalidInput('Write a message first.', { hint: 'Say what you think of the post, or what should change.' });
  if (trimmed.length > MAX_MESSAGE) throw invalidInput(`The message is ${trimmed.length} characters long; at most ${MAX_MESSAGE} are kept.`, { hint: 'Shorten it and send it again.' });
  return trimmed;
}

export interface ActOutcome {
  kind: PreviewFeedbackKind;
  /** For a request for changes: `draft` when the waiting post went back to draft, `comment` when it stays as it is. */
  outcome: 'draft' | 'comment' | null;
}

/** One act on one post of the link, as the link. */
export async function actOnPreview(services: Services, link: PreviewLink, ref: string, act: PreviewAct, text: string, origin: Omit<CallerOrigin, 'via'>): Promise<ActOutcome> {
  const em = services.orm.em.fork();
  const root = await postOfRef(services, em, link, ref);
  const caller = linkCaller(link, await linkChannelIds(em, link), origin);
  const decider: Decider = { id: `preview_link:${link.id}`, name: linkLabel(link), caller };
  const said = message(text, act !== 'approve');
  return asCaller(caller, async () => {
    if (act === 'approve') {
      if (!link.canApprove) throw new DomainError('forbidden', 'This preview link cannot approve posts.', { hint: 'Comment or ask for changes instead; whoever sent the link decides.' });
      if (root.state !== 'AWAITING_APPROVAL') throw conflict('This post is not waiting for approval: it is already scheduled.', { hint: 'Comment or ask for changes if something should change.' });
      await approvePost(services, em, link.organizationId, root.id, decider);
      await saveFeedback(em, link, root, 'approved', said, null);
      return { kind: 'approved', outcome: null };
    }
    if (act === 'changes' && link.canApprove && root.state === 'AWAITING_APPROVAL') {
      await rejectPost(services, em, link.organizationId, root.id, said, decider);
      await saveFeedback(em, link, root, 'changes_requested', said, 'draft');
      return { kind: 'changes_requested', outcome: 'draft' };
    }
    const kind: PreviewFeedbackKind = act === 'changes' ? 'changes_requested' : 'comment';
    const what = kind === 'comment' ? 'commented on' : 'asked for changes to';
    const feedback = await em.transactional(async (transaction) => {
      const saved = await saveFeedback(transaction, link, root, kind, said, kind === 'comment' ? null : 'comment');
      notify(transaction, link.organizationId, 'preview_feedback', `${linkLabel(link)} ${what} post ${root.id} (for ${root.publishDate.toISOString()}): "${said}". Read it on the post's page in the console.`, undefined, undefined, root.integrationId, { at: root.publishDate, target: { kind: 'preview_link', id: link.id } });
      await transaction.flush();
      return saved;
    });
    // The trail names the act and where its words are kept (preview_feedback), not the words (as for every other text).
    await recordChange(em, link.organizationId, {
      action: kind === 'comment' ? 'post.preview_commented' : 'post.preview_changes_requested',
      target: { kind: 'post', id: root.id },
      integrationId: root.integrationId,
      did: `${what} post ${root.id}`,
      changes: { previewLink: link.id, feedback: feedback.id, characters: said.length },
    });
    return { kind, outcome: kind === 'comment' ? null : 'comment' };
  });
}

async function saveFeedback(em: EntityManager, link: PreviewLink, root: Post, kind: PreviewFeedbackKind, text: string, outcome: ActOutcome['outcome']): Promise<PreviewFeedback> {
  const feedback = em.create(PreviewFeedbackSchema, { id: newId(), organizationId: link.organizationId, linkId: link.id, postId: root.id, integrationId: root.integrationId, kind, text, outcome, createdAt: new Date() });
  await em.flush();
  return feedback;
}
