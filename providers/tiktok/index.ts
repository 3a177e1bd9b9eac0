// TikTok (Content Posting API): one video or a photo post, posted directly or sent to the creator's inbox.
// References: https://developers.tiktok.com/doc/login-kit-web and .../oauth-user-access-token-management (Login Kit v2:
// client_key, token and refresh), https://developers.tiktok.com/doc/login-kit-desktop (PKCE: "You must use hex encoding of
// SHA256 to generate the code challenge", code_challenge_method S256; read 2026-11-27), .../tiktok-api-v2-get-user-info,
// .../content-posting-api-reference-query-creator-info, .../content-posting-api-reference-direct-post (video title: 2,200 UTF-16
// runes) and .../content-posting-api-reference-photo-post (photo title 90, description 4,000 UTF-16 runes),
// .../tiktok-api-v2-video-list and .../tiktok-api-v2-video-query; posting in ./post.ts.
import { z } from 'zod';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { ConnectContext, Provider, ProviderContext, ValidationItem } from '../types.js';
import { authorizationUrl, currentMetric, firstProblem, permanent, pkce } from '../shared.js';
import { call, classify, creatorInfo, url } from './api.js';
import { publish } from './post.js';

const scopes = ['user.info.basic', 'user.info.profile', 'user.info.stats', 'video.list', 'video.publish', 'video.upload'];
/** TikTok's caption limits in UTF-16 runes: a photo post's description, and a video's caption (its title). */
export const PHOTO_DESCRIPTION_LIMIT = 4000;
export const VIDEO_CAPTION_LIMIT = 2200;

/**
 * TikTok's PKCE challenge: the hex encoding of SHA-256(code_verifier), where RFC 7636 (and Herald's core) encode the same digest
 * as base64url. Re-encoding the core's challenge gives TikTok's, without the verifier.
 */
export const tiktokCodeChallenge = (base64urlChallenge: string) => Buffer.from(base64urlChallenge, 'base64url').toString('hex');
/** Without these nothing can be posted: a consent that left one out is refused at connection. */
const required = ['user.info.basic', 'video.publish', 'video.upload'];

function validate(items: ValidationItem[], settings: Record<string, unknown>): string | undefined {
  return firstProblem(
    items,
    ({ images, videos, total }, item) => {
      if (total === 0) return 'has no media; TikTok needs one video or one or more pictures.';
      if (videos > 1 || (videos === 1 && images > 0)) return 'mixes media; TikTok takes one video alone, or pictures only.';
      if (images > 35) return `has ${images} pictures; a TikTok photo post takes at most 35.`;
      // With UPLOAD every setting is discarded anyway (the owner finishes the post in the app), so only DIRECT_POST is checked.
      if (settings.content_posting_method !== 'DIRECT_POST') return undefined;
      const videoOnly = ['duet', 'stitch', 'video_made_with_ai'].find((key) => settings[key] === true);
      if (images > 0 && videoOnly) return `is a photo post, but ${videoOnly} applies to videos only: set it to false.`;
      if (videos > 0 && settings.autoAddMusic === 'yes') return 'is a video, but autoAddMusic applies to photo posts only: set it to no.';
      if (videos > 0 && item.text.length > VIDEO_CAPTION_LIMIT) {
        return `is a video whose caption has ${item.text.length} characters; TikTok takes ${VIDEO_CAPTION_LIMIT} for a video (${PHOTO_DESCRIPTION_LIMIT} for photos): shorten it.`;
      }
      return undefined;
    },
    'first',
  );
}

const tokenSchema = z.object({
  access_token: z.string(),
  expires_in: z.number(),
  open_id: z.string(),
  refresh_token: z.string(),
  refresh_expires_in: z.number().optional(),
  scope: z.string().optional(),
});

