// Concurrent channel listings share one statement (tools/internal/integrations.ts, listedRows): each request still gets
// exactly its own organization's channels, of its group when it asks for one, in their order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHerald, type Herald } from './helpers/harness.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';

let herald: Herald;
let mastodon: MastodonFake;

beforeAll(async () => {
  mastodon = await startMastodonFake();
  herald = await startHerald();
});
afterAll(async () => {
  await herald?.stop();
  await mastodon?.close();
});

const restAs = (apiKey: string, path: string, method = 'GET', body?: unknown) =>
  fetch(`${herald.url}/api/public/v1${path}`, { method, headers: { authorization: apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined }).then(async (response) => ({ status: response.status, body: await response.json() }));

describe('channel listings read together', () => {
  it("answer each of many concurrent requests of three organizations with its own organization's channels only", async () => {
    const organizations = [{ organizationId: '', apiKey: herald.apiKey }, await herald.newOrganization('Batch B'), await herald.newOrganization('Batch C')];
    const names: string[][] = [];
    for (const [index, organization] of organizations.entries()) {
      names.push([]);
      // One channel each for the first two (the same Mastodon account, a channel of each organization), none for the third.
      for (let channel = 0; channel < (index < 2 ? 1 : 0); channel++) {
        const connected = await restAs(organization.apiKey, '/integrations/mastodon/connect', 'POST', { instance: mastodon.url, accessToken: mastodon.token });
        expect(connected.status, JSON.stringify(connected.body)).toBe(200);
        names[index].push(connected.body.id);
      }
    }
    const answers = await Promise.all(Array.from({ length: 30 }, (_, call) => restAs(organizations[call % 3].apiKey, '/integrations').then((answer) => ({ call, answer }))));
    for (const { call, answer } of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.map((channel: { id: string }) => channel.id)).toEqual(names[call % 3]);
    }
  });
});
