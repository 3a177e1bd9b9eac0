// Farcaster through Neynar: casts with picture embeds, optionally in channels; later items reply to the previous cast.
import { z } from 'zod';
import type { Provider } from './types.js';
import { firstProblem, noVideo, tool } from './shared.js';

const warpcast: Provider = {
  identifier: 'warpcast',
  name: 'Farcaster',
  editor: 'plain',
  lengthMethod: 'characters',
  // Sign In With Neynar hands back a signer bound to the service's Neynar API key; that signer is the credential.
  auth: {
    kind: 'credentials',
    fields: [{ key: 'signerUuid', label: 'Neynar signer UUID', type: 'password', required: true, description: 'signer_uuid returned by Sign In With Neynar' }],
  },
  endpoints: { api: 'https://api.neynar.com' },
  maxLength: () => 800,
  rules:
    'A cast of text with up to 2 pictures (public URLs), no video, posted once in each chosen channel or on the profile. ' +
    'Later items are replies to the previous cast.',
  settings: z.object({
    subreddit: z
      .array(z.object({ value: z.object({ id: z.string().min(1).describe('Channel id from the subreddits tool') }) }))
      .optional()
      .describe('Farcaster channels to cast in; none casts on the profile only'),
  }),
  chain: 'thread',
  validate: (items) =>
    noVideo(items, 'Farcaster') ?? firstProblem(items, ({ images }) => (images > 2 ? `has ${images} pictures; a cast takes at most 2.` : undefined)),
  tools: [tool('subreddits', 'Searches Farcaster channels by name.', [{ key: 'word', type: 'string', description: 'Part of the channel name' }])],
};

export default warpcast;
