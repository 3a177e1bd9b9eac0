// Creating posts: one validation for REST and MCP, all or nothing, then rows and jobs in one transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { canSeeChannel } from './visibility.js';
import { IntegrationSchema, type Integration, type Media, type PostApproval, type PostState, type PostTag, type StoredMedia } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { checkContentRules, convertContent, isBlankContent, sanitizeContent } from '../../src/lib/content.js';
import { contentLength, tooLong } from '../../src/lib/length.js';
import type { Provider, ValidationItem } from '../../providers/types.js';
import type { Services, ToolContext } from '../types.js';
import { providerOf } from './integrations.js';
import { findLibraryMedia } from './media.js';
import { hostAllowed } from '../../src/lib/ssrf.js';
import { shortFormForCounting } from './short-links.js';
import { entryWarnings } from './entry-warnings.js';
import { duplicateLookups, duplicatesByEntry, judgeDuplicates, postKeys } from './duplicates.js';
import { readForCreate, writeCreated, type CreateReads, type NewPost } from './create-statements.js';
import type { PostCreationLimit } from './creation-limit.js';
import { postCreatedEvent, type AuditEvent } from './audit.js';
import { approvalRequest, credentialRef } from './approval.js';
import { reportCreated } from './created-report.js';
import { findSignatures, signatureFor, signatureTooLong, withSignature, type AppliedSignature, type Signatures } from './signature.js';

/** What a new item has of publishing: nothing yet (creation and comment replies start every item so). */
export const NOT_YET_PUBLISHED = {
  releaseId: null,
  releaseUrl: null,
  releaseMeta: null,
  releaseWarnings: null,
  error: null,
  attemptStartedAt: null,
  publishProgress: null,
  attempts: 0,
  lastError: null,
  nextAttemptAt: null,
  publishedAt: null,
} as const;

export interface PlanItem {
  content: string;
  media: StoredMedia[];
  /** Minutes after the previous item. */
  delay: number;
}

export interface PlanEntry {
  integrationId: string;
  type: 'draft' | 'schedule' | 'now';
  date?: Date;
  shortLink: boolean;
  tags?: PostTag[];
  /** Entries with the same key share one group (REST: the whole request; MCP: one socialPost item). */
  groupKey: number;
  settings: Record<string, unknown>;
  items: PlanItem[];
  /** MCP's isPremium: true raises the limit (X premium) for an account Herald has not read as premium; false changes nothing. */
  isPremium?: boolean;
}

export interface PostPlan {
  creationMethod: 'API' | 'MCP';
  entries: PlanEntry[];
  /** Set when an agent creates under the approval gate (approval.ts): what would be queued waits in AWAITING_APPROVAL. */
  approval?: PostApproval;
  /** Who creates it (`credentialRef` of the caller): stored on each root as `createdBy`; it never approves the post. */
  createdBy?: string;
  /** The request knowingly repeats a recent post's text: the duplicate guard (duplicates.ts) lets it through. */
  allowDuplicate?: boolean;
  /** createPosts: the post-creation limit to count in its read (the tool's `context.postCreationLimit`). */
  limit?: PostCreationLimit;
  /** createPosts: the audit trail's event of each created post, written with it. */
  audit?: (post: CreatedPost) => AuditEvent;
}

export interface EntryProblem {
  integrationId: string;
  channel: string;
  platform?: string;
  message: string;
}

/**
 * The problems as one sentence each: the channel by name, platform and id, since two channels may share a name ("Herald
 * Test" on X and on Bluesky); an unknown channel is named by the id sent.
 */
export function problemsText(problems: readonly EntryProblem[]): string {
  return problems
    .map((problem) => `${problem.channel === problem.integrationId ? problem.channel : `${problem.channel} (${problem.platform ? `${problem.platform}, ` : ''}id ${problem.integrationId})`}: ${problem.message}`)
    .join('; ');
}

/** All problems of a create request; nothing was created. */
export class PostValidationError extends DomainError {
  constructor(readonly problems: EntryProblem[]) {
    super('invalid_input', problemsText(problems), {
      hint: 'Fix each listed channel entry and send the whole request again; nothing was created.',
      details: problems,
    });
  }
}

