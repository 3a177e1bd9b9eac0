// Crashes of a real Herald process: kill -9 of its process group while posts are being published, and kill -9 of the
// node process alone (its embedded Postgres left to the watchdog); the next start goes on with nothing twice and nothing
// silently lost. Each test starts Herald twice and waits for the jobs of the killed one to be released (up to a minute),
// so it has more time than vitest's default. Then the start right after kill -9 of the group, on the same data directory,
// with the killed processes left as zombies (not reaped yet, or never, by an init that does not reap): it starts; and
// the data directory's locks (herald.pid, Postgres's postmaster.pid) naming a zombie, or a pid now another program's.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createLogger } from '../src/lib/logger.js';
import { newTestDatabase, restCall } from './helpers/harness.js';
import { freePort, startHeraldProcess, type HeraldProcess } from './helpers/herald-process.js';
import { waitFor } from './helpers/posts.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram.js';

let telegram: TelegramFake;
const running: HeraldProcess[] = [];

beforeAll(async () => {
  telegram = await startTelegramFake();
});

afterAll(async () => {
  for (const process of running) await process.stop().catch(() => undefined);
  await telegram?.close();
});

const rest = (herald: HeraldProcess, apiKey: string, method: string, route: string, body?: unknown) => restCall(`${herald.url}/api/public/v1`, apiKey, method, route, body);

