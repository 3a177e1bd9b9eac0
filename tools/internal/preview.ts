// The dry run of a create request (POST /posts/validate, validatePostTool): per channel and per item, what the platform would
// receive and whether it fits, from the one validation of create-posts.ts (checkPlan, measure, the providers' own rules).
// Nothing is stored.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { PostSchema, type Integration } from '../../src/db/entities.js';
import type { Provider } from '../../providers/types.js';
import type { Services } from '../types.js';
import { checkedPlan, contentAsSent, entryMaxLength, mediaKind, measure, planOptions, problemsText, settingsProblem, type LibraryFacts, type PlanEntry, type PostPlan } from './create-posts.js';
import { entryWarnings } from './entry-warnings.js';
import { findFreeSlot } from './find-slot.js';
import { providerOf } from './integrations.js';

const mediaPreviewSchema = z.object({
  id: z.string(),
  path: z.string(),
  kind: z.enum(['image', 'video']),
  source: z.enum(['library', 'url']).describe('library: a file of the media library; url: fetched from your URL when published'),
  type: z.string().optional(),
  size: z.number().optional(),
  width: z.number().optional(),
  height: z.number().optional(),
  accepted: z.boolean(),
  rule: z.string().optional().describe('Why the platform refuses this file'),
  alt: z.string().optional().describe('The alt text sent with the picture'),
  thumbnail: z.string().optional().describe("The video's poster (cover picture)"),
});

export const postPreviewSchema = z.object({
  valid: z.boolean().describe('true when schedulePostTool / POST /posts would accept the request as it is'),
  errors: z.string().optional().describe('The problems as schedulePostTool would answer them: "<channel>: <problem>; ..."'),
  entries: z.array(
    z.object({
      integrationId: z.string(),
      channel: z.string(),
      platform: z.string().optional(),
      valid: z.boolean(),
      problem: z.string().optional().describe('The first problem of this entry, with the fix'),
      state: z.enum(['QUEUE', 'DRAFT']).describe('QUEUE: it would be published at slot.date; DRAFT: kept unpublished'),
      slot: z.object({
        date: z.string().describe('When it would be published (now for type "now")'),
        takenBy: z.array(z.string()).describe('Posts of this channel already at that minute'),
        nextFreeSlot: z.string().optional().describe("The channel's next free posting time (findSlotTool)"),
      }),
      maxLength: z.number().optional(),
      lengthMethod: z.string().optional().describe('characters, twitter (X weighted length), graphemes, or bytes (UTF-8: YouTube)'),
      settings: z.object({ valid: z.boolean(), problem: z.string().optional(), values: z.record(z.string(), z.unknown()) }),
      items: z.array(
        z.object({
          position: z.number(),
          text: z.string().describe("The text exactly as Herald hands it to the platform (HTML for Telegram and X's connector; short links shown with a placeholder code)"),
          visibleText: z.string().describe('The text as readers see it, on which the length is counted (what X posts)'),
          length: z.number().describe("Length in the platform's own counting"),
          withinLimit: z.boolean(),
          formatting: z.array(z.string()).optional().describe('Formatting of the text this platform cannot show, and what is sent instead'),
          media: z.array(mediaPreviewSchema),
        }),
      ),
      warnings: z.array(z.string()),
    }),
  ),
});
export type PostPreview = z.infer<typeof postPreviewSchema>;
type EntryPreview = PostPreview['entries'][number];

/**
 * Which media of an item the platform's own rules refuse: the item's text with each file alone, compared with the text
 * alone (a rule about the text or about a missing attachment is not the file's fault).
 */
function mediaPreview(provider: Provider, channel: Record<string, unknown>, entry: PlanEntry, itemIndex: number, text: string, facts: LibraryFacts, problem: string | undefined) {
  const item = entry.items[itemIndex];
  const withoutMedia = provider.validate?.([{ text, media: [] }], entry.settings, channel);
  return item.media.map((media) => {
    const measured = facts(media);
    const described = { kind: mediaKind(media), url: media.path, ...measured };
    const alone = provider.validate?.([{ text, media: [described] }], entry.settings, channel);
    const named = problem?.includes(`"${media.id}"`) ? problem : undefined;
    const rule = named ?? (alone && alone !== withoutMedia ? alone : undefined);
    return {
      id: media.id,
      path: media.path,
      kind: described.kind,
      source: media.type ? ('library' as const) : ('url' as const),
      ...measured,
      accepted: rule === undefined,
      ...(rule ? { rule } : {}),
      ...(media.alt ? { alt: media.alt } : {}),
      ...(media.thumbnail ? { thumbnail: media.thumbnail } : {}),
    };
  });
}

// What each platform does with the social set's formatting it cannot show (content.ts's conversions), said per tag.
const PLAIN_FORMATTING: Record<string, string> = {
  strong: 'shows no bold: sent as Unicode bold letters (𝗯𝗼𝗹𝗱, 2 characters each; screen readers may spell them out)',
  u: 'shows no underline: sent with a combining underline (U+0332) after each character, each counted',
  h: 'shows no headings: sent as plain lines',
  ul: 'shows no lists: each item sent as a line starting with "- "',
  a: 'shows no link texts: a link is sent as its text followed by its address',
};
const TELEGRAM_FORMATTING: Record<string, string> = { h: PLAIN_FORMATTING.h, ul: PLAIN_FORMATTING.ul };

