// A TCP proxy on 127.0.0.1 in front of Postgres, for the bench: it counts the database round trips of what goes through
// it, and can add network latency, as if Postgres ran on another machine (issue 26).
//
// It reads the client's side of the Postgres frontend/backend protocol v3 (postgresql.org/docs/current/protocol-flow.html
// and protocol-message-formats.html, Postgres 18, read 2026-11): first an untyped message (int32 length including itself,
// int32 code: SSLRequest 80877103, GSSENCRequest 80877104, CancelRequest 80877102, else a StartupMessage whose code is the
// protocol version), then typed messages (1-byte type, int32 length including itself, body). The server's side is passed
// through untouched.
//
// A round trip is a client message after which the client waits for the server's answer: a simple Query ('Q'), a Sync
// ('S', the end of an extended-query exchange Parse/Bind/Describe/Execute/Sync, which node-postgres sends in one write
// for a parameterised query), and a FunctionCall ('F'). Connection start-ups (startup and authentication) are counted
// apart, as `connections`, since a pool pays them once.
//
// SSLRequest and GSSENCRequest are answered 'N' by the proxy itself (the protocol's "not supported": the client goes on
// in clear or gives up when it requires encryption); Herald's pg clients only ask when the URL says sslmode=require.
//
// Latency: `delayMs` is the delay per round trip, applied once, to what the server sends (its answers and its
// notifications), in order, by a timer queue. Applying it to one direction rather than half to each is the same cost per
// round trip, and halves the error of Node's timers (whole milliseconds of loop time: a 0.5 ms wait lands anywhere
// between about 0 and 1 ms late), which `appliedDelayMs()` reports as measured.
import net from 'node:net';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
/** Typed client messages after which the client waits for the server. */
const WAITS_FOR_ANSWER = new Set(['Q', 'S', 'F']);

export interface PgProxy {
  /** postgres://… of the upstream with its host and port replaced by the proxy's. */
  url: string;
  port: number;
  /** Round trips since the last reset (every connection). */
  count(): number;
  /** Round trips since the last reset, per connection (connection number → count), connections with none left out. */
  perConnection(): Map<number, number>;
  /** Connections opened since the last reset. */
  connections(): number;
  /** The SQL of each round trip since the last reset, in order (connection number and statements). */
  statements(): { connection: number; statements: string[] }[];
  reset(): void;
  /** Changes the delay per round trip for what is sent from now on. */
  setDelay(ms: number): void;
  /** The mean delay actually applied to the server's chunks since the last reset (ms), NaN when none. */
  appliedDelayMs(): number;
  close(): Promise<void>;
}

/** Splits the client's byte stream into messages and counts the ones that wait for an answer. */
class ClientMessages {
  private buffer: Buffer = Buffer.alloc(0);
  private startup = true;
  /** Prepared statements of this connection by name ('' the unnamed one), and what was sent since the last round trip. */
  private readonly prepared = new Map<string, string>();
  private pending: string[] = [];
  constructor(
    private readonly onRoundTrip: (statements: string[]) => void,
    /** An SSLRequest or GSSENCRequest arrived: the proxy answers it itself, it is not forwarded. */
    private readonly onEncryptionRequest: () => void,
  ) {}

  /** Reads a chunk: answers the bytes to forward to the server (encryption requests removed). */
  read(chunk: Buffer): Buffer {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const forward: Buffer[] = [];
    let offset = 0;
    for (;;) {
      if (this.startup) {
        if (this.buffer.length - offset < 8) break;
        const length = this.buffer.readInt32BE(offset);
        if (this.buffer.length - offset < length) break;
        const code = this.buffer.readInt32BE(offset + 4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          // Still the untyped phase: the client sends its StartupMessage after our 'N'.
          this.onEncryptionRequest();
        } else {
          forward.push(this.buffer.subarray(offset, offset + length));
          this.startup = false;
        }
        offset += length;
        continue;
      }
      if (this.buffer.length - offset < 5) break;
      const length = this.buffer.readInt32BE(offset + 1);
      if (this.buffer.length - offset < 1 + length) break;
      const type = String.fromCharCode(this.buffer[offset]);
      this.note(type, this.buffer.subarray(offset + 5, offset + 1 + length));
      if (WAITS_FOR_ANSWER.has(type)) {
        this.onRoundTrip(this.pending);
        this.pending = [];
      }
      forward.push(this.buffer.subarray(offset, offset + 1 + length));
      offset += 1 + length;
    }
    this.buffer = this.buffer.subarray(offset);
    return forward.length === 1 ? forward[0] : Buffer.concat(forward);
  }