/** The token endpoint (form, `client_key`): TikTok may answer an OAuth error with HTTP 200, so the body decides. */
async function token(context: Pick<ConnectContext, 'fetch' | 'endpoints'>, form: Record<string, string | undefined>) {
  const response = await context.fetch({ method: 'POST', url: url(context, 'oauth/token/'), form, classify });
  const parsed = tokenSchema.safeParse(response.data);
  if (!parsed.success) throw new PlatformHttpError({ status: 400, retryable: false, bodyExcerpt: response.text.slice(0, 500), ...classify(400, response.text) });
  return parsed.data;
}

const tokensOf = (data: z.infer<typeof tokenSchema>) => ({ accessToken: data.access_token, refreshToken: data.refresh_token, expiresAt: new Date(Date.now() + data.expires_in * 1000) });

const userSchema = z.object({
  user: z.object({
    open_id: z.string().optional(),
    display_name: z.string().optional(),
    avatar_url: z.string().optional(),
    username: z.string().optional(),
    follower_count: z.number().optional(),
    following_count: z.number().optional(),
    likes_count: z.number().optional(),
    video_count: z.number().optional(),
  }),
});
const videoSchema = z.object({
  id: z.string(),
  cover_image_url: z.string().optional(),
  like_count: z.number().optional(),
  comment_count: z.number().optional(),
  share_count: z.number().optional(),
  view_count: z.number().optional(),
});
const videosSchema = z.object({ videos: z.array(videoSchema).default([]) });

