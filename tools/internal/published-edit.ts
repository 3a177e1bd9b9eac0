// An edit of a post that went out (PUT /posts/{id}, updatePost on a PUBLISHED post): the new text (and settings, e.g. a
// title) of each item is checked like a creation (validatePlan, the duplicate guard), kept on the item as a pending change
// (`platform_change`), and made on the platform by the `platform_change` job; the stored content changes only once the
// platform took it. What the platform cannot change is refused with the reason (409): a platform without an edit API,
// the date, added or removed items, other media, a setting the platform keeps (`editProblem`). Under the approval gate an
// agent's edit waits for an owner (state `awaiting_approval`); the post stays as it went out meanwhile.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { PlatformChange, StoredMedia } from '../../src/db/entities.js';
import { conflict } from '../../src/errors.js';
import { sanitizeContent } from '../../src/lib/content.js';
import type { ToolContext } from '../types.js';
import { planOptions, validatePlan, type PlanEntry } from './create-posts.js';
import { comparablePost, postKeys } from './duplicates.js';
import { agentVia, approvalRequest, requesterLabel } from './approval.js';
import { announcePostChange } from './announce.js';
import { notify } from './notifications.js';
import { postView, type PostView } from './post-view.js';
import { providerOf } from './integrations.js';
import { cannotChange, isOpen, scheduleChange } from './platform-changes.js';
import { refuseDuplicateEdit, type PostEdit } from './post-edit.js';
import { recordChange } from './audit.js';

const sameMedia = (a: StoredMedia[], b: StoredMedia[]) => a.length === b.length && a.every((media, index) => media.id === b[index].id && media.path === b[index].path);
const sameSettings = (a: Record<string, unknown>, b: Record<string, unknown>) => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
const sorted = (value: Record<string, unknown>) => Object.fromEntries(Object.entries(value).sort(([x], [y]) => x.localeCompare(y)));

export async function editPublishedPost(context: Pick<ToolContext, 'caller' | 'via' | 'services'>, em: EntityManager, view: PostView, edit: PostEdit): Promise<PostView> {
  const { caller, services } = context;
  const organizationId = caller.organizationId;
  const { root, chain, integration } = view;
  const provider = providerOf(integration);
  const count = (n: number) => `${n} item${n === 1 ? '' : 's'}`;
  const sent = chain.filter((item) => item.state === 'PUBLISHED').length;
  if (sent < chain.length) {
    throw conflict(`Post ${root.id} was published in part (${sent} of ${chain.length} items went out); it cannot be edited.`, {
      hint: 'Retry it first (PUT /posts/{id}/status {"status":"schedule"}) to publish the rest, then edit it; or delete it.',
    });
  }
  if (chain.some((item) => isOpen(item.platformChange))) {
    throw conflict(`A change of post ${root.id} is being made on the platform right now.`, { hint: 'Wait until its platformChange is done or failed (GET /posts, or the resource herald://posts/{id}), then edit again.' });
  }
  if (!provider.editPublished) {
    throw conflict(`Post ${root.id} went out on ${provider.name}, where it cannot be edited: ${cannotChange(provider, 'edit')}`, {
      hint: 'To replace it, delete it on the platform (DELETE /posts/{id} with deleteOnPlatform: true) and create a new post.',
    });
  }
  if (edit.date && edit.date.getTime() !== root.publishDate.getTime()) {
    throw conflict(`Post ${root.id} went out at ${(root.publishedAt ?? root.publishDate).toISOString()}; the date of a published post cannot change.`, { hint: 'Leave date out of the edit.' });
  }
  const items = edit.items ?? chain.map((item) => ({ content: item.content, media: structuredClone(item.media), delay: item.delay }));
  if (items.length !== chain.length) {
    throw conflict(`Post ${root.id} has ${count(chain.length)} on ${provider.name}; an edit of a published post changes their text, it cannot add or remove items.`, {
      hint: `Send value with exactly ${count(chain.length)}, first item first; publish more as a new post.`,
    });
  }
  for (const [position, item] of items.entries()) {
    if (!sameMedia(item.media, chain[position].media)) {
      throw conflict(`Item ${position + 1} of post ${root.id}: the media of a published item cannot be changed on ${provider.name} by Herald.`, {
        hint: 'Send the same image list (id and path) as it went out; to change the media, delete the post on the platform and create a new one.',
      });
    }
  }
  const { __type: _type, ...currentSettings } = root.settings;
  const settings = edit.settings ?? currentSettings;
  const settingsProblem = provider.editProblem?.(currentSettings, settings);
  if (settingsProblem) throw conflict(`Post ${root.id} on ${provider.name}: ${settingsProblem}`, { hint: 'Leave that setting as it went out.' });

  const entry: PlanEntry = { integrationId: integration.id, type: 'schedule', date: root.publishDate, shortLink: root.shortLink, tags: root.tags, groupKey: 0, settings, items };
  await validatePlan(em, organizationId, { creationMethod: root.creationMethod === 'MCP' ? 'MCP' : 'API', entries: [entry] }, planOptions(services));
  const contents = items.map((item) => sanitizeContent(item.content, provider));
  const changed = chain.filter((item, position) => contents[position] !== item.content || (position === 0 && !sameSettings(settings, currentSettings)));
  if (changed.length === 0) return view;

  const allowDuplicate = edit.allowDuplicate ?? root.allowDuplicate;
  const keys = postKeys(contents[0], settings);
  if (!allowDuplicate && keys.key !== comparablePost(root.content, root.settings).key) {
    await refuseDuplicateEdit(em, services, { organizationId, entry, integration, root, keys });
  }

  const approval = agentVia(context) ? await approvalRequest(em, context) : undefined;
  const now = services.now();
  const fullSettings = { ...settings, __type: integration.providerIdentifier };
  await em.transactional(async (transaction) => {
    for (const item of changed) {
      const change: PlatformChange = {
        action: 'edit',
        state: approval ? 'awaiting_approval' : 'pending',
        requestedAt: now.toISOString(),
        content: contents[item.position],
        settings: fullSettings,
        ...(approval ? { approval } : {}),
      };
      transaction.merge(item).platformChange = change;
    }
    if (edit.allowDuplicate !== undefined) transaction.merge(root).allowDuplicate = edit.allowDuplicate;
    await recordChange(transaction, organizationId, {
      action: 'post.edit_on_platform_asked',
      target: { kind: 'post', id: root.id },
      integrationId: integration.id,
      did: `asked to edit post ${root.id} on the platform${approval ? ' (waiting for approval)' : ''}`,
      changes: { items: changed.map((item) => item.position + 1), ...(edit.settings ? { settings: Object.keys(edit.settings) } : {}), awaitingApproval: Boolean(approval) },
    });
    if (approval) {
      const label = requesterLabel(approval);
      notify(transaction, organizationId, 'post_awaiting_approval', `${label.charAt(0).toUpperCase()}${label.slice(1)} asks to edit post ${root.id}, published on ${integration.name} (${provider.name}). Approve or reject it in the console under Approvals.`, undefined, undefined, integration.id, { target: { kind: 'post', id: root.id } });
    }
    await transaction.flush();
    if (!approval) await scheduleChange(transaction, root.id, now);
  });
  await announcePostChange(services, root.id);
  return postView(services.orm.em.fork(), organizationId, root.id);
}
