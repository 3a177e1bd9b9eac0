// The bodies Herald sends to Discord's Create Message and Start Thread from Message, and the lookup of a message whose answer
// was lost. Checked at type level against discord-api-types (test/contracts/chat-bodies.ts).
// References (read 2026-11): https://discord.com/developers/docs/resources/message#create-message (content ≤ 2000, nonce ≤ 25
// characters with enforce_nonce: "if another message was created by the same author with the same nonce [in the past few
// minutes], that message will be returned and no new message will be created"; attachments[].description ≤ 1024),
// .../resources/message#allowed-mentions-object (parse: "roles" | "users" | "everyone", users/roles ≤ 100 ids each, `parse`
// users with a `users` list is refused; an empty parse notifies no one), .../reference#message-formatting (<@id>, <@!id>,
// <@&role>), .../resources/message#get-channel-messages (after, limit 1-100, newest first; needs Read Message History),
// .../reference#snowflakes (ms since 2015-01-01 shifted left 22 bits), .../resources/channel#start-thread-from-message (name 1-100).
import { z } from 'zod';
import type { ProviderContext, PublishItem, StepAttempt } from '../types.js';
import { couldNotConfirm, earliestCreation, identify } from '../recovery.js';
import { defuseMarkdown } from '../safe-markdown.js';
import { discord } from './api.js';

const DISCORD_EPOCH = 1_420_070_400_000n;
const MAX_MENTIONS = 100;
const PAGE = 100;

/** Ids of the users (<@id>, <@!id>) and roles (<@&id>) the text mentions in Discord syntax: the mentions the author meant. */
function mentioned(text: string, pattern: RegExp): string[] {
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1]))].slice(0, MAX_MENTIONS);
}

/**
 * Who the message may notify. Only what the author wrote in Discord syntax notifies; "@everyone" and "@here" notify the whole
 * server only when the post's notifyEveryone setting says so (otherwise they show as text). Without an allowed_mentions
 * object Discord would parse every mention in the content, the mass ones included.
 */
export function allowedMentions(text: string, notifyEveryone: boolean) {
  const users = mentioned(text, /<@!?(\d{1,20})>/g);
  const roles = mentioned(text, /<@&(\d{1,20})>/g);
  return {
    parse: notifyEveryone ? ['everyone' as const] : [],
    ...(users.length > 0 ? { users } : {}),
    ...(roles.length > 0 ? { roles } : {}),
  };
}

/** The JSON body (or `payload_json`) of Create Message: content made safe, the post id as an enforced nonce, the mentions allowed. */
export function messageBody(item: Pick<PublishItem, 'postId' | 'text'>, notifyEveryone: boolean) {
  const content = defuseMarkdown(item.text);
  return { content, nonce: item.postId.slice(0, 25), enforce_nonce: true, allowed_mentions: allowedMentions(content, notifyEveryone) };
}

/**
 * The body with the attachments that describe the `files[n]` parts of a multipart message. Each id is `n` as a string: Discord's
 * OpenAPI description types it as a snowflake (a string of digits), though the reference page's example writes a number.
 */
export function withAttachments(body: ReturnType<typeof messageBody>, attachments: { id: number; filename: string; description?: string }[]) {
  return { ...body, attachments: attachments.map((attachment) => ({ id: String(attachment.id), filename: attachment.filename, ...(attachment.description ? { description: attachment.description.slice(0, 1024) } : {}) })) };
}

/** Start Thread from Message: the thread keeps a week without activity before it archives. */
export const threadBody = (name: string) => ({ name, auto_archive_duration: 10080 as const });

/** The smallest snowflake of a moment: messages created at or after it have larger ids. */
export function snowflakeAt(time: number): string {
  return String((BigInt(Math.max(0, Math.floor(time))) - DISCORD_EPOCH) << 22n);
}

/** Get Channel Messages from a snowflake on, a page at a time. */
export const messagesQuery = (after: string) => ({ after, limit: PAGE });

const listedSchema = z.array(
  z.looseObject({ id: z.string(), content: z.string(), author: z.looseObject({ id: z.string() }), attachments: z.array(z.unknown()).default([]) }),
);

/** When a snowflake was made (epoch milliseconds). */
export const snowflakeTime = (id: string) => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);

/**
 * After an interrupted Create Message: the bot's own message with this content and as many attachments, created since the
 * call began (its id is at least the snowflake of that moment, less the clock skew). Older messages of the same text are
 * never taken for it, and two that could be it (one inside the skew allowance) are not guessed between: the item stops with
 * "could not confirm" (issue 31; providers/recovery.ts identify). Every message since then is read; when none matches,
 * nothing was created and the call is made again (with the same nonce, which Discord answers with the first message if it
 * did arrive meanwhile).
 */
export async function findMessage(context: ProviderContext, channelId: string, item: PublishItem, attempt: StepAttempt): Promise<string | undefined> {
  const { content } = messageBody(item, false);
  const me = (await discord(context, 'users/@me', { schema: z.object({ id: z.string() }) })).data.id;
  let after = snowflakeAt(earliestCreation(attempt.startedAt));
  const candidates = [];
  for (let page = 0; page < 10; page++) {
    const { data } = await discord(context, `channels/${encodeURIComponent(channelId)}/messages`, { query: messagesQuery(after), schema: listedSchema });
    const ours = data.filter((message) => message.author.id === me && message.content === content && message.attachments.length === item.media.length);
    candidates.push(...ours.map((message) => ({ item: message.id, created: snowflakeTime(message.id), whole: true })));
    if (data.length < PAGE) return identify(attempt, candidates, 'Discord', 'messages', 'the channel');
    after = data.reduce((last, message) => (BigInt(message.id) > BigInt(last) ? message.id : last), after);
  }
  throw couldNotConfirm('Discord', 'more than 1000 messages were posted in the channel since the attempt, and none of those read is this one', 'the channel');
}
