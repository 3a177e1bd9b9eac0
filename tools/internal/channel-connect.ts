// Connecting OAuth channels: the platform's redirect back to Herald (code → account → channel), and the page/account
// picker of platforms that connect a user first and a page second. Console and REST both call these.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Integration } from '../../src/db/entities.js';
import { DomainError, invalidInput, notSupported } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import { findProvider } from '../../providers/index.js';
import { normalizeInstance } from '../../providers/shared.js';
import type { CredentialField, Provider } from '../../providers/types.js';
import type { Services } from '../types.js';
import { connectContext, findIntegration, providerContext, providerFailure, providerOf, saveConnectedAccount } from './integrations.js';

/** What the platform's redirect brings back in `state`: sealed, so it cannot be forged or read. */
export interface ConnectState {
  organizationId: string;
  provider: string;
  codeVerifier: string;
  refresh?: string;
  expiresAt: number;
}

/**
 * A URL field of a credentials form (an instance, a site, a PDS, a listmonk) as the provider will call it: https:// is
 * added when no scheme is typed, trailing slashes go (as providers do with these fields). Anything that is not then an
 * absolute http(s) URL without credentials answers 400 naming the field, before any call. The SSRF guard checks the host
 * at every call (platformFetchFor).
 */
export function connectUrlValue(provider: Provider, field: CredentialField, value: string): string {
  const normalized = normalizeInstance(value);
  const refuse = (problem: string) =>
    invalidInput(`The field "${field.key}" (${field.label}) ${problem}.`, {
      hint: `${provider.name}: ${field.description ?? 'type the address of the server, e.g. https://example.com'}`,
    });
  let url: URL;
  try {
    url = new URL(normalized);
  } catch {
    throw refuse('is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(`must be an http(s) address, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw refuse('must not contain a user name or password: use the fields of the form');
  return normalized;
}

export const callbackPath = (identifier: string) => `/api/integrations/social/${identifier}/callback`;

export function redirectUri(services: Services, provider: Provider): string {
  return `${services.config.publicUrl}${callbackPath(provider.identifier)}`;
}

/** Trades the code of the platform's redirect for the account and saves the channel (in between steps when a page must be chosen). */
export async function completeOAuthConnect(
  services: Services,
  identifier: string,
  query: Record<string, unknown>,
): Promise<Integration> {
  const provider = findProvider(identifier);
  if (!provider) throw new DomainError('not_found', `Unknown platform "${identifier}".`);
  if (typeof query.error === 'string') {
    throw invalidInput(`${provider.name} did not authorize the connection: ${String(query.error_description ?? query.error)}.`, { hint: 'Try connecting again from the channels page.' });
  }
  let state: ConnectState;
  try {
    state = services.secrets.openJson<ConnectState>(String(query.state ?? ''));
  } catch {
    throw invalidInput('This connection link is not valid.', { hint: 'Start again from the channels page.' });
  }
  if (state.provider !== provider.identifier || state.expiresAt < services.now().getTime()) {
    throw invalidInput('This connection link expired or belongs to another platform.', { hint: 'Start again from the channels page.' });
  }
  if (typeof query.code !== 'string' || query.code === '') throw invalidInput(`${provider.name} sent no authorization code.`, { hint: 'Start again from the channels page.' });
  const client = services.config.oauthClients[provider.identifier];
  if (!provider.exchangeCode || !client) throw notSupported(`Connecting ${provider.name} channels through OAuth is not built yet in this Herald.`);
  let account;
  try {
    account = await provider.exchangeCode(
      connectContext(services, provider),
      {
        code: query.code,
        codeVerifier: state.codeVerifier,
        redirectUri: redirectUri(services, provider),
        clientId: client.clientId,
        clientSecret: client.clientSecret,
        callback: Object.fromEntries(Object.entries(query).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && !['code', 'state'].includes(entry[0]))),
      },
    );
  } catch (error) {
    if (error instanceof PlatformHttpError) {
      throw invalidInput(`${provider.name} refused the connection: ${error.message}`, { hint: 'Start again from the channels page; if it persists, check the app credentials of this platform.' });
    }
    throw error;
  }
  return saveConnectedAccount(services.orm.em.fork(), services, state.organizationId, provider, account, { refresh: state.refresh, inBetweenSteps: account.inBetweenSteps });
}

function picker(integration: Integration): Provider & Required<Pick<Provider, 'accounts' | 'selectAccount'>> {
  const provider = providerOf(integration);
  if (!provider.accounts || !provider.selectAccount) {
    throw notSupported(`${provider.name} channels have no page or account to choose.`, { hint: 'Only platforms that connect a user first and a page second (Facebook, Instagram, LinkedIn Page, YouTube, Google Business Profile) have a picker.' });
  }
  return provider as Provider & Required<Pick<Provider, 'accounts' | 'selectAccount'>>;
}

/** The pages/accounts a channel "in between steps" may become. */
export async function channelAccounts(services: Services, em: EntityManager, organizationId: string, id: string) {
  const integration = await findIntegration(em, organizationId, id);
  const provider = picker(integration);
  try {
    return await provider.accounts(providerContext(services, integration));
  } catch (error) {
    throw providerFailure(provider, error);
  }
}

/** Makes the channel the chosen page/account, with that page's own token; the channel leaves "in between steps". */
export async function chooseChannelAccount(services: Services, em: EntityManager, organizationId: string, id: string, accountId: string): Promise<Integration> {
  const integration = await findIntegration(em, organizationId, id);
  const provider = picker(integration);
  let account;
  try {
    account = await provider.selectAccount(providerContext(services, integration), accountId);
  } catch (error) {
    throw providerFailure(provider, error);
  }
  return saveConnectedAccount(em, services, organizationId, provider, account, { refresh: integration.id });
}
