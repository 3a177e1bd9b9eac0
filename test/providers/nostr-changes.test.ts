// Nostr changes (issue 24) against fake relays (real WebSockets): a NIP-09 deletion request — a kind-5 event naming the note,
// signed by the same key — sent to the relays the note went to, which drop it; the request recorded once, so a repeat sends
// the very same event; no relay taking it is retried; another key's note untouched; editing refused with the reason.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { finalizeEvent, generateSecretKey, getPublicKey, verifyEvent, type Event } from 'nostr-tools/pure';
import nostr from '../../providers/nostr/index.js';
import { relayTimeouts } from '../../providers/nostr/relays.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { deadRelayUrl, startNostrRelay, type NostrRelayFake } from '../fakes/nostr.js';
import { providerContext } from '../helpers/provider-context.js';

const secret = generateSecretKey();
const hexKey = Buffer.from(secret).toString('hex');
const pubkey = getPublicKey(secret);
const saved = { ...relayTimeouts };

let first: NostrRelayFake;
let second: NostrRelayFake;

beforeEach(async () => {
  [first, second] = await Promise.all([startNostrRelay(), startNostrRelay()]);
});
afterEach(async () => {
  Object.assign(relayTimeouts, saved);
  await Promise.all([first.close(), second.close()]);
});

const context = (steps: Map<string, unknown>, relays: string) =>
  providerContext({ endpoints: { relays: 'wss://unused.example', web: 'https://njump.me' }, auth: { accessToken: hexKey, internalId: pubkey, data: { relays } }, steps });

async function publishedNote(text: string) {
  const ref = await nostr.publish!(context(new Map(), `${first.url},${second.url}`), { postId: `post-${text}`, text, media: [] });
  return ref;
}

describe('nostr deletion (NIP-09)', () => {
  it('sends one kind-5 request signed by the same key to the relays the note went to; they drop the note, a repeat sends the same event', async () => {
    const keep = await publishedNote('Keep me');
    const ref = await publishedNote('Delete me');
    const stranger = finalizeEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000), tags: [], content: 'Not yours' }, generateSecretKey());
    first.seed(stranger);
    const steps = new Map<string, unknown>();
    // The channel's relay list changed since: the note's own relays (its delivery) still get the request.
    await nostr.deletePublished!(context(steps, second.url), ref);

    for (const relay of [first, second]) {
      const request = relay.events.find((event) => event.kind === 5)!;
      expect(request).toMatchObject({ pubkey, tags: [['e', ref.id], ['k', '1']] });
      expect(verifyEvent({ ...request })).toBe(true);
      expect(relay.events.some((event) => event.id === ref.id)).toBe(false);
      expect(relay.events.some((event) => event.id === keep.id)).toBe(true);
    }
    expect(first.events.some((event) => event.id === stranger.id)).toBe(true);

    // A repeat (a lost answer): the recorded request goes again, same id; the relays answer duplicate (OK true).
    await nostr.deletePublished!(context(steps, second.url), ref);
    const sent = (relay: NostrRelayFake) => relay.received.filter((message) => message[0] === 'EVENT' && (message[1] as Event).kind === 5).map((message) => (message[1] as Event).id);
    expect(new Set([...sent(first), ...sent(second)]).size).toBe(1);
    expect(first.answers.at(-1)).toEqual([sent(first)[0], true, 'duplicate: already have this event']);
  });

  it('retries later when no relay takes the request, then sends that same request', async () => {
    const ref = await publishedNote('Delete me later');
    const steps = new Map<string, unknown>();
    first.mode = 'rate-limited';
    second.mode = 'rate-limited';
    const error = await nostr.deletePublished!(context(steps, `${first.url},${second.url}`), ref).then(() => undefined, (reason: unknown) => reason);
    expect(error).toBeInstanceOf(PlatformHttpError);
    expect((error as PlatformHttpError).retryable).toBe(true);
    expect(first.events.some((event) => event.id === ref.id)).toBe(true);
    first.mode = 'accept';
    second.mode = 'accept';
    await nostr.deletePublished!(context(steps, `${first.url},${second.url}`), ref);
    expect(first.events.some((event) => event.id === ref.id)).toBe(false);
    const ids = first.received.filter((message) => message[0] === 'EVENT' && (message[1] as Event).kind === 5).map((message) => (message[1] as Event).id);
    expect(new Set(ids).size).toBe(1);
  });

  it('counts the request as sent when a relay takes it, even where a relay is down', async () => {
    relayTimeouts.connectMs = 500;
    const ref = await publishedNote('One relay down');
    await nostr.deletePublished!(context(new Map(), `${first.url},${await deadRelayUrl()}`), { ...ref, meta: {} });
    expect(first.deleted).toContain(ref.id);
  });
});

describe('nostr comments (NIP-10 replies read from the relays)', () => {
  it('reads the replies on a note from every relay once, with their parents, and replies to THAT comment naming its author', async () => {
    const ref = await publishedNote('Ask me anything');
    const other = generateSecretKey();
    const otherKey = getPublicKey(other);
    const now = Math.floor(Date.now() / 1000);
    const question = finalizeEvent({ kind: 1, created_at: now - 20, tags: [['e', ref.id, '', 'root'], ['p', pubkey]], content: 'Is it open source?' }, other);
    const followUp = finalizeEvent({ kind: 1, created_at: now - 10, tags: [['e', ref.id, '', 'root'], ['e', question.id, '', 'reply'], ['p', pubkey]], content: 'And self-hosted?' }, other);
    const unrelated = finalizeEvent({ kind: 1, created_at: now - 5, tags: [], content: 'Another note' }, other);
    for (const relay of [first, second]) for (const event of [question, followUp, unrelated]) relay.seed(event);

    const relays = `${first.url},${second.url}`;
    const comments = await nostr.comments!(context(new Map(), relays), ref, undefined);
    expect(comments.map((comment) => [comment.id, comment.parentId, comment.text, comment.author.id])).toEqual([
      [question.id, undefined, 'Is it open source?', otherKey],
      [followUp.id, question.id, 'And self-hosted?', otherKey],
    ]);
    expect(comments[0]).toMatchObject({ meta: { pubkey: otherKey }, createdAt: new Date((now - 20) * 1000).toISOString() });

    const reply = await nostr.comment!(context(new Map(), relays), { postId: 'reply-1', text: 'Yes, MIT.', media: [] }, { root: ref, parent: { id: question.id, meta: comments[0].meta }, toComment: true });
    const sent = first.events.find((event) => event.id === reply.id)!;
    expect(sent.tags).toEqual([['e', ref.id, first.url, 'root', pubkey], ['e', question.id, first.url, 'reply', otherKey], ['p', pubkey], ['p', otherKey]]);
    // The account's own reply is read back as the account's.
    const again = await nostr.comments!(context(new Map(), relays), ref, undefined);
    expect(again.find((comment) => comment.id === reply.id)).toMatchObject({ byAccount: true, parentId: question.id });
  });
});

describe('nostr editing', () => {
  it('is refused with the reason: a note is signed over its content; a deletion is only a request', () => {
    expect(nostr.editPublished).toBeUndefined();
    expect(nostr.unchangeable?.edit).toMatch(/signed over its content.*NIP-09 deletion request, which relays may ignore/);
  });
});
