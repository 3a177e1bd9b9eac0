// After posts are created: owners are told what waits for their approval, and the MCP client's log says what was queued.
import type { ToolContext } from '../types.js';
import type { CreatedPost, PlanEntry } from './create-posts.js';
import { requesterLabel } from './approval.js';
import { notify } from './notifications.js';
import type { PostApproval } from '../../src/db/entities.js';

export function reportCreated(context: Pick<ToolContext, 'em' | 'caller' | 'log' | 'services'>, entries: PlanEntry[], created: CreatedPost[], approval?: PostApproval): void {
  const now = context.services.now();
  context.log?.('info', `Checked ${entries.length} post${entries.length === 1 ? '' : 's'} against each platform's rules: valid.`);
  created.forEach((post, index) => {
    const entry = entries[index];
    const when = entry?.type === 'now' ? 'now' : (entry?.date ?? now).toISOString();
    const items = entry && entry.items.length > 1 ? ` (${entry.items.length} items)` : '';
    if (post.approval && approval) {
      notify(context.em, context.caller.organizationId, 'post_awaiting_approval', `A post by ${requesterLabel(approval)} waits for your approval (post ${post.postId}, for ${when}). Approve or reject it in the console under Approvals.`, undefined, undefined, post.integration, {
        at: entry?.type === 'now' ? undefined : (entry?.date ?? now),
        target: { kind: 'post', id: post.postId },
      });
      context.log?.('notice', `Post ${post.postId}${items} waits for an owner's approval before publishing (date ${when}).`, { postId: post.postId, integration: post.integration });
    } else if (entry?.type === 'draft') {
      context.log?.('info', `Saved draft ${post.postId}${items}.`, { postId: post.postId, integration: post.integration });
    } else {
      context.log?.('info', `Queued post ${post.postId}${items} for ${when}.`, { postId: post.postId, integration: post.integration });
    }
    for (const warning of post.warnings ?? []) context.log?.('warning', warning, { postId: post.postId });
  });
}
