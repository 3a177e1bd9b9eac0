// Connects one channel per fake platform through the REST connect endpoint, as a client would.
import { expect } from 'vitest';
import type { BlueskyFake } from '../fakes/bluesky.js';
import type { MastodonFake } from '../fakes/mastodon.js';
import type { TelegramFake } from '../fakes/telegram.js';
import type { Herald } from './harness.js';

export async function connectFakeChannels(
  herald: Herald,
  fakes: { bluesky: BlueskyFake; mastodon: MastodonFake; telegram: TelegramFake },
): Promise<{ bluesky: string; mastodon: string; telegram: string }> {
  const connect = async (identifier: string, fields: Record<string, string>) => {
    const response = await herald.rest('POST', `/integrations/${identifier}/connect`, fields);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.id as string;
  };
  return {
    bluesky: await connect('bluesky', { service: fakes.bluesky.url, identifier: fakes.bluesky.handle, appPassword: fakes.bluesky.password }),
    mastodon: await connect('mastodon', { instance: fakes.mastodon.url, accessToken: fakes.mastodon.token }),
    telegram: await connect('telegram', { botToken: fakes.telegram.token, chatId: String(fakes.telegram.chat.id) }),
  };
}
