// Medium: Markdown stories published with the user's integration token, on the profile or into a publication.
// Reference: https://github.com/Medium/medium-api-docs (README: 3.1 users/me, 3.2 publications and contributors, 3.3 creating
// a post and a post under a publication, 3.4 images). The API is archived: Medium issues no new integration tokens, existing
// ones still work. It has no subtitle and no cover field, and the title "will not appear in the actual post": Herald writes the
// title and subtitle as the first headings of the story and puts the first picture right under them (Medium uses a story's
// first image as its preview); the others follow the text. Medium side-loads pictures from their public URL.
// Medium's Markdown has no tables (a table's rows become lines of their cells) and Medium keeps only what it accepts of the
// rest (README: "for a full list of accepted HTML tags"); title, subtitle and tags are plain text (issue 21).
import { z } from 'zod';
import { escapeMarkdownBlock, escapeMarkdownText } from '../src/lib/content.js';
import type { PlatformHttpErrorInit } from '../src/lib/platform-http.js';
import type { ConnectContext, Provider, ProviderContext } from './types.js';
import { noVideo, permanent, tagsSchema } from './shared.js';
import { envelope, markdownArticle, picturesOf, plainRefusal, saidIn, splitCover, valuesOf } from './articles/common.js';

const settings = z.object({
  title: z.string().trim().min(1, 'Medium needs a title for the story').max(100, 'Medium ignores titles over 100 characters: shorten the title').describe('Story title, at most 100 characters'),
  subtitle: z.string().trim().optional().describe('Subtitle, written under the title (the API has no subtitle field)'),
  tags: tagsSchema.max(3, 'Medium uses only 3 tags: remove the others').optional().describe('Up to 3 tags of at most 25 characters'),
  publication: z.string().trim().min(1).optional().describe('Publication id from publications: the story is created in it'),
});

const userSchema = envelope(z.object({ id: z.string(), username: z.string(), name: z.string().nullish(), imageUrl: z.string().nullish() }));
const publicationsSchema = envelope(z.array(z.object({ id: z.string(), name: z.string(), description: z.string().nullish(), url: z.string().nullish() })));
const contributorsSchema = envelope(z.array(z.object({ publicationId: z.string(), userId: z.string(), role: z.string() })));
const postSchema = envelope(z.object({ id: z.string(), url: z.string(), publishStatus: z.string().optional() }));

/** Medium answers `{errors: [{message, code}]}`; 401 is a token that is invalid or revoked. */
function classify(status: number, body: string): Partial<PlatformHttpErrorInit> {
  if (status === 401) return { status: 401, retryable: false, message: `the integration token was refused (${saidIn(status, body)}): it was revoked; Medium issues no new tokens, so only an existing one can reconnect the channel` };
  if (status === 403) return { retryable: false, message: `${saidIn(status, body)}: the account may not publish there (a publication needs the account as its writer or editor)` };
  return plainRefusal(status, body);
}

type Api = Pick<ConnectContext, 'fetch' | 'endpoints'> & { token: string };

const apiOf = (context: ProviderContext): Api => ({ fetch: context.fetch, endpoints: context.endpoints, token: context.auth.accessToken });

async function call<T>(api: Api, path: string, schema: z.ZodType<T>, json?: unknown): Promise<T> {
  const response = await api.fetch({
    url: `${api.endpoints.api}/v1/${path}`,
    headers: { authorization: `Bearer ${api.token}`, 'accept-charset': 'utf-8' },
    json,
    schema,
    classify,
  });
  return response.data;
}

/** Where the story goes and with which status: an editor publishes, a writer can only submit a draft (Medium's rule). */
async function target(api: Api, userId: string, publication: string | undefined) {
  if (!publication) return { path: `users/${encodeURIComponent(userId)}/posts`, publishStatus: 'public' };
  const { data: contributors } = await call(api, `publications/${encodeURIComponent(publication)}/contributors`, contributorsSchema);
  const role = contributors.find((contributor) => contributor.userId === userId)?.role;
  if (role !== 'editor' && role !== 'writer') throw permanent('the account is neither a writer nor an editor of that publication: choose one from publications where it writes', 403);
  return { path: `publications/${encodeURIComponent(publication)}/posts`, publishStatus: role === 'editor' ? 'public' : 'draft' };
}

