// MCP prompts that encode good practice: each one's text tells the agent which tools and resources to use, in which order.
import type { Handle } from './surface.js';
import { invalidParams } from './errors.js';

/** What completion/complete offers for an argument (completions.ts). */
export type ArgumentValues = 'channels' | 'platform' | 'days' | 'date' | 'none';

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  values: ArgumentValues;
}

export interface PromptDefinition {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  text: (args: Record<string, string>, now: Date) => string;
}

const day = (date: Date) => date.toISOString().slice(0, 10);
const nextMonday = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + (((8 - now.getUTCDay()) % 7) || 7)));
const channelsPhrase = (channels: string | undefined) =>
  channels?.trim() ? `the channels ${channels.split(',').map((id) => id.trim()).filter(Boolean).join(', ')}` : 'every active channel';
const days = (value: string | undefined, fallback: number) => {
  const parsed = Number.parseInt(value ?? '', 10);
  return Number.isInteger(parsed) && parsed >= 1 && parsed <= 365 ? parsed : fallback;
};

const APPROVAL_NOTE =
  'If an answer item carries approval.status "pending", this organization reviews what agents post: tell the user the posts wait for an owner\'s approval in the Herald console, ' +
  'subscribe to herald://posts/{postId} (resources/subscribe) and, when notifications/resources/updated arrives, read it again: approval.status says approved or rejected (with the reason; a rejected post is a draft you may fix with updatePost).';

