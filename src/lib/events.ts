// Changes to posts, for MCP resource subscriptions. A change is emitted in this process at once and sent through Postgres
// NOTIFY, so another Herald process holding the subscribed session (several processes share one database) hears it too.
// A process LISTENs only while it has subscribers; it ignores its own notifications (already emitted locally).
// NOTIFY is fire-and-forget: a process that is not listening at that moment misses the change (a client re-reads the
// resource after reconnecting).
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from './logger.js';

export const EVENTS_CHANNEL = 'herald_events';

export interface PostChange {
  kind: 'post';
  organizationId: string;
  /** The root post of the chain. */
  postId: string;
  /** The root's state after the change. */
  state: string;
}

export type ChangeListener = (change: PostChange) => void;

export interface EventBusOptions {
  /** The database whose NOTIFY channel this bus shares with the other processes. */
  connectionString: string;
  /** Runs `select pg_notify(channel, payload)` on a pooled connection. */
  notify: (channel: string, payload: string) => Promise<void>;
  logger: Logger;
  /** Seconds before a lost LISTEN connection is opened again. */
  reconnectSeconds?: number;
}

export class EventBus {
  /** Tells this process's notifications from the others'. */
  readonly origin = randomUUID();
  private readonly emitter = new EventEmitter();
  private client?: pg.Client;
  private listening?: Promise<void>;
  private retry?: NodeJS.Timeout;

  constructor(private readonly options: EventBusOptions) {
    this.emitter.setMaxListeners(0);
  }

  /** Emits here and notifies the other processes. Never throws: a lost notification must not fail the publishing that caused it. */
  async publish(change: PostChange): Promise<void> {
    this.deliver(change);
    try {
      await this.options.notify(EVENTS_CHANNEL, JSON.stringify({ origin: this.origin, ...change }));
    } catch (error) {
      this.options.logger.warn({ err: (error as Error).message }, 'could not notify other processes of a post change');
    }
  }

  /** Listens for changes from every process; answers the function that stops listening. */
  subscribe(listener: ChangeListener): () => void {
    this.emitter.on('change', listener);
    this.startListening();
    return () => {
      this.emitter.off('change', listener);
      if (this.subscribers === 0) void this.stopListening();
    };
  }

  get subscribers(): number {
    return this.emitter.listenerCount('change');
  }

  /** Resolves when this process LISTENs (after the first subscribe). */
  async ready(): Promise<void> {
    await this.listening;
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
    await this.stopListening();
  }

  private deliver(change: PostChange): void {
    for (const listener of this.emitter.listeners('change') as ChangeListener[]) {
      try {
        listener(change);
      } catch (error) {
        this.options.logger.warn({ err: (error as Error).message }, 'a post change listener failed');
      }
    }
  }

  private startListening(): void {
    if (this.listening || this.subscribers === 0) return;
    const client = new pg.Client({ connectionString: this.options.connectionString });
    this.client = client;
    client.on('notification', (message) => {
      if (message.channel !== EVENTS_CHANNEL || !message.payload) return;
      try {
        const { origin, ...change } = JSON.parse(message.payload) as PostChange & { origin: string };
        if (origin !== this.origin && change.kind === 'post') this.deliver(change);
      } catch {
        /* not ours */
      }
    });
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.options.logger.warn({ err: error?.message }, 'the LISTEN connection for post changes was lost; opening it again');
      this.client = undefined;
      this.listening = undefined;
      client.end().catch(() => undefined);
      this.retry = setTimeout(() => this.startListening(), (this.options.reconnectSeconds ?? 2) * 1000);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    this.listening = client
      .connect()
      .then(() => client.query(`listen ${EVENTS_CHANNEL}`))
      .then(() => undefined)
      .catch((error: Error) => lost(error));
  }

  private async stopListening(): Promise<void> {
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    const listening = this.listening;
    this.listening = undefined;
    if (!client) return;
    await listening?.catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}
