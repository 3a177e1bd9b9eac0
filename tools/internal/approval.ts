// The approval gate for posts made by agents on someone's behalf.
//
// An agent is every credential that is not an owner's (scopes.ts `isOwnerCredential`), over REST and MCP alike: agent
// keys (API keys without organization:manage) and OAuth tokens. Not agents: people signed in to the console and owner keys
// (the organization key). When the organization's rule (or the override for the agent's key or OAuth app) says so, what an
// agent would queue waits in AWAITING_APPROVAL instead; a person with the permission or a key with the approve scope
// approves it (it keeps its date, or goes out at once when the date has passed) or rejects it (a draft with the reason).
// No credential decides on a post it created.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApprovalSettingSchema, IntegrationSchema, PostSchema, type Post, type PostApproval } from '../../src/db/entities.js';
import { OAuthAppSchema, OAuthTokenSchema } from '../../src/db/account-entities.js';
import { conflict, DomainError, invalidInput } from '../../src/errors.js';
import type { Caller, Services, ToolContext } from '../types.js';
import { notify } from './notifications.js';
import { recordChange } from './audit.js';
import { chainOf, findPost, rootOf } from './posts.js';
import { cancelPublish, schedulePublish } from './queue.js';
import { announcePostChange } from './announce.js';
import { refuseDuplicateOf } from './duplicates.js';
import { decideChange } from './platform-changes.js';
import { isOwnerCredential } from './scopes.js';

/** How an agent reached Herald; undefined when the caller is not an agent (an owner credential). */
export function agentVia(context: { caller: Caller; via?: 'mcp' }): 'mcp' | 'rest' | undefined {
  if (isOwnerCredential(context.caller)) return undefined;
  return context.via === 'mcp' ? 'mcp' : 'rest';
}

/** Agents never change the gate: the person behind them does. */
export function refuseAgent(context: { caller: Caller; via?: 'mcp' }, what: string): void {
  if (agentVia(context)) {
    throw new DomainError('forbidden', `An agent cannot ${what}.`, {
      hint: 'An owner of the organization decides in the Herald console, or with an owner key (organization:manage) on REST.',
    });
  }
}

/** A credential as stored on what it does (`createdBy`, `decidedBy`): `api_key:<id>`, `oauth_token:<id>`, `session:<id>`. */
export function credentialRef(caller: Caller): string {
  return caller.credentialId.startsWith(`${caller.credentialKind}:`) ? caller.credentialId : `${caller.credentialKind}:${caller.credentialId}`;
}

/** The credential that asked for an approval, as `credentialRef` writes it. */
const requesterOf = (caller: Caller, approval: PostApproval) =>
  credentialRef({ ...caller, credentialKind: approval.credentialKind as Caller['credentialKind'], credentialId: approval.credentialId });

function selfDecision(why: string): DomainError {
  return new DomainError('forbidden', why, {
    hint: 'Another person or key with the approve scope decides: an owner in the Herald console (Approvals), or an owner key on REST.',
  });
}

/** No credential approves or rejects a post it created: the gate would be no gate. */
export function refuseOwnPost(caller: Caller, root: Post, what: string): void {
  const ref = credentialRef(caller);
  if (root.createdBy === ref || (root.approval && requesterOf(caller, root.approval) === ref)) {
    throw selfDecision(`This credential created post ${root.id}, so it cannot ${what} it.`);
  }
}

/** A change on the platform (an edit or deletion waiting for approval) is decided by someone other than who asked for it. */
function refuseOwnChange(decidedBy: Decider, post: Post, what: string): void {
  const asked = post.platformChange?.state === 'awaiting_approval' ? post.platformChange.approval : undefined;
  if (decidedBy.caller && asked && requesterOf(decidedBy.caller, asked) === credentialRef(decidedBy.caller)) {
    throw selfDecision(`This credential asked for the change of post ${post.id} on its platform, so it cannot ${what} it.`);
  }
}

