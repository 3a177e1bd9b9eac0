// Dribbble (API v2): a shot of exactly one picture with a title; the content is its description.
// Reference: https://developer.dribbble.com/v2/ — oauth (https://developer.dribbble.com/v2/oauth/), user, shots
// (https://developer.dribbble.com/v2/shots/: create is multipart, answers 202 Accepted with the shot in `Location`,
// processed asynchronously), rate limits in X-RateLimit-* headers (reset in UTC epoch seconds); read 2026-11-27. Tokens do not expire
// (no refresh). The API has no analytics and no comments. A lost create is looked up among the user's shots with the same
// title published since the attempt began (`published_at`), told from an older shot of that title by its description: the
// shots page gives it as HTML ("description": "<p>…</p>"), so its text (tags and entities undone, spaces collapsed) is
// compared with the text sent; inside the clock-skew allowance before the attempt only that whole match is taken (issue 31;
// providers/recovery.ts identify). Dribbble lists a shot only once processed, so not finding it proves nothing: the item
// stops with "could not confirm" after a while.
import { z } from 'zod';
import { MediaFetchError } from '../src/lib/media-fetch.js';
import { imageSize } from '../src/lib/media-probe.js';
import { parsedBody, PlatformHttpError, type PlatformHttpErrorInit, type PlatformRequest } from '../src/lib/platform-http.js';
import { CheckAgainLater, type ConnectContext, type Provider, type ProviderContext, type PublishItem, type StepAttempt, type ValidationItem } from './types.js';
import { identify } from './recovery.js';
import { bearerFetch, blobOf, firstProblem, oauth2AuthorizeUrl, versionedBase } from './shared.js';

const scopes = ['public', 'upload'];
const SIZES = [
  [400, 300],
  [800, 600],
  [1600, 1200],
];
const TYPES: Record<string, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPG', 'image/gif': 'GIF' };
const MAX_BYTES = 8 * 1024 * 1024;
const SIZE_LIST = '400x300, 800x600 or 1600x1200 pixels';

const settings = z.object({
  title: z.string().min(1).describe('Title of the shot'),
  team: z.string().optional().describe('Team id from teams, to publish the shot for that team'),
});

/** The first reason Dribbble would refuse this picture, from what is known of it (type, bytes, pixels). */
function pictureProblem(picture: Pick<ValidationItem['media'][number], 'type' | 'size' | 'width' | 'height'>): string | undefined {
  if (picture.type && !TYPES[picture.type]) return `Dribbble takes a PNG, JPG or GIF picture; this one is ${picture.type}: convert it.`;
  if (picture.size !== undefined && picture.size > MAX_BYTES) {
    return `Dribbble takes pictures of 8 MB at most; this one is ${Math.round((picture.size / 1048576) * 10) / 10} MB: compress it.`;
  }
  if (picture.width && picture.height && !SIZES.some(([width, height]) => width === picture.width && height === picture.height)) {
    return `Dribbble takes a picture of exactly ${SIZE_LIST}; this one is ${picture.width}x${picture.height}: resize or crop it to one of these sizes.`;
  }
  return undefined;
}

const errorSchema = z.object({
  message: z.string().optional(),
  error_description: z.string().optional(),
  errors: z.array(z.object({ attribute: z.string().optional(), message: z.string() })).optional(),
});

function classify(status: number, body: string, headers: Headers): Partial<PlatformHttpErrorInit> {
  const parsed: z.infer<typeof errorSchema> = parsedBody(errorSchema, body) ?? {};
  const details = parsed.errors?.map((error) => [error.attribute, error.message].filter(Boolean).join(' ')).join('; ');
  const message = [parsed.message ?? parsed.error_description ?? `HTTP ${status}`, details].filter(Boolean).join(': ');
  const reset = Number(headers.get('x-ratelimit-reset'));
  const wait = status === 429 && Number.isFinite(reset) && reset > 0 ? Math.ceil(reset - Date.now() / 1000) : undefined;
  return {
    message: status === 403 ? `${message} (the account must be allowed to upload shots)` : message,
    ...(wait !== undefined && wait > 0 ? { retryAfterSeconds: wait } : {}),
  };
}

async function call<T>(context: Pick<ConnectContext, 'fetch' | 'endpoints'>, token: string, request: Omit<PlatformRequest<T>, 'url' | 'classify'> & { path: string }) {
  const { path, ...rest } = request;
  return bearerFetch(context, token, classify, { ...rest, url: `${versionedBase(context.endpoints)}${path}` });
}

const teamSchema = z.object({ id: z.number(), name: z.string(), login: z.string().optional() });
const userSchema = z.object({ id: z.number(), name: z.string().nullish(), login: z.string(), avatar_url: z.string().nullish(), teams: z.array(teamSchema).default([]) });
const shotSchema = z.object({
  id: z.number(),
  title: z.string().nullish(),
  html_url: z.string().nullish(),
  published_at: z.string().nullish(),
  description: z.string().nullish(),
  images: z.record(z.string(), z.string().nullable()).default({}),
});

const shotsOf = async (context: ProviderContext) =>
  (await call(context, context.auth.accessToken, { path: '/user/shots', query: { per_page: 30 }, schema: z.array(shotSchema) })).data;

