// Nostr against fake relays (real WebSockets): key connect (nsec or hex, refused with a reason), kind-1 notes signed and
// verified by the relays, one relay down, NIP-10 replies, NIP-92 media, the recorded event re-sent after a failure (same id),
// refusals, reactions as post analytics, and a thread with a picture through the real worker.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as nip19 from 'nostr-tools/nip19';
import { finalizeEvent, generateSecretKey, getEventHash, getPublicKey, verifyEvent, type Event } from 'nostr-tools/pure';
import nostr from '../../providers/nostr/index.js';
import { relayTimeouts } from '../../providers/nostr/relays.js';
import { IntegrationSchema, NotificationSchema, PostSchema } from '../../src/db/entities.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { DomainError } from '../../src/errors.js';
import { convertContent } from '../../src/lib/content.js';
import { loadConfig } from '../../src/config.js';
import { publishChain } from '../../tools/internal/publish.js';
import { deadRelayUrl, startNostrRelay, type NostrRelayFake } from '../fakes/nostr.js';
import { startHerald, type Herald } from '../helpers/harness.js';
import { upload } from '../helpers/media-samples.js';
import { chainOf, createPost, publishUntilSettled, reopenAsInterrupted, waitFor, waitForPublished } from '../helpers/posts.js';
import { redeliveryTiming } from '../../src/jobs/nostr-redelivery.js';
import { postView } from '../../tools/internal/post-view.js';
import { previewMarkup } from '../../src/http/web/post-pages.js';
import { mediaFile, providerContext, tinyPng } from '../helpers/provider-context.js';

const secret = generateSecretKey();
const hexKey = Buffer.from(secret).toString('hex');
const pubkey = getPublicKey(secret);
const nsec = nip19.nsecEncode(secret);
const npub = nip19.npubEncode(pubkey);
const saved = { ...relayTimeouts };

let first: NostrRelayFake;
let second: NostrRelayFake;
let dead: string;

beforeEach(async () => {
  [first, second, dead] = await Promise.all([startNostrRelay(), startNostrRelay(), deadRelayUrl()]);
});
afterEach(async () => {
  Object.assign(relayTimeouts, saved);
  await Promise.all([first.close(), second.close()]);
});

const relayList = () => [first.url, second.url, dead].join(',');
const context = (steps = new Map<string, unknown>(), relays = relayList()) =>
  providerContext({ endpoints: { relays: 'wss://unused.example', web: 'https://njump.me' }, auth: { accessToken: hexKey, internalId: pubkey, data: { relays } }, steps });
const connectContext = (relays = relayList()) => ({ fetch: providerContext({}).fetch, dial: async () => undefined, endpoints: { relays, web: 'https://njump.me' } });
const item = (text: string, media: ReturnType<typeof mediaFile>[] = [], postId = 'post-1') => ({ postId, text, media });
const other = generateSecretKey();
const byOther = (kind: number, content: string, tags: string[][]) => finalizeEvent({ kind, created_at: Math.floor(Date.now() / 1000), tags, content }, other);

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('nostr descriptor', () => {
  it('is a credential platform with a key and a relay list defaulting to the deployment\'s relays', () => {
    expect(nostr.auth.fields?.map((field) => [field.key, field.type, field.required])).toEqual([['privateKey', 'password', true], ['relays', 'text', false]]);
    expect(nostr.auth.fields?.[1].endpoint).toBe('relays');
    expect(nostr.endpoints.relays.split(',').every((relay) => relay.startsWith('wss://'))).toBe(true);
    expect(nostr).toMatchObject({ chain: 'thread', recordsSteps: true, idempotentCreate: true, mediaByUrl: true, settings: null });
  });

  it('takes relays in SOCIAL_ENDPOINTS as ws(s) URLs separated by commas, and refuses anything else', () => {
    const config = (relays: string) => loadConfig({ DATA_DIR: '/tmp/herald-nostr-config', SOCIAL_ENDPOINTS: JSON.stringify({ nostr: { relays } }) } as NodeJS.ProcessEnv);
    expect(config('wss://a.example, ws://127.0.0.1:7000').socialEndpoints.nostr.relays).toBe('wss://a.example, ws://127.0.0.1:7000');
    expect(() => config('wss://a.example,https://b.example')).toThrow(/nostr\.relays must be ws\(s\) URLs separated by commas/);
  });
});

