// Baseline of the REST figures: a bare express + pg server on the same database Herald uses. Plain JavaScript, no
// authentication, no rate limit, no validation, no ORM: the cost of HTTP and the queries.
//   GET /integrations   one primary-key SELECT
//   POST /posts         a JSON body, two INSERTs in one transaction (a thread of two items)
//   DATABASE_URL=... INTEGRATION_ID=... node bench/baselines/express-pg.mjs   → prints "listening on <url>"
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = express();
app.get('/integrations', async (_request, response, next) => {
  try {
    const { rows } = await pool.query('select id, name, provider_identifier, picture, disabled from integration where id = $1', [process.env.INTEGRATION_ID]);
    response.json(rows);
  } catch (error) {
    next(error);
  }
});
await pool.query('create table if not exists bench_post (id bigserial primary key, body jsonb not null, position int not null, created_at timestamptz not null default now())');
app.post('/posts', express.json(), async (request, response, next) => {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const items = request.body.posts[0].value;
    for (let position = 0; position < items.length; position++) await client.query('insert into bench_post (body, position) values ($1, $2)', [items[position], position]);
    await client.query('commit');
    response.json([{ postId: 'bench', integration: process.env.INTEGRATION_ID }]);
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    next(error);
  } finally {
    client.release();
  }
});
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
