// Nostr: kind-1 notes signed with the account's key (nostr-tools) and sent over WebSocket to the channel's relays.
// References: NIP-01 (events, signatures, EVENT/OK/REQ/EOSE) https://github.com/nostr-protocol/nips/blob/master/01.md,
// NIP-10 (replies: e tags with root/reply markers, p tags) …/10.md, NIP-19 (nsec/npub/nevent) …/19.md,
// NIP-92 (imeta tags for media URLs in the content) …/92.md, NIP-25 (reactions) …/25.md.
// The signed event is built once and recorded as a step before it is sent, so a later run sends the very same event (same
// id: relays keep one copy per id) instead of a new one. The note is published when at least one relay answers OK true;
// a relay that missed it gets the same event later (./delivery.ts, src/jobs/nostr-redelivery.ts), and the item says so.
// Changing what went out: NIP-09 (https://github.com/nostr-protocol/nips/blob/master/09.md, read 2026-11-27): a deletion
// request is a kind-5 event with an `e` tag of the note and a `k` tag of its kind, signed by the note's own key; relays
// SHOULD stop publishing the note, but it is a request: a relay may ignore it and clients may have copies. Herald signs it
// once (a recorded step), sends it to the relays the note went to, and it counts as done once one relay accepted it.
// Notes cannot be edited: an event is signed over its content and its id is that content's hash (NIP-01).
import { createHash } from 'node:crypto';
import type * as Nip19 from 'nostr-tools/nip19';
import type { Event } from 'nostr-tools/pure';
import { invalidInput } from '../../src/errors.js';
import { imageSize } from '../../src/lib/media-probe.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { isLocalHost } from '../../src/lib/ssrf.js';
import { onFirstUse } from '../../src/lib/on-first-use.js';
import type { ConnectContext, Dial, JsonValue, MediaFile, PlatformComment, Provider, ProviderContext, PublishItem, PublishedRef } from '../types.js';
import { currentMetric } from '../shared.js';
import { publishToRelays, queryRelays, type RelayAnswer } from './relays.js';
import { deliveryMeta, deliveryOf, deliveryWarnings, FINAL_REFUSALS } from './delivery.js';

// nostr-tools (its signing curve included) loads with the first Nostr key read or note signed.
const nip19 = onFirstUse<typeof Nip19>('nostr-tools/nip19');
const nostrPure = onFirstUse<typeof import('nostr-tools/pure')>('nostr-tools/pure');

const endpoints = { relays: 'wss://relay.damus.io,wss://nos.lol,wss://relay.primal.net,wss://nostr.mom', web: 'https://njump.me' };
const MAX_RELAYS = 20;

/** The 32-byte secret key from 64 hex characters or an `nsec1…` (NIP-19); anything else is refused with what to paste. */
function secretKeyOf(input: string): Uint8Array {
  const value = input.trim();
  let key: Uint8Array | undefined;
  if (/^[0-9a-f]{64}$/i.test(value)) key = Uint8Array.from(Buffer.from(value, 'hex'));
  else if (value.startsWith('npub1')) {
    throw invalidInput('That is a Nostr public key (npub): Herald needs the private key to sign notes.', { hint: 'Paste the nsec1… key (or its 64-character hex form) of the account.' });
  } else if (value.startsWith('nsec1')) {
    try {
      const decoded = nip19().decode(value);
      if (decoded.type === 'nsec') key = decoded.data;
    } catch {
      /* refused below */
    }
  }
  if (key) {
    try {
      nostrPure().getPublicKey(key); // refuses 0 and keys beyond the curve order
      return key;
    } catch {
      /* refused below */
    }
  }
  throw invalidInput('This is not a valid Nostr private key.', { hint: 'Paste the nsec1… key of the account, or its private key as 64 hexadecimal characters.' });
}

/** Relay URLs from a comma- or space-separated list; only ws:// and wss:// URLs are relays. */
function parseRelays(list: string): string[] {
  const relays: string[] = [];
  for (const entry of list.split(/[\s,]+/).filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw invalidInput(`The field "relays" (Relays): "${entry}" is not a relay URL.`, { hint: 'Give relays as wss:// URLs separated by commas, e.g. wss://relay.damus.io,wss://nos.lol.' });
    }
    if (url.protocol !== 'wss:' && url.protocol !== 'ws:') {
      throw invalidInput(`The field "relays" (Relays): "${entry}" is not a WebSocket URL: Nostr relays start with wss://.`, { hint: 'Give relays as wss:// URLs separated by commas.' });
    }
    const relay = url.toString().replace(/\/$/, '');
    if (!relays.includes(relay)) relays.push(relay);
  }
  if (relays.length === 0) throw invalidInput('No Nostr relay to publish to.', { hint: 'Give at least one wss:// relay URL.' });
  if (relays.length > MAX_RELAYS) throw invalidInput(`${relays.length} relays is too many: give at most ${MAX_RELAYS}.`);
  return relays;
}