/**
 * The formatting of an item's content (the social set, as sanitized) that its platform cannot show, named with what is
 * sent instead ("LinkedIn shows no bold: ..."), so a preview says it rather than dropping it silently.
 */
export function formattingNotes(provider: Provider, content: string): string[] {
  // Markdown and HTML editors show the whole social set; X's connector takes HTML but posts it as plain text (render).
  const table = provider.identifier === 'telegram' ? TELEGRAM_FORMATTING : provider.editor === 'plain' || provider.render ? PLAIN_FORMATTING : {};
  const tags = new Set([...content.matchAll(/<(strong|b|u|h[1-3]|ul|li|a)\b([^>]*)>/gi)].filter((match) => match[1].toLowerCase() !== 'a' || /href=/i.test(match[2])).map((match) => {
    const tag = match[1].toLowerCase();
    return tag === 'b' ? 'strong' : tag === 'li' ? 'ul' : tag.startsWith('h') ? 'h' : tag;
  }));
  return Object.keys(table).filter((tag) => tags.has(tag)).map((tag) => `${provider.name} ${table[tag]}`);
}

async function slotOf(services: Services, em: EntityManager, integration: Integration | undefined, date: Date): Promise<EntryPreview['slot']> {
  if (!integration) return { date: date.toISOString(), takenBy: [] };
  const minute = Math.floor(date.getTime() / 60_000) * 60_000;
  const taken = await em.find(
    PostSchema,
    { organizationId: integration.organizationId, integrationId: integration.id, position: 0, deletedAt: null, publishDate: { $gte: new Date(minute), $lt: new Date(minute + 60_000) } },
    { fields: ['id'] },
  );
  const free = await findFreeSlot(em, integration, services.now(), services.config.defaultPostingTimes);
  return { date: date.toISOString(), takenBy: taken.map((post) => post.id), ...(free ? { nextFreeSlot: free.toISOString() } : {}) };
}

export async function previewPlan(services: Services, em: EntityManager, organizationId: string, plan: PostPlan): Promise<PostPreview> {
  const options = planOptions(services);
  // The create's own read and checks, the duplicate guard included: what is valid here goes through schedulePostTool.
  const { check, duplicates, now } = await checkedPlan(services, em, organizationId, plan);
  const entries: EntryPreview[] = [];
  // Each entry as it would be created: with its channel's signature (checkPlan's withSignature).
  for (const [index, entry] of check.entries.entries()) {
    const problem = check.entryProblems[index] ?? duplicates.get(index);
    const integration = check.integrations.get(entry.integrationId);
    const date = entry.type === 'now' ? now : (entry.date ?? now);
    const base = {
      integrationId: entry.integrationId,
      channel: integration?.name ?? entry.integrationId,
      valid: problem === undefined,
      ...(problem ? { problem: problem.message } : {}),
      state: entry.type === 'draft' ? ('DRAFT' as const) : ('QUEUE' as const),
      slot: await slotOf(services, em, integration, date),
    };
    if (!integration) {
      entries.push({ ...base, settings: { valid: true, values: entry.settings }, items: [], warnings: [] });
      continue;
    }
    const provider = providerOf(integration);
    const maxLength = entryMaxLength(provider, integration, entry);
    const parsedSettings = provider.settings?.safeParse(entry.settings);
    const settingsIssue = parsedSettings && !parsedSettings.success ? parsedSettings.error.issues[0] : undefined;
    const items = entry.items.map((item, position) => {
      const sent = contentAsSent(provider, entry, item.content, options);
      const { text, length, visible } = measure(provider, sent);
      const formatting = formattingNotes(provider, sent);
      return { position, text, visibleText: visible, length, withinLimit: length <= maxLength, ...(formatting.length ? { formatting } : {}), media: mediaPreview(provider, integration.additionalSettings, entry, position, text, check.facts, problem?.message) };
    });
    const warnings = entryWarnings(services, provider, integration, entry, date);
    if (entry.type !== 'now' && entry.date && entry.date.getTime() < now.getTime() && entry.type === 'schedule') warnings.push('The date is in the past: the post would be published at once.');
    if (base.slot.takenBy.length > 0) warnings.push(`This channel already has ${base.slot.takenBy.length === 1 ? 'a post' : `${base.slot.takenBy.length} posts`} at that minute.`);
    entries.push({
      ...base,
      platform: provider.identifier,
      maxLength,
      lengthMethod: provider.lengthMethod,
      settings: { valid: !settingsIssue, ...(settingsIssue ? { problem: settingsProblem(settingsIssue, entry.settings) } : {}), values: entry.settings },
      items,
      warnings,
    });
  }
  const problems = [...check.problems, ...duplicates.values()];
  const errors = problemsText(problems);
  return { valid: problems.length === 0, ...(errors ? { errors } : {}), entries };
}
