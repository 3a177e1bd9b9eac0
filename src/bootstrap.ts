// Opens everything the service and the CLI need: database (external or embedded), migrations, secrets, services.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import { startConfiguredPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { databaseStartError, migrate, openDatabase, type Orm } from './db/orm.js';
import { SecretBox, randomToken } from './lib/crypto.js';
import { createLogger, type Logger } from './lib/logger.js';
import { createMediaFetcher } from './lib/media-fetch.js';
import { createPlatformFetch } from './lib/platform-http.js';
import { createUrlGuard, type UrlGuardOptions } from './lib/ssrf.js';
import { createStorage } from './lib/storage/index.js';
import { resourceUpdates } from './mcp/resources.js';
import type { Services } from '../tools/types.js';

export const USER_AGENT = 'Herald/0.1 (+https://github.com/herald-social/herald)';

export interface Opened {
  services: Services;
  databaseUrl: string;
  embedded?: EmbeddedDatabase;
  close(): Promise<void>;
}

function encryptionKey(config: Config, logger: Logger): string {
  if (config.encryptionKey) return config.encryptionKey;
  const file = path.join(config.dataDir, 'encryption-key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(config.dataDir, { recursive: true });
  const key = Buffer.from(randomToken(32), 'base64url').toString('hex');
  fs.writeFileSync(file, key, { mode: 0o600 });
  logger.warn({ file }, 'generated a new ENCRYPTION_KEY into the data directory; back it up (channel tokens cannot be read without it)');
  return key;
}

/** Uploads in flight are staged in DATA_DIR/tmp; files left there by a crash are removed once they are a day old. */
function removeStaleUploads(config: Config, logger: Logger): void {
  const directory = path.join(config.dataDir, 'tmp');
  if (!fs.existsSync(directory)) return;
  const cutoff = Date.now() - 24 * 3600 * 1000;
  for (const name of fs.readdirSync(directory)) {
    const file = path.join(directory, name);
    try {
      if (name.startsWith('upload-') && fs.statSync(file).mtimeMs < cutoff) fs.rmSync(file, { force: true });
    } catch (error) {
      logger.warn({ err: error, file }, 'could not remove a stale upload');
    }
  }
}

/**
 * Assembles the services from the config: the one place the SSRF guard, the media fetcher and storage are built (the
 * test harness calls it too, adding only test overrides of the guard).
 */
export async function buildServices(
  config: Config,
  parts: Pick<Services, 'orm' | 'secrets' | 'logger' | 'now'> & { userAgent?: string; guard?: Partial<UrlGuardOptions>; platformGuard?: Partial<UrlGuardOptions> },
): Promise<Services> {
  const userAgent = parts.userAgent ?? USER_AGENT;
  const guardOptions = {
    userAgent,
    connectTimeoutMs: config.uploads.connectTimeoutMs,
    timeoutMs: config.uploads.timeoutMs,
    allowedHosts: config.uploads.allowedHosts,
    protection: config.ssrfProtection,
    ...parts.guard,
  };
  const urlGuard = createUrlGuard(guardOptions);
  return {
    config,
    orm: parts.orm,
    secrets: parts.secrets,
    fetch: createPlatformFetch({ timeoutMs: config.platformTimeoutMs, userAgent }),
    urlGuard,
    platformGuard: createUrlGuard({ ...guardOptions, allowedHosts: [], ...parts.platformGuard }),
    fetchMedia: createMediaFetcher(urlGuard, { maxBytes: Math.max(config.uploads.maxImageBytes, config.uploads.maxVideoBytes) }),
    storage: await createStorage(config),
    logger: parts.logger,
    now: parts.now,
    events: resourceUpdates(() => parts.orm.em.fork(), parts.logger),
  };
}

/**
 * Opens the database (the embedded one unless DATABASE_URL is set) and the services. `attach` (the CLI) uses the embedded
 * Postgres of a Herald already running on the data directory instead of refusing to start a second one; `starting`, an
 * embedded Postgres already starting.
 */
export async function openServices(config: Config, logger = createLogger(config.logLevel), options: { attach?: boolean; starting?: Promise<EmbeddedDatabase> } = {}): Promise<Opened> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    // `starting`: the service started it already, while it loaded the rest of Herald (src/main.ts).
    embedded = await (options.starting ?? startConfiguredPostgres(config, logger, options.attach));
    await embedded.createDatabase('herald');
    databaseUrl = embedded.urlFor('herald');
  }
  try {
    let orm: Orm;
    try {
      orm = await openDatabase(databaseUrl, { migrate: false });
    } catch (error) {
      throw databaseStartError(error, databaseUrl);
    }
    await migrate(orm, databaseUrl);
    removeStaleUploads(config, logger);
    if (!config.ssrfProtection) logger.warn('DISABLE_SSRF_PROTECTION is on: URLs sent by clients may make Herald fetch private and internal addresses');
    const services = await buildServices(config, { orm, secrets: new SecretBox(encryptionKey(config, logger)), logger, now: () => new Date() });
    return {
      services,
      databaseUrl,
      embedded,
      async close() {
        await orm.close();
        await embedded?.stop();
      },
    };
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
}
