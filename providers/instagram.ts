// Instagram through the Facebook business login: posts, reels, stories and carousels; media pulled by public URL.
import { z } from 'zod';
import type { Provider, ValidationItem } from './types.js';
import { facebookDialogUrl, firstProblem, textOnlyComments, tool } from './shared.js';

/** Settings keys shared with instagram-standalone. */
export const instagramSettings = {
  post_type: z.enum(['post', 'story']).describe('post (a single video becomes a Reel) or story'),
  is_trial_reel: z.boolean().optional().describe('Share a single-video Reel with non-followers first'),
  collaborators: z.array(z.object({ label: z.string() })).optional().describe('Instagram usernames invited as collaborators'),
};

/** Media rules of both Instagram providers; `audio` exists only on the business-login one. */
export function instagramMediaRules(items: ValidationItem[], settings: Record<string, unknown>): string | undefined {
  const story = settings.post_type === 'story';
  return (
    firstProblem(
      items,
      ({ images, videos, total }) => {
        if (total === 0) return 'has no media; an Instagram post needs at least one picture or video.';
        if (story && (total !== 1 || videos > 0)) return 'is a story, which takes exactly one picture.';
        if (total > 10) return `has ${total} attachments; an Instagram carousel takes at most 10.`;
        if (settings.is_trial_reel === true && (total !== 1 || images > 0)) return 'is a trial reel, which takes a single video.';
        if (settings.audio && (total !== 1 || videos !== 1 || story)) return 'sets audio, which needs a single video and post_type post.';
        return undefined;
      },
      'first',
    ) ?? textOnlyComments(items, 'Instagram')
  );
}

export const instagramRules =
  'A post needs at least one picture or video: up to 10 make a carousel, a single video with post_type post is published as a Reel. ' +
  'A story takes exactly one picture. Media must be reachable at a public URL. Later items are comments on the post and take text only.';

const scopes = [
  'instagram_basic',
  'pages_show_list',
  'pages_read_engagement',
  'business_management',
  'instagram_content_publish',
  'instagram_manage_comments',
  'instagram_manage_insights',
];

const instagram: Provider = {
  identifier: 'instagram',
  name: 'Instagram (Facebook Business)',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes, betweenSteps: true },
  endpoints: { dialog: 'https://www.facebook.com', graph: 'https://graph.facebook.com', rupload: 'https://rupload.facebook.com' },
  maxLength: () => 2200,
  rules: `${instagramRules} The audio setting (an id from audioSearch) needs a single video and post_type post.`,
  settings: z.object({
    ...instagramSettings,
    audio: z
      .object({
        id: z.string().min(1).describe('Audio id from audioSearch'),
        audio_volume: z.number().optional().describe('Volume of the added audio'),
        video_volume: z.number().optional().describe('Volume of the video\'s own sound'),
      })
      .optional()
      .describe('Music or original sound added to a single-video Reel'),
  }),
  chain: 'comments',
  mediaByUrl: true,
  validate: instagramMediaRules,
  tools: [
    tool('audioSearch', 'Searches Instagram audio for a Reel; an empty query lists trending audio. Put the chosen id in settings.audio.id.', [
      { key: 'q', type: 'string', description: 'Words to search for; empty for trending audio' },
      { key: 'type', type: 'string', description: 'music or original_sound' },
    ]),
  ],
  authorizeUrl: (options) => facebookDialogUrl(options, scopes),
};

export default instagram;
