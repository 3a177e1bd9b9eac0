// Hosts a user types (an instance, a site, a PDS, a listmonk URL) reach nothing internal (DESIGN §9, issue 21): the address
// checked is the address dialled, at connect and at every later call; each redirect hop is checked again; IPv6 forms that
// carry a private IPv4 address are refused; a URL field that is not a URL is a 400 naming the field.
// The fakes run on 127.0.0.1, which these Heralds allow (`allowLoopback: ['127.0.0.1']`); the "internal" listener runs on
// 127.0.0.2, loopback like the fakes but not allowed, so a request that reaches it is one the production rules refuse.
import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { providers } from '../providers/index.js';
import { mastodonPolling } from '../providers/mastodon.js';
import { blockedRange, createUrlGuard, FetchFailedError, type ResolvedAddress } from '../src/lib/ssrf.js';
import { startHerald, type Herald } from './helpers/harness.js';
import { chainOf, createPost, publishUntilSettled } from './helpers/posts.js';
import { startMastodonFake, type MastodonFake } from './fakes/mastodon.js';
import { startNostrRelay } from './fakes/nostr.js';
import * as nip19 from 'nostr-tools/nip19';
import { generateSecretKey } from 'nostr-tools/pure';

const ALLOW_FAKES = { allowLoopback: ['127.0.0.1'] };

/** The internal service an attacker aims at: records whatever reaches it. */
async function startInternal(port = 0) {
  const received: string[] = [];
  const server = http.createServer((request, response) => {
    received.push(`${request.method} ${request.url}`);
    response.end('{"secret":"internal"}');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.2', resolve));
  return {
    url: `http://127.0.0.2:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A typed host that answers every request with a redirect to `target` (same path). */
async function startRedirector(target: string, status: number) {
  const server = http.createServer((request, response) => {
    response.writeHead(status, { location: `${target}${request.url}` });
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Credential platforms whose connect form has a URL field, with a value for every other required field. */
const urlFieldPlatforms = providers
  .filter((provider) => provider.auth.kind === 'credentials' && provider.connect && provider.auth.fields?.some((field) => field.type === 'url'))
  .map((provider) => {
    const fields = provider.auth.fields!;
    const urlField = fields.find((field) => field.type === 'url')!;
    const others = Object.fromEntries(fields.filter((field) => field !== urlField && field.required).map((field) => [field.key, 'x']));
    return { identifier: provider.identifier, key: urlField.key, others };
  });

describe('IPv6 forms that carry an IPv4 address', () => {
  const refused: [string, string][] = [
    ['::a9fe:a9fe', 'link-local'], // IPv4-compatible ::/96
    ['::127.0.0.1', 'loopback'],
    ['::10.0.0.1', 'private network'],
    ['::8.8.8.8', 'IPv4-compatible IPv6, deprecated'],
    ['::808:808', 'IPv4-compatible IPv6, deprecated'],
    ['::ffff:7f00:1', 'loopback'], // IPv4-mapped
    ['::ffff:0:a9fe:a9fe', 'link-local'], // SIIT ::ffff:0:0/96
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'], // NAT64 well-known prefix
    ['64:ff9b::192.168.1.1', 'private network'],
    ['64:ff9b:1::a9fe:a9fe', 'NAT64 local-use prefix'], // RFC 8215 /48: any position
    ['64:ff9b:1:7f00:1::', 'NAT64 local-use prefix'],
    ['2002:7f00:1::1', 'loopback'], // 6to4
    ['2002:a9fe:a9fe::', 'link-local'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo tunnel'],
    ['2001::a9fe:a9fe', 'Teredo tunnel'],
    ['2600:1f18::5efe:a9fe:a9fe', 'link-local'], // ISATAP interface identifiers
    ['2600:1f18::200:5efe:7f00:1', 'loopback'],
    ['2600:1f18::100:5efe:a00:1', 'private network'],
    ['fe80::5efe:808:808', 'link-local'],
    ['::5efe:808:808', 'reserved'],
    ['4000::1', 'reserved'], // outside global unicast 2000::/3
    ['100::1', 'discard-only IPv6'],
    ['fec0::1', 'site-local IPv6'],
  ];
  it.each(refused)('%s is refused (%s)', async (address, reason) => {
    expect(blockedRange(address)).toBe(reason);
    const resolved: string[] = [];
    const guard = createUrlGuard({ userAgent: 't', connectTimeoutMs: 1000, timeoutMs: 1000, resolve: async (name) => (resolved.push(name), []) });
    const error = await guard.check(new URL(`http://[${address}]/`)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FetchFailedError);
    expect((error as Error).message).toContain(`is a blocked address (${reason})`);
    expect(resolved).toEqual([]);
  });

  it('the same forms around a public IPv4 address pass where the address is routed to it', () => {
    for (const address of ['::ffff:8.8.8.8', '::ffff:0:808:808', '64:ff9b::808:808', '2002:808:808::1', '2600:1f18::5efe:808:808', '2606:4700:4700::1111']) {
      expect(blockedRange(address), address).toBeUndefined();
    }
  });

  it('a list of loopback addresses (tests) lets only those through', () => {
    expect(blockedRange('127.0.0.1', ALLOW_FAKES)).toBeUndefined();
    expect(blockedRange('::ffff:127.0.0.1', ALLOW_FAKES)).toBeUndefined();
    expect(blockedRange('127.0.0.2', ALLOW_FAKES)).toBe('loopback');
    expect(blockedRange('::1', ALLOW_FAKES)).toBe('loopback');
  });
});