const VIDEO_EXTENSION = /\.(mp4|mov|m4v|webm)(\?|#|$)/i;

/** Library files know their detected type; for a client's URL the extension is all there is before publishing. */
export function mediaKind(media: StoredMedia): 'image' | 'video' {
  if (media.type) return media.type.startsWith('video/') ? 'video' : 'image';
  return VIDEO_EXTENSION.test(media.path) ? 'video' : 'image';
}

/**
 * Points each media item at a library file when it names one (by media id, or by its path: agents send our URL), else keeps
 * the client's http(s) URL, fetched through the SSRF guard at publish time. Answers the first item that is neither.
 */
function resolveMedia(entry: PlanEntry, libraryFile: (media: StoredMedia) => Media | undefined, allowedHosts: readonly string[]): string | undefined {
  for (const [index, item] of entry.items.entries()) {
    const where = entry.items.length > 1 ? `item ${index + 1}: ` : '';
    for (const [position, media] of item.media.entries()) {
      const row = libraryFile(media);
      if (row) {
        item.media[position] = { id: row.id, path: row.path, type: row.type, ...(media.alt ? { alt: media.alt } : {}), ...(media.thumbnail ? { thumbnail: media.thumbnail } : {}) };
        continue;
      }
      const url = URL.canParse(media.path) ? new URL(media.path) : undefined;
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        return `${where}media "${media.id}" is neither a media id of this organization nor an http(s) URL; upload the file first (POST /upload, /upload-from-url or uploadFromUrlTool) and send the returned id and path`;
      }
      if (!hostAllowed(url.hostname.replace(/^\[|\]$/g, ''), allowedHosts)) {
        return `${where}media "${media.id}" is on ${url.hostname}, which is not an allowed media host of this Herald (${allowedHosts.join(', ')}); upload the file with POST /upload instead`;
      }
      delete item.media[position].type; // only library files carry a type: a client cannot claim one
    }
  }
  return undefined;
}

/** The text a platform receives, what its readers see (the plain rendering of HTML), and the length counted against its limit. */
export function measure(provider: Provider, html: string): { text: string; length: number; visible: string } {
  const converted = convertContent(html, provider.editor);
  const { text, visible } = provider.render?.(converted) ?? { text: converted, visible: provider.editor === 'html' ? convertContent(html, 'plain') : converted };
  return { text, length: contentLength(visible, provider.lengthMethod), visible };
}

/** The entry's length limit: X Premium as Herald read it from the account, or as an MCP caller's isPremium: true says. */
export function entryMaxLength(provider: Provider, integration: Integration, entry: Pick<PlanEntry, 'isPremium' | 'settings'>): number {
  const isPremium = entry.isPremium === true || integration.additionalSettings.premium === true;
  return provider.maxLength({ isPremium, settings: entry.settings, channel: integration.additionalSettings });
}

/** What the media library measured of a library file, for the platforms' size rules. */
export type LibraryFacts = (media: StoredMedia) => Pick<ValidationItem['media'][number], 'type' | 'size' | 'width' | 'height'>;

export interface PlanOptions {
  /** UPLOAD_URL_ALLOWED_HOSTS: hosts a media URL may be on. */
  allowedHosts?: readonly string[];
  /** The content of a `shortLink` entry as it is counted and validated: its links in their short form (short-links.ts). */
  shortForm?: (html: string) => string;
  /** false: the content is final (an edit: it holds the signature it was created with), no signature is added. */
  signatures?: false;
}

/** An item's content as the platform will receive it, before conversion: sanitized, links in their short form when asked. */
export function contentAsSent(provider: Provider, entry: Pick<PlanEntry, 'shortLink'>, content: string, options: PlanOptions): string {
  const sanitized = sanitizeContent(content, provider);
  return entry.shortLink && options.shortForm ? options.shortForm(sanitized) : sanitized;
}

