// `npm run herald -- <command>`: organizations, API keys and setup links, usable before the web console exists.
import { loadConfig } from './config.js';
import { createLogger } from './lib/logger.js';
import { openServices } from './bootstrap.js';
import { StartError } from './errors.js';
import { ApiKeySchema, OrganizationSchema } from './db/entities.js';
import { createKey, listKeys, revokeKey, rotateKey } from '../tools/internal/api-keys.js';
import { asCaller } from '../tools/internal/visibility.js';
import os from 'node:os';
import { API_SCOPES, OWNER_SCOPES, type ApiScope } from '../tools/internal/scopes.js';
import type { Caller } from '../tools/types.js';
import { createOrganization, mintApiKey, revokeApiKeys } from '../tools/internal/credentials.js';
import { createSetupLink, SETUP_LINK_HOURS } from '../tools/internal/accounts.js';
import { backupCli } from './cli-backup.js';

const usage = `Usage: npm run herald -- <command>
  org:create <name>        create an organization; print its first API key and a setup link for its owner (shown once)
  org:list                 list organizations
  setup-link [orgId]       print a new setup link: whoever opens it first becomes an owner of the organization (earlier
                           unused setup links of the organization stop working); orgId optional with one organization
  key:create [orgId]       mint a new organization key (the owner key: every scope); the previous organization key stops
                           working at once, named keys stay; orgId optional with one organization
  key:create --name <name> [--scopes read,posts:write] [--channels id,id] [--customers id,id] [--expires <ISO date>] [--org <orgId>]
                           a named key (default scopes: read,posts:write, the agent preset), shown once
  key:list [orgId]         list the live keys (never their secrets)
  key:rotate <keyId>       a new secret for a named key (same name, scopes and limits); the old one stops working at once
  key:revoke [orgId|keyId] revoke the organization key (orgId or nothing), or the named key with that id
  backup FILE              back up the database (consistent while Herald runs; the encryption key is not in it)
  restore FILE [--force]   restore a backup into a new data directory or empty database (--force: replace a non-empty one)`;

/** `--name x --scopes a,b` and positional arguments. */
function parseFlags(args: string[]): { positional: string[]; name?: string; scopes?: string; channels?: string; customers?: string; expires?: string; org?: string } {
  const flags: Record<string, string> = {};
  const positional: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const flag = /^--([a-z]+)(?:=(.*))?$/.exec(args[index]);
    if (!flag) positional.push(args[index]);
    else if (flag[2] !== undefined) flags[flag[1]] = flag[2];
    else flags[flag[1]] = args[++index] ?? '';
  }
  return { positional, ...flags };
}

/** The operator at the command line acts as an owner of the organization. */
const operator = (organizationId: string): Caller => ({
  organizationId,
  credentialId: 'cli',
  credentialKind: 'session',
  scopes: OWNER_SCOPES,
  name: 'The operator (command line)',
  origin: { via: 'cli', address: null, client: `herald CLI (${os.userInfo().username})` },
});

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
        const flags = parseFlags(args);
        if (!flags.name) {
          const id = await organizationId(flags.positional[0]);
          console.log(`API key: ${await asCaller(operator(id), () => mintApiKey(em, id))}\nShown once: store it now. The previous organization key no longer works.`);
          return 0;
        }
        const caller = operator(await organizationId(flags.org));
        const list = (value?: string) => (value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean));
        const scopes = list(flags.scopes);
        const unknown = scopes?.filter((scope) => !(API_SCOPES as readonly string[]).includes(scope)) ?? [];
        if (unknown.length > 0) throw new Error(`Unknown scope(s): ${unknown.join(', ')}. Scopes: ${API_SCOPES.join(', ')}.`);
        const { key, secret } = await asCaller(caller, () =>
          createKey(em, caller, { name: flags.name!, scopes: scopes as ApiScope[] | undefined, channels: list(flags.channels), customers: list(flags.customers), expiresAt: flags.expires }, new Date()),
        );
        console.log(`API key "${key.name}" (${key.id}): ${secret}\nScopes: ${key.scopes.join(', ')}${key.channels ? `\nChannels: ${key.channels.join(', ')}` : ''}${key.expiresAt ? `\nExpires: ${key.expiresAt}` : ''}\nShown once: store it now.`);
        return 0;
      }
      case 'key:list': {
        for (const key of await listKeys(em, operator(await organizationId(args[0])))) {
          console.log([key.id, key.name, key.scopes.join(','), key.channels ? `channels:${key.channels.join(',')}` : 'all channels', key.expiresAt ? `expires ${key.expiresAt}` : '', `…${key.lastFour}`, key.lastUsed ? `last used ${key.lastUsed.at}` : 'never used'].join('\t'));
        }
        return 0;
      }
      case 'key:rotate': {
        const key = args[0] ? await em.findOne(ApiKeySchema, { id: args[0], revokedAt: null, organizationKey: false }) : null;
        if (!key) throw new Error(`key:rotate needs the id of a live named key (key:list shows them); the organization key is renewed with key:create [orgId].`);
        const caller = operator(key.organizationId);
        const { secret } = await asCaller(caller, () => rotateKey(em, caller, key.id, new Date()));
        console.log(`API key "${key.name}" (${key.id}): ${secret}\nShown once: store it now. The previous secret no longer works.`);
        return 0;
      }
      case 'key:revoke': {
        const given = args[0];
        if (given && !(await em.findOne(OrganizationSchema, { id: given }))) {
          const key = await em.findOne(ApiKeySchema, { id: given, revokedAt: null });
          if (!key) throw new Error(`No organization nor live API key ${given}. See org:list and key:list.`);
          const caller = operator(key.organizationId);
          await asCaller(caller, () => revokeKey(em, caller, key.id, new Date()));
          console.log(`API key "${key.name}" revoked.`);
          return 0;
        }
        const count = await revokeApiKeys(em, await organizationId(given));
        console.log(count > 0 ? 'Organization key revoked.' : 'No live organization key to revoke.');
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
