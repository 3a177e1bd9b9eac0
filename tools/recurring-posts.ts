// Recurring posts (REST /recurring-posts, issue 35): a post that repeats on one channel every N days or weeks on chosen
// weekdays at a wall-clock time of the channel's zone, ending at a date or after a count, rotating through variations of
// its text; each occurrence an ordinary post made ahead (tools/internal/recurrence.ts). REST has a route per operation;
// MCP has one tool with an `action` (tools/list is paid for in every turn of an agent's conversation), calling the same code.
import { z } from 'zod';
import { missedPolicies, occurrenceOutcomes, recurrenceUnits } from '../src/db/recurrence-entities.js';
import { invalidInput } from '../src/errors.js';
import { defineTool, readOnly, type ToolContext } from './types.js';
import { confirmInput, deletionOutput, idParam, imageSchema } from './shapes.js';
import { parseInput } from './runner.js';
import { confirmDeletion } from './internal/confirmation.js';
import { changeRule, createRule, deleteRule, MAX_VARIATIONS, type RuleInput } from './internal/recurrence.js';
import { findRule, listRules, occurrencesOf, toRuleRecord, type RuleRecord } from './internal/recurrence-records.js';
import { ruleLabel } from './internal/recurrence-missed.js';

const text = z.string().max(100_000);
const ruleShape = {
  channel: idParam.describe('Channel id (integrationList)'),
  content: text.describe('The text: plain text or the HTML of posts'),
  variations: z.array(text).max(MAX_VARIATIONS).optional().describe('Other texts: the occurrences rotate through content and these'),
  settings: z.record(z.string(), z.unknown()).optional().describe("The platform's settings (integrationSchema)"),
  media: z.array(imageSchema).max(20).optional(),
  every: z.enum(recurrenceUnits),
  interval: z.number().int().min(1, 'must be 1 or more (every 1 week, every 2 weeks…)').max(52, 'must be at most 52').optional().describe('Every N days or weeks (default 1)'),
  weekdays: z.array(z.string().max(20)).max(7).optional().describe('mon … sun; weeks default to the start\'s weekday, days to every day'),
  time: z.string().max(10).describe('HH:MM, a wall-clock time of timeZone'),
  timeZone: z.string().max(64).optional().describe("IANA zone (default: the channel's)"),
  startDate: z.string().max(20).optional().describe('YYYY-MM-DD (default: today)'),
  endDate: z.string().max(20).nullable().optional().describe('YYYY-MM-DD, the last day'),
  count: z.number().int().min(1, 'must be 1 or more').max(1000).nullable().optional().describe('Ends after this many occurrences'),
  missed: z.enum(missedPolicies).optional().describe('After downtime: skip every missed occurrence (default), or publish only the latest'),
  paused: z.boolean().optional(),
  allowDuplicate: z.boolean().optional().describe('Its text repeats a recent post on purpose'),
};
const createInput = z.object(ruleShape);
const changeInput = z.object(ruleShape).partial();
/** recurringPostTool's create: its `rule` as POST /recurring-posts takes it. */
const createToolInput = z.object({ rule: createInput });

const occurrenceSchema = z.object({
  sequence: z.number(),
  scheduledFor: z.string(),
  localDate: z.string().describe('The same instant in the rule\'s zone'),
  outcome: z.enum(occurrenceOutcomes).describe('created: a post; missed: skipped after downtime; failed: refused (error says why)'),
  postId: z.string().nullable(),
  state: z.string().nullable().describe('The post\'s state now; null when deleted'),
  error: z.string().nullable(),
});

