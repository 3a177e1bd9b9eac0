// Baseline of the start and memory figures: node starting the embedded Postgres alone (Herald's own code for it, compiled
// in dist/), on DATA_DIR: a new cluster (initdb) when the directory is empty, else the existing one. Prints "listening on
// <url>" when Postgres accepts connections, and stops it on SIGTERM.
import { startEmbeddedPostgres } from '../../dist/src/db/embedded.js';
import { createLogger } from '../../dist/src/lib/logger.js';

const database = await startEmbeddedPostgres({ dataDir: process.env.DATA_DIR, port: Number(process.env.EMBEDDED_POSTGRES_PORT), logger: createLogger('warn') });
console.log(`listening on ${database.adminUrl}`);
process.on('SIGTERM', () => void database.stop().then(() => process.exit(0)));
