import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { defineTool, readOnly } from './types.js';
import { listPosts, MAX_PAGE } from './internal/posts.js';

const isoDate = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time such as 2026-12-01T00:00:00Z' });

export const postList = defineTool({
  name: 'postsListTool',
  title: 'List posts',
  description:
    "Posts between startDate and endDate (UTC, at most 100 days): state, publishStatus, date, content, group, release URL, error, each chain item. For 'what is scheduled' and 'did it go out'. nextCursor not null: call again with cursor.",
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
