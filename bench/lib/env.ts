// What every figure needs: one Postgres for the whole bench (DATABASE_URL's server when set, else an embedded one in a
// temporary directory), a fresh database per figure, Herald started exactly as `npm start` starts it (the test helper's
// startCommand, from dist/), the bare baselines as plain-JavaScript processes, and a zero-latency fake platform.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { createLogger } from '../../src/lib/logger.js';
import { freePort, startHeraldProcess, type HeraldProcess } from '../../test/helpers/herald-process.js';
import { build } from '../../scripts/build.mjs';

export const benchDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let embedded: EmbeddedDatabase | undefined;
let adminUrl: string | undefined;
let counter = 0;

/** The bench's Postgres (started once); dist/ brought up to date first, as `npm start` would. */
export async function postgres(): Promise<string> {
  if (adminUrl) return adminUrl;
  await build();
  if (process.env.DATABASE_URL) {
    adminUrl = process.env.DATABASE_URL;
    return adminUrl;
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-bench-pg-'));
  fs.chmodSync(dataDir, 0o755);
  embedded = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger: createLogger('warn') });
  adminUrl = embedded.adminUrl;
  process.once('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  return adminUrl;
}

export async function stopPostgres(): Promise<void> {
  await embedded?.stop();
  embedded = undefined;
  adminUrl = undefined;
}

/** A new empty database on the bench's Postgres: its connection string. */
export async function newDatabase(label: string): Promise<string> {
  const admin = await postgres();
  const name = `herald_bench_${label}_${process.pid}_${counter++}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  return Object.assign(new URL(admin), { pathname: `/${name}` }).toString();
}

/** Settings of every Herald of the bench: REST and post-creation limits raised out of the way, still counted exactly. */
const BENCH_ENV = {
  LOG_LEVEL: 'warn',
  API_RATE_LIMIT_PER_MINUTE: '100000000',
  CREATE_POST_RATE_LIMIT_PER_HOUR: '100000000',
};

export async function startHerald(databaseUrl: string, env: Record<string, string> = {}, args: string[] = []): Promise<HeraldProcess> {
  return startHeraldProcess({ env: { ...BENCH_ENV, DATABASE_URL: databaseUrl, ...env }, args });
}

/** Starts a baseline script (plain JavaScript under bench/baselines), its standard output piped. */
const spawnBaseline = (script: string, env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [path.join(benchDir, 'baselines', script)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });

/** Runs a baseline script until it prints its listening URL or its result line. */
export async function startBaseline(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string; stop(): Promise<void> }> {
  const child = spawnBaseline(script, env);
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening on (\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Runs a baseline script to its end and answers the JSON it printed last. */
export async function runBaseline<T>(script: string, env: Record<string, string>): Promise<T> {
  const child = spawnBaseline(script, env);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${script} exited with ${code}: ${output}`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as T;
}

export interface PlatformFake {
  url: string;
  token: string;
  chatId: string;
  /** Every sendMessage received: its text and when it arrived (epoch ms). */
  received: { text: string; at: number }[];
  /** How long the fake takes to answer a sendMessage (ms; 0 by default), changeable between runs. */
  latencyMs: number;
  /** sendMessage calls received and not yet answered, and the most there were at once since the last reset. */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

/**
 * A Telegram Bot API (the calls the telegram provider makes to connect and to publish text), zero-latency unless `latencyMs`
 * is set: records what arrived and when, and how many sends were in flight at once.
 */
export async function startPlatformFake(): Promise<PlatformFake> {
  const token = '123456789:AABenchTelegramBotToken';
  const chat = { id: -1009876543210, title: 'Bench channel', username: 'bench_channel', type: 'channel' };
  const received: PlatformFake['received'] = [];
  let messageId = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const method = request.url?.split('?')[0].split('/').at(-1);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        /* a form body: not used by these calls */
      }
      const answer = (result: unknown) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ok: true, result }));
      };
      if (method === 'getMe') return answer({ id: 123456789, is_bot: true, first_name: 'Bench', username: 'bench_bot' });
      // Any chat id is a chat of the bot (several channels on one fake).
      if (method === 'getChat') return answer({ ...chat, id: Number(body.chat_id) || chat.id, title: `Bench channel ${body.chat_id ?? ''}` });
      if (method === 'sendMessage') {
        received.push({ text: String(body.text ?? ''), at });
        const result = { message_id: ++messageId, date: Math.floor(at / 1000), chat: { ...chat, id: Number(body.chat_id) || chat.id }, text: body.text };
        fake.maxInFlight = Math.max(fake.maxInFlight, ++fake.inFlight);
        response.once('close', () => fake.inFlight--);
        if (fake.latencyMs <= 0) return answer(result);
        setTimeout(() => answer(result), fake.latencyMs);
        return;
      }
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(Number(process.env.FAKE_PORT ?? 0), '127.0.0.1', resolve));
  const fake: PlatformFake = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    chatId: String(chat.id),
    received,
    latencyMs: 0,
    inFlight: 0,
    maxInFlight: 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

export const socialEndpoints = (fake: PlatformFake) => JSON.stringify({ telegram: { api: fake.url } });

/** REST with the API key, JSON in and out. */
export async function rest(herald: HeraldProcess, apiKey: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${herald.url}/api/public/v1${route}`, {
    method,
    headers: { authorization: apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** Connects a Telegram channel on the fake (its own chat, else the fake's): its integration id. */
export async function connectChannel(herald: HeraldProcess, apiKey: string, fake: PlatformFake, chatId = fake.chatId): Promise<string> {
  const answer = await rest(herald, apiKey, 'POST', '/integrations/telegram/connect', { botToken: fake.token, chatId });
  if (answer.status !== 200) throw new Error(`connect failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.id as string;
}

/** A create-post body: `count` entries on one channel, each a thread of `items` items, due at `date`. */
export function postBody(integrationId: string, date: Date, texts: string[][], type: 'schedule' | 'now' = 'schedule') {
  return {
    type,
    date: date.toISOString(),
    shortLink: false,
    tags: [],
    posts: texts.map((items) => ({ integration: { id: integrationId }, value: items.map((content) => ({ content, image: [] })), settings: {} })),
  };
}

/** Resident and proportional set sizes (MiB) of processes, from /proc. */
export function memoryOf(pids: number[]): { rss: number; pss: number } {
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    try {
      const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return { rss: rss / 1024, pss: pss / 1024 };
}

/** The pids of a process and all its descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      /* gone */
    }
  }
  const all: number[] = [];
  const walk = (pid: number) => {
    all.push(pid);
    for (const child of children.get(pid) ?? []) walk(child);
  };
  walk(root);
  return all;
}

export const commandOf = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** "2 cores, 24 GiB, AMD EPYC ..., Node v20, Postgres 18": printed at the top of the bench. */
export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  return `${os.cpus().length} cores (${cpu.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

/** Runs a figure on its own (`npx tsx bench/<figure>.ts`) when its file is the program, then stops the bench's Postgres. */
export async function standalone(moduleUrl: string, figure: () => Promise<void>): Promise<void> {
  if (moduleUrl !== `file://${process.argv[1]}`) return;
  try {
    await figure();
  } finally {
    await stopPostgres();
  }
}
