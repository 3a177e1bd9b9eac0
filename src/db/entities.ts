// Entities (defineEntity). Foreign keys are plain id columns: every query is scoped by organization explicitly.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { accountEntities } from './account-entities.js';
import { agentEntities } from './agent-entities.js';
import { commentEntities } from './comment-entities.js';
import { feedEntities } from './feed-entities.js';
import { previewLinkEntities } from './preview-link-entities.js';
import { recurrenceEntities } from './recurrence-entities.js';
import { workflowEntities } from './workflow-entities.js';

const timestamp = () => p.datetime().columnType('timestamptz');

export const OrganizationSchema = defineEntity({
  name: 'Organization',
  tableName: 'organization',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    billingCustomer: p.string().nullable(),
    /** IANA zone the console shows and reads times in when neither the person nor the channel has one. */
    timeZone: p.string().default('UTC'),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type Organization = InferEntity<typeof OrganizationSchema>;

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_key',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    keyHash: p.string().unique(),
    lastFour: p.string(),
    name: p.string(),
    /** The organization's own key (the owner key `key:create` mints): every scope. */
    organizationKey: p.boolean().default(false),
    scopes: p.json<string[]>(),
    channelIds: p.json<string[]>().nullable(),
    customerIds: p.json<string[]>().nullable(),
    expiresAt: timestamp().nullable(),
    requestsPerMinute: p.integer().nullable(),
    postsPerHour: p.integer().nullable(),
    /** This key's approval gate: true/false overrides the organization's rule; null follows it. */
    approvalRequired: p.boolean().nullable(),
    /** Who made it (`session:<user>` or `api_key:<id>`). */
    createdBy: p.string().nullable(),
    rotatedAt: timestamp().nullable(),
    lastUsedAt: timestamp().nullable(),
    lastUsedAddress: p.string().nullable(),
    lastUsedClient: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    revokedAt: timestamp().nullable(),
  },
});
export type ApiKey = InferEntity<typeof ApiKeySchema>;