describe('nostr connect', () => {
  it('accepts an nsec, reads the kind-0 profile from the relays and stores the key as hex', async () => {
    first.seed(finalizeEvent({ kind: 0, created_at: 1_700_000_000, tags: [], content: JSON.stringify({ name: 'old' }) }, secret));
    second.seed(finalizeEvent({ kind: 0, created_at: 1_700_000_500, tags: [], content: JSON.stringify({ name: 'alice', display_name: 'Alice', picture: 'https://pics.example/alice.png' }) }, secret));
    const account = await nostr.connect!(connectContext(), { privateKey: ` ${nsec} `, relays: relayList() });
    expect(account).toEqual({
      internalId: pubkey,
      name: 'Alice',
      profile: npub,
      picture: 'https://pics.example/alice.png',
      accessToken: hexKey,
      data: { relays: relayList() },
    });
    const [request] = first.received;
    expect(request).toEqual(['REQ', expect.any(String), { kinds: [0], authors: [pubkey], limit: 1 }]);
  });

  it('accepts the hex key, names the channel after its npub without a profile, and keeps no relays when none were typed', async () => {
    const account = await nostr.connect!(connectContext(`${first.url},${second.url}`), { privateKey: hexKey.toUpperCase() });
    expect(account.name).toBe(`${npub.slice(0, 12)}…${npub.slice(-6)}`);
    expect(account.picture).toBeUndefined();
    expect(account.data).toEqual({});
  });

  it('refuses a public key, a malformed key, a relay that is not a WebSocket URL, and relays that are all unreachable', async () => {
    expect((await refusal(nostr.connect!(connectContext(), { privateKey: npub }))).message).toMatch(/public key \(npub\)/);
    expect((await refusal(nostr.connect!(connectContext(), { privateKey: 'nsec1notakey' }))).message).toBe('This is not a valid Nostr private key.');
    expect((await refusal(nostr.connect!(connectContext(), { privateKey: '0'.repeat(64) }))).message).toBe('This is not a valid Nostr private key.');
    const https = await refusal(nostr.connect!(connectContext(), { privateKey: nsec, relays: 'https://relay.example' }));
    expect(https).toBeInstanceOf(DomainError);
    expect(https.message).toMatch(/not a WebSocket URL/);
    const down = await refusal(nostr.connect!(connectContext(dead), { privateKey: nsec }));
    expect(down.message).toMatch(/None of the Nostr relays could be reached: .*connection refused/);
  });
});

