// The console's pages for a busy month: 1,000 posts (threads on four channels, every state, one in five with a comment)
// in one calendar month, seen by a person whose zone is Europe/Paris. Sequential GETs of the month view, a week of that
// month, the posts list and the compose page, timed from request to the last byte of the server-rendered HTML: p50 and
// p99 (target: under 200 ms for the month of 1,000 posts), with the page's size. The machine may be shared: each page
// also gets the CPU time the Herald process spent per request (from /proc, Linux only), which other processes' load
// barely changes, where the wall-clock figures grow with it.
import fs from 'node:fs';
import pg from 'pg';
import { connectChannel, newDatabase, socialEndpoints, startHerald, startPlatformFake, standalone } from './lib/env.js';
import { heading, line, percentile, repeat, settings } from './lib/stats.js';
import { ConsoleClient } from '../test/helpers/console-client.js';

const POSTS = 1_000;
const STATES = ['QUEUE', 'QUEUE', 'QUEUE', 'PUBLISHED', 'DRAFT', 'ERROR'];

/** Next month (UTC), as YYYY-MM, and its first instant. */
function nextMonth(): { month: string; start: Date } {
  const now = new Date();
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { month: start.toISOString().slice(0, 7), start };
}

async function load(client: pg.Client, organizationId: string, channels: string[], start: Date): Promise<void> {
  // Spread over the first 28 days of the month, round-robin over the channels and states; then a comment on one in five.
  await client.query(
    `insert into post (id, organization_id, integration_id, group_id, root_post_id, position, content, state, publish_date, creation_method, created_at, updated_at)
     select 'bench' || n, $1, ($2::text[])[1 + n % array_length($2::text[], 1)], 'g' || n, 'bench' || n, 0,
            '<p>Bench post ' || n || ' with <strong>some</strong> text, long enough to need an excerpt on the calendar, as a real post would</p>',
            ($5::text[])[1 + n % array_length($5::text[], 1)],
            $3::timestamptz + (n * (interval '28 days' / $4::int)), 'API', now(), now()
     from generate_series(1, $4::int) n`,
    [organizationId, channels, start, POSTS, STATES],
  );
  await client.query(
    `insert into post (id, organization_id, integration_id, group_id, root_post_id, parent_post_id, position, content, state, publish_date, creation_method, created_at, updated_at)
     select 'c' || id, organization_id, integration_id, group_id, id, id, 1, 'A comment', state, publish_date, 'API', now(), now()
     from post where organization_id = $1 and position = 0 and id like 'bench%' and (substr(id, 6))::int % 5 = 0`,
    [organizationId],
  );
  await client.query('analyze post');
}

/** The first person of the organization, signed up in the console (through the setup link Herald prints, where it prints one). */
async function signUp(url: string, stdout: string): Promise<ConsoleClient> {
  const browser = new ConsoleClient(url);
  const invitation = /\/invite\/([\w-]+)/.exec(stdout)?.[1];
  const answer = await browser.signUp({ email: 'bench@example.com', password: 'correct horse battery', name: 'Bench', invitation });
  if (answer.status !== 303 && answer.status !== 302) throw new Error(`sign-up answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  browser.cookies.set('herald_tz', encodeURIComponent('Europe/Paris'));
  return browser;
}

/** CPU time (user + system) a process has used so far, in ms, or NaN where /proc is not there. */
function cpuMs(pid: number | undefined): number {
  try {
    // Fields 14 and 15 of /proc/<pid>/stat (after the parenthesised command name): utime and stime in clock ticks (USER_HZ, 100 on Linux).
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

async function timeSequential(count: number, call: () => Promise<number>, pid: number | undefined): Promise<{ times: number[]; bytes: number; cpu: number }> {
  let bytes = 0;
  // Warm-up, not timed: the first requests of a page compile its code and prepare its statements.
  for (let index = 0; index < 3; index++) bytes = await call();
  const times: number[] = [];
  const cpuBefore = cpuMs(pid);
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return { times: times.sort((a, b) => a - b), bytes, cpu: (cpuMs(pid) - cpuBefore) / count };
}

export async function consoleFigure(): Promise<void> {
  const databaseUrl = await newDatabase('console');
  const fake = await startPlatformFake();
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const channels: string[] = [];
    for (let index = 0; index < 4; index++) channels.push(await connectChannel(herald, herald.apiKey!, { ...fake, chatId: String(-1009876543210 - index) }));
    const organizationId = (await client.query<{ organization_id: string }>('select organization_id from integration limit 1')).rows[0].organization_id;
    const { month, start } = nextMonth();
    await load(client, organizationId, channels, start);
    const inMonth = Number((await client.query(`select count(*) as n from post where position = 0 and publish_date >= $1 and publish_date < $1::timestamptz + interval '1 month'`, [start])).rows[0].n);
    const browser = await signUp(herald.url, herald.stdout());
    // The ISO week of the month's 10th (Thursday's year and week number).
    const tenth = new Date(start.getTime() + 9 * 86_400_000);
    const thursday = new Date(tenth.getTime() + (3 - ((tenth.getUTCDay() + 6) % 7)) * 86_400_000);
    const weekNumber = 1 + Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / (7 * 86_400_000));
    const week = `${thursday.getUTCFullYear()}-W${String(weekNumber).padStart(2, '0')}`;
    const pages: [string, string][] = [
      [`month view, ${inMonth.toLocaleString('en')} posts (target < 200)`, `/calendar?month=${month}`],
      ['week view (about 250 posts)', `/calendar?view=week&week=${week}`],
      ['posts list', '/posts'],
      ['compose page (4 channels)', '/compose'],
    ];
    const get = (path: string) => async () => {
      const page = await browser.get(path);
      if (page.status !== 200) throw new Error(`GET ${path} answered ${page.status}: ${page.text.slice(0, 300)}`);
      return page.text.length;
    };
    const count = Number(process.env.BENCH_CONSOLE_REQUESTS ?? 30);
    const sizes: Record<string, number> = {};
    const figures = await repeat(settings.runs, async () => {
      const result: Record<string, number> = {};
      for (const [label, path] of pages) {
        const { times, bytes, cpu } = await timeSequential(count, get(path), herald.child.pid);
        sizes[label] = bytes;
        result[`${label} p50`] = percentile(times, 50);
        result[`${label} p99`] = percentile(times, 99);
        result[`${label} cpu`] = cpu;
      }
      return result;
    });
    heading(`Console pages, server-rendered, a month of ${inMonth.toLocaleString('en')} posts on 4 channels seen from Europe/Paris, ${count} sequential GETs, ${settings.runs} runs`);
    for (const [label] of pages) {
      console.log(line({ label: `${label}, p50 (${Math.round(sizes[label] / 1024)} KiB)`, values: figures[`${label} p50`], unit: 'ms', digits: 1 }));
      console.log(line({ label: `${label}, p99`, values: figures[`${label} p99`], unit: 'ms', digits: 1 }));
      console.log(line({ label: `${label}, server CPU`, values: figures[`${label} cpu`], unit: 'ms', digits: 1 }));
    }
  } finally {
    await client.end();
    await herald.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, consoleFigure);
