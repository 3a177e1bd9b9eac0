import { z } from 'zod';
import { invalidInput } from '../src/errors.js';
import { defineTool } from './types.js';
import { csvRows, IMPORT_MAX_ROWS, importPosts, jsonRows } from './internal/bulk-import.js';
import { idempotencyKeyField } from './internal/idempotency.js';

const rowReport = z.object({
  row: z.number(),
  channel: z.object({ id: z.string(), name: z.string(), platform: z.string() }).optional(),
  date: z.string().optional(),
  localDate: z.string().optional(),
  timeZone: z.string().optional(),
  type: z.enum(['schedule', 'draft']).optional(),
  problems: z.array(z.string()),
  postId: z.string().optional(),
});

export const importPostsTool = defineTool({
  name: 'importPostsTool',
  title: 'Import posts from CSV or JSON',
  description:
    `Bulk import, one post per row (at most ${IMPORT_MAX_ROWS}): \`csv\` (header channel,date,timeZone,text,media,settings,type,tags) or \`rows\` (objects, same keys). ` +
    'date: local "2026-12-08 09:00" in the row\'s or request\'s timeZone (else the channel\'s), or with an offset; text is plain unless textFormat "html". ' +
    'dryRun (default true) creates nothing and lists each row\'s problems; then dryRun false with an idempotencyKey creates all rows, or none if one is bad.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  mcp: true,
  countsAsPostCreation: 'in-handler',
  acceptsIdempotencyKey: true,
  input: z.object({
    csv: z.string().max(2_000_000).optional(),
    rows: z.array(z.record(z.string(), z.unknown())).max(IMPORT_MAX_ROWS).optional(),
    timeZone: z.string().max(64).optional().describe('IANA zone for rows without one'),
    textFormat: z.enum(['plain', 'html']).default('plain'),
    dryRun: z.boolean().default(true),
    allowDuplicate: z.boolean().optional(),
    idempotencyKey: idempotencyKeyField,
  }),
  output: z.object({ dryRun: z.boolean(), rows: z.array(rowReport), valid: z.number(), invalid: z.number() }),
  rest: { method: 'POST', path: '/posts/import', largeBody: true },
  handler: async (input, context) => {
    if ((input.csv === undefined) === (input.rows === undefined)) {
      throw invalidInput('Give the posts either as csv (the text of a CSV file) or as rows (a JSON array of objects), not both or neither.', {
        hint: 'CSV: {"csv": "channel,date,text\\n<id>,2026-12-08 09:00,Hello"}; JSON: {"rows": [{"channel": "<id>", "date": "2026-12-08 09:00", "text": "Hello"}]}.',
      });
    }
    const rows = input.csv !== undefined ? csvRows(input.csv) : jsonRows(input.rows!);
    return importPosts(context, rows, { dryRun: input.dryRun, timeZone: input.timeZone, textFormat: input.textFormat, allowDuplicate: input.allowDuplicate });
  },
});
