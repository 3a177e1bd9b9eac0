// The channels of the server the bot can post in: text and announcement channels whose permissions, computed as Discord does
// (https://discord.com/developers/docs/topics/permissions#permission-overwrites: @everyone, then the member's roles, then the
// channel's overwrites for @everyone, for the roles and for the member), let the bot view the channel and send messages.
// Reads GET /guilds/{id}/channels, /guilds/{id}/roles, /users/@me and /guilds/{id}/members/{bot id}.
import { z } from 'zod';
import type { ProviderContext } from '../types.js';
import { discord } from './api.js';

const ADMINISTRATOR = 1n << 3n;
const VIEW_CHANNEL = 1n << 10n;
const SEND_MESSAGES = 1n << 11n;

/** Channel types a message can be posted in directly (forums and media channels need a post of their own). */
const POSTABLE = new Map([
  [0, 'text'],
  [5, 'announcement'],
]);

const overwriteSchema = z.object({ id: z.string(), type: z.union([z.literal(0), z.literal(1)]), allow: z.string(), deny: z.string() });
const channelSchema = z.object({
  id: z.string(),
  type: z.number(),
  name: z.string().nullish(),
  position: z.number().default(0),
  permission_overwrites: z.array(overwriteSchema).default([]),
});
const rolesSchema = z.array(z.object({ id: z.string(), permissions: z.string() }));
const memberSchema = z.object({ roles: z.array(z.string()) });
const userSchema = z.object({ id: z.string() });

type Channel = z.infer<typeof channelSchema>;

function channelPermissions(base: bigint, channel: Channel, guildId: string, memberId: string, memberRoles: Set<string>): bigint {
  if ((base & ADMINISTRATOR) === ADMINISTRATOR) return ~0n;
  let permissions = base;
  const overwrites = channel.permission_overwrites;
  const everyone = overwrites.find((overwrite) => overwrite.id === guildId);
  if (everyone) permissions = (permissions & ~BigInt(everyone.deny)) | BigInt(everyone.allow);
  let allow = 0n;
  let deny = 0n;
  for (const overwrite of overwrites) {
    if (overwrite.type !== 0 || !memberRoles.has(overwrite.id)) continue;
    allow |= BigInt(overwrite.allow);
    deny |= BigInt(overwrite.deny);
  }
  permissions = (permissions & ~deny) | allow;
  const member = overwrites.find((overwrite) => overwrite.type === 1 && overwrite.id === memberId);
  if (member) permissions = (permissions & ~BigInt(member.deny)) | BigInt(member.allow);
  return permissions;
}

export async function listChannels(context: ProviderContext): Promise<{ id: string; name: string; type: string }[]> {
  const guildId = context.auth.internalId;
  const guild = `guilds/${encodeURIComponent(guildId)}`;
  const [channels, roles, me] = await Promise.all([
    discord(context, `${guild}/channels`, { schema: z.array(channelSchema), guildLevel: true }),
    discord(context, `${guild}/roles`, { schema: rolesSchema, guildLevel: true }),
    discord(context, 'users/@me', { schema: userSchema }),
  ]);
  const member = await discord(context, `${guild}/members/${encodeURIComponent(me.data.id)}`, { schema: memberSchema, guildLevel: true });
  const memberRoles = new Set(member.data.roles);
  // The @everyone role has the server's id; the member's roles add to it.
  const base = roles.data.filter((role) => role.id === guildId || memberRoles.has(role.id)).reduce((sum, role) => sum | BigInt(role.permissions), 0n);
  const needed = VIEW_CHANNEL | SEND_MESSAGES;
  return channels.data
    .filter((channel) => POSTABLE.has(channel.type))
    .filter((channel) => (channelPermissions(base, channel, guildId, me.data.id, memberRoles) & needed) === needed)
    .sort((a, b) => a.position - b.position)
    .map((channel) => ({ id: channel.id, name: channel.name ?? channel.id, type: POSTABLE.get(channel.type)! }));
}