describe('connect forms', () => {
  let herald: Herald;
  beforeAll(async () => {
    herald = await startHerald({}, { platformGuard: ALLOW_FAKES });
  });
  afterAll(async () => {
    await herald?.stop();
  });

  it('every credential platform with a URL field is covered', () => {
    expect(urlFieldPlatforms.map((platform) => `${platform.identifier}.${platform.key}`)).toEqual(
      expect.arrayContaining(['mastodon.instance', 'lemmy.instanceUrl', 'wordpress.siteUrl', 'listmonk.url', 'bluesky.service']),
    );
  });

  it('a typed host that refuses the connection is the platform\'s network error, as before the pinning', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const response = await herald.rest('POST', '/integrations/mastodon/connect', { instance: `http://127.0.0.1:${port}`, accessToken: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.message).toBe('Mastodon refused the connection: Could not reach the platform: connection refused');
  });

  for (const { identifier, key, others } of urlFieldPlatforms) {
    it(`${identifier}: an invalid URL in "${key}" is a 400 naming the field`, async () => {
      for (const value of ['http://a b/', 'http://[::1/', 'ftp://example.com', 'https://user:pw@example.com']) {
        const response = await herald.rest('POST', `/integrations/${identifier}/connect`, { ...others, [key]: value });
        expect(response.status, `${value}: ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body.code).toBe('invalid_input');
        expect(response.body.message, value).toContain(`"${key}"`);
      }
    });

    it(`${identifier}: a typed host redirecting to an internal address reaches nothing`, async () => {
      const internal = await startInternal();
      try {
        for (const status of [302, 307]) {
          const redirector = await startRedirector(internal.url, status);
          try {
            const response = await herald.rest('POST', `/integrations/${identifier}/connect`, { ...others, [key]: redirector.url });
            expect(response.status, JSON.stringify(response.body)).toBe(400);
            expect(response.body.message).toContain('127.0.0.2 is a blocked address (loopback)');
          } finally {
            await redirector.close();
          }
        }
        expect(internal.received).toEqual([]);
      } finally {
        await internal.close();
      }
    });
  }
});

describe('a connected Mastodon channel on a typed instance', () => {
  let herald: Herald;
  let fake: MastodonFake;
  let internal: Awaited<ReturnType<typeof startInternal>>;
  let channel: string;

  beforeAll(async () => {
    mastodonPolling.delayMs = 5;
    fake = await startMastodonFake();
    internal = await startInternal();
    herald = await startHerald({}, { platformGuard: ALLOW_FAKES });
    const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: fake.url, accessToken: fake.token });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    channel = connected.body.id;
  });
  afterAll(async () => {
    await herald?.stop();
    await fake?.close();
    await internal?.close();
  });
  afterEach(() => expect(internal.received).toEqual([]));

  it('a publish redirected to an internal address fails, and nothing reaches it', async () => {
    fake.server.failNext('POST', '/api/v1/statuses', { status: 307, headers: { location: `${internal.url}/api/v1/statuses` } });
    const postId = await createPost(herald, channel, ['Hello']);
    const { outcome } = await publishUntilSettled(herald, postId);
    expect(outcome).toMatchObject({ kind: 'failed' });
    const [item] = await chainOf(herald, postId);
    expect(item.error).toContain('127.0.0.2 is a blocked address (loopback)');
  });

  it('analytics redirected to an internal address answer 400, and nothing reaches it', async () => {
    fake.server.failNext('GET', '/api/v1/accounts/verify_credentials', { status: 302, headers: { location: `${internal.url}/latest/meta-data/` } });
    const response = await herald.rest('GET', `/analytics/${channel}?date=7`);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.message).toContain('127.0.0.2 is a blocked address (loopback)');
  });

  it('a redirect within the instance is followed, the body sent again on 307', async () => {
    fake.server.failNext('POST', '/api/v1/statuses', { status: 307, headers: { location: '/api/v1/statuses?moved=1' } });
    const postId = await createPost(herald, channel, ['Moved but kept']);
    const { outcome } = await publishUntilSettled(herald, postId);
    expect(outcome).toEqual({ kind: 'published' });
    expect(fake.statuses.at(-1)?.status).toBe('Moved but kept');
    expect(fake.server.requestsTo('POST', '/api/v1/statuses').at(-1)?.query.get('moved')).toBe('1');
  });
});

describe('DNS rebinding', () => {
  let fake: MastodonFake;
  let internal: Awaited<ReturnType<typeof startInternal>>;
  const realLookup = dns.lookup;

  beforeAll(async () => {
    fake = await startMastodonFake();
    // The internal service listens on the fake's port, so only the address decides which of the two a call reaches.
    internal = await startInternal(fake.server.port);
    // The system resolver (what a connection makes of the name when it is not pinned) answers the internal address.
    dns.lookup = ((hostname: string, options: unknown, callback?: unknown) => {
      const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
      const all = typeof options === 'object' && (options as { all?: boolean })?.all;
      if (hostname !== 'social.rebind.test') return (realLookup as (...args: unknown[]) => void)(hostname, options, callback);
      return all ? done(null, [{ address: '127.0.0.2', family: 4 }]) : done(null, '127.0.0.2', 4);
    }) as typeof dns.lookup;
  });
  afterAll(async () => {
    dns.lookup = realLookup;
    await fake?.close();
    await internal?.close();
  });

  it('every call dials the address the guard checked; a later answer of loopback is refused', async () => {
    let answer = '127.0.0.1';
    const lookups: string[] = [];
    const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
      lookups.push(hostname);
      return [{ address: answer, family: 4 }];
    };
    const herald = await startHerald({}, { platformGuard: { ...ALLOW_FAKES, resolve } });
    try {
      const instance = `http://social.rebind.test:${fake.server.port}`;
      const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance, accessToken: fake.token });
      expect(internal.received).toEqual([]);
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      const first = await createPost(herald, connected.body.id, ['Through the checked address']);
      expect((await publishUntilSettled(herald, first)).outcome).toEqual({ kind: 'published' });
      expect(fake.statuses.at(-1)?.status).toBe('Through the checked address');
      expect(lookups.length).toBeGreaterThanOrEqual(2); // checked at connect and again at publish

      answer = '127.0.0.2'; // the name now points inside
      const second = await createPost(herald, connected.body.id, ['Never sent']);
      expect((await publishUntilSettled(herald, second)).outcome).toMatchObject({ kind: 'failed' });
      expect((await chainOf(herald, second))[0].error).toContain('social.rebind.test resolves to 127.0.0.2, a blocked address (loopback)');
      expect(internal.received).toEqual([]);
    } finally {
      await herald.stop();
    }
  });
});

