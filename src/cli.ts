// `npm run herald -- <command>`: organizations, API keys and setup links, usable before the web console exists.
import { loadConfig } from './config.js';
import { createLogger } from './lib/logger.js';
import { openServices } from './bootstrap.js';
import { StartError } from './errors.js';
import { OrganizationSchema } from './db/entities.js';
import { createOrganization, mintApiKey, revokeApiKeys } from '../tools/internal/credentials.js';
import { createSetupLink, SETUP_LINK_HOURS } from '../tools/internal/accounts.js';
import { backupCli } from './cli-backup.js';

const usage = `Usage: npm run herald -- <command>
  org:create <name>        create an organization; print its first API key and a setup link for its owner (shown once)
  org:list                 list organizations
  setup-link [orgId]       print a new setup link: whoever opens it first becomes an owner of the organization (earlier
                           unused setup links of the organization stop working); orgId optional with one organization
  key:create [orgId]       mint a new API key (the previous key stops working at once); orgId optional with one organization
  key:revoke [orgId]       revoke the organization's API key
  backup FILE              back up the database (consistent while Herald runs; the encryption key is not in it)
  restore FILE [--force]   restore a backup into a new data directory or empty database (--force: replace a non-empty one)`;

/** The lines that hand a setup link to the operator. */
const setupLines = (link: string, organizationId: string) =>
  `Setup link: ${link}\nOpen it to create the owner account. It works once, for ${SETUP_LINK_HOURS} hours; a new one:  npm run herald -- setup-link ${organizationId}`;

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (!command || command === 'help' || command === '--help') {
    console.log(usage);
    return command ? 0 : 1;
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  }
  if (command === 'backup' || command === 'restore') return backupCli(command, args, config);
  let opened;
  try {
    // Beside a running Herald on the embedded Postgres, the CLI uses that instance's database instead of starting another.
    opened = await openServices(config, createLogger('warn'), { attach: true });
  } catch (error) {
    console.error(error instanceof StartError ? error.message : `The database could not be opened: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  }
  const em = opened.services.orm.em.fork();
  const organizationId = async (given?: string): Promise<string> => {
    if (given) return given;
    const all = await em.find(OrganizationSchema, {});
    if (all.length !== 1) throw new Error(`Name the organization: there are ${all.length}. See org:list.`);
    return all[0].id;
  };
  try {
    switch (command) {
      case 'org:create': {
        if (!args[0]) throw new Error('org:create needs a name.');
        const organization = await createOrganization(em, args.join(' '));
        const key = await mintApiKey(em, organization.id);
        const link = await createSetupLink(em, organization.id, { publicUrl: config.publicUrl, now: new Date() });
        console.log(`Organization ${organization.id} (${organization.name})\nAPI key: ${key}\nShown once: store it now.\n${setupLines(link, organization.id)}`);
        return 0;
      }
      case 'setup-link': {
        const id = await organizationId(args[0]);
        console.log(setupLines(await createSetupLink(em, id, { publicUrl: config.publicUrl, now: new Date() }), id));
        return 0;
      }
      case 'org:list':
        for (const organization of await em.find(OrganizationSchema, {}, { orderBy: { createdAt: 'asc' } })) console.log(`${organization.id}\t${organization.name}`);
        return 0;
      case 'key:create': {
        const id = await organizationId(args[0]);
        console.log(`API key: ${await mintApiKey(em, id)}\nShown once: store it now. The previous key no longer works.`);
        return 0;
      }
      case 'key:revoke': {
        const count = await revokeApiKeys(em, await organizationId(args[0]));
        console.log(count > 0 ? 'API key revoked.' : 'No live API key to revoke.');
        return 0;
      }
      default:
        console.error(`Unknown command "${command}".\n${usage}`);
        return 1;
    }
  } catch (error) {
    console.error((error as Error).message);
    return 1;
  } finally {
    await opened.close();
  }
}

main().then((code) => process.exit(code));