export const PROMPTS: PromptDefinition[] = [
  {
    name: 'plan-week',
    title: 'Plan a week of posts',
    description: 'Plans and schedules a week of posts for a set of channels, within each platform\'s rules, without repeating what is already scheduled.',
    arguments: [
      { name: 'brief', description: 'What the week is about: topics, announcements, tone, links', required: true, values: 'none' },
      { name: 'channels', description: 'Channel ids separated by commas (default: every active channel)', required: false, values: 'channels' },
      { name: 'start', description: 'First day, YYYY-MM-DD in UTC (default: next Monday)', required: false, values: 'date' },
    ],
    text: (args, now) => {
      const start = /^\d{4}-\d{2}-\d{2}$/.test(args.start ?? '') ? args.start : day(nextMonday(now));
      const end = day(new Date(Date.parse(`${start}T00:00:00Z`) + 7 * 86_400_000));
      return [
        `Plan a week of social posts for ${channelsPhrase(args.channels)}, from ${start} to ${end} (UTC), about:`,
        '',
        args.brief,
        '',
        'Work in this order:',
        '1. Read the resource herald://integrations (or call integrationList). Keep the channels asked for; skip any whose state is not "active" and tell the user which need attention (reconnect in the console).',
        '2. For each platform among them, read herald://platforms/{identifier} (or call integrationSchema with the platform): note maxLength (counted on the converted text), chain ("thread", "comments" or "none"), rules and the settings schema.',
        `3. Call postsListTool with startDate ${start}T00:00:00Z and endDate ${end}T00:00:00Z to see what is already planned. Do not repeat it: Herald refuses a text that (nearly) repeats a post on the same channel within a few days.`,
        '4. Call findSlotTool for each channel for its next free posting time, and spread the posts over the week (one or two a day per channel at most).',
        '5. Write each post for its platform: within maxLength, HTML with one <p> per line (strong for bold, u for underline, never both), a thread as several postsAndComments items on thread platforms, a post and its comments on comment platforms, one item where chain is "none". Media: uploadFromUrlTool (or generateImageTool) first, then the returned path as an attachment.',
        '6. Call validatePostTool with the posts, then show the plan to the user as a table (channel, local date in timeZoneTool\'s zone, visibleText) and wait for their go-ahead.',
        '7. Call schedulePostTool once with every post (type "schedule", each with its integrationId and date) and a new idempotencyKey. An answer {errors: "..."} means nothing was created: fix the named posts and call again; after a time-out call again with the same key.',
        `8. ${APPROVAL_NOTE}`,
      ].join('\n');
    },
  },
  {
    name: 'article-to-thread',
    title: 'Turn an article into a thread per platform',
    description: 'Writes one post or thread per platform from an article URL (hook, key points, link), with its lead image, and schedules them.',
    arguments: [
      { name: 'url', description: 'The article\'s URL', required: true, values: 'none' },
      { name: 'channels', description: 'Channel ids separated by commas (default: every active channel)', required: false, values: 'channels' },
      { name: 'date', description: 'When to publish, UTC ISO 8601 (default: each channel\'s next free slot)', required: false, values: 'date' },
    ],
    text: (args) =>
      [
        `Turn the article at ${args.url} into one post or thread per platform for ${channelsPhrase(args.channels)}.`,
        '',
        '1. Read the article yourself (Herald does not fetch articles for you): title, main points, the link to use, its lead image if any.',
        '2. Read herald://integrations and keep the chosen channels. For each platform read herald://platforms/{identifier}: maxLength, chain ("thread": each item is a post replying to the previous one; "comments": the first item is the post, the others comments; "none": a single item), rules and settings.',
        '3. If the article has a lead image and a platform takes pictures, call uploadFromUrlTool with the image URL (send a progress token for a large file) and attach the returned path to the first item.',
        `4. Write per platform: a first item that makes people want to read, then the key points, and the link ${args.url} in the last item. Every item within maxLength (links count). Article platforms (medium, devto, hashnode, wordpress) take the whole piece as one Markdown-like item with a title setting.`,
        args.date ? `5. Publish at ${args.date}.` : '5. Call findSlotTool for each channel and use its date.',
        '6. Call schedulePostTool with one socialPost item per channel. On {errors}, fix the named channel entries and call again. Do not set allowDuplicate unless the user wants to repeat an earlier post on purpose.',
        `7. Report each postId with its channel and date. ${APPROVAL_NOTE}`,
      ].join('\n'),
  },
  {
    name: 'weekly-analytics-report',
    title: 'Report last week\'s analytics',
    description: 'Reads channel and post analytics for a period and writes a short report with suggestions.',
    arguments: [
      { name: 'days', description: 'Days to look back (default 7)', required: false, values: 'days' },
      { name: 'channels', description: 'Channel ids separated by commas (default: every channel)', required: false, values: 'channels' },
    ],
    text: (args, now) => {
      const period = days(args.days, 7);
      const start = new Date(now.getTime() - period * 86_400_000).toISOString();
      return [
        `Report how the last ${period} days went for ${channelsPhrase(args.channels)}.`,
        '',
        '1. Read herald://integrations (or call integrationList) for the channels and their platforms.',
        `2. Call analyticsOverviewTool with date ${period}${args.channels?.trim() ? ' and those channels' : ''} (send a progress token: it asks each platform in turn). A channel with no metrics comes with a note saying why (no analytics on the platform, needs reconnecting): say so rather than guessing.`,
        `3. Call postsListTool with startDate ${start} and endDate ${now.toISOString()}; for each post whose publishStatus is "published", call postAnalyticsTool with its id.`,
        '4. Summarise per channel: followers and reach (percentageChange), how many posts went out, the best and the weakest post with their links (releaseURL), and any post that failed (publishStatus "failed" or "partial").',
        '5. End with three concrete suggestions for next week. Do not schedule anything unless the user asks (the plan-week prompt does that).',
      ].join('\n');
    },
  },
  {
    name: 'recover-failed-posts',
    title: 'Recover failed posts',
    description: 'Finds posts that failed or went out only in part, explains why, fixes what can be fixed and retries them safely.',
    arguments: [{ name: 'days', description: 'Days to look back (default 7)', required: false, values: 'days' }],
    text: (args, now) => {
      const period = days(args.days, 7);
      const start = new Date(now.getTime() - period * 86_400_000).toISOString();
      return [
        `Find and recover the posts that failed in the last ${period} days.`,
        '',
        `1. Call postsListTool with startDate ${start} and endDate ${now.toISOString()}; keep the posts whose publishStatus is "failed" or "partial". Also read notificationListTool for the failure notices.`,
        '2. For each one read herald://posts/{id}: the error of each item, what went out (items with a releaseURL) and what did not.',
        '3. Decide by cause:',
        '   - the channel "needs to be reconnected" (or a token error): read herald://integrations/{channelId}; the user must reconnect the channel in the Herald console first. Do not retry before.',
        '   - the platform refused the content (too long, media type or size, a setting): fix it with updatePost (the same validation as creation), then retry.',
        '   - "Could not confirm whether ... published": ask the user to check the account first; retrying could publish it twice.',
        '   - a temporary failure that gave up (rate limit, platform down): retry as is.',
        '4. Retry with changePostStatus {id, status: "schedule"}: it resumes at the first item that did not go out and never sends again what went out. The answer may be AWAITING_APPROVAL under the approval gate: tell the user.',
        '5. Subscribe to herald://posts/{id} of each retried post; when notifications/resources/updated arrives, read it again and report the outcome.',
        '6. Summarise: recovered, waiting for the user (reconnect, check the account), given up and why.',
      ].join('\n');
    },
  },
];

export function registerPrompts(handle: Handle, now: () => Date): void {
  handle('prompts/list', async () => ({
    prompts: PROMPTS.map((prompt) => ({
      name: prompt.name,
      title: prompt.title,
      description: prompt.description,
      arguments: prompt.arguments.map(({ name, description, required }) => ({ name, description, required })),
    })),
  }));
  handle('prompts/get', async (params: { name: string; arguments?: Record<string, string> }) => {
    const prompt = PROMPTS.find((candidate) => candidate.name === params.name);
    if (!prompt) throw invalidParams(`Unknown prompt "${params.name}": use one of ${PROMPTS.map((item) => item.name).join(', ')}.`);
    const args = params.arguments ?? {};
    const missing = prompt.arguments.filter((argument) => argument.required && !args[argument.name]?.trim()).map((argument) => argument.name);
    if (missing.length > 0) throw invalidParams(`Prompt "${prompt.name}" needs the argument${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`);
    return {
      description: prompt.description,
      messages: [{ role: 'user' as const, content: { type: 'text' as const, text: prompt.text(args, now()) } }],
    };
  });
}
