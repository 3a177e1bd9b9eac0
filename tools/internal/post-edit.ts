// Editing a post that has not gone out (draft, scheduled, waiting for approval, failed): content of each item (items may be
// added or removed), date, media, settings. The same validation as creation (validatePlan, the duplicate guard), then the
// chain is rewritten in place; a queued post's job follows its new date. An agent's edit under the approval gate sends the
// post back for approval. A post that went out is edited on its platform instead (published-edit.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { PostSchema, type Integration, type Post, type PostApproval, type PostState, type StoredMedia } from '../../src/db/entities.js';
import { conflict } from '../../src/errors.js';
import { newId } from '../../src/lib/crypto.js';
import { sanitizeContent } from '../../src/lib/content.js';
import type { ToolContext } from '../types.js';
import { PostValidationError, planOptions, validatePlan, type PlanEntry, type PlanItem } from './create-posts.js';
import { comparablePost, findDuplicates, postKeys } from './duplicates.js';
import { agentVia, approvalRequest } from './approval.js';
import { announcePostChange } from './announce.js';
import { cancelPublish, schedulePublish } from './queue.js';
import { postView, type PostView } from './post-view.js';
import { providerOf } from './integrations.js';
import { editPublishedPost } from './published-edit.js';
import { recordChange } from './audit.js';

export interface PostEdit {
  date?: Date;
  /** The whole chain, first item first; absent keeps the items as they are. */
  items?: PlanItem[];
  /** Platform settings without `__type`; absent keeps them. */
  settings?: Record<string, unknown>;
  allowDuplicate?: boolean;
}

const EDITABLE: PostState[] = ['DRAFT', 'QUEUE', 'AWAITING_APPROVAL', 'ERROR'];

/** The duplicate guard on an edit: the edited post against the others of its channel, itself excluded. */
export async function refuseDuplicateEdit(
  em: EntityManager,
  services: ToolContext['services'],
  edit: { organizationId: string; entry: PlanEntry; integration: Integration; root: Post; keys: ReturnType<typeof postKeys> },
): Promise<void> {
  const duplicates = await findDuplicates(em, edit.organizationId, [edit.entry], new Map([[edit.integration.id, edit.integration]]), {
    now: services.now(),
    windowDays: services.config.duplicateWindowDays,
    exclude: [edit.root.id],
    keys: [edit.keys],
  });
  if (duplicates.size > 0) throw new PostValidationError([...duplicates.values()]);
}

