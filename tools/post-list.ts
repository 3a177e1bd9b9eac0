import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { defineTool, readOnly } from './types.js';
import { listPosts, MAX_PAGE } from './internal/posts.js';

const isoDate = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-12-01T00:00:00Z' });

export const postList = defineTool({
  name: 'postsListTool',
  title: 'List posts',
  description:
    'Lists the posts (first item of each chain) between startDate and endDate (UTC, at most 100 days apart), with state (DRAFT, QUEUE, PUBLISHED, ERROR), ' +
    'publishStatus (draft, scheduled, retrying, published, partial, failed), date, content, release URL, error text, retry attempts, and every item of the chain with its own state and link. ' +
    'Use it to review what is scheduled or how publishing went; pass `customer` (a group id) to limit it to one group. At most 1000 posts a page: when nextCursor is not null, call again with cursor=nextCursor.',
  annotations: readOnly,
  mcp: true,
  input: z.object({
    startDate: isoDate,
    endDate: isoDate,
    customer: z.string().optional(),
    cursor: z.string().max(200).optional().describe('nextCursor of the previous page'),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE).optional().describe(`Posts per page, at most ${MAX_PAGE} (the default)`),
  }),
  output: z.object({ posts: z.array(z.record(z.string(), z.unknown())), nextCursor: z.string().nullable().describe('null when this page is the last') }),
  rest: {
    method: 'GET',
    path: '/posts',
    toInput: ({ query }) => ({ startDate: query.startDate, endDate: query.endDate, customer: query.customer, cursor: query.cursor, limit: query.limit }),
  },
  handler: async (input, { em, caller }) => {
    const startDate = new Date(input.startDate);
    const endDate = new Date(input.endDate);
    if (endDate < startDate) throw invalidInput('endDate is before startDate.', { hint: 'Swap the two dates.' });
    if (endDate.getTime() - startDate.getTime() > 100 * 24 * 3600 * 1000) throw invalidInput('The range is longer than 100 days.', { hint: 'Ask for several shorter ranges.' });
    return listPosts(em, caller.organizationId, { startDate, endDate, customer: input.customer, cursor: input.cursor, limit: input.limit });
  },
});
