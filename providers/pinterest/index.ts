// Pinterest (API v5): pins of pictures or a video on a chosen board.
// Reference: https://developers.pinterest.com/docs/api/v5/ (OpenAPI: github.com/pinterest/api-description, v5/openapi.yaml) —
// oauth/token, user_account, user_account/analytics, boards/list, pins/create, pins/list, pins/analytics, media/create,
// media/get; https://developers.pinterest.com/docs/api-features/creating-boards-and-pins/ (video pins). Read 2026-11-27 against
// release 5.23.0 of the OpenAPI description, vendored in test/contracts/pinterest/openapi.json: the fake checks every request
// against it. A lost pin create is linked only to a pin made since the attempt began (created_at; providers/recovery.ts).
// The token endpoint takes HTTP Basic client credentials and a form; refresh answers a new refresh token (continuous
// refresh), which is stored. Pinterest has no comments API for pins: a post is one item.
// Changing what went out (read 2026-11-27 in the same OpenAPI release): pins/update `PATCH /v5/pins/{pin_id}` (PinUpdate:
// title, description, link, alt_text, board_id, board_section_id, carousel_slots; nullable fields cleared with null; "in beta
// and not available to all apps": an app without it is refused 403, named to the person) and pins/delete
// `DELETE /v5/pins/{pin_id}` (204; a pin already gone answers 404, counted as deleted). The media of a pin cannot change.
import { z } from 'zod';
import { PlatformHttpError, type PlatformFetch } from '../../src/lib/platform-http.js';
import type { ChannelAuth, EditItem, HelperTool, Provider, ProviderContext, PublishedRef, PublishItem, StepAttempt } from '../types.js';
import { createdSince, onlyCandidate } from '../recovery.js';
import { analyticsPeriod, basicAuth, dailyMetric, everyPage, firstProblem, httpUrl, isoDay, oauth2AuthorizeUrl, versionedBase } from '../shared.js';
import { accountSchema, call, channelCall, classify, page, pinSchema, type Pin } from './api.js';
import { imagesSource, uploadedVideo, videoSource } from './media.js';

const scopes = ['boards:read', 'boards:write', 'pins:read', 'pins:write', 'user_accounts:read'];
const MAX_PICTURES = 5;

const settings = z.object({
  board: z.string().min(1).describe('Board id from getBoards'),
  title: z.string().max(100).optional().describe('Pin title (100 characters at most)'),
  link: httpUrl().max(2048).optional().describe('Destination link of the pin'),
});

const tokenSchema = z.object({ access_token: z.string(), refresh_token: z.string().optional(), expires_in: z.number() });

async function token(fetch: PlatformFetch, endpoints: Record<string, string>, client: { clientId: string; clientSecret?: string }, form: Record<string, string>) {
  const { data } = await fetch({
    method: 'POST',
    url: `${versionedBase(endpoints)}/oauth/token`,
    headers: { authorization: basicAuth(client.clientId, client.clientSecret ?? '') },
    form,
    schema: tokenSchema,
    classify,
  });
  return { accessToken: data.access_token, refreshToken: data.refresh_token, expiresAt: new Date(Date.now() + data.expires_in * 1000) } satisfies Partial<ChannelAuth>;
}

const pinUrl = (context: ProviderContext, id: string) => `${context.endpoints.web.replace(/\/+$/, '')}/pin/${id}/`;

/**
 * The pin of an interrupted create: among the account's newest pins, the one on the board with the same title and description
 * created since the attempt began (Pinterest keeps no marker of ours on a pin), never an older pin with the same text.
 */
async function findPin(context: ProviderContext, attempt: StepAttempt, body: { board_id: string; title?: string; description?: string }): Promise<{ id: string } | undefined> {
  const { items } = await channelCall(context, { path: '/pins', query: { page_size: 25 }, schema: page(pinSchema) });
  const same = items.filter(
    (pin) =>
      pin.board_id === body.board_id && (pin.title ?? '') === (body.title ?? '') && (pin.description ?? '') === (body.description ?? '') && createdSince(attempt, pin.created_at),
  );
  const found = onlyCandidate(same, 'Pinterest', 'pins');
  return found ? { id: found.id } : undefined;
}