const ruleSchema = z.object({
  id: z.string(),
  channel: z.string(),
  content: z.string(),
  variations: z.array(z.string()),
  settings: z.record(z.string(), z.unknown()),
  media: z.array(z.object({ id: z.string(), path: z.string(), alt: z.string().optional(), thumbnail: z.string().optional(), type: z.string().optional() })),
  every: z.enum(recurrenceUnits),
  interval: z.number(),
  weekdays: z.array(z.string()),
  time: z.string(),
  timeZone: z.string(),
  startDate: z.string(),
  endDate: z.string().nullable(),
  count: z.number().nullable(),
  missed: z.enum(missedPolicies),
  status: z.enum(['active', 'paused', 'ended']),
  made: z.number().describe('Occurrences so far'),
  nextAt: z.string().nullable().describe('The next occurrence not made yet (UTC)'),
  nextLocal: z.string().nullable(),
  createdAt: z.string(),
});
const ruleWithOccurrences = ruleSchema.extend({ occurrences: z.array(occurrenceSchema).describe('Latest first') });

const writes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

const withOccurrences = async (context: ToolContext, id: string) => {
  const rule = await findRule(context.em, context.caller.organizationId, id);
  return toRuleRecord(rule, await occurrencesOf(context.em, rule)) as RuleRecord & { occurrences: NonNullable<RuleRecord['occurrences']> };
};

export const recurringPostList = defineTool({
  name: 'recurringPostList',
  title: 'List recurring posts',
  description: 'The recurring posts: channel, text, schedule, status and next occurrence.',
  annotations: readOnly,
  mcp: false,
  input: z.object({}),
  output: z.object({ output: z.array(ruleSchema) }),
  rest: { method: 'GET', path: '/recurring-posts', toInput: () => ({}), toResponse: (output) => output.output },
  handler: async (_input, { em, caller }) => ({ output: (await listRules(em, caller.organizationId)).map((rule) => toRuleRecord(rule)) }),
});

export const recurringPostShow = defineTool({
  name: 'recurringPostShow',
  title: 'Show a recurring post',
  description: 'One recurring post with its latest 50 occurrences (their posts and what came of them).',
  annotations: readOnly,
  mcp: false,
  input: z.object({ id: idParam }),
  output: ruleWithOccurrences,
  rest: { method: 'GET', path: '/recurring-posts/:id' },
  handler: async (input, context) => withOccurrences(context, input.id),
});

async function create(context: ToolContext, input: RuleInput) {
  const { rule, occurrences } = await createRule(context, input);
  return { ...toRuleRecord(rule), occurrences };
}

export const createRecurringPost = defineTool({
  name: 'createRecurringPost',
  title: 'Make a recurring post',
  description:
    'POST /recurring-posts: repeats a post every N days or weeks on weekdays at a time of the channel\'s zone (the same local hour across ' +
    'daylight-saving changes), until endDate or count. Its occurrences are ordinary posts made 14 days ahead; answers the rule and them.',
  annotations: writes,
  mcp: false,
  countsAsPostCreation: true,
  acceptsIdempotencyKey: true,
  input: createInput,
  output: ruleWithOccurrences,
  rest: { method: 'POST', path: '/recurring-posts', status: 201 },
  handler: async (input, context) => create(context, input),
});

export const changeRecurringPost = defineTool({
  name: 'changeRecurringPost',
  title: 'Change a recurring post',
  description:
    'PUT /recurring-posts/{id}: changes the fields given; the occurrences not out yet follow (one a person edited keeps the edit). ' +
    'paused true stops it (its waiting occurrences go), false resumes from now.',
  annotations: { ...writes, idempotentHint: true },
  mcp: false,
  input: changeInput.extend({ id: idParam }),
  output: ruleWithOccurrences,
  rest: { method: 'PUT', path: '/recurring-posts/:id' },
  handler: async ({ id, ...changes }, context) => {
    await changeRule(context, await findRule(context.em, context.caller.organizationId, id), changes);
    return withOccurrences(context, id);
  },
});

const keepOccurrences = z.boolean().optional().describe('true: its waiting occurrences stay as posts (default: they are deleted with it)');
const deletionAnswer = deletionOutput.extend({ removedOccurrences: z.number().optional() });

