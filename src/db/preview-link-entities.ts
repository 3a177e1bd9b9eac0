// Customer preview links (issue 35): an expiring, revocable link (no account) that shows a customer the upcoming posts of
// chosen channels (or of a customer's channels) in a date range, where whoever holds it comments, approves (when the link
// was made with that power) or asks for changes (tools/internal/preview-links.ts). The token is stored as its SHA-256 only.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

const timestamp = () => p.datetime().columnType('timestamptz');

export const PreviewLinkSchema = defineEntity({
  name: 'PreviewLink',
  tableName: 'preview_link',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    name: p.string(),
    /** SHA-256 of the token (the link's secret part), never the token. */
    tokenHash: p.string().unique(),
    /** The channels it shows; null when it shows a customer's channels. */
    channelIds: p.json<string[]>().nullable(),
    /** The customer whose channels (now and later) it shows; null when it shows chosen channels. */
    customerId: p.string().nullable(),
    /** The posts it shows are dated in [rangeStart, rangeEnd]. */
    rangeStart: timestamp(),
    rangeEnd: timestamp(),
    expiresAt: timestamp(),
    /** The approve power: whoever holds the link approves (or sends back to draft) posts waiting for approval. */
    canApprove: p.boolean().default(false),
    /** Who made it (`credentialRef`) and their name, for the console. */
    createdBy: p.string(),
    createdByName: p.string(),
    createdAt: timestamp().onCreate(() => new Date()),
    lastUsedAt: timestamp().nullable(),
    revokedAt: timestamp().nullable(),
  },
});
export type PreviewLink = InferEntity<typeof PreviewLinkSchema>;

export const previewFeedbackKinds = ['comment', 'approved', 'changes_requested'] as const;
export type PreviewFeedbackKind = (typeof previewFeedbackKinds)[number];

/** What someone did through a preview link on one post: a comment, an approval, a request for changes (and what came of it). */
export const PreviewFeedbackSchema = defineEntity({
  name: 'PreviewFeedback',
  tableName: 'preview_feedback',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    linkId: p.string(),
    /** The root post it is about. */
    postId: p.string(),
    integrationId: p.string(),
    kind: p.string().$type<PreviewFeedbackKind>(),
    text: p.text(),
    /** For a request for changes: `draft` (the waiting post went back to draft) or `comment` (it stays as it is). */
    outcome: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type PreviewFeedback = InferEntity<typeof PreviewFeedbackSchema>;

export const previewLinkEntities = [PreviewLinkSchema, PreviewFeedbackSchema];