  /** The SQL a message runs: Query (its text), Parse (name, text: remembered), Bind (portal, statement name: executed). */
  private note(type: string, body: Buffer): void {
    const cstrings = (count: number) => {
      const strings: string[] = [];
      let start = 0;
      for (let index = 0; index < count; index++) {
        const end = body.indexOf(0, start);
        if (end < 0) break;
        strings.push(body.toString('utf8', start, end));
        start = end + 1;
      }
      return strings;
    };
    if (type === 'Q') this.pending.push(cstrings(1)[0] ?? '');
    else if (type === 'P') {
      const [name, text] = cstrings(2);
      this.prepared.set(name ?? '', text ?? '');
    } else if (type === 'B') {
      const [, name] = cstrings(2);
      this.pending.push(this.prepared.get(name ?? '') ?? `(prepared ${name})`);
    } else if (type === 'F') this.pending.push('(function call)');
  }
}

/**
 * Holds chunks for `delay()` ms each and writes them in the order they came: one timer for the head of the queue, every
 * chunk that is due written when it fires.
 */
class DelayQueue {
  private readonly queue: { chunk: Buffer; due: number; arrived: number }[] = [];
  private timer?: NodeJS.Timeout;
  constructor(
    private readonly target: net.Socket,
    private readonly delay: () => number,
    private readonly applied: (ms: number) => void,
  ) {}

  push(chunk: Buffer): void {
    const now = performance.now();
    const delay = this.delay();
    if (delay <= 0 && this.queue.length === 0) {
      this.target.write(chunk);
      return;
    }
    this.queue.push({ chunk, due: now + delay, arrived: now });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.queue.length === 0) return;
    // Node rounds a wait under 1 ms up to 1 ms; a wait that ends early (loop time is whole milliseconds) is waited again.
    this.timer = setTimeout(() => this.flush(), Math.max(0, this.queue[0].due - performance.now()));
  }

  private flush(): void {
    this.timer = undefined;
    const now = performance.now();
    while (this.queue.length > 0 && this.queue[0].due <= now) {
      const { chunk, arrived } = this.queue.shift()!;
      if (!this.target.destroyed) this.target.write(chunk);
      this.applied(now - arrived);
    }
    this.schedule();
  }

  clear(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

/** Starts a proxy on 127.0.0.1 (a free port) in front of the Postgres of `upstreamUrl`. */
export async function startPgProxy(upstreamUrl: string, options: { delayMs?: number } = {}): Promise<PgProxy> {
  const upstream = new URL(upstreamUrl);
  const upstreamHost = upstream.hostname || '127.0.0.1';
  const upstreamPort = Number(upstream.port || 5432);
  let delayMs = options.delayMs ?? 0;
  let total = 0;
  let opened = 0;
  let appliedSum = 0;
  let appliedCount = 0;
  let perConnection = new Map<number, number>();
  let log: { connection: number; statements: string[] }[] = [];
  let nextId = 0;
  const sockets = new Set<net.Socket>();

  const server = net.createServer((client) => {
    const id = nextId++;
    opened++;
    const server = net.connect(upstreamPort, upstreamHost);
    client.setNoDelay(true);
    server.setNoDelay(true);
    sockets.add(client);
    sockets.add(server);
    const answers = new DelayQueue(client, () => delayMs, (ms) => {
      appliedSum += ms;
      appliedCount++;
    });
    const messages = new ClientMessages(
      (statements) => {
        total++;
        perConnection.set(id, (perConnection.get(id) ?? 0) + 1);
        if (log.length < 10_000) log.push({ connection: id, statements });
      },
      () => answers.push(Buffer.from('N')),
    );
    client.on('data', (chunk: Buffer) => {
      const forward = messages.read(chunk);
      if (forward.length > 0) server.write(forward);
    });
    server.on('data', (chunk: Buffer) => answers.push(chunk));
    const end = () => {
      answers.clear();
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    // Either side closing or failing ends both, as a network path would.
    for (const socket of [client, server]) {
      socket.on('error', end);
      socket.on('close', end);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const url = Object.assign(new URL(upstreamUrl), { hostname: '127.0.0.1', port: String(port) }).toString();
  return {
    url,
    port,
    count: () => total,
    perConnection: () => new Map(perConnection),
    connections: () => opened,
    statements: () => [...log],
    reset() {
      total = 0;
      log = [];
      opened = 0;
      appliedSum = 0;
      appliedCount = 0;
      perConnection = new Map();
    },
    setDelay(ms: number) {
      delayMs = ms;
    },
    appliedDelayMs: () => (appliedCount === 0 ? NaN : appliedSum / appliedCount),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
