// The request bodies the chat providers build, checked at type level against each platform's official or reference SDK types
// (issue 22). `npx tsc --noEmit` fails when a body has a field the SDK does not declare or a value of another type; the
// `@ts-expect-error` lines prove that the check bites. Pinned (package.json, exact versions, read 2026-11):
//   Discord   discord-api-types 0.38.57 (API v10; maintained with Discord's docs by the discord.js team)
//   Slack     @slack/web-api 8.2.0 and @slack/types 3.2.0 (Slack's official Node SDK)
//   Telegram  @grammyjs/types 5.0.0 (the Bot API's types as grammY publishes them)
//   Whop      @whop/sdk 0.0.42 (Whop's official SDK, generated from its OpenAPI)
// Platforms with no machine-readable contract (Kick, Twitch, Skool, Moltbook) keep documented fakes, see their headers.
import type { RESTGetAPIChannelMessagesQuery, RESTPostAPIChannelMessageJSONBody, RESTPostAPIChannelMessagesThreadsJSONBody } from 'discord-api-types/v10';
import type { ChatPostMessageArguments, ConversationsHistoryArguments, ConversationsRepliesArguments } from '@slack/web-api';
import type { SectionBlock } from '@slack/types';
import type { InputMediaPhoto, InputMediaVideo, Opts } from '@grammyjs/types';
import type { ForumPostCreateParams } from '@whop/sdk/resources/forum-posts.js';
import type { FileCreateParams } from '@whop/sdk/resources/files.js';
import { messageBody, messagesQuery, threadBody, withAttachments } from '../../providers/discord/message.js';
import { sectionBlocks } from '../../providers/slack/blocks.js';
import { historyArguments, postMessageArguments } from '../../providers/slack/index.js';
import { inputMedia, messageParams } from '../../providers/telegram.js';
import { forumPostBody, fileBody } from '../../providers/whop.js';
import type { FitsExactly, Wire } from './exact.js';


// Discord: Create Message (JSON and payload_json), Start Thread from Message, Get Channel Messages.
type DiscordMessage = Wire<RESTPostAPIChannelMessageJSONBody>;
export const discordMessage: FitsExactly<ReturnType<typeof messageBody>, DiscordMessage> = true;
export const discordAttachments: FitsExactly<ReturnType<typeof withAttachments>, DiscordMessage> = true;
export const discordThread: FitsExactly<ReturnType<typeof threadBody>, Wire<RESTPostAPIChannelMessagesThreadsJSONBody>> = true;
export const discordLookup: FitsExactly<ReturnType<typeof messagesQuery>, Wire<RESTGetAPIChannelMessagesQuery>> = true;
// @ts-expect-error a misspelt field (allowed_mention) is caught
export const discordMisspelt: FitsExactly<ReturnType<typeof messageBody> & { allowed_mention: object }, DiscordMessage> = true;
// @ts-expect-error a parse type Discord does not have is caught
export const discordBadParse: FitsExactly<{ allowed_mentions: { parse: 'here'[] } }, DiscordMessage> = true;

// Slack: chat.postMessage (its blocks against the section block itself, since the arguments also take any `{type}` block),
// conversations.history and conversations.replies.
export const slackSection: FitsExactly<ReturnType<typeof sectionBlocks>[number], SectionBlock> = true;
export const slackPost: FitsExactly<ReturnType<typeof postMessageArguments>, ChatPostMessageArguments> = true;
export const slackHistory: FitsExactly<ReturnType<typeof historyArguments>, ConversationsHistoryArguments | ConversationsRepliesArguments> = true;
// @ts-expect-error a field chat.postMessage does not take (thread_id) is caught
export const slackMisspelt: FitsExactly<ReturnType<typeof postMessageArguments> & { thread_id: string }, ChatPostMessageArguments> = true;
// @ts-expect-error a section text object of an unknown type is caught
export const slackBadBlock: FitsExactly<{ type: 'section'; text: { type: 'html'; text: string } }, SectionBlock> = true;

// Telegram: sendMessage, and the album items of sendMediaGroup (photo and video).
export const telegramMessage: FitsExactly<ReturnType<typeof messageParams>, Opts<never>['sendMessage']> = true;
export const telegramAlbum: FitsExactly<ReturnType<typeof inputMedia>, InputMediaPhoto<never> | InputMediaVideo<never>> = true;
// @ts-expect-error reply_to (not reply_parameters) is caught
export const telegramMisspelt: FitsExactly<ReturnType<typeof messageParams> & { reply_to: number }, Opts<never>['sendMessage']> = true;

// Whop: Create Forum Post and Create File.
export const whopPost: FitsExactly<ReturnType<typeof forumPostBody>, ForumPostCreateParams> = true;
export const whopFile: FitsExactly<ReturnType<typeof fileBody>, FileCreateParams> = true;
// @ts-expect-error experienceId (camel case) is caught
export const whopMisspelt: FitsExactly<{ experienceId: string; content: string }, ForumPostCreateParams> = true;

