// Facebook Login, shared by Facebook Pages and Instagram (business login): the code is traded for a short-lived user token,
// that for a long-lived one (about 60 days), and the granted permissions are checked; the channel then waits "in between
// steps" until a Page is chosen, and the Page's own token (which does not expire when it comes from a long-lived user
// token) is what publishes. References:
//   https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow (GET /oauth/access_token)
//   https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived
//   https://developers.facebook.com/docs/graph-api/reference/user/accounts/
import { z } from 'zod';
import { notFound } from '../../src/errors.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { ConnectContext, ConnectedAccount, Provider } from '../types.js';
import { classifyMetaError, graph, type GraphContext } from './graph.js';
import { everyPage, storedTokens } from '../shared.js';

type ExchangeOptions = Parameters<NonNullable<Provider['exchangeCode']>>[1];

const tokenSchema = z.object({ access_token: z.string(), token_type: z.string().optional(), expires_in: z.number().optional() });
const pictureSchema = z.object({ data: z.object({ url: z.string() }) }).optional();
const meSchema = z.object({ id: z.string(), name: z.string(), picture: pictureSchema });
const permissionsSchema = z.object({ data: z.array(z.object({ permission: z.string(), status: z.string() })) });

export const pictureOf = (picture: z.output<typeof pictureSchema>) => picture?.data.url;

/** Facebook Login: code → short-lived → long-lived user token; the user becomes a channel waiting for its Page. */
export async function exchangeFacebookCode(
  context: ConnectContext,
  options: ExchangeOptions,
  scopes: string[],
): Promise<ConnectedAccount & { inBetweenSteps: boolean }> {
  const app = { client_id: options.clientId, client_secret: options.clientSecret };
  const short = await graph(context, 'oauth/access_token', {
    query: { ...app, redirect_uri: options.redirectUri, code: options.code },
    token: null,
    schema: tokenSchema,
  });
  const long = await graph(context, 'oauth/access_token', {
    query: { grant_type: 'fb_exchange_token', ...app, fb_exchange_token: short.access_token },
    token: null,
    schema: tokenSchema,
  });
  const user: GraphContext = { ...context, auth: { accessToken: long.access_token } };
  const { data: permissions } = await graph(user, 'me/permissions', { schema: permissionsSchema });
  const granted = new Set(permissions.filter((entry) => entry.status === 'granted').map((entry) => entry.permission));
  const missing = scopes.filter((scope) => !granted.has(scope));
  if (missing.length > 0) {
    throw new PlatformHttpError({
      status: 403,
      retryable: false,
      bodyExcerpt: JSON.stringify(permissions),
      message: `the permission${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ${missing.length > 1 ? 'were' : 'was'} not granted: connect again and allow every permission asked`,
    });
  }
  const me = await graph(user, 'me', { query: { fields: 'id,name,picture' }, schema: meSchema });
  return {
    internalId: me.id,
    name: me.name,
    profile: me.name,
    picture: pictureOf(me.picture),
    accessToken: long.access_token,
    expiresAt: storedTokens(long).expiresAt,
    inBetweenSteps: true,
  };
}

const pageSchema = z.object({
  id: z.string(),
  name: z.string(),
  username: z.string().optional(),
  access_token: z.string(),
  picture: pictureSchema,
  tasks: z.array(z.string()).optional(),
  instagram_business_account: z
    .object({ id: z.string(), username: z.string(), name: z.string().optional(), profile_picture_url: z.string().optional() })
    .optional(),
});
export type FacebookPage = z.output<typeof pageSchema>;

const pagesSchema = z.object({ data: z.array(pageSchema), paging: z.object({ next: z.string().optional() }).optional() });

const PAGE_FIELDS = 'id,name,username,access_token,picture,tasks,instagram_business_account{id,username,name,profile_picture_url}';

/** The Pages the user manages (GET /me/accounts, every page of results), each with its own Page token. */
export async function managedPages(context: GraphContext): Promise<FacebookPage[]> {
  // Meta hands back the next page as an absolute URL; it is followed as given, a bounded number of times (20 after the first).
  const pages = await everyPage(1 + 20, async (next) => {
    const answer = next
      ? (await context.fetch({ url: next, headers: { authorization: `Bearer ${context.auth?.accessToken}` }, schema: pagesSchema, classify: classifyMetaError })).data
      : await graph(context, 'me/accounts', { query: { fields: PAGE_FIELDS, limit: 100 }, schema: pagesSchema });
    return { items: answer.data, next: answer.paging?.next };
  });
  // A Page the user may not create content on cannot be published to.
  return pages.filter((page) => !page.tasks || page.tasks.includes('CREATE_CONTENT'));
}

/** The chosen Page (or the Page of the chosen Instagram account); a choice the user cannot make is a 404. */
export async function chosenPage(context: GraphContext, matches: (page: FacebookPage) => boolean, what: string): Promise<FacebookPage> {
  const page = (await managedPages(context)).find(matches);
  if (!page) throw notFound(`${what} is not one this Facebook account manages.`, { hint: 'Choose one of the ids listed by GET /integrations/{id}/accounts.' });
  return page;
}