describe('nostr publish', () => {
  it('signs a kind-1 note, sends it to every relay, and succeeds with one relay down, recording each answer', async () => {
    const ref = await nostr.publish!(context(), item('Hello Nostr'));
    for (const relay of [first, second]) {
      expect(relay.events).toHaveLength(1);
      const [event] = relay.events;
      expect(verifyEvent({ ...event })).toBe(true);
      expect(event).toMatchObject({ kind: 1, pubkey, content: 'Hello Nostr', tags: [] });
      expect(event.id).toBe(getEventHash(event));
      expect(ref.id).toBe(event.id);
    }
    const answers = JSON.parse(ref.meta!.relays);
    expect(answers[first.url]).toBe('OK');
    expect(answers[dead]).toMatch(/^pending: connection refused/);
    expect(ref.meta!.pendingRelays).toBe(dead);
    expect(ref.warnings).toEqual([`Relay ${dead} did not accept the note yet (connection refused); Herald will send it again when the relay is back.`]);
    expect(ref.meta!.pubkey).toBe(pubkey);
    const nevent = ref.url!.replace('https://njump.me/', '');
    expect(nip19.decode(nevent)).toEqual({ type: 'nevent', data: { id: ref.id, relays: [first.url, second.url], author: pubkey, kind: 1 } });
  });

  it('says which relay refused the note for good (no retry) and which only missed it', async () => {
    second.mode = 'refuse';
    const ref = await nostr.publish!(context(), item('Some take it'));
    expect(JSON.parse(ref.meta!.relays)).toEqual({ [first.url]: 'OK', [second.url]: 'refused: blocked: this relay only accepts notes from paying members', [dead]: 'pending: connection refused' });
    expect(ref.meta!.pendingRelays).toBe(dead);
    expect(ref.warnings).toEqual([
      `Relay ${second.url} refused the note (blocked: this relay only accepts notes from paying members); other relays have it.`,
      `Relay ${dead} did not accept the note yet (connection refused); Herald will send it again when the relay is back.`,
    ]);
    second.mode = 'accept';
    const all = await nostr.publish!(context(undefined, `${first.url},${second.url}`), item('All take it'));
    expect(all.warnings).toBeUndefined();
    expect(all.meta!.pendingRelays).toBeUndefined();
  });

  it('warns that media linked from a private or plain-http address cannot be opened by readers', async () => {
    const local = mediaFile(tinyPng(), { url: 'http://localhost:3000/uploads/dot.png' });
    const lan = mediaFile(tinyPng(), { url: 'https://192.168.1.20/uploads/dot.png' });
    const ref = await nostr.publish!(context(undefined, first.url), item('Look', [local, lan]));
    expect(ref.warnings).toEqual([
      "The note links its media at http://localhost:3000, which readers on the internet cannot open: set PUBLIC_URL (or S3_PUBLIC_URL) to this Herald's public https address.",
      "The note links its media at https://192.168.1.20, which readers on the internet cannot open: set PUBLIC_URL (or S3_PUBLIC_URL) to this Herald's public https address.",
    ]);
    const fine = await nostr.publish!(context(undefined, first.url), item('Look', [mediaFile(tinyPng(), { url: 'https://herald.example/uploads/dot.png' })]));
    expect(fine.warnings).toBeUndefined();
  });

  it('puts media URLs in the content with NIP-92 imeta tags (type, size, hash, alt)', async () => {
    const png = tinyPng();
    await nostr.publish!(context(), item('Look', [mediaFile(png, { url: 'https://herald.example/uploads/dot.png', alt: 'A dot' }), mediaFile(Buffer.from('v'), { url: 'https://herald.example/uploads/clip.mp4', kind: 'video' })]));
    const [event] = first.events;
    expect(event.content).toBe('Look\n\nhttps://herald.example/uploads/dot.png\nhttps://herald.example/uploads/clip.mp4');
    const sha = (await import('node:crypto')).createHash('sha256').update(png).digest('hex');
    expect(event.tags).toEqual([
      ['imeta', 'url https://herald.example/uploads/dot.png', 'm image/png', 'dim 1x1', `x ${sha}`, 'alt A dot'],
      ['imeta', 'url https://herald.example/uploads/clip.mp4', 'm video/mp4'],
    ]);
  });

  it('replies with NIP-10 markers: root only for a direct reply, root and reply after that, and a p tag', async () => {
    const root = await nostr.publish!(context(), item('root'));
    const reply = await nostr.comment!(context(), item('first reply', [], 'post-2'), { root, parent: root });
    await nostr.comment!(context(), item('second reply', [], 'post-3'), { root, parent: reply });
    const [, direct, nested] = first.events;
    expect(direct.tags).toEqual([['e', root.id, first.url, 'root', pubkey], ['p', pubkey]]);
    expect(nested.tags).toEqual([['e', root.id, first.url, 'root', pubkey], ['e', reply.id, first.url, 'reply', pubkey], ['p', pubkey]]);
  });

  it('sends the recorded event again after a failed run: same id, the relay keeps one copy', async () => {
    const steps = new Map<string, unknown>();
    first.mode = 'rate-limited';
    second.mode = 'rate-limited';
    const failure = (await refusal(nostr.publish!(context(steps), item('Once only')))) as PlatformHttpError;
    expect(failure).toMatchObject({ status: 429, retryable: true });
    expect(failure.message).toContain('rate-limited: slow down');
    const recorded = steps.get('event') as Event;
    first.mode = 'accept';
    const ref = await nostr.publish!(context(steps), item('Once only'));
    expect(ref.id).toBe(recorded.id);
    second.mode = 'accept';
    const again = await nostr.publish!(context(steps), item('Once only'));
    expect(again.id).toBe(recorded.id);
    expect(first.events).toHaveLength(1);
    expect(first.answers.at(-1)).toEqual([recorded.id, true, 'duplicate: already have this event']);
  });

  it('fails for good when every relay refuses, and with the relay\'s reason for a forged signature', async () => {
    first.mode = 'refuse';
    second.mode = 'refuse';
    const blocked = (await refusal(nostr.publish!(context(undefined, `${first.url},${second.url}`), item('x')))) as PlatformHttpError;
    expect(blocked).toMatchObject({ status: 400, retryable: false });
    expect(blocked.message).toBe(`every relay refused the note: ${first.url}: blocked: this relay only accepts notes from paying members; ${second.url}: blocked: this relay only accepts notes from paying members`);

    first.mode = 'accept';
    const forged = { ...finalizeEvent({ kind: 1, created_at: 1_700_000_000, tags: [], content: 'signed' }, secret), content: 'tampered' };
    const steps = new Map<string, unknown>([['event', forged]]);
    const invalid = (await refusal(nostr.publish!(context(steps, first.url), item('x')))) as PlatformHttpError;
    expect(invalid.message).toContain('invalid: event id does not match');
    expect(first.events).toHaveLength(0);
  });

  it('retries later when no relay answers in time or none can be reached', async () => {
    Object.assign(relayTimeouts, { connectMs: 500, answerMs: 200 });
    first.mode = 'silent';
    const silent = (await refusal(nostr.publish!(context(undefined, `${first.url},${dead}`), item('x')))) as PlatformHttpError;
    expect(silent).toMatchObject({ status: 0, retryable: true });
    expect(silent.message).toContain(`${first.url}: no answer before the time-out`);
  });
});

