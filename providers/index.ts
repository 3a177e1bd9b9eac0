// The provider registry: every platform identifier of the spec, by identifier.
import type { Provider } from './types.js';
import x from './x/index.js';
import linkedin from './linkedin.js';
import linkedinPage from './linkedin-page.js';
import instagram from './instagram.js';
import instagramStandalone from './instagram-standalone.js';
import facebook from './facebook.js';
import threads from './threads/index.js';
import youtube from './youtube/index.js';
import tiktok from './tiktok/index.js';
import reddit from './reddit/index.js';
import lemmy from './lemmy.js';
import pinterest from './pinterest/index.js';
import dribbble from './dribbble.js';
import discord from './discord/index.js';
import slack from './slack/index.js';
import twitch from './twitch.js';
import kick from './kick.js';
import mastodon from './mastodon.js';
import bluesky from './bluesky/index.js';
import telegram from './telegram.js';
import nostr from './nostr/index.js';
import vk from './vk.js';
import medium from './medium.js';
import devto from './devto.js';
import hashnode from './hashnode.js';
import wordpress from './wordpress.js';
import listmonk from './listmonk.js';
import gmb from './gmb/index.js';
import warpcast from './warpcast.js';
import moltbook from './moltbook.js';
import skool from './skool.js';
import whop from './whop.js';

export const providers: readonly Provider[] = [x, linkedin, linkedinPage, instagram, instagramStandalone, facebook, threads, youtube, tiktok, reddit, lemmy, pinterest, dribbble, discord, slack, twitch, kick, mastodon, bluesky, telegram, nostr, vk, medium, devto, hashnode, wordpress, listmonk, gmb, warpcast, moltbook, skool, whop];

const byIdentifier = new Map(providers.map((provider) => [provider.identifier, provider]));

export const providerIdentifiers: readonly string[] = providers.map((provider) => provider.identifier);

export function findProvider(identifier: string): Provider | undefined {
  return byIdentifier.get(identifier);
}