async function oauthAppOf(em: EntityManager, caller: Caller): Promise<{ id: string; name: string } | undefined> {
  if (caller.credentialKind !== 'oauth_token') return undefined;
  const token = await em.findOne(OAuthTokenSchema, { id: caller.credentialId });
  const app = token ? await em.findOne(OAuthAppSchema, { id: token.appId }) : null;
  return app ? { id: app.id, name: app.name } : undefined;
}

/**
 * The approval request for what this caller is about to queue, or undefined when it may queue directly (not an agent, or
 * the gate is off for it). The OAuth app's override wins over the organization's rule.
 */
export async function approvalRequest(em: EntityManager, context: Pick<ToolContext, 'caller' | 'via' | 'services'>): Promise<PostApproval | undefined> {
  const via = agentVia(context);
  if (!via) return undefined;
  const { caller } = context;
  const app = await oauthAppOf(em, caller);
  const rules = await em.find(ApprovalSettingSchema, { organizationId: caller.organizationId, appId: { $in: ['', ...(app ? [app.id] : [])] } });
  const appRule = app ? rules.find((rule) => rule.appId === app.id) : undefined;
  // The key's own setting, like an app's override, wins over the organization's rule.
  const keyRule = caller.credentialKind === 'api_key' && caller.approvalRequired != null ? caller.approvalRequired : undefined;
  const required = keyRule ?? (appRule ? appRule.required : (rules.find((rule) => rule.appId === '')?.required ?? false));
  if (!required) return undefined;
  return {
    requestedAt: context.services.now().toISOString(),
    via,
    credentialKind: caller.credentialKind,
    credentialId: caller.credentialId,
    ...(app ? { appId: app.id, appName: app.name } : {}),
    ...(caller.credentialKind === 'api_key' && caller.name ? { keyName: caller.name } : {}),
  };
}

/** Who asked, in words: "an agent over MCP (API key)", "Acme Planner (OAuth app) over REST". */
export function requesterLabel(approval: PostApproval): string {
  const how = approval.via === 'mcp' ? 'over MCP' : 'over REST';
  if (approval.appName) return `${approval.appName} (OAuth app) ${how}`;
  if (approval.keyName) return `${approval.keyName} (API key) ${how}`;
  return `an agent ${how} (${approval.credentialKind === 'api_key' ? 'API key' : approval.credentialKind})`;
}

export interface ApprovalSettings {
  /** Posts created by agents wait for approval (the organization's rule). */
  agents: boolean;
  /** OAuth apps that act in this organization, with their override: true (always wait), false (never), null (the organization's rule). */
  apps: { appId: string; name: string; required: boolean | null }[];
}

export async function approvalSettings(em: EntityManager, organizationId: string): Promise<ApprovalSettings> {
  const rules = await em.find(ApprovalSettingSchema, { organizationId });
  const apps = await em.getConnection().execute<{ id: string; name: string }[]>(
    `select distinct a.id, a.name from oauth_app a
     where a.deleted_at is null and (exists (select 1 from oauth_token t where t.app_id = a.id and t.organization_id = ? and t.revoked_at is null)
       or a.id in (select app_id from approval_setting where organization_id = ?))
     order by a.name, a.id`,
    [organizationId, organizationId],
  );
  return {
    agents: rules.find((rule) => rule.appId === '')?.required ?? false,
    apps: apps.map((app) => ({ appId: app.id, name: app.name, required: rules.find((rule) => rule.appId === app.id)?.required ?? null })),
  };
}

