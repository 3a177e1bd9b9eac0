// Composition root: config -> database -> HTTP + worker. Stops in reverse order on SIGINT/SIGTERM.
import http from 'node:http';
import v8 from 'node:v8';
import { isDatabaseUnavailable, StartError } from './errors.js';
import { ConfigError, loadServiceConfig } from './config.js';
import { createLogger } from './lib/logger.js';
import { probeListen } from './lib/probe.js';
import { createHttpServer } from './http/server.js';
import { startConfiguredPostgres } from './db/embedded.js';
// The rest of Herald (the ORM, the tools, the HTTP app, the worker) is imported once the embedded Postgres is starting,
// so that the two take their time together rather than one after the other.

/** Checks that the HTTP port can be bound before anything else starts (the database, the worker, a first API key). */
function checkPort(host: string, port: number): Promise<void> {
  return probeListen(port, host).catch((error: NodeJS.ErrnoException) => {
    throw listenError(error, host, port);
  });
}

function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === 'EADDRINUSE') return new StartError(`Port ${port} on ${host} is already in use: stop the program using it, or set PORT to a free port.`);
  if (error.code === 'EACCES') return new StartError(`Herald may not listen on port ${port} (permission denied): set PORT to a port above 1023.`);
  if (error.code === 'EADDRNOTAVAIL') return new StartError(`HOST ${host} is not an address of this machine: set HOST to one of its addresses, or 0.0.0.0.`);
  return error;
}

/**
 * Listens on host:port, or rejects with the start error of the failed listen. Not express's `app.listen`: express 5 calls its
 * callback on 'error' as well, so a port taken between checkPort and the listen (another process, or an outgoing connection
 * of this one given that port number) went unnoticed, and the process ran its worker with no HTTP socket.
 */
