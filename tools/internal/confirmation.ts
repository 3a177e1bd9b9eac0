// Confirmation of destructive tools. Through MCP the user confirms: with an elicitation when the client supports it, else
// the agent calls twice (the first call answers what would be deleted, the second passes confirm: true). On REST and in the
// console the request itself is the explicit act (a DELETE sent with the organization's key, a form a person submitted),
// so the spec's DELETE routes keep working for existing clients.
import { channelFilter } from './visibility.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IntegrationSchema, PostSchema } from '../../src/db/entities.js';
import { convertContent } from '../../src/lib/content.js';
import type { ConfirmationAnswer, ToolContext } from '../types.js';

export interface DeletionAnswer {
  id: string;
  deleted: boolean;
  /** What would be deleted (not deleted yet). */
  wouldDelete?: Record<string, unknown>;
  message?: string;
}

export async function confirmDeletion(
  context: Pick<ToolContext, 'confirm' | 'log'>,
  options: { action: string; tool: string; id: string; summary: string; wouldDelete: Record<string, unknown>; confirmed: boolean | undefined },
): Promise<DeletionAnswer | undefined> {
  if (!context.confirm) return undefined;
  const answer: ConfirmationAnswer = await context.confirm({ action: options.action, message: options.summary, confirmed: options.confirmed === true });
  if (answer === 'confirmed') return undefined;
  if (answer === 'declined') {
    context.log?.('notice', `The user did not confirm: nothing was deleted (${options.action}).`);
    return { id: options.id, deleted: false, message: 'The user did not confirm: nothing was deleted.' };
  }
  return {
    id: options.id,
    deleted: false,
    wouldDelete: options.wouldDelete,
    message: `Nothing was deleted yet. ${options.summary} Ask the user; if they agree, call ${options.tool} again with the same id and confirm: true (within 10 minutes).`,
  };
}

/** A post group as the confirmation describes it: one line per post (channel, state, date, the start of the text). */
export async function groupSummary(
  em: EntityManager,
  organizationId: string,
  group: string,
  options: { onPlatform?: boolean } = {},
): Promise<{ summary: string; wouldDelete: Record<string, unknown>; count: number }> {
  const roots = await em.find(PostSchema, { organizationId, group, deletedAt: null, position: 0, ...channelFilter() }, { orderBy: { publishDate: 'asc', id: 'asc' } });
  const channels = roots.length ? await em.find(IntegrationSchema, { id: { $in: [...new Set(roots.map((post) => post.integrationId))] } }) : [];
  const nameOf = new Map(channels.map((channel) => [channel.id, `${channel.name} (${channel.providerIdentifier})`]));
  const posts = roots.map((post) => {
    const text = convertContent(post.content, 'plain').replace(/\s+/g, ' ').trim();
    return { id: post.id, channel: nameOf.get(post.integrationId) ?? post.integrationId, state: post.state, date: post.publishDate.toISOString(), text: text.length > 80 ? `${text.slice(0, 77)}…` : text };
  });
  const lines = posts.map((post) => `${post.channel}, ${post.state.toLowerCase().replace('_', ' ')} for ${post.date}: "${post.text}"`).join('; ');
  const published = posts.filter((post) => post.state === 'PUBLISHED').length;
  return {
    count: posts.length,
    summary:
      (posts.length === 1 ? `Delete 1 post (group ${group}): ${lines}. ` : `Delete ${posts.length} posts created together (group ${group}): ${lines}. `) +
      (published > 0
        ? options.onPlatform
          ? `${published} already published ${published === 1 ? 'is' : 'are'} deleted on the platform too, where its API allows (the answer lists what stays and why). `
          : `${published} already published stay${published === 1 ? 's' : ''} on the platform; Herald forgets ${published === 1 ? 'it' : 'them'}. `
        : '') +
      unpublishedSentence(posts.length - published, published > 0) +
      'This cannot be undone.',
    wouldDelete: { group, posts },
  };
}

/** What becomes of the posts not published yet: "it" for one alone, "the others" only beside published ones. */
function unpublishedSentence(count: number, besidePublished: boolean): string {
  if (count === 0) return '';
  if (besidePublished) return count === 1 ? 'The other will not be published. ' : 'The others will not be published. ';
  return count === 1 ? 'It will not be published. ' : 'They will not be published. ';
}
