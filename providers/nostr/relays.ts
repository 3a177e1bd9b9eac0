// A small NIP-01 relay client over WebSocket (the `ws` package: Node 20 has no WebSocket client of its own). Every relay is
// talked to on its own connection, in parallel; one relay that is down or silent never holds up or fails the others.
//   EVENT → ["OK", <id>, <true|false>, <message>]   (NIP-01; "duplicate:" is an OK true, relays dedupe by id)
//   REQ   → ["EVENT", <sub>, <event>]… then ["EOSE", <sub>] (or ["CLOSED", <sub>, <reason>])
import { randomBytes } from 'node:crypto';
import type WebSocket from 'ws';
import type { Filter } from 'nostr-tools/filter';
import type { Event } from 'nostr-tools/pure';
import { networkReason } from '../../src/lib/platform-http.js';
import { onFirstUse } from '../../src/lib/on-first-use.js';
import type { Dial } from '../types.js';

const webSocket = onFirstUse<typeof WebSocket>('ws');
const nostrPure = onFirstUse<typeof import('nostr-tools/pure')>('nostr-tools/pure');
const nostrFilter = onFirstUse<typeof import('nostr-tools/filter')>('nostr-tools/filter');

/** How long a relay may take to open, and then to answer. Mutable so tests can shorten them. */
export const relayTimeouts = { connectMs: 5000, answerMs: 10_000 };

/** One relay's answer to an EVENT: accepted (OK true) or not, with the relay's message or why it could not be reached. */
export interface RelayAnswer {
  relay: string;
  accepted: boolean;
  /** The OK message ("", "duplicate: …", "blocked: …"), a NOTICE, or the connection failure. */
  message: string;
  /** False when the relay was never reached or never answered (worth trying again later). */
  answered: boolean;
}

function parse(data: WebSocket.RawData): unknown[] | undefined {
  try {
    const message: unknown = JSON.parse(data.toString());
    return Array.isArray(message) ? message : undefined;
  } catch {
    return undefined;
  }
}

function failureReason(error: unknown): string {
  const { code, name, message } = error as { code?: string; name?: string; message?: string };
  if (/Unexpected server response: (\d+)/.test(message ?? '')) return `not a relay (${message})`;
  return networkReason(code, name ?? '', message);
}

/**
 * Opens a connection to one relay and runs `talk` on it until it settles or `answerMs` passes; the socket is always closed.
 * `talk` gets `send` and a way to register the message handler, and settles the returned promise itself. A relay the user
 * typed is dialled at the address the SSRF guard checked (`dial`); a refused one is a failure like an unreachable one.
 */
async function withRelay<T>(
  relay: string,
  dial: Dial,
  onTimeout: () => T,
  onFailure: (reason: string) => T,
  talk: (send: (message: unknown[]) => void, settle: (value: T) => void) => (message: unknown[]) => void,
): Promise<T> {
  let lookup: Awaited<ReturnType<Dial>>;
  try {
    lookup = await dial(relay);
  } catch (error) {
    return onFailure((error as Error).message);
  }
  return new Promise((resolve) => {
    let socket: WebSocket;
    let done = false;
    const settle = (value: T) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      resolve(value);
    };
    const timer = setTimeout(() => settle(onTimeout()), relayTimeouts.connectMs + relayTimeouts.answerMs);
    try {
      const Socket = webSocket();
      socket = new Socket(relay, { handshakeTimeout: relayTimeouts.connectMs, ...(lookup ? { lookup } : {}) });
    } catch (error) {
      clearTimeout(timer);
      resolve(onFailure(failureReason(error)));
      return;
    }
    const handle = talk((message) => socket.send(JSON.stringify(message)), settle);
    socket.on('open', () => handle(['open']));
    socket.on('message', (data) => {
      const message = parse(data);
      if (message) handle(message);
    });
    socket.on('error', (error) => settle(onFailure(failureReason(error))));
    socket.on('close', () => settle(onFailure('the relay closed the connection')));
  });
}

/** Sends a signed event to every relay and answers what each one said. */
export function publishToRelays(relays: string[], event: Event, dial: Dial): Promise<RelayAnswer[]> {
  return Promise.all(
    relays.map((relay) => {
      let notice = '';
      return withRelay<RelayAnswer>(
        relay,
        dial,
        () => ({ relay, accepted: false, answered: false, message: notice ? `no OK, only a notice: ${notice}` : 'no answer before the time-out' }),
        (reason) => ({ relay, accepted: false, answered: false, message: reason }),
        (send, settle) => (message) => {
          if (message[0] === 'open') send(['EVENT', event]);
          else if (message[0] === 'OK' && message[1] === event.id) {
            settle({ relay, accepted: message[2] === true, answered: true, message: typeof message[3] === 'string' ? message[3] : '' });
          } else if (message[0] === 'NOTICE' && typeof message[1] === 'string') notice = message[1];
        },
      );
    }),
  );
}

/** Events matching `filters` from every reachable relay, each checked (id and signature) and counted once. */
export async function queryRelays(relays: string[], filters: Filter[], dial: Dial): Promise<{ events: Event[]; unreachable: { relay: string; reason: string }[] }> {
  const unreachable: { relay: string; reason: string }[] = [];
  const byId = new Map<string, Event>();
  await Promise.all(
    relays.map((relay) => {
      const subscription = randomBytes(8).toString('hex');
      const found: Event[] = [];
      return withRelay<void>(
        relay,
        dial,
        () => found.forEach((event) => byId.set(event.id, event)), // what came before the time-out still counts
        (reason) => {
          if (found.length === 0) unreachable.push({ relay, reason });
          found.forEach((event) => byId.set(event.id, event));
        },
        (send, settle) => (message) => {
          if (message[0] === 'open') send(['REQ', subscription, ...filters]);
          else if (message[0] === 'EVENT' && message[1] === subscription) {
            const event = message[2] as Event;
            if (event && typeof event === 'object' && nostrPure().verifyEvent(event) && nostrFilter().matchFilters(filters, event)) found.push(event);
          } else if ((message[0] === 'EOSE' || message[0] === 'CLOSED') && message[1] === subscription) {
            if (message[0] === 'EOSE') send(['CLOSE', subscription]);
            found.forEach((event) => byId.set(event.id, event));
            settle(undefined);
          }
        },
      );
    }),
  );
  return { events: [...byId.values()], unreachable };
}
