// What may still make an accepted entry fail later, said as warnings with the create's answer and the preview: media a
// platform fetching by URL cannot reach, short links, the channel's health.
import type { Integration } from '../../src/db/entities.js';
import type { Provider } from '../../providers/types.js';
import type { Services } from '../types.js';
import type { PlanEntry } from './create-posts.js';
import { publicReachabilityWarning } from './media.js';
import { shortLinkWarnings } from './short-links.js';
import { channelHealthWarnings } from './channel-health.js';

/** For platforms that pull media by URL: a warning when a media URL of the entry is not publicly reachable (e.g. PUBLIC_URL on localhost). */
export function mediaByUrlWarnings(provider: Provider, entry: PlanEntry): string[] {
  if (!provider.mediaByUrl) return [];
  const warnings = new Set<string>();
  for (const item of entry.items) {
    for (const media of item.media) {
      const warning = publicReachabilityWarning(media.path);
      if (warning) warnings.add(`${provider.name} fetches media by URL: ${warning}`);
    }
  }
  return [...warnings];
}

/** What may still make an entry fail after it was accepted: media the platform cannot fetch, short links, the channel's health. */
export function entryWarnings(services: Services, provider: Provider, integration: Integration, entry: PlanEntry, publishDate: Date): string[] {
  return [
    ...mediaByUrlWarnings(provider, entry),
    ...shortLinkWarnings(services.config, entry.shortLink, entry.items.map((item) => item.content)),
    ...(entry.type === 'draft' ? [] : channelHealthWarnings(services, integration, publishDate)),
  ];
}