async function publishPin(context: ProviderContext, item: PublishItem) {
  const options = settings.parse(context.settings);
  const video = item.media.find((media) => media.kind === 'video');
  const pictures = item.media.filter((media) => media.kind === 'image');
  const mediaId = video ? await uploadedVideo(context, video) : undefined;
  const body = {
    board_id: options.board,
    ...(options.title ? { title: options.title } : {}),
    ...(item.text ? { description: item.text } : {}),
    ...(options.link ? { link: options.link } : {}),
    ...(item.media[0]?.alt ? { alt_text: item.media[0].alt.slice(0, 500) } : {}),
  };
  const pin = await context.step(
    'pin',
    async () => {
      const mediaSource = video ? await videoSource(mediaId!, video, pictures[0]) : await imagesSource(pictures);
      const created = await channelCall(context, { method: 'POST', path: '/pins', json: { ...body, media_source: mediaSource }, schema: pinSchema });
      return { id: created.id };
    },
    (attempt) => findPin(context, attempt, body),
  );
  return { id: pin.id, url: pinUrl(context, pin.id) };
}

/**
 * Sets the pin's board, title, description, link and alt text to the post's new content and settings (a title or link taken
 * out of the settings is cleared with null). Setting the same values again is harmless, so a lost answer is simply repeated.
 */
async function editPin(context: ProviderContext, ref: PublishedRef, item: EditItem): Promise<PublishedRef> {
  const options = settings.parse(context.settings);
  const alt = item.media[0]?.alt;
  const body = {
    board_id: options.board,
    title: options.title ?? null,
    description: item.text,
    link: options.link ?? null,
    ...(alt ? { alt_text: alt.slice(0, 500) } : {}),
  };
  const pin = await context.step('edit', async () => {
    const updated = await channelCall(context, { method: 'PATCH', path: `/pins/${encodeURIComponent(ref.id)}`, json: body, schema: pinSchema });
    return { id: updated.id };
  });
  return { id: pin.id, url: pinUrl(context, pin.id) };
}

/** Deletes the pin; one already gone (404) counts as deleted, so a repeat after a lost answer deletes nothing else. */
async function deletePin(context: ProviderContext, ref: PublishedRef): Promise<void> {
  await context.step('delete', async () => {
    try {
      await channelCall(context, { method: 'DELETE', path: `/pins/${encodeURIComponent(ref.id)}` });
    } catch (error) {
      if (!(error instanceof PlatformHttpError && error.status === 404)) throw error;
    }
    return true;
  });
}

const analyticsSchema = z.record(
  z.string(),
  z.object({ daily_metrics: z.array(z.object({ date: z.string(), metrics: z.record(z.string(), z.number()).nullish() })).default([]) }),
);

/** Daily points of each metric from Pinterest's analytics answer (keyed "all" when not split). */
async function metrics(context: ProviderContext, path: string, days: number, labels: Record<string, string>) {
  const { start, end } = analyticsPeriod(days, 90); // Pinterest looks back 90 days at most
  const report = await channelCall(context, {
    path,
    query: { start_date: isoDay(start), end_date: isoDay(end), metric_types: Object.keys(labels).join(',') },
    schema: analyticsSchema,
  });
  const daily = (report.all ?? Object.values(report)[0])?.daily_metrics ?? [];
  return Object.entries(labels).map(([metric, label]) =>
    dailyMetric(label, daily.map((day) => ({ date: day.date, value: day.metrics?.[metric] ?? 0 }))),
  );
}

const boardSchema = z.object({ id: z.string(), name: z.string(), privacy: z.string().optional(), description: z.string().nullish() });

const getBoards: HelperTool = {
  methodName: 'getBoards',
  description: 'Lists the boards of the connected Pinterest account as [{id, name, privacy}]; use an id as the `board` setting.',
  dataSchema: [],
  async run(context) {
    return everyPage(20, async (bookmark) => {
      const result = await channelCall(context, { path: '/boards', query: { page_size: 250, bookmark }, schema: page(boardSchema) });
      return { items: result.items.map((board) => ({ id: board.id, name: board.name, ...(board.privacy ? { privacy: board.privacy } : {}) })), next: result.bookmark ?? undefined };
    });
  },
};