describe('Nostr relays a user types', () => {
  // Relays are WebSocket connections, not fetches: the same guard answers the lookup the connection dials with.
  const nsec = nip19.nsecEncode(generateSecretKey());
  const realLookup = dns.lookup;
  afterEach(() => {
    dns.lookup = realLookup;
  });

  it('a relay on an internal address is refused at connect, naming the field, and never dialled', async () => {
    const internal = await startInternal();
    const herald = await startHerald({}, { platformGuard: ALLOW_FAKES });
    try {
      const response = await herald.rest('POST', '/integrations/nostr/connect', { privateKey: nsec, relays: internal.url.replace('http:', 'ws:') });
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.message).toContain('"relays"');
      expect(response.body.message).toContain('127.0.0.2 is a blocked address (loopback)');
      expect(internal.received).toEqual([]);
    } finally {
      await herald.stop();
      await internal.close();
    }
  });

  it('a relay whose name later resolves inside is dialled at the checked address, then refused', async () => {
    const relay = await startNostrRelay();
    const port = new URL(relay.url).port;
    const internal = await startInternal(Number(port)); // same port: only the address decides which one a socket reaches
    dns.lookup = ((hostname: string, options: unknown, callback?: unknown) => {
      const done = (typeof options === 'function' ? options : callback) as (...args: unknown[]) => void;
      const all = typeof options === 'object' && (options as { all?: boolean })?.all;
      if (hostname !== 'relay.rebind.test') return (realLookup as (...args: unknown[]) => void)(hostname, options, callback);
      return all ? done(null, [{ address: '127.0.0.2', family: 4 }]) : done(null, '127.0.0.2', 4);
    }) as typeof dns.lookup;
    let answer = '127.0.0.1';
    const resolve = async (): Promise<ResolvedAddress[]> => [{ address: answer, family: 4 }];
    const herald = await startHerald({}, { platformGuard: { ...ALLOW_FAKES, resolve } });
    try {
      const connected = await herald.rest('POST', '/integrations/nostr/connect', { privateKey: nsec, relays: `ws://relay.rebind.test:${port}` });
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      const first = await createPost(herald, connected.body.id, ['Through the checked relay address']);
      expect((await publishUntilSettled(herald, first)).outcome).toEqual({ kind: 'published' });
      expect(relay.events.map((event) => event.content)).toContain('Through the checked relay address');

      answer = '127.0.0.2';
      const second = await createPost(herald, connected.body.id, ['Never sent']);
      expect((await publishUntilSettled(herald, second)).outcome).toMatchObject({ kind: 'failed' });
      expect((await chainOf(herald, second))[0].error).toContain('relay.rebind.test resolves to 127.0.0.2, a blocked address (loopback)');
      expect(internal.received).toEqual([]);
    } finally {
      await herald.stop();
      await internal.close();
      await relay.close();
    }
  });
});

describe('DISABLE_SSRF_PROTECTION', () => {
  it('a typed host on a private address is reached through the pinned path', async () => {
    const fake = await startMastodonFake();
    const herald = await startHerald({ DISABLE_SSRF_PROTECTION: 'true' }, { platformGuard: {} });
    try {
      const connected = await herald.rest('POST', '/integrations/mastodon/connect', { instance: fake.url, accessToken: fake.token });
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    } finally {
      await herald.stop();
      await fake.close();
    }
  });
});