describe('nostr analytics and recent notes', () => {
  it('counts reactions (not dislikes), reposts and replies from the relays, each event once', async () => {
    const ref = await nostr.publish!(context(), item('measured'));
    const like = byOther(7, '+', [['e', ref.id], ['p', pubkey]]);
    for (const relay of [first, second]) relay.seed(like);
    first.seed(byOther(7, '🤙', [['e', ref.id]]));
    first.seed(byOther(7, '-', [['e', ref.id]]));
    second.seed(byOther(6, '', [['e', ref.id], ['p', pubkey]]));
    second.seed(byOther(1, 'nice', [['e', ref.id, '', 'root']]));
    const metrics = await nostr.postAnalytics!(context(), ref, 7);
    expect(metrics.map((metric) => [metric.label, metric.data[0].total])).toEqual([['Reactions', '2'], ['Reposts', '1'], ['Replies', '1']]);
  });

  it('lists the account\'s recent notes newest first', async () => {
    const older = finalizeEvent({ kind: 1, created_at: 1_700_000_000, tags: [], content: 'older' }, secret);
    first.seed(older);
    const newer = await nostr.publish!(context(), item('newer'));
    const recent = await nostr.recent!(context());
    expect(recent.map((entry) => entry.id)).toEqual([newer.id, older.id]);
    expect(recent[1].url).toBe(`https://njump.me/${nip19.neventEncode({ id: older.id, author: pubkey, kind: 1 })}`);
  });
});

