// GET /posts for a 90-day window among 1,000,000 posts of one organization (spread over five years on four channels, one
// in nine with a comment), loaded in bulk with generate_series: p50 and p99 of sequential requests at the default page
// size (1,000) and at 100, the query plan of the page's query, and against the same two queries run directly with pg.
import pg from 'pg';
import { connectChannel, newDatabase, socialEndpoints, startHerald, startPlatformFake, standalone } from './lib/env.js';
import { heading, line, percentile, ratios, repeat, settings } from './lib/stats.js';

const ROOTS = 900_000;
const COMMENTS = 100_000;

async function load(client: pg.Client, organizationId: string, channels: string[]): Promise<void> {
  // Roots every ~175 s over five years ending now, round-robin over the channels; then a comment on one root in nine.
  await client.query(
    `insert into post (id, organization_id, integration_id, group_id, root_post_id, position, content, state, publish_date, creation_method, created_at, updated_at)
     select 'bench' || n, $1, ($2::text[])[1 + n % array_length($2::text[], 1)], 'g' || n, 'bench' || n, 0,
            '<p>Bench post ' || n || ' with some text to make it a realistic row</p>',
            case when n % 10 = 0 then 'QUEUE' else 'PUBLISHED' end,
            now() - interval '5 years' + (n * (interval '5 years' / $3::int)), 'API', now(), now()
     from generate_series(1, $3::int) n`,
    [organizationId, channels, ROOTS],
  );
  await client.query(
    `insert into post (id, organization_id, integration_id, group_id, root_post_id, parent_post_id, position, content, state, publish_date, creation_method, created_at, updated_at)
     select 'c' || id, organization_id, integration_id, group_id, id, id, 1, 'A comment', state, publish_date, 'API', now(), now()
     from post where organization_id = $1 and position = 0 and id like 'bench%' and (substr(id, 6))::int % 9 = 0 limit $2`,
    [organizationId, COMMENTS],
  );
  await client.query('analyze post');
}

async function timeSequential(count: number, call: () => Promise<void>): Promise<number[]> {
  for (let index = 0; index < 5; index++) await call();
  const times: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

export async function postsWindowFigure(): Promise<void> {
  const databaseUrl = await newDatabase('window');
  const fake = await startPlatformFake();
  const herald = await startHerald(databaseUrl, { SOCIAL_ENDPOINTS: socialEndpoints(fake) }, ['--role', 'web']);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const channels: string[] = [];
    for (let index = 0; index < 4; index++) {
      // Four channels of the same fake bot need four chats: the fake answers any chat id.
      const id = await connectChannel(herald, herald.apiKey!, { ...fake, chatId: String(-1009876543210 - index) });
      channels.push(id);
    }
    const organizationId = (await client.query<{ organization_id: string }>('select organization_id from integration limit 1')).rows[0].organization_id;
    const loadStarted = performance.now();
    await load(client, organizationId, channels);
    const loaded = Number((await client.query('select count(*) as n from post')).rows[0].n);
    const start = new Date(Date.now() - 2 * 365 * 86_400_000);
    const end = new Date(start.getTime() + 90 * 86_400_000);
    const inWindow = Number((await client.query(`select count(*) as n from post where organization_id = $1 and position = 0 and deleted_at is null and publish_date between $2 and $3`, [organizationId, start, end])).rows[0].n);
    const url = (limit?: number) => `${herald.url}/api/public/v1/posts?startDate=${start.toISOString()}&endDate=${end.toISOString()}${limit ? `&limit=${limit}` : ''}`;
    const get = (limit?: number) => async () => {
      const response = await fetch(url(limit), { headers: { authorization: herald.apiKey! } });
      if (response.status !== 200) throw new Error(`GET /posts answered ${response.status}`);
      await response.arrayBuffer();
    };
    const pageSql = `select * from post where organization_id = $1 and deleted_at is null and position = 0 and integration_id = any($2::text[])
      and publish_date >= $3 and publish_date <= $4 order by publish_date asc, id asc limit $5`;
    const direct = (limit: number) => async () => {
      const page = await client.query(pageSql, [organizationId, channels, start, end, limit + 1]);
      const ids = page.rows.slice(0, limit).map((row) => row.id);
      await client.query('select * from post where root_post_id = any($1::text[]) and position > 0 and deleted_at is null order by position', [ids]);
    };
    const count = Number(process.env.BENCH_WINDOW_REQUESTS ?? 40);
    const figures = await repeat(settings.runs, async () => {
      const full = await timeSequential(count, get());
      const fullDirect = await timeSequential(count, direct(1000));
      const small = await timeSequential(count, get(100));
      const smallDirect = await timeSequential(count, direct(100));
      return { full: percentile(full, 50), fullP99: percentile(full, 99), fullDirect: percentile(fullDirect, 50), small: percentile(small, 50), smallP99: percentile(small, 99), smallDirect: percentile(smallDirect, 50) };
    });
    const plan = await client.query(`explain (analyze, buffers, costs off) ${pageSql}`, [organizationId, channels, start, end, 1001]);
    heading(
      `GET /posts, 90-day window among ${loaded.toLocaleString('en')} posts of one organization (${inWindow.toLocaleString('en')} in the window; loaded in ${((performance.now() - loadStarted) / 1000).toFixed(0)} s), ${count} sequential requests, ${settings.runs} runs`,
    );
    console.log(line({ label: 'Herald p50, first page of 1,000 (default)', values: figures.full, unit: 'ms', digits: 1 }));
    console.log(line({ label: 'Herald p99, first page of 1,000', values: figures.fullP99, unit: 'ms', digits: 1 }));
    console.log(line({ label: 'same two queries with pg, p50', values: figures.fullDirect, unit: 'ms', digits: 1 }));
    console.log(line({ label: 'Herald p50, page of 100 (limit=100; target ≤ 10)', values: figures.small, unit: 'ms', digits: 1 }));
    console.log(line({ label: 'Herald p99, page of 100', values: figures.smallP99, unit: 'ms', digits: 1 }));
    console.log(line({ label: 'same two queries with pg, p50', values: figures.smallDirect, unit: 'ms', digits: 1 }));
    console.log(line({ label: 'ratio Herald / pg (page of 100)', values: ratios(figures.small, figures.smallDirect), unit: '', digits: 2 }));
    console.log('  query plan of the page (1,000 + 1 rows):');
    for (const row of plan.rows) console.log(`    ${row['QUERY PLAN']}`);
  } finally {
    await client.end();
    await herald.stop();
    await fake.close();
  }
}

await standalone(import.meta.url, postsWindowFigure);