export async function setApprovalSettings(
  em: EntityManager,
  organizationId: string,
  change: { agents?: boolean; apps?: { appId: string; required: boolean | null }[] },
): Promise<ApprovalSettings> {
  const upsert = async (appId: string, required: boolean | null) => {
    const existing = await em.findOne(ApprovalSettingSchema, { organizationId, appId });
    if (required === null) {
      if (existing) em.remove(existing);
    } else if (existing) existing.required = required;
    else em.create(ApprovalSettingSchema, { organizationId, appId, required, updatedAt: new Date() });
  };
  if (change.agents !== undefined) await upsert('', change.agents);
  for (const app of change.apps ?? []) {
    if (!(await em.findOne(OAuthAppSchema, { id: app.appId, deletedAt: null }))) {
      throw invalidInput(`OAuth app ${app.appId} not found.`, { hint: 'Use an appId listed by GET /approval-settings.' });
    }
    await upsert(app.appId, app.required);
  }
  await em.flush();
  await recordChange(em, organizationId, { action: 'approval_settings.changed', target: { kind: 'approval_settings', id: null }, did: 'changed the approval gate', changes: change });
  return approvalSettings(em, organizationId);
}

/** Who decides: stored on the post; `caller` (REST) is checked against the post's creator. */
export interface Decider {
  id: string;
  name: string;
  caller?: Caller;
}

export interface Decision {
  id: string;
  /** PUBLISHED: the decision was on an edit or deletion of a published post on its platform (platform-changes.ts). */
  state: 'QUEUE' | 'DRAFT' | 'PUBLISHED';
  /** When it will be published (approved), or null (rejected). */
  publishAt: string | null;
  approval: PostApproval;
  /** Set when the decision was on a change of what went out: which one. */
  platformChange?: 'edit' | 'delete';
}

async function awaitingRoot(em: EntityManager, organizationId: string, id: string): Promise<{ root: Post; chain: Post[] }> {
  const root = await rootOf(em, await findPost(em, organizationId, id));
  if (root.state !== 'AWAITING_APPROVAL' || !root.approval) {
    throw conflict(`Post ${root.id} is not waiting for approval (its state is ${root.state}).`, {
      hint: root.approval?.decision ? `It was already ${root.approval.decision} on ${root.approval.decidedAt}.` : 'Only posts in AWAITING_APPROVAL can be approved or rejected.',
    });
  }
  return { root, chain: await chainOf(em, root) };
}

async function whereOf(em: EntityManager, post: Post): Promise<string> {
  const integration = await em.findOne(IntegrationSchema, { id: post.integrationId });
  return integration ? `${integration.name} (${integration.providerIdentifier})` : 'a deleted channel';
}

/** Approves a waiting post: it keeps its date, or is published at once when the date has passed (and a notification says so). */
export async function approvePost(services: Services, em: EntityManager, organizationId: string, id: string, decidedBy: Decider): Promise<Decision> {
  // A published post whose edit or deletion on the platform an agent asked for waits for this decision instead.
  const target = await findPost(em, organizationId, id);
  refuseOwnChange(decidedBy, target, 'approve');
  const change = await decideChange(services, em, organizationId, target, { approve: true }, decidedBy);
  if (change) return recordDecision(em, organizationId, change, target.integrationId);
  const { root, chain } = await awaitingRoot(em, organizationId, id);
  if (decidedBy.caller) refuseOwnPost(decidedBy.caller, root, 'approve');
  const now = services.now();
  const late = root.publishDate.getTime() <= now.getTime();
  const where = await whereOf(em, root);
  const approval: PostApproval = { ...root.approval!, decision: 'approved', decidedAt: now.toISOString(), decidedBy: decidedBy.id, decidedByName: decidedBy.name };
  // Another post with the same text may have been made due while this one waited (one created with allowDuplicate).
  const integration = await em.findOne(IntegrationSchema, { id: root.integrationId, organizationId, deletedAt: null });
  if (integration) await refuseDuplicateOf(em, root, integration, { now, windowDays: services.config.duplicateWindowDays });
  await em.transactional(async (transaction) => {
    for (const item of chain) {
      const row = transaction.merge(item);
      if (row.state === 'AWAITING_APPROVAL') row.state = 'QUEUE';
    }
    transaction.merge(root).approval = approval;
    notify(
      transaction,
      organizationId,
      'post_approved',
      late
        ? `${decidedBy.name} approved the post on ${where} after its date (${root.publishDate.toISOString()}) had passed: it is being published now.`
        : `${decidedBy.name} approved the post on ${where}: it will be published at ${root.publishDate.toISOString()}.`,
      undefined,
      undefined,
      root.integrationId,
      { at: root.publishDate, target: { kind: 'post', id: root.id } },
    );
    await transaction.flush();
    await schedulePublish(transaction, root.id, late ? now : root.publishDate);
  });
  await announcePostChange(services, root.id);
  return recordDecision(em, organizationId, { id: root.id, state: 'QUEUE', publishAt: (late ? now : root.publishDate).toISOString(), approval }, root.integrationId);
}