describe('nostr through Herald', () => {
  let herald: Herald;
  let relays: NostrRelayFake[];
  let down: string;
  let channelId: string;

  beforeAll(async () => {
    relays = await Promise.all([startNostrRelay(), startNostrRelay()]);
    down = await deadRelayUrl();
    herald = await startHerald({ SOCIAL_ENDPOINTS: JSON.stringify({ nostr: { relays: [...relays.map((relay) => relay.url), down].join(',') } }) }, { guard: { allowLoopback: true } });
  });
  afterAll(async () => {
    await herald?.stop();
    await Promise.all(relays.map((relay) => relay.close()));
  });

  it('refuses a wrong key at connect with the reason, and connects with the right one, the key sealed', async () => {
    const wrong = await herald.rest('POST', '/integrations/nostr/connect', { privateKey: npub });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/public key \(npub\)/);
    const connected = await herald.rest('POST', '/integrations/nostr/connect', { privateKey: nsec, relays: '' });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    expect(connected.body).toMatchObject({ identifier: 'nostr', profile: npub });
    channelId = connected.body.id;
    const row = await herald.services.orm.em.fork().findOneOrFail(IntegrationSchema, { id: channelId });
    expect(row.credentials).not.toContain(hexKey);
    expect(row.credentials).not.toContain(nsec);
  });

  it('publishes a thread with a picture through the worker to every live relay', async () => {
    const picture = await upload(herald.restUrl, herald.apiKey, tinyPng(), 'dot.png');
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, [{ content: '<p>Thread <strong>one</strong></p>', image: [picture.body] }, '<p>Thread two</p>'], { type: 'now' });
      const items = await waitForPublished(herald, rootId);
      const [note, reply] = relays[0].events.slice(-2);
      expect(relays[1].events.slice(-2).map((event) => event.id)).toEqual([note.id, reply.id]);
      expect(note.content).toBe(`${convertContent('<p>Thread <strong>one</strong></p>', 'plain')}\n\n${picture.body.path}`);
      expect(note.content).not.toContain('<');
      expect(note.tags[0].slice(0, 3)).toEqual(['imeta', `url ${picture.body.path}`, 'm image/png']);
      expect(reply.tags).toEqual([['e', note.id, relays[0].url, 'root', pubkey], ['p', pubkey]]);
      expect(items.map((post) => post.releaseId)).toEqual([note.id, reply.id]);
      expect(JSON.parse(items[0].releaseMeta!.relays)[down]).toMatch(/^pending: connection refused/);
      const analytics = await herald.rest('GET', `/analytics/post/${rootId}`);
      expect(analytics.status).toBe(200);
      expect(analytics.body.map((metric: { label: string }) => metric.label)).toEqual(['Reactions', 'Reposts', 'Replies']);
      expect((await herald.rest('GET', `/analytics/${channelId}?date=7`)).body).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  /** The post as GET /posts lists it (REST; MCP lists the same record). */
  async function listed(rootId: string) {
    const day = 86_400_000;
    const response = await herald.rest('GET', `/posts?startDate=${new Date(Date.now() - day).toISOString()}&endDate=${new Date(Date.now() + day).toISOString()}`);
    expect(response.status).toBe(200);
    return response.body.posts.find((post: { id: string }) => post.id === rootId);
  }
  const missed = (relay: string) => `Relay ${relay} did not accept the note yet (connection refused); Herald will send it again when the relay is back.`;

  it('shows that a relay missed the note (REST, console), sends it the same signed note once it is back, then clears the warning', async () => {
    const timing = { ...redeliveryTiming };
    Object.assign(redeliveryTiming, { firstSeconds: 1, maxSeconds: 1 });
    const worker = await herald.startWorker();
    let back: NostrRelayFake | undefined;
    try {
      const rootId = await createPost(herald, channelId, ['<p>Catch up</p>'], { type: 'now' });
      const [published] = await waitForPublished(herald, rootId);
      expect(published.releaseWarnings).toEqual([missed(down)]);
      expect((await listed(rootId)).items[0].warnings).toEqual([missed(down)]);
      const view = await postView(herald.services.orm.em.fork(), herald.organizationId, rootId);
      expect(String(previewMarkup(view.preview, { id: rootId, name: "Nostr" }, "UTC"))).toContain(`Relay ${down} did not accept the note yet`);

      back = await startNostrRelay({ url: down });
      const [note] = await waitFor(async () => (back!.events.length > 0 ? back!.events : undefined));
      expect(note.id).toBe(published.releaseId);
      expect(verifyEvent({ ...note })).toBe(true);
      const after = await waitFor(async () => ((await chainOf(herald, rootId))[0].releaseWarnings === null ? (await chainOf(herald, rootId))[0] : undefined));
      expect(JSON.parse(after.releaseMeta!.relays)[down]).toBe('OK');
      expect(after.releaseMeta!.pendingRelays).toBeUndefined();
      expect((await listed(rootId)).items[0].warnings).toEqual([]);
      expect(relays[0].events.filter((event) => event.id === note.id)).toHaveLength(1);
    } finally {
      await worker.stop();
      await back?.close();
      Object.assign(redeliveryTiming, timing);
    }
  });

  it('stops sending to a relay that never comes back after the bounded attempts, and says so', async () => {
    const timing = { ...redeliveryTiming };
    Object.assign(redeliveryTiming, { attempts: 2, firstSeconds: 1, maxSeconds: 1 });
    const worker = await herald.startWorker();
    try {
      const rootId = await createPost(herald, channelId, ['<p>Never there</p>'], { type: 'now' });
      await waitForPublished(herald, rootId);
      const after = await waitFor(async () => {
        const [item] = await chainOf(herald, rootId);
        return item.releaseMeta?.redeliveries === '2' ? item : undefined;
      });
      expect(after.releaseMeta!.pendingRelays).toBeUndefined();
      expect(after.releaseWarnings).toEqual([`Relay ${down} never received the note: Herald stopped after 3 attempts (the last: connection refused); other relays have it.`]);
      const jobs = await herald.services.orm.em.fork().getConnection().execute(`select 1 from graphile_worker.jobs where key = 'nostr-redeliver:${after.id}'`);
      expect(jobs).toHaveLength(0);
    } finally {
      await worker.stop();
      Object.assign(redeliveryTiming, timing);
    }
  });

  it('lists a post whose relays are all down as retrying, with the time of its next attempt', async () => {
    const lone = await startNostrRelay();
    const connected = await herald.rest('POST', '/integrations/nostr/connect', { privateKey: nip19.nsecEncode(generateSecretKey()), relays: lone.url });
    expect(connected.status, JSON.stringify(connected.body)).toBe(200);
    await lone.close();
    const rootId = await createPost(herald, connected.body.id, ['<p>Nobody home</p>'], { type: 'now' });
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const record = await listed(rootId);
    expect(record).toMatchObject({ publishStatus: 'retrying', attempts: 1, lastError: `Could not reach Nostr: no relay accepted the note: ${lone.url}: connection refused` });
    expect(Date.parse(record.nextAttemptAt)).toBeGreaterThan(Date.now());
    expect(record.items[0].nextAttemptAt).toBe(record.nextAttemptAt);
  });

  it('sends its own signed note after a crash before it reached the relays, never taking an older note of the same text for it', async () => {
    for (const relay of relays) relay.mode = 'silent';
    Object.assign(relayTimeouts, { connectMs: 300, answerMs: 200 });
    const rootId = await createPost(herald, channelId, ['<p>Same words</p>'], { type: 'now', allowDuplicate: true });
    try {
      expect((await publishChain(herald.services, rootId)).kind).toBe('waiting'); // signed and recorded; no relay took it
    } finally {
      for (const relay of relays) relay.mode = 'accept';
      Object.assign(relayTimeouts, saved);
    }
    const older = finalizeEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000) - 3600, tags: [], content: 'Same words' }, secret);
    for (const relay of relays) relay.seed(older);
    await reopenAsInterrupted(herald, rootId, (item) => ({ event: item.publishProgress!.steps.event }));
    const em = herald.services.orm.em.fork();
    (await em.findOneOrFail(PostSchema, { id: rootId })).nextAttemptAt = null; // the crash came before the retry was planned
    await em.flush();
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const signed = ((await chainOf(herald, rootId))[0].publishProgress!.steps.event as { result: Event }).result;
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(signed.id);
    expect(signed.id).not.toBe(older.id);
    expect(relays[0].events.filter((event) => event.content === 'Same words').map((event) => event.id)).toEqual([older.id, signed.id]);
  });

  it('links the note that reached the relays before a crash, without a second copy', async () => {
    const rootId = await createPost(herald, channelId, ['<p>Arrived before the crash</p>'], { type: 'now' });
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    const [first] = await chainOf(herald, rootId);
    await reopenAsInterrupted(herald, rootId, (item) => ({ event: item.publishProgress!.steps.event }));
    expect((await publishChain(herald.services, rootId)).kind).toBe('published');
    expect((await chainOf(herald, rootId))[0].releaseId).toBe(first.releaseId);
    for (const relay of relays) expect(relay.events.filter((event) => event.id === first.releaseId)).toHaveLength(1);
    expect(relays[0].answers.at(-1)).toEqual([first.releaseId, true, 'duplicate: already have this event']);
  });

  it('waits and retries while the relays rate-limit, then sends the same event', async () => {
    for (const relay of relays) relay.mode = 'rate-limited';
    const rootId = await createPost(herald, channelId, ['<p>Patience</p>'], { type: 'now' });
    expect((await publishChain(herald.services, rootId)).kind).toBe('waiting');
    const [waiting] = await chainOf(herald, rootId);
    expect(waiting.lastError).toContain('rate-limited: slow down there chief');
    expect(waiting.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());
    const signed = (waiting.publishProgress!.steps.event as { result: Event }).result;
    for (const relay of relays) relay.mode = 'accept';
    expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('published');
    const [done] = await chainOf(herald, rootId);
    expect(done.releaseId).toBe(signed.id);
    expect(relays[0].events.filter((event) => event.content === 'Patience')).toHaveLength(1);
  });

  it('puts the post in ERROR with the relays\' reasons when every relay refuses it, and notifies', async () => {
    for (const relay of relays) relay.mode = 'refuse';
    try {
      const rootId = await createPost(herald, channelId, ['<p>Refused</p>'], { type: 'now' });
      expect((await publishUntilSettled(herald, rootId)).outcome.kind).toBe('failed');
      const [root] = await chainOf(herald, rootId);
      expect(root.state).toBe('ERROR');
      expect(root.error).toContain('Nostr refused the post: every relay refused the note');
      expect(root.error).toContain('blocked: this relay only accepts notes from paying members');
      const notifications = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type: 'post_failed' });
      expect(notifications.some((notification) => notification.content.includes('blocked: this relay only accepts'))).toBe(true);
    } finally {
      for (const relay of relays) relay.mode = 'accept';
    }
  });
});