async function remove(context: ToolContext, id: string, keep: boolean | undefined, confirm: boolean | undefined) {
  const rule = await findRule(context.em, context.caller.organizationId, id);
  const summary = `This deletes the recurring post ${ruleLabel(rule)}${keep ? '; its waiting occurrences stay as posts' : ' and its occurrences not published yet'}.`;
  const refused = await confirmDeletion(context, { action: `deleteRecurringPost:${id}:${keep === true}`, tool: 'recurringPostTool', id, summary, wouldDelete: { recurringPost: id, keepOccurrences: keep === true }, confirmed: confirm });
  if (refused) return refused;
  return { id, deleted: true, removedOccurrences: await deleteRule(context, rule, keep === true) };
}

export const deleteRecurringPost = defineTool({
  name: 'deleteRecurringPost',
  title: 'Delete a recurring post',
  description: 'DELETE /recurring-posts/{id}: ends the rule and deletes its occurrences not out yet (keepOccurrences=true keeps them as posts); what went out stays.',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  mcp: false,
  input: z.object({ id: idParam, keepOccurrences }),
  output: deletionAnswer,
  rest: {
    method: 'DELETE',
    path: '/recurring-posts/:id',
    toInput: ({ params, query }) => ({ id: params.id, keepOccurrences: query.keepOccurrences === 'true' ? true : query.keepOccurrences === 'false' ? false : query.keepOccurrences }),
  },
  handler: async (input, context) => remove(context, input.id, input.keepOccurrences, true),
});

const actions = ['list', 'show', 'create', 'change', 'delete'] as const;

/** The one MCP tool: every operation by `action`, the rule's fields in `rule` (listed compactly: the schema is REST's). */
export const recurringPostTool = defineTool({
  name: 'recurringPostTool',
  title: 'Recurring posts',
  description:
    "Posts repeating every N days/weeks at a local time of the channel's zone (DST-safe).",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  mcp: true,
  countsAsPostCreation: 'in-handler',
  input: z.object({ action: z.enum(actions), id: idParam.optional(), rule: changeInput.optional(), keep: keepOccurrences, confirm: confirmInput }),
  listedInput: z.object({
    action: z.enum(actions),
    id: z.string().optional(),
    rule: z.record(z.string(), z.unknown()).optional().describe('channel content variations every:day|week interval weekdays:mon.. time:HH:MM timeZone startDate endDate|count missed:skip|latest paused'),
    keep: z.boolean().optional(),
    confirm: z.boolean().optional(),
  }),
  output: z.object({ rules: z.array(ruleSchema).optional(), rule: ruleWithOccurrences.optional(), message: z.string().optional() }),
  handler: async (input, context) => {
    const needsId = () => {
      if (!input.id) throw invalidInput(`id: ${input.action} needs the recurring post's id.`, { hint: 'action "list" gives the ids.' });
      return input.id;
    };
    if (input.action !== 'create') context.postCreationLimit?.createsNothing();
    switch (input.action) {
      case 'list':
        return { rules: (await listRules(context.em, context.caller.organizationId)).map((rule) => toRuleRecord(rule)) };
      case 'show':
        return { rule: await withOccurrences(context, needsId()) };
      case 'create': {
        const { rule } = parseInput(createToolInput, { rule: input.rule ?? {} }, 'create needs rule.channel, rule.content, rule.every and rule.time.');
        await context.postCreationLimit?.consume();
        return { rule: await create(context, rule) };
      }
      case 'change': {
        const id = needsId();
        await changeRule(context, await findRule(context.em, context.caller.organizationId, id), input.rule ?? {});
        return { rule: await withOccurrences(context, id) };
      }
      case 'delete': {
        const answer: { deleted: boolean; message?: string; removedOccurrences?: number } = await remove(context, needsId(), input.keep, input.confirm);
        return { message: answer.deleted ? `Deleted, with ${answer.removedOccurrences ?? 0} waiting occurrence(s).` : (answer.message ?? 'Nothing was deleted.') };
      }
    }
  },
});

export const recurringPostTools = [recurringPostList, recurringPostShow, createRecurringPost, changeRecurringPost, deleteRecurringPost, recurringPostTool];