/** The trail's record of a decision (console, REST or MCP alike): who approved or rejected which post, or which change of it. */
async function recordDecision(em: EntityManager, organizationId: string, decision: Decision, integrationId: string): Promise<Decision> {
  const verb = decision.approval.decision === 'approved' ? 'approved' : 'rejected';
  const what = decision.platformChange ? `the ${decision.platformChange === 'edit' ? 'edit' : 'deletion'} on the platform of post ${decision.id}` : `post ${decision.id}`;
  await recordChange(em, organizationId, {
    action: decision.platformChange ? `post.change_${verb}` : `post.${verb}`,
    target: { kind: 'post', id: decision.id },
    integrationId,
    did: `${verb} ${what}${decision.approval.reason ? `: ${decision.approval.reason}` : ''}`,
    changes: { state: decision.state, ...(decision.platformChange ? { platformChange: decision.platformChange } : {}), ...(decision.approval.reason ? { reason: decision.approval.reason } : {}) },
  });
  return decision;
}

/** Rejects a waiting post: it becomes a draft, and the reason is kept on it (and in a notification) for the agent to read. */
export async function rejectPost(
  services: Services,
  em: EntityManager,
  organizationId: string,
  id: string,
  reason: string,
  decidedBy: Decider,
): Promise<Decision> {
  const why = reason.trim();
  if (!why) throw invalidInput('A reason is required to reject a post.', { hint: 'Say what is wrong, so the agent (or its user) can fix it.' });
  const target = await findPost(em, organizationId, id);
  refuseOwnChange(decidedBy, target, 'reject');
  const change = await decideChange(services, em, organizationId, target, { approve: false, reason: why }, decidedBy);
  if (change) return recordDecision(em, organizationId, change, target.integrationId);
  const { root, chain } = await awaitingRoot(em, organizationId, id);
  if (decidedBy.caller) refuseOwnPost(decidedBy.caller, root, 'reject');
  const now = services.now();
  const where = await whereOf(em, root);
  const approval: PostApproval = { ...root.approval!, decision: 'rejected', decidedAt: now.toISOString(), decidedBy: decidedBy.id, decidedByName: decidedBy.name, reason: why };
  await em.transactional(async (transaction) => {
    for (const item of chain) {
      const row = transaction.merge(item);
      if (row.state === 'AWAITING_APPROVAL') row.state = 'DRAFT';
    }
    transaction.merge(root).approval = approval;
    notify(transaction, organizationId, 'post_rejected', `${decidedBy.name} rejected the post on ${where} (post ${root.id}): ${why}. It is now a draft: edit it and schedule it again.`, undefined, undefined, root.integrationId, { target: { kind: 'post', id: root.id } });
    await transaction.flush();
    await cancelPublish(transaction, root.id);
  });
  await announcePostChange(services, root.id);
  return recordDecision(em, organizationId, { id: root.id, state: 'DRAFT', publishAt: null, approval }, root.integrationId);
}

/** Waiting posts of the organization, oldest request first (the console's queue). */
export async function awaitingApproval(em: EntityManager, organizationId: string, limit = 200): Promise<Post[]> {
  return em.find(PostSchema, { organizationId, state: 'AWAITING_APPROVAL', position: 0, deletedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit });
}
