// Connects a channel through the real OAuth round trip, as a browser would: Herald's authorization URL, the fake's
// consent (which redirects with a code), then Herald's callback, which trades the code and saves the channel.
import { expect } from 'vitest';
import type { Herald } from './harness.js';

export interface OAuthConnectResult {
  /** The channel created (or reconnected). */
  integrationId: string;
  /** True when the channel waits for a page/account choice (GET/POST /integrations/{id}/accounts). */
  inBetweenSteps: boolean;
  /** The authorization URL Herald produced (to check its parameters). */
  authorizeUrl: URL;
}

export async function connectOAuthChannel(herald: Herald, identifier: string, options: { refresh?: string } = {}): Promise<OAuthConnectResult> {
  const started = await herald.rest('GET', `/social/${identifier}${options.refresh ? `?refresh=${options.refresh}` : ''}`);
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const authorizeUrl = new URL(started.body.url as string);
  // The fake's consent screen approves at once and redirects back to Herald.
  const consent = await fetch(authorizeUrl, { redirect: 'manual' });
  expect([301, 302, 303, 307], `consent answered ${consent.status}: ${await consent.clone().text()}`).toContain(consent.status);
  const callback = new URL(consent.headers.get('location')!);
  expect(callback.origin).toBe(herald.url);
  const before = new Set(((await herald.rest('GET', '/integrations')).body as { id: string }[]).map((item) => item.id));
  const landed = await fetch(callback, { redirect: 'manual' });
  expect(landed.status, `callback answered ${landed.status}: ${await landed.clone().text()}`).toBe(303);
  const location = landed.headers.get('location') ?? '';
  const choose = /^\/channels\/([^/]+)\/choose$/.exec(location);
  if (choose) return { integrationId: choose[1], inBetweenSteps: true, authorizeUrl };
  expect(location).toBe('/channels?notice=connected');
  if (options.refresh) return { integrationId: options.refresh, inBetweenSteps: false, authorizeUrl };
  const after = (await herald.rest('GET', '/integrations')).body as { id: string; identifier: string }[];
  const created = after.filter((item) => item.identifier === identifier && !before.has(item.id));
  // Connecting an account the organization already has updates that channel instead of creating one.
  const integrationId = created[0]?.id ?? after.filter((item) => item.identifier === identifier).at(-1)?.id;
  expect(integrationId, `no ${identifier} channel after the callback`).toBeDefined();
  return { integrationId: integrationId!, inBetweenSteps: false, authorizeUrl };
}
