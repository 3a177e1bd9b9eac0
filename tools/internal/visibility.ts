// The one place that answers which channels a caller may see (issue 23, DESIGN §9): a key limited to channels (or
// customers) gets answers as if the other channels did not exist (404 not_found, exactly like a missing id).
//
// The runner (and the MCP resources) run each call inside `asCaller`; the lookups every tool goes through
// (findIntegration, listIntegrations, findPost, listPosts, the create path, media, notifications, analytics) ask
// `canSeeChannel` / `visibleChannelIds` here, so a new tool built on them is limited without knowing of it. Background
// jobs run outside any caller and see everything.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Caller } from '../types.js';

interface Visibility {
  /** Undefined: every channel of the organization. */
  channels?: ReadonlySet<string>;
  /** `credentialRef` of the caller (the uploader of media it creates). */
  credential: string;
  /** The caller itself (who an audit event names, tools/internal/audit.ts). */
  caller: Caller;
}

const store = new AsyncLocalStorage<Visibility>();

const refOf = (caller: Caller) => (caller.credentialId.startsWith(`${caller.credentialKind}:`) ? caller.credentialId : `${caller.credentialKind}:${caller.credentialId}`);

/** Runs `run` as `caller`: every lookup inside sees only the caller's channels. */
export function asCaller<T>(caller: Caller, run: () => Promise<T>): Promise<T> {
  return store.run({ channels: caller.channelIds ? new Set(caller.channelIds) : undefined, credential: refOf(caller), caller }, run);
}

/** The channel ids the current caller may see, or undefined for every channel (also outside any call: jobs). */
export function visibleChannelIds(): ReadonlySet<string> | undefined {
  return store.getStore()?.channels;
}

export function canSeeChannel(integrationId: string): boolean {
  const channels = visibleChannelIds();
  return !channels || channels.has(integrationId);
}

/** A MikroORM filter on `integrationId` for the current caller ({} when unlimited). */
export function channelFilter(): { integrationId?: { $in: string[] } } {
  const channels = visibleChannelIds();
  return channels ? { integrationId: { $in: [...channels] } } : {};
}

/** The current caller as stored on what it creates, or null outside any call. */
export function currentCredential(): string | null {
  return store.getStore()?.credential ?? null;
}

/** The current caller, or undefined outside any call (jobs: Herald itself). */
export function currentCaller(): Caller | undefined {
  return store.getStore()?.caller;
}

/** True when the current caller is limited to channels. */
export const isChannelLimited = (): boolean => visibleChannelIds() !== undefined;