const relaysOf = (context: Pick<ProviderContext, 'auth' | 'endpoints'>) => parseRelays(context.auth.data.relays || context.endpoints.relays || endpoints.relays);
const webOf = (context: Pick<ProviderContext, 'endpoints'>) => (context.endpoints.web || endpoints.web).replace(/\/+$/, '');
const summary = (answers: RelayAnswer[]) => answers.map((answer) => `${answer.relay}: ${answer.message || (answer.accepted ? 'OK' : 'refused')}`).join('; ');

const VIDEO_TYPES: Record<string, string> = { mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime' };

/** NIP-92 `imeta` of one media URL: its type and, for pictures, dimensions and SHA-256 (the bytes are read once, here). */
async function imetaOf(file: MediaFile): Promise<string[]> {
  const tag = ['imeta', `url ${file.url}`];
  if (file.kind === 'image') {
    const { bytes, mimeType } = await file.load();
    const size = imageSize(bytes);
    tag.push(`m ${mimeType}`, ...(size ? [`dim ${size.width}x${size.height}`] : []), `x ${createHash('sha256').update(bytes).digest('hex')}`);
  } else {
    const type = VIDEO_TYPES[new URL(file.url).pathname.split('.').pop()?.toLowerCase() ?? ''];
    if (type) tag.push(`m ${type}`);
  }
  if (file.alt) tag.push(`alt ${file.alt}`);
  return tag;
}

type Thread = { root: PublishedRef; parent: PublishedRef; toComment?: boolean };

/** The note as signed: text then the media URLs, imeta tags, and for a reply the NIP-10 e tags (root, reply) and p tag. */
async function signedNote(context: ProviderContext, item: PublishItem, relays: string[], thread?: Thread): Promise<Event> {
  const secret = secretKeyOf(context.auth.accessToken);
  const pubkey = nostrPure().getPublicKey(secret);
  const tags: string[][] = [];
  if (thread) {
    // A direct reply to the root carries only the root marker (NIP-10). The root is this account's; a comment someone left
    // is theirs (its pubkey, as `comments` read it), and its author is named in a p tag so their client shows the reply.
    const parentAuthor = thread.toComment ? (thread.parent.meta?.pubkey ?? pubkey) : pubkey;
    tags.push(['e', thread.root.id, relays[0], 'root', pubkey]);
    if (thread.parent.id !== thread.root.id) tags.push(['e', thread.parent.id, relays[0], 'reply', parentAuthor]);
    tags.push(['p', pubkey]);
    if (parentAuthor !== pubkey) tags.push(['p', parentAuthor]);
  }
  for (const file of item.media) tags.push(await imetaOf(file));
  const content = [item.text, item.media.map((file) => file.url).join('\n')].filter(Boolean).join('\n\n');
  const { id, pubkey: author, created_at, kind, sig } = nostrPure().finalizeEvent({ kind: 1, created_at: Math.floor(Date.now() / 1000), tags, content }, secret);
  return { id, pubkey: author, created_at, kind, tags, content, sig };
}

/**
 * No relay took the note: it fails for good when every relay that answered refused it for a reason another attempt would not
 * change (relays that were down do not make it worth waiting); otherwise it is retried later.
 */
function noRelayAccepted(answers: RelayAnswer[]): PlatformHttpError {
  const answered = answers.filter((answer) => answer.answered);
  const final = answered.length > 0 && answered.every((answer) => FINAL_REFUSALS.some((prefix) => answer.message.startsWith(prefix)));
  const limited = answers.some((answer) => answer.message.startsWith('rate-limited:'));
  return new PlatformHttpError({
    status: final ? 400 : limited ? 429 : 0,
    retryable: !final,
    bodyExcerpt: summary(answers).slice(0, 500),
    message: `${final ? 'every relay refused the note' : 'no relay accepted the note'}: ${summary(answers)}`,
  });
}

async function sendNote(context: ProviderContext, item: PublishItem, thread?: Thread): Promise<PublishedRef> {
  const relays = relaysOf(context);
  // Recorded before anything is sent: a later run re-sends this exact event, never a new one with another id.
  const event = (await context.step('event', async () => (await signedNote(context, item, relays, thread)) as unknown as JsonValue)) as unknown as Event;
  const answers = await publishToRelays(relays, event, context.dial);
  const accepted = answers.filter((answer) => answer.accepted);
  if (accepted.length === 0) throw noRelayAccepted(answers);
  const nevent = nip19().neventEncode({ id: event.id, relays: accepted.slice(0, 2).map((answer) => answer.relay), author: event.pubkey, kind: 1 });
  const delivery = deliveryOf(answers);
  const warnings = [...privateMediaWarnings(item), ...deliveryWarnings(delivery)];
  return { id: event.id, url: `${webOf(context)}/${nevent}`, meta: deliveryMeta({ pubkey: event.pubkey }, delivery), ...(warnings.length > 0 ? { warnings } : {}) };
}

/**
 * Readers' apps load a note's media from the links in its text: a link that is not public https (PUBLIC_URL on localhost,
 * plain http) goes out in the note all the same, so the item says that nobody can open it.
 */
function privateMediaWarnings(item: PublishItem): string[] {
  return item.media.flatMap((file) => {
    const url = new URL(file.url);
    if (url.protocol === 'https:' && !isLocalHost(url.hostname)) return [];
    return [`The note links its media at ${url.origin}, which readers on the internet cannot open: set PUBLIC_URL (or S3_PUBLIC_URL) to this Herald's public https address.`];
  }).filter((warning, index, all) => all.indexOf(warning) === index);
}

/**
 * NIP-09 deletion request of a note: a kind-5 event naming it (`e`, `k`), signed with the same key, built once and recorded
 * so a later run sends the same event; sent to the relays the note went to (its delivery) and the channel's. Done when one
 * relay accepted it; a relay that already dropped the note answers OK all the same.
 */
async function requestDeletion(context: ProviderContext, ref: PublishedRef): Promise<void> {
  let delivered: string[] = [];
  try {
    delivered = Object.keys(JSON.parse(ref.meta?.relays ?? '{}') as Record<string, string>);
  } catch {
    /* no delivery recorded: the channel's relays */
  }
  const relays = [...new Set([...delivered, ...relaysOf(context)])];
  const event = (await context.step('deletion', async () => {
    const secret = secretKeyOf(context.auth.accessToken);
    const tags = [['e', ref.id], ['k', '1']];
    const { id, pubkey, created_at, kind, sig, content } = nostrPure().finalizeEvent({ kind: 5, created_at: Math.floor(Date.now() / 1000), tags, content: 'Deleted by its author' }, secret);
    return { id, pubkey, created_at, kind, tags, content, sig } as unknown as JsonValue;
  })) as unknown as Event;
  const answers = await publishToRelays(relays, event, context.dial);
  if (!answers.some((answer) => answer.accepted)) throw noRelayAccepted(answers);
}

/**
 * Replies on the account's note: kind-1 events whose `e` tags name it (NIP-10: every reply in a thread carries the root),
 * from every relay of the channel, each once, oldest first. The parent is the `reply`-marked e tag (absent: the note).
 */
async function repliesTo(context: ProviderContext, post: PublishedRef): Promise<PlatformComment[]> {
  const { events } = await queryRelays(relaysOf(context), [{ kinds: [1], '#e': [post.id], limit: 500 }], context.dial);
  const seen = new Set<string>();
  return events
    .filter((event) => event.id !== post.id && !seen.has(event.id) && seen.add(event.id))
    .sort((a, b) => a.created_at - b.created_at)
    .map((event) => {
      const parent = event.tags.find((tag) => tag[0] === 'e' && tag[3] === 'reply')?.[1];
      const npub = nip19().npubEncode(event.pubkey);
      return {
        id: event.id,
        ...(parent && parent !== post.id ? { parentId: parent } : {}),
        author: { id: event.pubkey, name: shortNpub(npub), handle: npub, url: `${webOf(context)}/${npub}` },
        text: event.content,
        createdAt: new Date(event.created_at * 1000).toISOString(),
        url: `${webOf(context)}/${nip19().neventEncode({ id: event.id, author: event.pubkey, kind: 1 })}`,
        meta: { pubkey: event.pubkey },
        ...(event.pubkey === context.auth.internalId ? { byAccount: true } : {}),
      };
    });
}

const shortNpub = (npub: string) => `${npub.slice(0, 12)}…${npub.slice(-6)}`;

/** The newest kind-0 profile the relays hold for `pubkey`, with the relays that could not be reached. */
async function loadProfile(relays: string[], pubkey: string, dial: Dial) {
  const { events, unreachable } = await queryRelays(relays, [{ kinds: [0], authors: [pubkey], limit: 1 }], dial);
  const newest = events.sort((a, b) => b.created_at - a.created_at)[0];
  let profile: { name?: unknown; display_name?: unknown; picture?: unknown } = {};
  try {
    profile = newest ? JSON.parse(newest.content) : {};
  } catch {
    /* a profile that is not JSON: keep the npub */
  }
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : undefined);
  const picture = text(profile.picture);
  return { name: text(profile.display_name) ?? text(profile.name), picture: picture && /^https?:\/\//.test(picture) ? picture : undefined, unreachable };
}

const nostr: Provider = {
  identifier: 'nostr',
  name: 'Nostr',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      { key: 'privateKey', label: 'Private key', type: 'password', required: true, description: 'The nsec1… key of the account (or its 64-character hex form). Stored encrypted; it signs every note.' },
      { key: 'relays', label: 'Relays', type: 'text', required: false, endpoint: 'relays', description: 'wss:// relay URLs separated by commas; leave empty for the default relays.' },
    ],
  },
  // Comma-separated relay list; one override replaces the whole list. `web` shows a published note (nevent link).
  endpoints,
  maxLength: () => 100000,
  rules:
    'A Nostr note (kind 1) of plain text, signed with the account key and sent to every relay of the channel; it is published when at least one relay accepts it. ' +
    'Pictures and videos are added as their public links at the end of the text, with NIP-92 imeta tags, so media must be reachable over public https. ' +
    'Later items are replies to the previous note (NIP-10). Relays may refuse notes over about 64 KB. Notes cannot be edited; ' +
    'deleting sends a NIP-09 deletion request, which relays may ignore.',
  settings: null,
  chain: 'thread',
  tools: [],
  mediaByUrl: true,
  recordsSteps: true,
  idempotentCreate: true,

  async connect(context: ConnectContext, fields) {
    const secret = secretKeyOf(fields.privateKey ?? '');
    const relays = parseRelays(fields.relays?.trim() || context.endpoints.relays || endpoints.relays);
    // A relay the user typed that the SSRF guard refuses (a private or loopback address) is refused here, by name.
    for (const relay of relays) {
      try {
        await context.dial(relay);
      } catch (error) {
        throw invalidInput(`The field "relays" (Relays): ${relay} cannot be used: ${(error as Error).message}`, { hint: 'Give public wss:// relays.' });
      }
    }
    const pubkey = nostrPure().getPublicKey(secret);
    const npub = nip19().npubEncode(pubkey);
    const profile = await loadProfile(relays, pubkey, context.dial);
    if (profile.unreachable.length === relays.length) {
      throw invalidInput(`None of the Nostr relays could be reached: ${profile.unreachable.map((item) => `${item.relay}: ${item.reason}`).join('; ')}.`, {
        hint: 'Check the relay URLs, or leave the field empty for the default relays.',
      });
    }
    return {
      internalId: pubkey,
      name: profile.name ?? shortNpub(npub),
      profile: npub,
      picture: profile.picture,
      accessToken: Buffer.from(secret).toString('hex'),
      // Typed relays are kept; otherwise the deployment's list (SOCIAL_ENDPOINTS) applies, now and later.
      data: (fields.relays?.trim() ? { relays: relays.join(',') } : {}) as Record<string, string>,
    };
  },

  publish: (context, item) => sendNote(context, item),

  comment: (context, item, thread) => sendNote(context, item, thread),

  comments: (context, post) => repliesTo(context, post),
  deletePublished: (context, ref) => requestDeletion(context, ref),
  unchangeable: {
    edit: 'Nostr notes cannot be edited: a note is signed over its content and its id is the hash of that content (NIP-01). Delete it (a NIP-09 deletion request, which relays may ignore) and publish a new one.',
  },

  async postAnalytics(context, post) {
    const filters = [7, 6, 1].map((kind) => ({ kinds: [kind], '#e': [post.id], limit: 500 }));
    const { events } = await queryRelays(relaysOf(context), filters, context.dial);
    const count = (kind: number) => events.filter((event) => event.kind === kind && event.id !== post.id).length;
    const likes = events.filter((event) => event.kind === 7 && event.content !== '-').length; // "-" is a dislike (NIP-25)
    return [currentMetric('Reactions', likes), currentMetric('Reposts', count(6)), currentMetric('Replies', count(1))];
  },

  async recent(context) {
    const { events } = await queryRelays(relaysOf(context), [{ kinds: [1], authors: [context.auth.internalId], limit: 20 }], context.dial);
    return events
      .sort((a, b) => b.created_at - a.created_at)
      .slice(0, 20)
      .map((event) => ({ id: event.id, url: `${webOf(context)}/${nip19().neventEncode({ id: event.id, author: event.pubkey, kind: 1 })}` }));
  },
};

export default nostr;
