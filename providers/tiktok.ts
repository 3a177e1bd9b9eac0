// TikTok (Content Posting API): one video or a photo post, posted directly or sent to the creator's inbox.
import { z } from 'zod';
import type { Provider, ValidationItem } from './types.js';
import { authorizationUrl, firstProblem } from './shared.js';

const scopes = ['video.list', 'user.info.basic', 'video.publish', 'video.upload', 'user.info.profile', 'user.info.stats'];

function validate(items: ValidationItem[], settings: Record<string, unknown>): string | undefined {
  return firstProblem(
    items,
    ({ images, videos, total }) => {
      if (total === 0) return 'has no media; TikTok needs one video or one or more pictures.';
      if (videos > 1 || (videos === 1 && images > 0)) return 'mixes media; TikTok takes one video alone, or pictures only.';
      if (images > 35) return `has ${images} pictures; a TikTok photo post takes at most 35.`;
      // With UPLOAD every setting is discarded anyway (the owner finishes the post in the app), so only DIRECT_POST is checked.
      if (settings.content_posting_method !== 'DIRECT_POST') return undefined;
      const videoOnly = ['duet', 'stitch', 'video_made_with_ai'].find((key) => settings[key] === true);
      if (images > 0 && videoOnly) return `is a photo post, but ${videoOnly} applies to videos only: set it to false.`;
      if (videos > 0 && settings.autoAddMusic === 'yes') return 'is a video, but autoAddMusic applies to photo posts only: set it to no.';
      return undefined;
    },
    'first',
  );
}

const tiktok: Provider = {
  identifier: 'tiktok',
  name: 'TikTok',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { authorize: 'https://www.tiktok.com', api: 'https://open.tiktokapis.com' },
  maxLength: () => 2000,
  rules:
    'A post is one video, or one or more pictures (never empty, never both). With content_posting_method UPLOAD the media goes to the ' +
    "account's TikTok inbox, the owner must finish it within 24 hours, and every setting except the text is discarded. duet, stitch and " +
    'video_made_with_ai apply to videos only, autoAddMusic to photo posts only. Until the TikTok app is audited, posts are forced to SELF_ONLY. No comments.',
  settings: z.object({
    privacy_level: z
      .enum(['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'])
      .describe('Who can see the post (SELF_ONLY until the TikTok app is audited)'),
    duet: z.boolean().describe('Allow duets (videos only)'),
    stitch: z.boolean().describe('Allow stitches (videos only)'),
    comment: z.boolean().describe('Allow comments'),
    autoAddMusic: z.enum(['yes', 'no']).describe('Add recommended music (photo posts only)'),
    brand_content_toggle: z.boolean().describe('Paid partnership promoting a third-party brand'),
    brand_organic_toggle: z.boolean().describe('Promotes the creator\'s own business'),
    video_made_with_ai: z.boolean().optional().describe('Label the video as AI-generated (videos only)'),
    content_posting_method: z
      .enum(['DIRECT_POST', 'UPLOAD'])
      .describe('DIRECT_POST publishes with these settings; UPLOAD sends the media to the TikTok inbox and ignores the other settings'),
  }),
  chain: 'none',
  mediaByUrl: true,
  validate,
  tools: [],
  // TikTok's web login needs no PKCE (the code verifier is optional for web apps).
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.authorize, 'v2/auth/authorize/', {
      client_key: clientId,
      redirect_uri: redirectUri,
      state,
      response_type: 'code',
      scope: scopes.join(','),
    }),
};

export default tiktok;