describe('kill -9 of the whole process group while posts are due', () => {
  it('publishes nothing twice after the restart, and every item not sent says why', async () => {
    const databaseUrl = await newTestDatabase();
    const env = { DATABASE_URL: databaseUrl, SOCIAL_ENDPOINTS: JSON.stringify({ telegram: { api: telegram.url } }), SWEEP_CRON: '* * * * *' };
    const first = await startHeraldProcess({ env });
    running.push(first);
    const apiKey = first.apiKey!;
    const channel = await rest(first, apiKey, 'POST', '/integrations/telegram/connect', { botToken: telegram.token, chatId: String(telegram.chat.id) });
    expect(channel.status).toBe(200);
    const texts = Array.from({ length: 20 }, (_, index) => [`Crash ${index} one`, `Crash ${index} two`]);
    const created = await rest(first, apiKey, 'POST', '/posts', {
      type: 'schedule',
      date: new Date(Date.now() + 1500).toISOString(),
      shortLink: false,
      tags: [],
      posts: texts.map((entry) => ({ integration: { id: channel.body.id }, value: entry.map((content) => ({ content, image: [] })), settings: {} })),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // A slow platform: the kill lands while messages are in flight.
    telegram.server.setDelay(150);
    await waitFor(async () => (telegram.messages.length >= 8 ? true : undefined), 30_000);
    first.kill('group');
    await first.exited;
    telegram.server.setDelay(0);

    const second = await startHeraldProcess({ env });
    running.push(second);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      // Everything settles: no item stays QUEUE.
      const rows = await waitFor(async () => {
        const result = await client.query<{ content: string; state: string; error: string | null; position: number }>(
          `select content, state, error, position from post where deleted_at is null order by root_post_id, position`,
        );
        return result.rows.every((row) => row.state !== 'QUEUE') ? result.rows : undefined;
      }, 60_000);
      expect(rows).toHaveLength(40);
      const received = new Map<string, number>();
      for (const message of telegram.messages) received.set(message.text ?? '', (received.get(message.text ?? '') ?? 0) + 1);
      // Nothing twice.
      for (const [text, count] of received) expect(count, text).toBe(1);
      for (const row of rows) {
        const sent = received.has(row.content);
        if (row.state === 'PUBLISHED') expect(sent, `${row.content} is PUBLISHED, so Telegram has it`).toBe(true);
        else {
          // Not silently lost: an item that did not go out (or whose outcome is unknown) is ERROR with the reason.
          expect(row.state).toBe('ERROR');
          expect(row.error, row.content).toMatch(/could not confirm|not attempted/i);
        }
      }
      const published = rows.filter((row) => row.state === 'PUBLISHED').length;
      expect(published).toBeGreaterThanOrEqual(30);
    } finally {
      await client.end();
    }
    await second.stop();
  }, 120_000);
});

describe('kill -9 of the node process alone, on the embedded Postgres', () => {
  it('the next start on the same data directory works, and the orphaned Postgres did not outlive Herald for long', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-crash-'));
    fs.chmodSync(home, 0o755);
    try {
      const env = { DATA_DIR: path.join(home, 'data'), EMBEDDED_POSTGRES_PORT: String(await freePort()) };
      const first = await startHeraldProcess({ env });
      running.push(first);
      const postmasterPid = Number(fs.readFileSync(path.join(home, 'data', 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
      first.kill('process');
      await first.exited;
      // The watchdog stops Postgres once its Herald is gone.
      await waitFor(async () => {
        try {
          process.kill(postmasterPid, 0);
          return undefined;
        } catch {
          return true;
        }
      }, 15_000);
      const second = await startHeraldProcess({ env });
      running.push(second);
      expect(second.stdout()).toContain('API key:   already created');
      const response = await fetch(`${second.url}/api/public/v1/is-connected`, { headers: { authorization: first.apiKey! } });
      expect(await response.json()).toEqual({ connected: true });
      await second.stop();
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});

/** Linux: a process's state letter and start time (fields 3 and 22 of /proc/<pid>/stat), or undefined when it is gone. */
function processStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return { state: fields[0], startTime: fields[19] };
  } catch {
    return undefined;
  }
}

const hasProc = fs.existsSync('/proc/self/stat');
const helpers: ChildProcess[] = [];

afterAll(() => {
  for (const child of helpers) child.kill('SIGKILL');
});

/** A process of `owner` (as Postgres's user, the cluster's owner, when root) that runs `script`; answers its first line. */
async function spawnHelper(script: string, owner?: { uid: number; gid: number }): Promise<number> {
  const child = spawn('sh', ['-c', script], { cwd: '/', stdio: ['ignore', 'pipe', 'ignore'], ...owner });
  helpers.push(child);
  let said = '';
  child.stdout.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
  return waitFor(async () => (/^\d+\n/.test(said) ? Number(said.split('\n')[0]) : undefined), 10_000);
}

/**
 * A zombie: a background subshell that has exited, whose parent (`sh` become `sleep`, which never waits) does not reap
 * it. The subshell exits only once its parent is `sleep` (its /proc comm): one that ended earlier, while its parent was
 * still `sh` (as a `sleep 0` could on a loaded machine), would be reaped by `sh` and never be a zombie.
 */
async function zombie(owner?: { uid: number; gid: number }): Promise<number> {
  const pid = await spawnHelper('{ until read command < /proc/$$/comm && [ "$command" = sleep ]; do sleep 0.01; done; } & echo $!; exec sleep 600', owner);
  await waitFor(async () => (processStat(pid)?.state === 'Z' ? true : undefined), 10_000);
  return pid;
}

/** A live process that is not Herald nor Postgres (a `sleep`). */
const unrelated = (owner?: { uid: number; gid: number }) => spawnHelper('echo $$; exec sleep 120', owner);

describe.skipIf(!hasProc)('kill -9 of the whole process group on the embedded Postgres, started again at once', () => {
  it('the next start on the same data directory starts and serves, the killed Herald still a zombie', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-crash-'));
    fs.chmodSync(home, 0o755);
    try {
      const env = { DATA_DIR: path.join(home, 'data'), EMBEDDED_POSTGRES_PORT: String(await freePort()) };
      // Under a parent that never reaps it, as after `npm start` killed with its group, in a container whose init does not reap.
      const first = await startHeraldProcess({ env, unreaped: true });
      running.push(first);
      const served = await fetch(`${first.url}/api/public/v1/is-connected`, { headers: { authorization: first.apiKey! } });
      expect(await served.json()).toEqual({ connected: true });
      first.kill('group');
      await first.exited;
      expect(processStat(first.pid)?.state, 'the killed Herald is a zombie, its pid still in herald.pid').toBe('Z');
      expect(fs.readFileSync(path.join(home, 'data', 'herald.pid'), 'utf8').split('\n')[0]).toBe(String(first.pid));

      const second = await startHeraldProcess({ env });
      running.push(second);
      expect(second.stdout()).toContain('API key:   already created');
      const response = await fetch(`${second.url}/api/public/v1/is-connected`, { headers: { authorization: first.apiKey! } });
      expect(await response.json()).toEqual({ connected: true });
      await second.stop();
      await first.stop();
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.skipIf(!hasProc)('the locks of a data directory naming a process that is not the Herald or the Postgres that took them', () => {
  let dataDir: string;
  let clusterDir: string;
  /** The cluster's owner (Postgres's own lock check sees only its processes), when the tests run as root. */
  let owner: { uid: number; gid: number } | undefined;
  /** The postmaster.pid of a running cluster, as a kill -9 leaves it. */
  let postmasterPid: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-locks-'));
    fs.chmodSync(dataDir, 0o755);
    const database = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger: createLogger('silent') });
    clusterDir = fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))
      ? path.join(dataDir, 'postgres')
      : /is in (\S+)/.exec(fs.readFileSync(path.join(dataDir, 'postgres-location.txt'), 'utf8'))![1];
    postmasterPid = fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8');
    await database.stop();
    const { uid, gid } = fs.statSync(clusterDir);
    owner = process.getuid?.() === 0 ? { uid, gid } : undefined;
  }, 120_000);

  afterAll(() => {
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    if (clusterDir && !clusterDir.startsWith(dataDir)) fs.rmSync(clusterDir, { recursive: true, force: true });
  });

  /** herald.pid and postmaster.pid left naming these processes; then the embedded Postgres starts and answers. */
  async function startsDespite(heraldLock: string, postmaster: number): Promise<void> {
    fs.writeFileSync(path.join(dataDir, 'herald.pid'), heraldLock);
    fs.writeFileSync(path.join(clusterDir, 'postmaster.pid'), postmasterPid.replace(/^\d+/, String(postmaster)), { mode: 0o600 });
    if (owner) fs.chownSync(path.join(clusterDir, 'postmaster.pid'), owner.uid, owner.gid);
    const database = await startEmbeddedPostgres({ dataDir, port: await freePort(), logger: createLogger('silent') });
    try {
      const client = new pg.Client({ connectionString: database.adminUrl });
      await client.connect();
      expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
      await client.end();
    } finally {
      await database.stop();
    }
  }

  it('a zombie (dead, not reaped) is not a running Herald nor a running Postgres: the start goes on', async () => {
    const herald = await zombie();
    const postmaster = await zombie(owner);
    // As an earlier Herald wrote the lock (the pid alone), and with the start time it had.
    await startsDespite(String(herald), postmaster);
    await startsDespite(`${herald}\n${processStat(herald)!.startTime}\n`, postmaster);
  }, 120_000);

  it('a pid now used by another program is not a running Herald nor a running Postgres: the start goes on', async () => {
    const other = await unrelated();
    const postmaster = await unrelated(owner);
    // As an earlier Herald wrote the lock (the pid alone), and with the start time of the Herald that wrote it, earlier.
    await startsDespite(String(other), postmaster);
    await startsDespite(`${other}\n${Number(processStat(other)!.startTime) - 1}\n`, postmaster);
    // A node program with the pid since: told apart by its start time.
    const node = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 120000)'], { stdio: 'ignore' });
    helpers.push(node);
    await waitFor(async () => processStat(node.pid!), 10_000);
    await startsDespite(`${node.pid}\n${Number(processStat(node.pid!)!.startTime) - 1}\n`, postmaster);
  }, 120_000);

  it('the process that took the lock, still running, is refused in one sentence', async () => {
    const node = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 120000)'], { stdio: 'ignore' });
    helpers.push(node);
    await waitFor(async () => processStat(node.pid!), 10_000);
    fs.writeFileSync(path.join(dataDir, 'herald.pid'), `${node.pid}\n${processStat(node.pid!)!.startTime}\n`);
    await expect(startEmbeddedPostgres({ dataDir, port: await freePort(), logger: createLogger('silent') })).rejects.toThrow(
      new RegExp(`^Another Herald \\(process ${node.pid}\\) is already running on the data directory ${dataDir}: stop it first, or give this one another DATA_DIR\\.$`),
    );
  });
});