const thumbnailOf = (pin: Pin): string | undefined => {
  const media = pin.media as { images?: Record<string, { url?: string }>; cover_image_url?: string } | null | undefined;
  return media?.cover_image_url ?? Object.values(media?.images ?? {}).find((image) => image.url)?.url;
};

const pinterest: Provider = {
  identifier: 'pinterest',
  name: 'Pinterest',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { web: 'https://www.pinterest.com', api: 'https://api.pinterest.com', apiVersion: 'v5' },
  maxLength: () => 800,
  rules:
    'A pin is one item (Pinterest has no comments API: no thread items or comments) with media: 1 to 5 pictures (several make a ' +
    'carousel and must have the same size), or one video optionally followed by one picture used as its cover (otherwise a frame ' +
    'of the video is the cover). The content is the pin description (800 characters at most). The board (an id from getBoards) ' +
    'is required; title (100 characters at most) and link are optional. Pictures are fetched by Pinterest from their public URL ' +
    'when it is public https, and sent inline otherwise.',
  settings,
  chain: 'none',
  recordsSteps: true,
  validate: (items) => {
    if (items.length > 1) return 'Pinterest has no comments API: a pin is a single item; put everything in the first item.';
    return firstProblem(
      items,
      ({ images, videos }, item) => {
        if (images + videos === 0) return 'has no media; a pin needs a picture or a video.';
        if (videos > 1 || (videos === 1 && (images > 1 || item.media[0].kind !== 'video'))) {
          return 'mixes media: a video pin takes the video first and at most one cover picture after it.';
        }
        if (images > MAX_PICTURES) return `has ${images} pictures; a pin takes at most ${MAX_PICTURES}.`;
        const sizes = new Set(item.media.filter((media) => media.width && media.height).map((media) => `${media.width}x${media.height}`));
        if (videos === 0 && images > 1 && sizes.size > 1) return `has pictures of different sizes (${[...sizes].join(', ')}); a carousel pin needs pictures of one size.`;
        return undefined;
      },
      'first',
    );
  },
  tools: [getBoards],
  authorizeUrl: oauth2AuthorizeUrl('web', 'oauth/', scopes, { separator: ',' }),

  async exchangeCode(context, { code, redirectUri, clientId, clientSecret }) {
    const tokens = await token(context.fetch, context.endpoints, { clientId, clientSecret }, { grant_type: 'authorization_code', code, redirect_uri: redirectUri });
    const account = await call(context, tokens.accessToken, { path: '/user_account', schema: accountSchema });
    return {
      internalId: account.id ?? account.username,
      name: account.business_name?.trim() || account.username,
      profile: account.username,
      picture: account.profile_image ?? undefined,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: tokens.expiresAt,
    };
  },

  async refresh(context) {
    if (!context.client) throw new Error('PINTEREST_CLIENT_ID is not configured on this Herald.');
    return token(context.fetch, context.endpoints, context.client, { grant_type: 'refresh_token', refresh_token: context.auth.refreshToken ?? '' });
  },

  publish: publishPin,
  editPublished: (context, ref, item) => editPin(context, ref, item),
  deletePublished: (context, ref) => deletePin(context, ref),

  analytics: (context, days) =>
    metrics(context, '/user_account/analytics', days, {
      IMPRESSION: 'Impressions',
      SAVE: 'Saves',
      PIN_CLICK: 'Pin clicks',
      OUTBOUND_CLICK: 'Outbound clicks',
      ENGAGEMENT: 'Engagement',
    }),

  postAnalytics: (context, post, days) =>
    metrics(context, `/pins/${encodeURIComponent(post.id)}/analytics`, days, {
      IMPRESSION: 'Impressions',
      SAVE: 'Saves',
      PIN_CLICK: 'Pin clicks',
      OUTBOUND_CLICK: 'Outbound clicks',
    }),

  async recent(context) {
    const { items } = await channelCall(context, { path: '/pins', query: { page_size: 20 }, schema: page(pinSchema) });
    return items.map((pin) => ({ id: pin.id, url: thumbnailOf(pin) ?? pinUrl(context, pin.id) }));
  },
};

export default pinterest;
