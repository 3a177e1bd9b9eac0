// A real Herald per test file: its own database cloned from the migrated template, real HTTP on 127.0.0.1,
// an organization with an API key, and a controllable clock.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase } from '../../src/db/orm.js';
import { SecretBox, randomToken } from '../../src/lib/crypto.js';
import { createLogger } from '../../src/lib/logger.js';
import type { UrlGuardOptions } from '../../src/lib/ssrf.js';
import { buildServices } from '../../src/bootstrap.js';
import { createApp } from '../../src/http/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { McpSessions } from '../../src/mcp/sessions.js';
import { startWorker, type Worker } from '../../src/jobs/index.js';
import { createOrganization, mintApiKey } from '../../tools/internal/credentials.js';
import type { Services } from '../../tools/types.js';
import { TEMPLATE, testDatabaseName, withDatabase } from './template-database.js';

export interface Herald {
  url: string;
  restUrl: string;
  apiKey: string;
  organizationId: string;
  databaseUrl: string;
  /** This Herald's own data directory (local uploads live under uploads/), removed on stop. */
  dataDir: string;
  services: Services;
  sessions: McpSessions;
  /** Sets the clock (undefined: real time). */
  setNow(date: Date | undefined): void;
  startWorker(): Promise<Worker>;
  /** REST call with the organization's key. */
  rest(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  newOrganization(name: string): Promise<{ organizationId: string; apiKey: string }>;
  stop(): Promise<void>;
}

let counter = 0;

/**
 * A call of the REST API at `baseUrl` (…/api/public/v1) with an API key: a body that is not a string is sent as JSON; the
 * answer's body is parsed as JSON when it is JSON, else kept as text.
 */
export async function restCall(
  baseUrl: string,
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

export interface HeraldOptions {
  /** Overrides of the SSRF guard, e.g. `{allowLoopback: true}` to reach fakes on 127.0.0.1 (other blocked ranges stay blocked). */
  guard?: Partial<UrlGuardOptions>;
  /**
   * Overrides of the guard on platform hosts a user types (instances, sites): loopback is allowed by default here, since
   * every fake platform runs on 127.0.0.1; `{}` restores the production rules.
   */
  platformGuard?: Partial<UrlGuardOptions>;
}

/** A new database cloned from the migrated template: its connection string. */
export async function newTestDatabase(): Promise<string> {
  const adminUrl = inject('adminUrl');
  const database = testDatabaseName('test', counter++);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${database} template ${TEMPLATE}`);
  await admin.end();
  return withDatabase(adminUrl, database);
}

export async function startHerald(environment: Record<string, string> = {}, options: HeraldOptions = {}): Promise<Herald> {
  const databaseUrl = await newTestDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-data-'));
  const config: Config = loadConfig({
    DATA_DIR: dataDir,
    FETCH_CONNECT_TIMEOUT_SECONDS: '5',
    FETCH_TIMEOUT_SECONDS: '10',
    API_RATE_LIMIT_PER_MINUTE: '100000',
    CREATE_POST_RATE_LIMIT_PER_HOUR: '100000',
    LOG_LEVEL: 'silent',
    PLATFORM_TIMEOUT_SECONDS: '5',
    ...environment,
  } as NodeJS.ProcessEnv);
  const orm = await openDatabase(databaseUrl, { migrate: false });
  let now: Date | undefined;
  const services: Services = await buildServices(config, {
    orm,
    secrets: new SecretBox(Buffer.from(randomToken(32), 'base64url').toString('hex')),
    logger: createLogger('silent'),
    now: () => now ?? new Date(),
    userAgent: 'Herald-test',
    guard: options.guard,
    platformGuard: options.platformGuard ?? { allowLoopback: true },
  });
  const sessions = new McpSessions(services);
  const app = createApp(services, sessions);
  const server: Server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  config.publicUrl = url;
  const em = orm.em.fork();
  const organization = await createOrganization(em, 'Test organization');
  const apiKey = await mintApiKey(em, organization.id);
  const workers: Worker[] = [];
  const restUrl = `${url}/api/public/v1`;
  return {
    url,
    restUrl,
    apiKey,
    organizationId: organization.id,
    databaseUrl,
    dataDir,
    services,
    sessions,
    setNow(date) {
      now = date;
    },
    async startWorker() {
      const runner = await startWorker(services, databaseUrl);
      workers.push(runner);
      return runner;
    },
    rest: (method, path, body, headers) => restCall(restUrl, apiKey, method, path, body, headers),
    async newOrganization(name) {
      const fork = orm.em.fork();
      const other = await createOrganization(fork, name);
      return { organizationId: other.id, apiKey: await mintApiKey(fork, other.id) };
    },
    async stop() {
      for (const worker of workers) await worker.stop();
      await sessions.closeAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await orm.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