const heading = (level: number, text: string) => `${'#'.repeat(level)} ${escapeMarkdownBlock(escapeMarkdownText(text))}`;

const medium: Provider = {
  identifier: 'medium',
  name: 'Medium',
  editor: 'markdown',
  article: true,
  lengthMethod: 'characters',
  auth: {
    kind: 'credentials',
    fields: [
      {
        key: 'integrationToken',
        label: 'Integration token',
        type: 'password',
        required: true,
        description: 'From Medium settings, Security and apps; Medium no longer issues new tokens.',
      },
    ],
  },
  endpoints: { api: 'https://api.medium.com' },
  maxLength: () => 100000,
  rules:
    'A story (Markdown, or HTML with headings, emphasis, lists, quotes, code and pictures; tables become lines of their cells), published at once, with a required title (at most 100 characters) and up to 3 tags of at most 25 characters. ' +
    "Medium's API has no subtitle field: the title and the subtitle are written as the story's first headings. " +
    'The first picture comes right under them (Medium shows it as the preview), the others after the text; Medium loads them from their public URL. ' +
    'In a publication (from publications) an editor publishes at once, a writer only submits a draft for the editors. No video, one item, no analytics.',
  settings,
  // Medium's API (v1, README 3.3) only creates posts: it has no call to edit or delete one.
  unchangeable: {
    edit: "Medium's API can only create stories; it has no way to edit one: edit the story on medium.com.",
    delete: "Medium's API can only create stories; it has no way to delete one: delete the story on medium.com.",
  },
  chain: 'none',
  mediaByUrl: true,
  recordsSteps: true,
  validate(items, raw) {
    const long = valuesOf((raw as z.infer<typeof settings>).tags).find((tag) => tag.length > 25);
    if (long) return `The tag "${long}" is longer than 25 characters: Medium ignores such tags, shorten it.`;
    return noVideo(items, 'Medium');
  },
  tools: [
    {
      methodName: 'publications',
      description: 'Lists the Medium publications related to the account (its own, those it writes for or follows): posting needs a writer or editor role.',
      dataSchema: [],
      run: async (context) => {
        const { data } = await call(apiOf(context), `users/${encodeURIComponent(context.auth.internalId)}/publications`, publicationsSchema);
        return data.map((publication) => ({ id: publication.id, name: publication.name, url: publication.url ?? undefined }));
      },
    },
  ],

  async connect(context, fields) {
    const token = (fields.integrationToken ?? '').trim();
    const { data: user } = await call({ ...context, token }, 'me', userSchema);
    return { internalId: user.id, name: user.name?.trim() || user.username, profile: user.username, picture: user.imageUrl ?? undefined, accessToken: token };
  },

  async publish(context, item) {
    const options = settings.parse(context.settings);
    const api = apiOf(context);
    const { path, publishStatus } = await target(api, context.auth.internalId, options.publication);
    const { cover, rest } = splitCover(picturesOf(item.media, 'Medium'));
    const headings = [heading(1, options.title), ...(options.subtitle ? [heading(2, options.subtitle)] : [])];
    const content = markdownArticle(item.text, rest, { tables: false, lineBreak: '\n' }, cover ? [cover] : [], headings);
    const tags = valuesOf(options.tags);
    // Medium has no way to list a user's stories: a create whose answer was lost cannot be looked up (no recover).
    const { data: post } = await context.step('post', () =>
      call(api, path, postSchema, { title: options.title, contentFormat: 'markdown', content, tags: tags.length ? tags : undefined, publishStatus }),
    );
    return { id: post.id, url: post.url };
  },
};

export default medium;