export async function editPost(context: Pick<ToolContext, 'caller' | 'via' | 'services'>, em: EntityManager, id: string, edit: PostEdit): Promise<PostView> {
  const { caller, services } = context;
  const organizationId = caller.organizationId;
  const view = await postView(em, organizationId, id);
  const { root, chain, integration } = view;
  const sent = chain.filter((item) => item.state === 'PUBLISHED').length;
  if (sent > 0) return editPublishedPost(context, em, view, edit);
  if (!EDITABLE.includes(root.state)) throw conflict(`Post ${root.id} (${root.state}) cannot be edited.`, { hint: 'Read it again (GET /posts, or the resource herald://posts/{id}).' });
  if (chain.some((item) => item.attemptStartedAt)) {
    throw conflict(`Post ${root.id} is being published right now.`, { hint: 'Wait a minute and read it again: edit it only if it did not go out.' });
  }
  const publishing = root.state === 'QUEUE' || root.state === 'AWAITING_APPROVAL';
  const { __type: _type, ...currentSettings } = root.settings;
  const entry: PlanEntry = {
    integrationId: integration.id,
    type: publishing ? 'schedule' : 'draft',
    date: edit.date ?? root.publishDate,
    shortLink: root.shortLink,
    tags: root.tags,
    groupKey: 0,
    settings: edit.settings ?? currentSettings,
    items: edit.items ?? chain.map((item) => ({ content: item.content, media: structuredClone(item.media), delay: item.delay })),
  };
  await validatePlan(em, organizationId, { creationMethod: root.creationMethod === 'MCP' ? 'MCP' : 'API', entries: [entry] }, planOptions(services));
  // The guard looks again when the text or the date changes (a post moved next to a repetition of it is one too).
  const keys = postKeys(entry.items[0].content, entry.settings);
  const moved = entry.date!.getTime() !== root.publishDate.getTime();
  const allowDuplicate = edit.allowDuplicate ?? root.allowDuplicate;
  if (publishing && !allowDuplicate && (moved || keys.key !== comparablePost(root.content, root.settings).key)) {
    await refuseDuplicateEdit(em, services, { organizationId, entry, integration, root, keys });
  }

  // An agent's edit needs a new approval when the gate applies to it; an earlier approval does not cover the new content.
  const agent = agentVia(context) !== undefined;
  const request = agent ? await approvalRequest(em, context) : undefined;
  let state: PostState = root.state;
  let approval: PostApproval | null = root.approval ?? null;
  if (agent) {
    if (publishing && request) {
      state = 'AWAITING_APPROVAL';
      approval = request;
    } else if (approval?.decision === 'approved') approval = null;
  }

  const now = services.now();
  const settings = { ...entry.settings, __type: integration.providerIdentifier };
  const date = entry.date!;
  // As it was, for the trail (the rows are changed in place below).
  const before = { state: root.state, date: root.publishDate.toISOString() };
  await em.transactional(async (transaction) => {
    let parent: Post | undefined;
    for (const [position, item] of entry.items.entries()) {
      const media: StoredMedia[] = item.media;
      const existing = chain[position] ? transaction.merge(chain[position]) : undefined;
      // A new item starts as a bare row (nullable and defaulted columns left to their defaults); the fields below fill it.
      const row =
        existing ??
        transaction.create(PostSchema, {
          id: newId(),
          organizationId,
          integrationId: integration.id,
          group: root.group,
          parentPostId: parent?.id ?? null,
          rootPostId: root.id,
          position,
          content: '',
          settings,
          media: [],
          tags: root.tags,
          shortLink: root.shortLink,
          state,
          publishDate: date,
          creationMethod: root.creationMethod,
        });
      // Recorded platform steps (an uploaded file, a container) belong to the old content: a new run starts afresh.
      Object.assign(row, {
        content: sanitizeContent(item.content, providerOf(integration)),
        media,
        settings,
        delay: position === 0 ? 0 : item.delay,
        duplicateKey: position === 0 ? keys.duplicateKey : null,
        publishDate: date,
        state,
        publishProgress: null,
        attempts: 0,
        lastError: null,
        nextAttemptAt: null,
        ...(state === 'ERROR' ? { error: row.error ?? 'Not attempted yet: retry the post to publish it.' } : { error: null }),
      });
      parent = row;
    }
    for (const removed of chain.slice(entry.items.length)) transaction.merge(removed).deletedAt = now;
    Object.assign(transaction.merge(root), { approval, allowDuplicate });
    await transaction.flush();
    if (state === 'QUEUE') await schedulePublish(transaction, root.id, date);
    else await cancelPublish(transaction, root.id);
    // Which fields changed, never their whole text (the post itself holds it).
    const fields = [
      ...(moved ? ['date'] : []),
      ...(edit.items ? ['items'] : []),
      ...(edit.settings ? ['settings'] : []),
      ...(edit.allowDuplicate !== undefined ? ['allowDuplicate'] : []),
    ];
    await recordChange(transaction, organizationId, {
      action: 'post.edited',
      target: { kind: 'post', id: root.id },
      integrationId: integration.id,
      did: `edited post ${root.id}${state === 'AWAITING_APPROVAL' && before.state !== 'AWAITING_APPROVAL' ? ' (it now waits for approval)' : ''}`,
      changes: { fields, ...(moved ? { date: { from: before.date, to: date.toISOString() } } : {}), ...(edit.items ? { items: edit.items.length } : {}), state: { from: before.state, to: state } },
    });
  });
  await announcePostChange(services, root.id);
  return postView(services.orm.em.fork(), organizationId, root.id);
}