function listen(app: http.RequestListener, host: string, port: number): Promise<http.Server> {
  const server = createHttpServer(app);
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadServiceConfig(process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const web = config.role !== 'worker';
  const working = config.role !== 'web';
  const logger = createLogger(config.logLevel);
  // A database that goes away must not take the process with it: a connection error that escapes a library's background
  // work (a pool's idle client, the queue's batch of job updates) is logged and the work retried when Postgres is back.
  // Anything else unexpected still stops the process, for the supervisor to restart.
  const survive = (kind: string) => (error: unknown) => {
    if (isDatabaseUnavailable(error)) return logger.warn({ err: error }, `database unreachable (${kind}); retrying in the background`);
    logger.fatal({ err: error }, kind);
    process.exit(1);
  };
  process.on('unhandledRejection', survive('unhandled rejection'));
  process.on('uncaughtException', survive('uncaught exception'));
  // A start that hangs (a database that never answers, a lock another process keeps) ends with one sentence and exit code 1,
  // for a supervisor to start it again, rather than a process that runs without serving.
  let stage = 'checking the HTTP port';
  const startGuard = setTimeout(() => {
    console.error(`Herald failed to start: it was still ${stage} after ${config.startTimeoutSeconds} seconds (START_TIMEOUT_SECONDS); exiting so that it can be started again.`);
    process.exit(1);
  }, config.startTimeoutSeconds * 1000);
  if (web) await checkPort(config.host, config.port);
  stage = 'opening the database and applying migrations';
  const starting = config.databaseUrl ? undefined : startConfiguredPostgres(config, logger);
  starting?.catch(() => undefined); // awaited by openServices
  // The database is opened and migrated as soon as bootstrap.js (the ORM) is loaded: its round trips to Postgres wait while
  // the HTTP app, the MCP layer and the worker still load.
  const opening = import('./bootstrap.js').then(({ openServices }) => openServices(config, logger, { starting }));
  opening.catch(() => undefined); // awaited below
  const [opened, { startWorker }, { createApp }, { McpSessions }, { firstOrganization, resolveApiKey }, { createSetupLink, hasOwner, SETUP_LINK_HOURS }] = await Promise.all([
    opening,
    import('./jobs/index.js'),
    import('./http/app.js'),
    import('./mcp/sessions.js'),
    import('../tools/internal/credentials.js'),
    import('../tools/internal/accounts.js'),
  ]).catch(async (error: unknown) => {
    // Whatever was opened is closed again (stopping the embedded Postgres twice is harmless).
    const open = await opening.catch(() => undefined);
    await (open ? open.close() : (await starting?.catch(() => undefined))?.stop())?.catch(() => undefined);
    throw error;
  });
  const { services } = opened;

  // HTTP before the worker: a port lost since the check above ends the start before any job is taken.
  const sessions = web ? new McpSessions(services) : undefined;
  stage = `starting to listen on ${config.host}:${config.port}`;
  const server = sessions ? await listen(createApp(services, sessions), config.host, config.port) : undefined;
  // A fresh instance gets an organization and an API key, shown once, so it is usable before any console exists (printed by
  // a web process: a worker has no one to show it to). Its few queries run while the worker starts, not after it (the
  // worker's start goes on in the background once `startWorker` answers, and they waited behind it).
  const firstAccess = async () => {
    const em = services.orm.em.fork();
    const freshKey = await firstOrganization(em);
    // Its first owner comes from a link only the operator sees, never from being first to reach /signup.
    const created = freshKey ? await resolveApiKey(em, freshKey) : undefined;
    const setupLink = created ? await createSetupLink(em, created.organizationId, { publicUrl: config.publicUrl, now: new Date() }) : undefined;
    return { freshKey, setupLink, ownerMissing: !created && !(await hasOwner(em)) };
  };
  stage = server ? 'starting the worker and creating the first organization' : 'starting the worker';
  const [worker, { freshKey, setupLink, ownerMissing } = { freshKey: undefined, setupLink: undefined, ownerMissing: false }] = await Promise.all([
    working ? startWorker(services, opened.databaseUrl) : undefined,
    server ? firstAccess() : undefined,
  ]);
  clearTimeout(startGuard);

  const base = config.publicUrl;
  const where = opened.embedded ? `embedded Postgres in ${config.dataDir}` : 'Postgres at DATABASE_URL';
  if (!server) {
    console.log(`\nHerald is running as a worker only (publishing and scheduled jobs, no HTTP; ${where}, ${config.workerConcurrency} jobs at a time)\n`);
  } else console.log(
    [
      '',
      `Herald is running at ${base} (listening on ${config.host}:${config.port}${opened.embedded ? ', embedded Postgres in ' + config.dataDir : ''}${worker ? '' : ', web only: publishing runs in the worker processes'})`,
      `  REST API:  ${base}/api/public/v1   (header  Authorization: <API key>)`,
      `  MCP:       ${base}/api/mcp         (header  Authorization: Bearer <API key>)`,
      `             ${base}/api/mcp/<API key>`,
      `             ${base}/api/mcp-oauth     (OAuth: clients register themselves, you approve in the browser)`,
      `  Console:   ${base}/`,
      setupLink
        ? `  Set up:    ${setupLink}\n             Open it to create the owner account. It works once, for ${SETUP_LINK_HOURS} hours; a new one:  npm run herald -- setup-link`
        : ownerMissing
          ? '  Set up:    no owner yet: print a setup link with  npm run herald -- setup-link'
          : undefined,
      freshKey
        ? `  API key:   ${freshKey}\n             Shown once: store it now. Mint a new one with  npm run herald -- key:create`
        : '  API key:   already created (mint a new one with  npm run herald -- key:create)',
      '',
    ]
      .filter((line) => line !== undefined)
      .join('\n'),
  );

  // V8 lets a busy process's heap grow up to 4 times what survived its last full collection before collecting again: under
  // steady REST, MCP and publishing load Herald's live heap stays near 70 MiB while the heap grew to 260 MiB and the
  // process to 340-390 MiB of RSS. Growing it by 30% at most keeps the process near 200 MiB under the same load, flat, at
  // the same throughput (`SOAK_MINUTES=3 npm run bench -- soak`, issue 26). The factor is read at each collection; it is set
  // once started, because during the start (loading every module) it cost a third of a second of collections. The heap may
  // still grow as far as a large request needs.
  v8.setFlagsFromString('--heap-growing-percent=30');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server?.closeIdleConnections();
    await sessions?.closeAll();
    await worker?.stop(); // lets running jobs finish, releases the rest
    server?.closeAllConnections();
    await closed;
    await opened.close().catch((error: Error) => logger.warn({ err: error.message }, 'database close'));
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  // One sentence, no stack: a StartError says what to do; anything else is named by its first line.
  const message = error instanceof StartError ? error.message : ((error as Error)?.message?.split('\n')[0] || `an unexpected ${String(error)} was thrown`);
  console.error(`Herald failed to start: ${message}`);
  process.exit(1);
});