/** A settings refusal: a missing key is called missing (zod says "Invalid option" for it), with what it takes. */
export function settingsProblem(issue: { path: PropertyKey[]; message: string; code?: string; values?: readonly unknown[] }, settings: Record<string, unknown>): string {
  const field = `settings.${issue.path.map(String).join('.')}`;
  let value: unknown = settings;
  for (const key of issue.path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  if (value === undefined && issue.path.length > 0) {
    const choices = issue.values?.length ? `: one of ${issue.values.map((choice) => JSON.stringify(choice)).join(', ')}` : '';
    return `${field} is missing; it is required${choices} (schedulePostTool: settings [{key: "${String(issue.path[0])}", value: …}]; integrationSchema lists every setting)`;
  }
  return `${field}: ${issue.message}; call integrationSchema for the settings schema`;
}

function validateEntry(provider: Provider, integration: Integration, entry: PlanEntry, facts: LibraryFacts, options: PlanOptions, signature?: AppliedSignature): string | undefined {
  if (!provider.publish) {
    return `publishing to ${provider.name} (${provider.identifier}) is not supported yet by this Herald (not_supported); choose a channel on a platform whose publishing is built`;
  }
  if (integration.disabled) return 'this channel is disabled; enable it in the console or choose another channel';
  // A draft may have no date yet: it is kept at its creation time, before every free slot, so it takes none.
  if (entry.type === 'schedule' && !entry.date) return 'a date is required for scheduled posts (UTC ISO 8601, e.g. 2026-12-01T09:00:00Z); a draft may have none';
  if (entry.items.length === 0) return 'the post needs at least one item (the first item is the post itself)';
  if (entry.items.length > 1 && (provider.chain === 'none' || !provider.comment)) {
    return `${provider.name} does not support threads or comments; send a single item`;
  }
  if (provider.settings) {
    const parsed = provider.settings.safeParse(entry.settings);
    if (!parsed.success) return settingsProblem(parsed.error.issues[0], entry.settings);
  }
  const maxLength = entryMaxLength(provider, integration, entry);
  // The text of each item as the platform receives it, measured once: the provider's own checks below read it too.
  const texts: string[] = [];
  for (const [index, item] of entry.items.entries()) {
    const where = entry.items.length > 1 ? `item ${index + 1}: ` : '';
    const rule = checkContentRules(item.content, provider);
    if (rule) return `${where}${rule}`;
    if (isBlankContent(item.content) && item.media.length === 0) return `${where}Your post should have at least one character or one image.`;
    const { text, length } = measure(provider, contentAsSent(provider, entry, item.content, options));
    const lengthOf = (html: string) => measure(provider, contentAsSent(provider, entry, html, options)).length;
    if (length > maxLength) return `${where}${signatureTooLong(signature, index, length, maxLength, lengthOf) ?? tooLong(provider, length, maxLength)}`;
    if (item.delay < 0) return `${where}delay must be zero or more minutes`;
    texts.push(text);
  }
  const items: ValidationItem[] = entry.items.map((item, index) => ({
    text: texts[index],
    media: item.media.map((media) => ({ kind: mediaKind(media), url: media.path, ...facts(media) })),
  }));
  return provider.validate?.(items, entry.settings, integration.additionalSettings);
}

export interface PlanCheck {
  integrations: Map<string, Integration>;
  /** Every problem of the plan, at most one per entry. */
  problems: EntryProblem[];
  /** The problem of each entry, by its index in the plan (undefined: valid). */
  entryProblems: (EntryProblem | undefined)[];
  /** Each entry as it is created and previewed: with its channel's signature (withSignature), the plan's own left as they were. */
  entries: PlanEntry[];
  facts: LibraryFacts;
}

/** The channels a plan names that the caller may see (one it may not see is answered like an unknown one). */
const planChannelIds = (plan: PostPlan) => [...new Set(plan.entries.map((entry) => entry.integrationId))].filter(canSeeChannel);
/** The media a plan's items name. */
const planMedia = (plan: PostPlan) => plan.entries.flatMap((entry) => entry.items.flatMap((item) => item.media));

/**
 * Checks every entry of the plan without throwing (validatePlan and the preview share it), with the channels and library
 * files (and signatures: each entry is checked with its channel's, see `entries`) read here or, by createPosts, in its one
 * read (`rows`). Media items are resolved in place.
 */
export async function checkPlan(em: EntityManager, organizationId: string, plan: PostPlan, options: PlanOptions = {}, rows?: Pick<CreateReads, 'integrations' | 'library' | 'signatures'>): Promise<PlanCheck> {
  const allowedHosts = options.allowedHosts ?? [];
  const integrations = rows?.integrations ?? (await em.find(IntegrationSchema, { id: { $in: planChannelIds(plan) }, organizationId, deletedAt: null }));
  const byId = new Map(integrations.map((integration) => [integration.id, integration]));
  const library = rows?.library ?? (await findLibraryMedia(em, organizationId, planMedia(plan)));
  const mediaById = new Map(library.map((row) => [row.id, row]));
  const mediaByPath = new Map(library.map((row) => [row.path, row]));
  const libraryFile = (media: StoredMedia) => mediaById.get(media.id) ?? mediaByPath.get(media.path);
  const facts: LibraryFacts = (media) => {
    const row = media.type ? mediaById.get(media.id) : undefined; // only resolved library files carry a type
    if (!row) return {};
    return { type: row.type, size: Number(row.size), ...(row.width != null && row.height != null ? { width: row.width, height: row.height } : {}) };
  };
  const signatures: Signatures = options.signatures === false ? { byChannel: new Map() } : (rows?.signatures ?? (await findSignatures(em, organizationId)));
  const entries = [...plan.entries];
  const entryProblems = plan.entries.map((planned, index): EntryProblem | undefined => {
    const integration = byId.get(planned.integrationId);
    if (!integration) {
      const message = 'channel not found in this organization; call integrationList (MCP) or GET /integrations (REST) for valid ids';
      return { integrationId: planned.integrationId, channel: planned.integrationId, message };
    }
    const provider = providerOf(integration);
    const { entry, signature } = withSignature(planned, provider, signatureFor(signatures, integration.id));
    entries[index] = entry;
    const message = resolveMedia(entry, libraryFile, allowedHosts) ?? validateEntry(provider, integration, entry, facts, options, signature);
    return message ? { integrationId: integration.id, channel: integration.name, platform: provider.identifier, message } : undefined;
  });
  const problems = entryProblems.filter((problem): problem is EntryProblem => problem !== undefined);
  return { integrations: byId, problems, entryProblems, facts, entries };
}

/** An edit's check of the whole plan (no signature added); throws PostValidationError listing every problem. Media items are resolved in place. */
export async function validatePlan(em: EntityManager, organizationId: string, plan: PostPlan, options: PlanOptions = {}): Promise<Map<string, Integration>> {
  const { integrations, problems } = await checkPlan(em, organizationId, plan, { ...options, signatures: false });
  if (problems.length > 0) throw new PostValidationError(problems);
  return integrations;
}

/** The deployment's options of a plan check: allowed media hosts, and short links counted in their short form. */
export function planOptions(services: Services): PlanOptions {
  return { allowedHosts: services.config.uploads.allowedHosts, shortForm: (html) => shortFormForCounting(services.config, html) };
}

export interface CreatedPost {
  postId: string;
  integration: string;
  warnings?: string[];
  /** The post waits for an owner's approval before it can be published. */
  approval?: { status: 'pending'; message: string };
}

const PENDING_APPROVAL = (postId: string) => ({
  status: 'pending' as const,
  message: `This post waits for an owner's approval in the Herald console before it can be published. Read herald://posts/${postId} (or subscribe to it) to learn the decision; a rejected post becomes a draft with the reason.`,
});

/**
 * A plan as a create reads and checks it, in one read: its channels, media and signatures, and the recent posts the
 * duplicate guard compares it with (unless allowDuplicate). The create and the preview (validatePost) both run it, so a
 * preview that says valid is a create that goes through.
 */
export async function checkedPlan(services: Services, em: EntityManager, organizationId: string, plan: PostPlan) {
  const now = services.now();
  // The duplicate guard's keys of each entry's first item: looked up in the read, and stored on the root (drafts too).
  const keys = plan.entries.map((entry) => postKeys(entry.items[0]?.content ?? '', entry.settings));
  const guard = { now, windowDays: services.config.duplicateWindowDays, keys };
  const lookups = plan.allowDuplicate ? [] : duplicateLookups(plan.entries, guard);
  const reads = await readForCreate(em, organizationId, planChannelIds(plan), planMedia(plan), lookups, plan.limit);
  const check = await checkPlan(em, organizationId, plan, planOptions(services), reads);
  const duplicates = plan.allowDuplicate ? new Map<number, EntryProblem>() : duplicatesByEntry(plan.entries, check.integrations, reads.earlier, guard);
  return { now, keys, guard, lookups, check, duplicates };
}

export async function createPosts(services: Services, em: EntityManager, organizationId: string, plan: PostPlan): Promise<CreatedPost[]> {
  const { now, keys, guard, lookups, check, duplicates } = await checkedPlan(services, em, organizationId, plan);
  const { integrations: byId, problems, entries } = check;
  if (problems.length > 0) throw new PostValidationError(problems);
  if (duplicates.size > 0) throw new PostValidationError([...duplicates.values()]);
  const groups = new Map<number, string>();
  const created: CreatedPost[] = [];
  const rows: NewPost[] = [];
  const due: { rootPostId: string; publishDate: Date }[] = [];
  for (const [entryIndex, entry] of entries.entries()) {
    const integration = byId.get(entry.integrationId)!;
    const provider = providerOf(integration);
    const publishDate = entry.type === 'now' ? now : (entry.date ?? now);
    const state: PostState = entry.type === 'draft' ? 'DRAFT' : plan.approval ? 'AWAITING_APPROVAL' : 'QUEUE';
    if (!groups.has(entry.groupKey)) groups.set(entry.groupKey, newId());
    const group = groups.get(entry.groupKey)!;
    const settings = { ...entry.settings, __type: integration.providerIdentifier };
    let parentPostId: string | null = null;
    // Each entry is its own chain, whatever else the request holds for the same channel.
    const rootId = newId();
    for (const [position, item] of entry.items.entries()) {
      const id = position === 0 ? rootId : newId();
      rows.push({
        id,
        organizationId,
        integrationId: integration.id,
        group,
        parentPostId,
        rootPostId: rootId,
        position,
        content: sanitizeContent(item.content, provider),
        settings,
        media: item.media,
        tags: entry.tags ?? [],
        shortLink: entry.shortLink,
        delay: position === 0 ? 0 : item.delay,
        state,
        publishDate,
        creationMethod: plan.creationMethod,
        approval: position === 0 && state === 'AWAITING_APPROVAL' ? (plan.approval ?? null) : null,
        createdBy: position === 0 ? (plan.createdBy ?? null) : null,
        duplicateKey: position === 0 ? keys[entryIndex].duplicateKey : null,
        allowDuplicate: position === 0 && plan.allowDuplicate === true,
        createdAt: now,
        updatedAt: now,
      });
      parentPostId = id;
    }
    if (state === 'QUEUE') due.push({ rootPostId: rootId, publishDate });
    const warnings = entryWarnings(services, provider, integration, entry, publishDate);
    created.push({ postId: rootId, integration: integration.id, ...(warnings.length > 0 ? { warnings } : {}), ...(state === 'AWAITING_APPROVAL' ? { approval: PENDING_APPROVAL(rootId) } : {}) });
  }
  // The read's check, made again at the write under the lookups' locks: a create of the same text sent at the same moment
  // (parallel tool calls, a retried request) committed in between is found there, and this one writes nothing.
  const raced = await writeCreated(em, rows, due, plan.audit ? created.map(plan.audit) : [], { organizationId, lookups });
  if (raced.size > 0) throw new PostValidationError(judgeDuplicates(plan.entries, byId, raced, guard));
  return created;
}

/**
 * A tool's create (POST /posts, schedulePostTool): under the approval gate when the caller is an agent, counted against
 * the post-creation limit in the create's own read, recorded in the audit trail with the posts, and reported.
 */
export async function createForCaller(context: ToolContext, creationMethod: PostPlan['creationMethod'], entries: PlanEntry[], allowDuplicate?: boolean): Promise<CreatedPost[]> {
  const { em, caller, services } = context;
  const approval = await approvalRequest(em, context);
  const created = await createPosts(services, em, caller.organizationId, {
    creationMethod,
    entries,
    approval,
    allowDuplicate,
    createdBy: credentialRef(caller),
    limit: context.postCreationLimit,
    audit: (post) => postCreatedEvent(context, post),
  });
  reportCreated(context, entries, created, approval);
  return created;
}
