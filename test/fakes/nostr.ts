// A fake Nostr relay (NIP-01 over WebSocket on 127.0.0.1) for provider and end-to-end tests. Its rules come from NIP-01
// (https://github.com/nostr-protocol/nips/blob/master/01.md: EVENT/OK/REQ/EOSE/CLOSED/NOTICE and the OK prefixes
// duplicate:, blocked:, rate-limited:, invalid:), read 2026-11-26, and events are checked with nostr-tools' verifyEvent.
//
//   const relay = await startNostrRelay();          // relay.url = ws://127.0.0.1:<port>
//   relay.events                                     // every event stored, oldest first (exactly as received)
//   relay.received                                   // every client message, parsed (EVENT, REQ, CLOSE, …)
//   relay.seed(event)                                // stores an event as if another client had published it (profiles, reactions)
//   relay.mode = 'refuse' | 'rate-limited' | 'silent' | 'accept'    // how the next EVENTs are answered
//   await relay.close()
//   await deadRelayUrl()                             // a ws:// URL where nothing listens (connection refused)
//   await startNostrRelay({ url: dead })             // the relay at that address comes back
//
// Like a real relay it answers ["OK", id, false, "invalid: …"] to an event whose id is not the hash of its content or whose
// signature does not verify (nostr-tools verifyEvent), ["OK", id, true, "duplicate: …"] to an event it already holds, and
// ["NOTICE", "…"] to a message it cannot parse. REQ answers the stored events matching the filters (newest first, `limit`
// per filter), then EOSE. Mode 'refuse' answers OK false "blocked: …", 'rate-limited' OK false "rate-limited: …",
// 'silent' never answers an EVENT.
// NIP-09 (https://github.com/nostr-protocol/nips/blob/master/09.md, read 2026-11-27): a kind-5 deletion request is stored, and
// the events its `e` tags name are dropped when their author is the request's author (another key's request deletes
// nothing); a dropped event sent again is refused ("blocked: deleted"). `honourDeletions = false` plays a relay that keeps
// the notes all the same (the request is only a request).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { matchFilter, type Filter } from 'nostr-tools/filter';
import { getEventHash, verifyEvent, type Event } from 'nostr-tools/pure';
import { freePort } from '../helpers/herald-process.js';

export interface NostrRelayFake {
  url: string;
  events: Event[];
  received: unknown[][];
  mode: 'accept' | 'refuse' | 'rate-limited' | 'silent';
  /** The OK messages sent back for EVENTs, in order: [id, accepted, message]. */
  answers: [string, boolean, string][];
  /** Ids of events dropped by a NIP-09 deletion request of their author. */
  deleted: string[];
  honourDeletions: boolean;
  seed(event: Event): void;
  close(): Promise<void>;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** Why a relay would refuse the event's shape, id or signature (NIP-01); undefined when it is sound. */
function invalidReason(event: any): string | undefined {
  if (!event || typeof event !== 'object') return 'invalid: event is not an object';
  if (!HEX64.test(event.id ?? '') || !HEX64.test(event.pubkey ?? '') || !/^[0-9a-f]{128}$/.test(event.sig ?? '')) return 'invalid: id, pubkey or sig is malformed';
  if (!Number.isInteger(event.created_at) || !Number.isInteger(event.kind)) return 'invalid: created_at and kind must be integers';
  if (typeof event.content !== 'string') return 'invalid: content must be a string';
  if (!Array.isArray(event.tags) || !event.tags.every((tag: unknown) => Array.isArray(tag) && tag.every((part) => typeof part === 'string'))) {
    return 'invalid: tags must be arrays of strings';
  }
  if (getEventHash(event) !== event.id) return 'invalid: event id does not match';
  if (!verifyEvent({ ...event })) return 'invalid: bad signature';
  return undefined;
}

/** `url`: a relay that comes back at an address that was down (a deadRelayUrl), to test re-delivery. */
export async function startNostrRelay(options: { url?: string } = {}): Promise<NostrRelayFake> {
  const server = http.createServer();
  const sockets = new WebSocketServer({ server });
  const events: Event[] = [];
  const received: unknown[][] = [];
  const answers: [string, boolean, string][] = [];
  const fake: NostrRelayFake = {
    url: '',
    events,
    received,
    answers,
    deleted: [],
    honourDeletions: true,
    mode: 'accept',
    seed: (event) => void events.push(event),
    close: async () => {
      for (const client of sockets.clients) client.terminate();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const ok = (socket: WebSocket, id: string, accepted: boolean, message: string) => {
    answers.push([id, accepted, message]);
    socket.send(JSON.stringify(['OK', id, accepted, message]));
  };

  const onEvent = (socket: WebSocket, event: any) => {
    const id = typeof event?.id === 'string' ? event.id : '';
    if (fake.mode === 'silent') return;
    const problem = invalidReason(event);
    if (problem) return ok(socket, id, false, problem);
    if (fake.mode === 'refuse') return ok(socket, id, false, 'blocked: this relay only accepts notes from paying members');
    if (fake.mode === 'rate-limited') return ok(socket, id, false, 'rate-limited: slow down there chief');
    if (events.some((stored) => stored.id === id)) return ok(socket, id, true, 'duplicate: already have this event');
    if (fake.deleted.includes(id)) return ok(socket, id, false, 'blocked: this event was deleted by its author');
    if (event.kind === 5 && fake.honourDeletions) {
      const named = new Set((event.tags as string[][]).filter((tag) => tag[0] === 'e').map((tag) => tag[1]));
      for (let index = events.length - 1; index >= 0; index--) {
        if (named.has(events[index].id) && events[index].pubkey === event.pubkey) fake.deleted.push(...events.splice(index, 1).map((gone) => gone.id));
      }
    }
    events.push(event);
    ok(socket, id, true, '');
  };

  const onRequest = (socket: WebSocket, subscription: unknown, filters: Filter[]) => {
    if (typeof subscription !== 'string' || filters.length === 0 || !filters.every((filter) => filter && typeof filter === 'object')) {
      return socket.send(JSON.stringify(['NOTICE', 'invalid: REQ needs a subscription id and at least one filter']));
    }
    const sent = new Set<string>();
    for (const filter of filters) {
      const matching = events.filter((event) => matchFilter(filter, event)).sort((a, b) => b.created_at - a.created_at);
      for (const event of matching.slice(0, filter.limit ?? matching.length)) {
        if (sent.has(event.id)) continue;
        sent.add(event.id);
        socket.send(JSON.stringify(['EVENT', subscription, event]));
      }
    }
    socket.send(JSON.stringify(['EOSE', subscription]));
  };

  sockets.on('connection', (socket) => {
    socket.on('message', (data) => {
      let message: unknown;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return socket.send(JSON.stringify(['NOTICE', 'could not parse message']));
      }
      if (!Array.isArray(message)) return socket.send(JSON.stringify(['NOTICE', 'messages must be JSON arrays']));
      received.push(message);
      if (message[0] === 'EVENT') onEvent(socket, message[1]);
      else if (message[0] === 'REQ') onRequest(socket, message[1], message.slice(2) as Filter[]);
      else if (message[0] !== 'CLOSE') socket.send(JSON.stringify(['NOTICE', `unknown message type ${String(message[0])}`]));
    });
  });

  await new Promise<void>((resolve) => server.listen(options.url ? Number(new URL(options.url).port) : 0, '127.0.0.1', resolve));
  fake.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** A ws:// URL on a port where nothing listens: connecting to it is refused at once. */
export async function deadRelayUrl(): Promise<string> {
  return `ws://127.0.0.1:${await freePort()}`;
}