export const CustomerSchema = defineEntity({
  name: 'Customer',
  tableName: 'customer',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    name: p.string(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type Customer = InferEntity<typeof CustomerSchema>;

export const IntegrationSchema = defineEntity({
  name: 'Integration',
  tableName: 'integration',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    providerIdentifier: p.string(),
    internalId: p.string(),
    name: p.string(),
    picture: p.string().nullable(),
    profile: p.string(),
    /** Sealed (AES-256-GCM) JSON of the channel's tokens and connection data. */
    credentials: p.text(),
    tokenExpiresAt: timestamp().nullable(),
    disabled: p.boolean().default(false),
    refreshNeeded: p.boolean().default(false),
    inBetweenSteps: p.boolean().default(false),
    customerId: p.string().nullable(),
    /** Daily posting times used by find-slot: minutes after midnight, wall-clock times of `postingTimesZone`. */
    postingTimes: p.json<number[]>(),
    /** The IANA zone of the posting times (UTC for the times stored before zones existed). */
    postingTimesZone: p.string().default('UTC'),
    /** The channel's own IANA zone (a client elsewhere); null: the organization's. */
    timeZone: p.string().nullable(),
    /** Account facts that change validation (e.g. X premium). */
    additionalSettings: p.json<Record<string, unknown>>(),
    createdAt: timestamp().onCreate(() => new Date()),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
    deletedAt: timestamp().nullable(),
  },
});
export type Integration = InferEntity<typeof IntegrationSchema>;

/** AWAITING_APPROVAL: created (or rescheduled, or edited) by an agent under the approval gate; never published until an owner approves. */
export const postStates = ['DRAFT', 'QUEUE', 'PUBLISHED', 'ERROR', 'AWAITING_APPROVAL'] as const;
export type PostState = (typeof postStates)[number];

export interface StoredMedia {
  id: string;
  path: string;
  alt?: string;
  thumbnail?: string;
  /** The detected MIME type, set when the item is a file of the media library (then `id` is its media id). */
  type?: string;
}

export type PostTag = string | { value: string; label: string };

/** Who asked for a post that waits for approval, and the owner's decision (stored on the root item). */
export type PostApproval = {
  requestedAt: string;
  /** How the agent reached Herald: `mcp` (any credential) or `rest` (an OAuth token of a third-party app). */
  via: 'mcp' | 'rest';
  credentialKind: string;
  credentialId: string;
  /** The OAuth app of the token, when it was one. */
  appId?: string;
  appName?: string;
  /** The API key's name, when it was one. */
  keyName?: string;
  decision?: 'approved' | 'rejected';
  decidedAt?: string;
  /** `session:<user id>` (console) or `api_key:<id>` (REST). */
  decidedBy?: string;
  decidedByName?: string;
  /** Why it was rejected. */
  reason?: string;
};

export interface PublishProgress {
  /** `startedAt`: when the step's call began (ISO), so a recovery looks only at what was created after it. */
  steps: Record<string, { state: 'started'; startedAt?: string } | { state: 'done'; result: unknown }>;
  /** When the item first waited on the platform's processing (CheckAgainLater). */
  waitingSince?: string;
}

/**
 * A change asked on what went out (tools/internal/platform-changes.ts): an edit or a deletion of a published item on its
 * platform. `awaiting_approval`: an agent asked under the approval gate (the root carries `approval`); `pending`: the
 * `platform_change` job will make it; `done`; `failed` (`error` says why); `rejected` (an owner said no, `approval.reason`).
 * An edit's new content and settings are kept here and written to the item only once the platform took them.
 */
export interface PlatformChange {
  action: 'edit' | 'delete';
  state: 'awaiting_approval' | 'pending' | 'done' | 'failed' | 'rejected';
  requestedAt: string;
  content?: string;
  settings?: Record<string, unknown>;
  approval?: PostApproval;
  /** The platform steps of this change, recorded like `PublishProgress.steps`. */
  steps?: PublishProgress['steps'];
  attempts?: number;
  lastError?: string | null;
  nextAttemptAt?: string | null;
  error?: string | null;
  doneAt?: string | null;
}

/** The comment a reply answers: ours, and as the platform identifies it (with the post it was left on). */
export interface ReplyTarget {
  commentId: string;
  root: { id: string; url?: string; meta?: Record<string, string> };
  parent: { id: string; url?: string; meta?: Record<string, string> };
}

export const PostSchema = defineEntity({
  name: 'Post',
  tableName: 'post',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    integrationId: p.string(),
    group: p.string().fieldName('group_id'),
    /** The previous item of the chain (thread item or comment); null for the root. */
    parentPostId: p.string().nullable(),
    /** The root of the chain this item belongs to (its own id for the root): a chain is never identified by group and channel. */
    rootPostId: p.string(),
    /** 0 for the root, then 1, 2... along the chain. */
    position: p.integer(),
    content: p.text(),
    settings: p.json<Record<string, unknown>>(),
    media: p.json<StoredMedia[]>(),
    /** Tags as the client sent them (`[{value, label}]` or strings): stored and listed, no effect on publishing. */
    tags: p.json<PostTag[]>(),
    /** The request asked for shortened links (`shortLink: true`). */
    shortLink: p.boolean().default(false),
    /** Minutes to wait after the previous item before this one. */
    delay: p.integer().default(0),
    state: p.string().$type<PostState>(),
    publishDate: timestamp(),
    releaseId: p.string().nullable(),
    releaseUrl: p.text().nullable(),
    releaseMeta: p.json<Record<string, string>>().nullable(),
    /** What the platform did other than asked, said by the provider when it published (e.g. YouTube kept a video private). */
    releaseWarnings: p.json<string[]>().nullable(),
    error: p.text().nullable(),
    /** Set just before the platform is called for this item, cleared when the outcome is known. */
    attemptStartedAt: timestamp().nullable(),
    /** Platform steps recorded while publishing this item (providers with `recordsSteps`), and when waiting began. */
    publishProgress: p.json<PublishProgress>().nullable(),
    /** Publishing attempts of this item that met a retryable failure, and when the next one is due. */
    attempts: p.integer().default(0),
    /** The last retryable failure while the item is still QUEUE (`error` is set only when it fails for good). */
    lastError: p.text().nullable(),
    nextAttemptAt: timestamp().nullable(),
    publishedAt: timestamp().nullable(),
    creationMethod: p.string(),
    /** The approval gate's record (root item only): null when the post never needed approval. */
    approval: p.json<PostApproval>().nullable(),
    /** Root item only: the credential that created it (`api_key:<id>`, `oauth_token:<id>`, `session:<id>`): it never approves it. */
    createdBy: p.string().nullable(),
    /** Root item only: the duplicate guard's key of its text (tools/internal/duplicates.ts); null without text. */
    duplicateKey: p.text().nullable(),
    /** Root item only: the post answers a comment someone left (a reply, tools/internal/comment-replies.ts); null otherwise. */
    replyTo: p.json<ReplyTarget>().nullable(),
    /** Root item only: created with `allowDuplicate: true` (a repetition meant), so later scheduling or approval is not refused for it. */
    allowDuplicate: p.boolean().default(false),
    /** The latest edit or deletion asked on the platform for this published item; null when none was. */
    platformChange: p.json<PlatformChange>().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
    deletedAt: timestamp().nullable(),
  },
});
export type Post = InferEntity<typeof PostSchema>;

export const NotificationSchema = defineEntity({
  name: 'Notification',
  tableName: 'notification',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    type: p.string(),
    content: p.text(),
    link: p.text().nullable(),
    /** The channel it is about, when one: a key limited to channels sees only those about its channels. */
    integrationId: p.string().nullable(),
    /** The instant its text names (written there in UTC for the API; the console shows it in the reader's zone). */
    at: timestamp().nullable(),
    /** What it is about (`post`, `channel`, `feed`, `recurring_post`, `preview_link`), as the audit trail names targets. */
    targetKind: p.string().nullable(),
    targetId: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type Notification = InferEntity<typeof NotificationSchema>;

/** A file of an organization's media library; the bytes live in storage under `storageKey`. */
export const MediaSchema = defineEntity({
  name: 'Media',
  tableName: 'media',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    name: p.string(),
    storageKey: p.string(),
    /** Absolute public URL (PUBLIC_URL/uploads/... or the bucket's public URL). */
    path: p.text(),
    /** Detected from the bytes, one of the accepted types. */
    type: p.string(),
    size: p.bigint('number'),
    width: p.integer().nullable(),
    height: p.integer().nullable(),
    /** Seconds (videos). */
    duration: p.double().nullable(),
    /** The credential that uploaded it (`credentialRef`): a key limited to channels sees only its own uploads. */
    uploadedBy: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    deletedAt: timestamp().nullable(),
  },
});
export type Media = InferEntity<typeof MediaSchema>;

export const generationStates = ['queued', 'running', 'succeeded', 'failed'] as const;
export type GenerationState = (typeof generationStates)[number];

/** Paid model calls of a generation, recorded before and after each call: a step found `started` after a crash is never repeated. */
export type GenerationSteps = Record<string, { state: 'started'; at: string } | { state: 'done'; at: string; result: unknown }>;

/** One AI generation (an image or a video): the record an operator reads to see who spent what. */
export const GenerationSchema = defineEntity({
  name: 'Generation',
  tableName: 'generation',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    /** `<credential kind>:<credential id>` of the caller. */
    requestedBy: p.string(),
    /** `image`, or a video generator's identifier. */
    generator: p.string(),
    kind: p.string().$type<'image' | 'video'>(),
    /** `square`, `vertical` or `horizontal`. */
    output: p.string(),
    params: p.json<Record<string, unknown>>(),
    /** Hash of generator, output and params: a second identical request joins the running generation. */
    paramsKey: p.string(),
    prompt: p.text(),
    models: p.json<string[]>(),
    state: p.string().$type<GenerationState>(),
    /** 0 to 1. */
    progress: p.double().$type<number>().runtimeType('number').default(0),
    progressMessage: p.text().nullable(),
    steps: p.json<GenerationSteps>(),
    /** Paid calls made, by kind (e.g. `openai_image: 4`). */
    usage: p.json<Record<string, number>>(),
    mediaId: p.string().nullable(),
    errorCode: p.string().nullable(),
    errorStatus: p.integer().nullable(),
    error: p.text().nullable(),
    errorHint: p.text().nullable(),
    warnings: p.json<string[]>(),
    nextCheckAt: timestamp().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    startedAt: timestamp().nullable(),
    finishedAt: timestamp().nullable(),
  },
});
export type Generation = InferEntity<typeof GenerationSchema>;

/**
 * The approval gate of an organization: `appId` '' is the organization-wide rule for posts created by agents; a row with
 * an OAuth app's id overrides it for that app's tokens (required or exempt).
 */
export const ApprovalSettingSchema = defineEntity({
  name: 'ApprovalSetting',
  tableName: 'approval_setting',
  properties: {
    organizationId: p.string().primary(),
    appId: p.string().primary(),
    required: p.boolean(),
    updatedAt: timestamp().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export type ApprovalSetting = InferEntity<typeof ApprovalSettingSchema>;

export const entities = [
  OrganizationSchema,
  ApiKeySchema,
  CustomerSchema,
  IntegrationSchema,
  PostSchema,
  NotificationSchema,
  MediaSchema,
  GenerationSchema,
  ApprovalSettingSchema,
  ...accountEntities,
  ...agentEntities,
  ...commentEntities,
  ...feedEntities,
  ...previewLinkEntities,
  ...recurrenceEntities,
  ...workflowEntities,
];
