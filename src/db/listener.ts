// A connection of its own that LISTENs to Postgres channels for as long as the process wants it, opened again every two
// seconds after a loss (Postgres restarting, a network cut): the MCP session hub and the worker presence each keep one.
// LISTEN needs a session connection: through a pooler, it must be in session mode (see README, Deployment).
import pg from 'pg';
import type { Logger } from '../lib/logger.js';

export interface ListenerOptions {
  connectionString: string;
  /** Named in pg_stat_activity (the worker presence is recognised by it). */
  applicationName?: string;
  /** Statements run once connected, before the LISTENs (session settings). */
  setup?: string;
  channels: string[];
  /** Each notification; a failure is logged. */
  onNotification(channel: string, payload: string): void | Promise<void>;
  /** After each (re)connection: catch up with what was announced while the connection was down. */
  onConnected?(): void;
  logger: Logger;
  /** What the connection is for, in the log line of a loss. */
  purpose: string;
}

export class Listener {
  private client?: pg.Client;
  private retry?: NodeJS.Timeout;
  private stopped = false;
  /** Settles when the current connection attempt has listened (or failed). */
  connected: Promise<void> = Promise.resolve();

  constructor(private readonly options: ListenerOptions) {}

  start(): void {
    if (this.stopped || this.client) return;
    const { options } = this;
    const client = new pg.Client({ connectionString: options.connectionString, ...(options.applicationName ? { application_name: options.applicationName } : {}) });
    this.client = client;
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      options.logger.warn({ err: error?.message }, `the ${options.purpose} connection was lost; opening it again`);
      this.retry = setTimeout(() => this.start(), 2000);
      this.retry.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      Promise.resolve()
        .then(() => options.onNotification(message.channel, message.payload ?? ''))
        .catch((error: Error) => options.logger.warn({ err: error.message, channel: message.channel }, 'a notification could not be handled'));
    });
    this.connected = client
      .connect()
      .then(() => client.query(`${options.setup ?? ''}${options.channels.map((channel) => `listen ${channel};`).join(' ')}`))
      .then(() => options.onConnected?.())
      .catch((error: Error) => lost(error));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