const tiktok: Provider = {
  identifier: 'tiktok',
  name: 'TikTok',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { authorize: 'https://www.tiktok.com', api: 'https://open.tiktokapis.com', web: 'https://www.tiktok.com', apiVersion: 'v2' },
  // The longest text TikTok takes, a photo post's description; a video's caption is checked against its own limit in validate.
  maxLength: () => PHOTO_DESCRIPTION_LIMIT,
  rules:
    'A post is one video, or one or more pictures (at most 35; never empty, never both). Videos are uploaded to TikTok; pictures are fetched by TikTok ' +
    'from PUBLIC_URL, which must be a public https domain verified for the TikTok app (pictures other than JPEG or WebP are converted to JPEG first). ' +
    'content_posting_method DIRECT_POST publishes with the settings: privacy_level must be one the account allows, and comment, duet and stitch ' +
    'cannot be turned on when the account turned them off (call creatorInfo; a video longer than its limit is refused too). With UPLOAD the media goes ' +
    "to the account's TikTok inbox, the owner must finish it within 24 hours, and every setting except the text is discarded (a video goes without its text). " +
    `The text is a photo post's description (up to ${PHOTO_DESCRIPTION_LIMIT} characters) or a video's caption (up to ${VIDEO_CAPTION_LIMIT}). ` +
    'duet, stitch and video_made_with_ai apply to videos only, autoAddMusic to photo posts only. Until this Herald\'s TikTok app is audited ' +
    '(TIKTOK_APP_AUDITED), posts are forced to SELF_ONLY. Posts TikTok gives no public id (inbox drafts, private videos) get releaseId "missing": ' +
    'link them with GET /posts/{id}/missing and PUT /posts/{id}/release-id. No comments.',
  settings: z.object({
    privacy_level: z
      .enum(['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'])
      .describe('Who can see the post: one of the levels creatorInfo lists (SELF_ONLY until the TikTok app is audited)'),
    duet: z.boolean().describe('Allow duets (videos only)'),
    stitch: z.boolean().describe('Allow stitches (videos only)'),
    comment: z.boolean().describe('Allow comments'),
    autoAddMusic: z.enum(['yes', 'no']).describe('Add recommended music (photo posts only)'),
    brand_content_toggle: z.boolean().describe('Paid partnership promoting a third-party brand (cannot be private)'),
    brand_organic_toggle: z.boolean().describe("Promotes the creator's own business"),
    video_made_with_ai: z.boolean().optional().describe('Label the video as AI-generated (videos only)'),
    content_posting_method: z
      .enum(['DIRECT_POST', 'UPLOAD'])
      .describe('DIRECT_POST publishes with these settings; UPLOAD sends the media to the TikTok inbox and ignores the other settings'),
  }),
  chain: 'none',
  mediaByUrl: true,
  recordsSteps: true,
  validate,
  tools: [
    {
      methodName: 'creatorInfo',
      description:
        'What this TikTok account allows before a DIRECT_POST: {privacyLevels, commentDisabled, duetDisabled, stitchDisabled, maxVideoSeconds}. Choose privacy_level among privacyLevels.',
      dataSchema: [],
      run: async (context) => {
        const creator = await creatorInfo(context);
        return {
          privacyLevels: creator.privacy_level_options,
          commentDisabled: creator.comment_disabled,
          duetDisabled: creator.duet_disabled,
          stitchDisabled: creator.stitch_disabled,
          maxVideoSeconds: creator.max_video_post_duration_sec ?? null,
        };
      },
    },
  ],
  authorizeUrl: ({ clientId, redirectUri, state, codeChallenge, endpoints }) =>
    authorizationUrl(endpoints.authorize, `${endpoints.apiVersion}/auth/authorize/`, {
      client_key: clientId,
      scope: scopes.join(','),
      response_type: 'code',
      redirect_uri: redirectUri,
      state,
      ...pkce(tiktokCodeChallenge(codeChallenge)),
    }),

  async exchangeCode(context, options) {
    const data = await token(context, {
      client_key: options.clientId,
      client_secret: options.clientSecret,
      code: options.code,
      grant_type: 'authorization_code',
      redirect_uri: options.redirectUri,
      code_verifier: options.codeVerifier,
    });
    const granted = new Set((data.scope ?? '').split(','));
    const missing = required.filter((scope) => !granted.has(scope));
    if (data.scope !== undefined && missing.length > 0) {
      throw permanent(`the account did not grant ${missing.join(', ')}: connect again and allow every permission`, 403);
    }
    const { data: profile } = await call({ ...context, auth: { accessToken: data.access_token } }, 'user/info/', userSchema, {
      query: { fields: 'open_id,union_id,avatar_url,display_name,username' },
    });
    const user = profile.user;
    return {
      ...tokensOf(data),
      internalId: data.open_id,
      name: user.display_name || user.username || 'TikTok',
      profile: user.username ?? data.open_id,
      picture: user.avatar_url,
      data: user.username ? { username: user.username } : ({} as Record<string, string>),
    };
  },

  // TikTok rotates the refresh token: the new one is stored in place of the old.
  async refresh(context) {
    if (!context.client) throw new Error('No TikTok app is configured on this Herald to refresh the token with.');
    return tokensOf(await token(context, { client_key: context.client.clientId, client_secret: context.client.clientSecret, grant_type: 'refresh_token', refresh_token: context.auth.refreshToken }));
  },

  publish,

  async analytics(context) {
    const { data } = await call(context, 'user/info/', userSchema, { query: { fields: 'follower_count,following_count,likes_count,video_count' } });
    const { user } = data;
    return [currentMetric('Followers', user.follower_count), currentMetric('Following', user.following_count), currentMetric('Likes', user.likes_count), currentMetric('Videos', user.video_count)];
  },

  async postAnalytics(context, post) {
    const { data } = await call(context, 'video/query/', videosSchema, {
      query: { fields: 'id,view_count,like_count,comment_count,share_count' },
      json: { filters: { video_ids: [post.id] } },
    });
    const found = data.videos.find((video) => video.id === post.id);
    if (!found) return [];
    return [currentMetric('Views', found.view_count), currentMetric('Likes', found.like_count), currentMetric('Comments', found.comment_count), currentMetric('Shares', found.share_count)];
  },

  async recent(context: ProviderContext) {
    const { data } = await call(context, 'video/list/', videosSchema, { query: { fields: 'id,cover_image_url,title,create_time' }, json: { max_count: 20 } });
    return data.videos.map((video) => ({ id: video.id, url: video.cover_image_url ?? '' }));
  },
};

export default tiktok;
