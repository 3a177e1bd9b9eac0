// Instagram through the Facebook business login: the user logs in with Facebook, then picks the Page whose Instagram
// professional account Herald publishes to; the Page's token publishes containers of pictures, Reels, carousels and stories
// pulled from our public media URL (providers/meta/instagram.ts). Audio comes from the Instagram Audio API. References:
//   https://developers.facebook.com/docs/instagram-platform/instagram-api-with-facebook-login
//   https://developers.facebook.com/docs/instagram-platform/content-publishing/audio-api (GET /ig_audio, audio_configuration)
//   https://developers.facebook.com/docs/graph-api/reference/page/ (instagram_business_account)
import { z } from 'zod';
import type { Provider } from './types.js';
import { facebookDialogUrl, META_GRAPH_VERSION } from './shared.js';
import { invalidInput } from '../src/errors.js';
import { graph } from './meta/graph.js';
import { chosenPage, exchangeFacebookCode, managedPages } from './meta/login.js';
import { instagramProvider, instagramSettings } from './meta/instagram.js';

const scopes = [
  'instagram_basic',
  'pages_show_list',
  'pages_read_engagement',
  'business_management',
  'instagram_content_publish',
  'instagram_manage_comments',
  'instagram_manage_insights',
];

const volume = (what: string) => z.number().min(0).max(100).optional().describe(`Volume of ${what}, 0 to 100`);

// Meta's sample answer names the list `audio`; Graph's usual `data` is read too.
const audioItem = z.object({
  audio_id: z.string(),
  title: z.string().nullish(),
  display_artist: z.string().nullish(),
  ig_username: z.string().nullish(),
  duration_in_ms: z.number().nullish(),
  cover_artwork_thumbnail_url: z.string().nullish(),
  profile_picture_url: z.string().nullish(),
  download_url: z.string().nullish(),
});
const audioSchema = z.object({ audio: z.array(audioItem).optional(), data: z.array(audioItem).optional() });

const shared = instagramProvider({ audio: true });

const instagram: Provider = {
  ...shared,
  identifier: 'instagram',
  name: 'Instagram (Facebook Business)',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { dialog: 'https://www.facebook.com', graph: 'https://graph.facebook.com', graphVersion: META_GRAPH_VERSION },
  rules: `${shared.rules} The audio setting (an id from audioSearch, with optional volumes 0 to 100) adds music or an original sound to a single-video Reel.`,
  settings: z.object({
    ...instagramSettings,
    audio: z
      .object({
        id: z.string().min(1).describe('Audio id from audioSearch'),
        audio_volume: volume('the added audio'),
        video_volume: volume('the video\'s own sound'),
      })
      .optional()
      .describe('Music or original sound added to a single-video Reel'),
  }),
  tools: [
    {
      methodName: 'audioSearch',
      description:
        'Searches Instagram audio a Reel may use; an empty q lists trending audio. Answers [{id, title, artist, image, duration (milliseconds), previewUrl}]: put the chosen id in settings.audio.id.',
      dataSchema: [
        { key: 'q', type: 'string', description: 'Song, artist or sound to search for; empty for trending audio' },
        { key: 'type', type: 'string', description: 'music (default) or original_sound' },
      ],
      async run(context, data) {
        const type = data.type?.trim() || 'music';
        if (type !== 'music' && type !== 'original_sound') throw invalidInput(`type must be music or original_sound, not "${type}".`);
        const answer = await graph(context, 'ig_audio', {
          query: { audio_type: type, user_id: context.auth.internalId, search_query: data.q?.trim() || undefined },
          schema: audioSchema,
        });
        return (answer.audio ?? answer.data ?? []).map((audio) => ({
          id: audio.audio_id,
          title: audio.title ?? '',
          artist: audio.display_artist ?? audio.ig_username ?? '',
          image: audio.cover_artwork_thumbnail_url ?? audio.profile_picture_url ?? '',
          duration: audio.duration_in_ms ?? 0,
          previewUrl: audio.download_url ?? '',
        }));
      },
    },
  ],
  authorizeUrl: (options) => facebookDialogUrl(options, scopes),
  exchangeCode: (context, options) => exchangeFacebookCode(context, options, scopes),

  async accounts(context) {
    return (await managedPages(context)).flatMap(({ name, instagram_business_account: account }) =>
      account ? [{ id: account.id, name: `${account.name || account.username} (@${account.username}, Page ${name})`, picture: account.profile_picture_url }] : [],
    );
  },

  async selectAccount(context, id) {
    const page = await chosenPage(context, (candidate) => candidate.instagram_business_account?.id === id, `The Instagram account ${id}`);
    const account = page.instagram_business_account!;
    return {
      internalId: account.id,
      name: account.name || account.username,
      profile: account.username,
      picture: account.profile_picture_url,
      accessToken: page.access_token,
      data: { pageId: page.id },
    };
  },
};

export default instagram;
