// Baseline of the REST figure: a bare express + pg server answering GET /integrations with one primary-key SELECT on the
// same database Herald uses. Plain JavaScript, no authentication, no rate limit, no ORM: the cost of HTTP + one query.
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
const server = app.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
