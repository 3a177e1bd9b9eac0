// Pinterest: a pin of pictures or a video (with a cover picture) on a chosen board.
import { z } from 'zod';
import type { Provider } from './types.js';
import { authorizationUrl, firstProblem, httpUrl, tool } from './shared.js';

const scopes = ['boards:read', 'boards:write', 'pins:read', 'pins:write', 'user_accounts:read'];

const pinterest: Provider = {
  identifier: 'pinterest',
  name: 'Pinterest',
  editor: 'plain',
  lengthMethod: 'characters',
  auth: { kind: 'oauth2', scopes },
  endpoints: { web: 'https://www.pinterest.com', api: 'https://api.pinterest.com' },
  maxLength: () => 500,
  rules:
    'A pin needs media: 1 to 5 pictures of the same size, or one video followed by one picture used as its cover. ' +
    'The board (from getBoards) is required; title (100 characters at most) and link are optional. No comments.',
  settings: z.object({
    board: z.string().min(1).describe('Board id from getBoards'),
    title: z.string().max(100).optional().describe('Pin title'),
    link: httpUrl().optional().describe('Destination link of the pin'),
  }),
  chain: 'none',
  mediaByUrl: true,
  validate: (items) =>
    firstProblem(
      items,
      ({ images, videos, total }, item) => {
        if (total === 0) return 'has no media; a pin needs a picture or a video.';
        if (videos > 0 && (videos > 1 || total !== 2 || item.media[0].kind !== 'video'))
          return 'has a video; a video pin takes the video first and one cover picture second, nothing else.';
        if (images > 5) return `has ${images} pictures; a pin takes at most 5.`;
        return undefined;
      },
      'first',
    ),
  tools: [tool('getBoards', 'Lists the boards of the connected Pinterest account.')],
  authorizeUrl: ({ clientId, redirectUri, state, endpoints }) =>
    authorizationUrl(endpoints.web, 'oauth/', {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: scopes.join(','),
      state,
    }),
};

export default pinterest;
