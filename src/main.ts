// Composition root: config -> database -> worker + HTTP. Stops in reverse order on SIGINT/SIGTERM.
import type { Server } from 'node:http';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './lib/logger.js';
import { openServices } from './bootstrap.js';
import { startWorker } from './jobs/index.js';
import { createApp } from './http/app.js';
import { McpSessions } from './mcp/sessions.js';
import { OrganizationSchema } from './db/entities.js';
import { createOrganization, mintApiKey } from '../tools/internal/credentials.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const opened = await openServices(config, logger);
  const { services } = opened;

  // A fresh instance gets an organization and an API key, shown once, so it is usable before any console exists.
  let freshKey: string | undefined;
  const em = services.orm.em.fork();
  if ((await em.count(OrganizationSchema, {})) === 0) {
    const organization = await createOrganization(em, 'My organization');
    freshKey = await mintApiKey(em, organization.id);
  }

  const worker = await startWorker(services, opened.databaseUrl);
  const sessions = new McpSessions(services);
  const app = createApp(services, sessions);
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(config.port, config.host, () => resolve(listening));
  });

  const base = config.publicUrl;
  console.log(
    [
      '',
      `Herald is running at ${base} (listening on ${config.host}:${config.port}${opened.embedded ? ', embedded Postgres in ' + config.dataDir : ''})`,
      `  REST API:  ${base}/api/public/v1   (header  Authorization: <API key>)`,
      `  MCP:       ${base}/api/mcp         (header  Authorization: Bearer <API key>)`,
      `             ${base}/api/mcp/<API key>`,
      `             ${base}/api/mcp-oauth     (OAuth: clients register themselves, you approve in the browser)`,
      `  Console:   ${base}/   (the first sign-up becomes the owner of this instance)`,
      freshKey
        ? `  API key:   ${freshKey}\n             Shown once: store it now. Mint a new one with  npm run herald -- key:create`
        : '  API key:   already created (mint a new one with  npm run herald -- key:create)',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await sessions.closeAll();
    await worker.stop(); // lets running jobs finish, releases the rest
    server.closeAllConnections();
    await closed;
    await opened.close().catch((error: Error) => logger.warn({ err: error.message }, 'database close'));
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  console.error('Herald failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