/** A description's words, from Dribbble's HTML or from the text sent: tags and the common entities undone, spaces collapsed. */
const wordsOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * The shot of an interrupted create: the one with the same title published since the attempt began, identified by its
 * description (an older shot of the same title is never taken for it). Dribbble lists a shot only once it is processed, so
 * the check is repeated a while.
 */
async function findShot(context: ProviderContext, attempt: StepAttempt, title: string, description: string): Promise<{ id: string }> {
  const candidates = (await shotsOf(context))
    .filter((shot) => shot.title === title)
    .map((shot) => ({ item: shot, created: shot.published_at, whole: wordsOf(shot.description ?? '') === wordsOf(description) }));
  const found = identify(attempt, candidates, 'Dribbble', `shots titled "${title}"`, 'your Dribbble profile');
  if (found) return { id: String(found.id) };
  throw new CheckAgainLater(
    60,
    'Could not confirm whether Dribbble created the shot of an interrupted upload (it lists a shot once processed); check your Dribbble profile before retrying',
    900,
  );
}

async function publishShot(context: ProviderContext, item: PublishItem) {
  const options = settings.parse(context.settings);
  const pictures = item.media.filter((media) => media.kind === 'image');
  if (pictures.length !== 1 || item.media.length !== 1) throw new MediaFetchError(`a Dribbble shot takes exactly one picture; this item has ${item.media.length} media`);
  const shot = await context.step(
    'shot',
    async () => {
      const { bytes, mimeType } = await pictures[0].load();
      const dimensions = imageSize(bytes) ?? (await (await import('sharp')).default(bytes).metadata().catch(() => ({ width: undefined, height: undefined })));
      const problem = pictureProblem({ type: mimeType, size: bytes.length, width: dimensions.width, height: dimensions.height });
      if (problem) throw new MediaFetchError(problem);
      const form = new FormData();
      form.append('title', options.title);
      if (item.text) form.append('description', item.text);
      if (options.team) form.append('team_id', options.team);
      form.append('image', blobOf(bytes, mimeType), `shot.${TYPES[mimeType].toLowerCase()}`);
      const response = await call(context, context.auth.accessToken, { method: 'POST', path: '/shots', multipart: form, timeoutMs: 120_000 });
      const id = response.headers.get('location')?.replace(/\/+$/, '').split('/').pop();
      if (!id) {
        // Accepted without saying which shot: recorded as interrupted, so the next run looks it up instead of uploading again.
        throw new PlatformHttpError({ status: response.status, retryable: true, outcomeUnknown: true, bodyExcerpt: '', message: 'Dribbble accepted the shot without its Location' });
      }
      return { id };
    },
    (attempt) => findShot(context, attempt, options.title, item.text),
  );
  return { id: shot.id, url: `${context.endpoints.web.replace(/\/+$/, '')}/shots/${shot.id}` };
}

const dribbble: Provider = {
  identifier: 'dribbble',
  name: 'Dribbble',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { web: 'https://dribbble.com', api: 'https://api.dribbble.com', apiVersion: 'v2' },
  maxLength: () => 40000,
  rules:
    `A shot is exactly one picture, a PNG, JPG or GIF of exactly ${SIZE_LIST} and 8 MB at most (no video), with a required title; ` +
    'the content is its description. Optional team: a team id from the teams helper. No comments or thread items; Dribbble has no analytics API.',
  settings,
  chain: 'none',
  recordsSteps: true,
  // Pixel sizes are known here for library files; a client's URL is measured at publish time, with the same sentence.
  validate: (items) =>
    firstProblem(
      items,
      ({ images, total }) => (total !== 1 || images !== 1 ? `must have exactly one picture (a PNG, JPG or GIF of ${SIZE_LIST}) and no video.` : undefined),
      'first',
    ) ?? pictureProblem(items[0].media[0]),
  tools: [
    {
      methodName: 'teams',
      description: 'Lists the Dribbble teams of the connected account as [{id, name, login}]; use an id as the `team` setting.',
      dataSchema: [],
      async run(context) {
        const { data } = await call(context, context.auth.accessToken, { path: '/user', schema: userSchema });
        return data.teams.map((team) => ({ id: String(team.id), name: team.name, ...(team.login ? { login: team.login } : {}) }));
      },
    },
  ],
  authorizeUrl: oauth2AuthorizeUrl('web', 'oauth/authorize', scopes),

  async exchangeCode(context, { code, redirectUri, clientId, clientSecret }) {
    const { data: token } = await context.fetch({
      method: 'POST',
      url: `${context.endpoints.web.replace(/\/+$/, '')}/oauth/token`,
      form: { client_id: clientId, client_secret: clientSecret, code, redirect_uri: redirectUri },
      schema: z.object({ access_token: z.string() }),
      classify,
    });
    const { data: user } = await call(context, token.access_token, { path: '/user', schema: userSchema });
    return { internalId: String(user.id), name: user.name?.trim() || user.login, profile: user.login, picture: user.avatar_url ?? undefined, accessToken: token.access_token };
  },

  publish: publishShot,

  async recent(context) {
    return (await shotsOf(context)).map((shot) => ({
      id: String(shot.id),
      url: shot.images.normal ?? shot.images.teaser ?? shot.html_url ?? `${context.endpoints.web.replace(/\/+$/, '')}/shots/${shot.id}`,
    }));
  },
};

export default dribbble;
