// Discord REST plumbing: every call is made as the app's bot (`Authorization: Bot <DISCORD_BOT_TOKEN>`) on the versioned API
// (`apiVersion`), and Discord's error body `{code, message, errors}` becomes what the core acts on.
// References: https://discord.com/developers/docs/reference (authentication, error messages, uploading files),
// https://discord.com/developers/docs/topics/opcodes-and-status-codes#json (JSON error codes),
// https://discord.com/developers/docs/topics/rate-limits (429 `{retry_after}` and X-RateLimit-Reset-After).
import { z } from 'zod';
import type { PlatformHttpErrorInit, PlatformRequest } from '../../src/lib/platform-http.js';
import type { ProviderContext } from '../types.js';
import { permanent } from '../shared.js';

export const DISCORD_CODES = {
  unknownChannel: 10003,
  unknownGuild: 10004,
  unknownMessage: 10008,
  missingAccess: 50001,
  missingPermissions: 50013,
  entityTooLarge: 40005,
  invalidFormBody: 50035,
  threadAlreadyCreated: 160004,
} as const;

const errorSchema = z.object({ code: z.number().optional(), message: z.string().optional(), errors: z.unknown().optional(), retry_after: z.number().optional() });

/** The first field error of a 50035 body (`{errors: {content: {_errors: [{message}]}}}`), with its path. */
function fieldError(errors: unknown, path: string[] = []): string | undefined {
  if (!errors || typeof errors !== 'object') return undefined;
  for (const [key, value] of Object.entries(errors as Record<string, unknown>)) {
    if (key === '_errors' && Array.isArray(value) && value[0]?.message) return `${path.join('.') || 'body'}: ${value[0].message}`;
    const found = fieldError(value, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

export function discordError(body: string): z.infer<typeof errorSchema> {
  try {
    return errorSchema.catch({}).parse(JSON.parse(body));
  } catch {
    return {};
  }
}

/**
 * `guildLevel`: the call reads the server itself, so "unknown server" or "missing access" means the bot was removed from it and
 * the channel must be reconnected (status 401). On a channel the same answers are the channel's own permissions.
 */
function classifier(guildLevel: boolean) {
  return (status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> => {
    const error = discordError(body);
    const said = error.message ?? `HTTP ${status}`;
    if (status === 429) {
      const wait = error.retry_after ?? Number(headers.get('x-ratelimit-reset-after') ?? headers.get('retry-after'));
      return { retryAfterSeconds: Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : undefined, message: `Discord's rate limit was reached (${said})` };
    }
    // A refused bot token is the deployment's setting, not this channel's: reconnecting would not help, so it is not a 401.
    if (status === 401) return { status: 400, retryable: false, message: 'Discord refused the bot token: check DISCORD_BOT_TOKEN (Developer Portal → Bot)' };
    switch (error.code) {
      case DISCORD_CODES.unknownGuild:
      case DISCORD_CODES.missingAccess:
        if (guildLevel) return { status: 401, retryable: false, message: `the bot is no longer on this Discord server (${said}): reconnect the channel to add it again` };
        if (error.code === DISCORD_CODES.missingAccess) return { retryable: false, message: "the bot cannot see this channel (Missing Access): give its role View Channel there, pick another channel from listChannels, or reconnect the channel if the bot was removed from the server" };
        break;
      case DISCORD_CODES.unknownChannel:
        return { retryable: false, message: 'the channel does not exist (Unknown Channel): pick one from listChannels' };
      case DISCORD_CODES.missingPermissions:
        return { retryable: false, message: "the bot lacks a permission in this channel (Missing Permissions): give its role Send Messages, Attach Files, Create Public Threads and Send Messages in Threads" };
      case DISCORD_CODES.entityTooLarge:
        return { retryable: false, message: 'the attachments are larger than this server takes (10 MiB a file unless the server is boosted): send smaller files' };
      case DISCORD_CODES.invalidFormBody:
        return { retryable: false, message: `Discord refused the message (${fieldError(error.errors) ?? said})` };
    }
    if (status === 413) return { retryable: false, message: 'the attachments are larger than Discord takes: send smaller files' };
    return { message: error.code ? `${said} (code ${error.code})` : said };
  };
}

export function botToken(context: Pick<ProviderContext, 'client'>): string {
  const token = context.client?.botToken;
  if (!token) throw permanent("Discord posts as the app's bot, and this Herald has no bot token: set DISCORD_BOT_TOKEN (Developer Portal → Bot → Reset Token)");
  return token;
}

/** A call as the bot on `{api}/api/{apiVersion}/{path}`. */
export function discord<T>(
  context: Pick<ProviderContext, 'fetch' | 'endpoints' | 'client'>,
  path: string,
  request: Omit<PlatformRequest<T>, 'url' | 'classify'> & { guildLevel?: boolean } = {},
) {
  const { guildLevel = false, ...rest } = request;
  return context.fetch<T>({
    ...rest,
    url: `${context.endpoints.api}/api/${context.endpoints.apiVersion}/${path}`,
    headers: { authorization: `Bot ${botToken(context)}`, ...rest.headers },
    classify: classifier(guildLevel),
  });
}
