// What the tests of the five article and newsletter platforms share: the article (a heading, bold, a link, a list), its two
// pictures uploaded to Herald, publishing through the real worker, and the organization's notifications.
import { NotificationSchema, type Post } from '../../src/db/entities.js';
import type { Herald } from '../helpers/harness.js';
import { acceptedSamples, uploaded } from '../helpers/media-samples.js';
import { chainOf, createPost, waitFor, submitPost } from '../helpers/posts.js';
import { tinyPng } from '../helpers/provider-context.js';

/** The article every platform test publishes, as an agent sends it. */
export const ARTICLE_HTML =
  '<h2>Why we moved</h2><p>Publishing is <strong>faster</strong> now: read <a href="https://example.com/notes">the notes</a>.</p>' +
  '<ul><li>One place for drafts</li><li>Fewer steps</li></ul>';

/** The same article as the Markdown editors convert it. */
export const ARTICLE_MARKDOWN = '## Why we moved\n\nPublishing is **faster** now: read [the notes](https://example.com/notes).\n\n- One place for drafts\n- Fewer steps';

export interface Pictures {
  png: { id: string; path: string; bytes: Buffer };
  jpeg: { id: string; path: string; bytes: Buffer };
}

/** A PNG and a JPEG uploaded to Herald's media library (their `path` is Herald's public URL). */
export async function uploadPictures(herald: Herald): Promise<Pictures> {
  const jpeg = acceptedSamples().find((sample) => sample.type === 'image/jpeg')!.bytes;
  const png = tinyPng();
  const stored = async (bytes: Buffer, name: string) => ({ ...(await uploaded(herald, bytes, name)), bytes });
  return { png: await stored(png, 'dot.png'), jpeg: await stored(jpeg, 'photo.jpg') };
}

/** Connects a credential channel over REST; answers the response (a test checks refusals itself). */
export const connect = (herald: Herald, identifier: string, fields: Record<string, string>) => herald.rest('POST', `/integrations/${identifier}/connect`, fields);

/** Schedules a one-item post for half a second from now and lets the real worker publish it; answers its row. */
export async function publishThroughWorker(herald: Herald, channelId: string, content: string, image: { id: string; path: string }[], settings: Record<string, unknown>): Promise<Post> {
  const worker = await herald.startWorker();
  try {
    const rootId = await createPost(herald, channelId, [{ content, image }], { settings, date: new Date(Date.now() + 500) });
    return await waitFor(async () => {
      const [root] = await chainOf(herald, rootId);
      if (root.state === 'ERROR') throw new Error(`publishing failed: ${root.error}`);
      return root.state === 'PUBLISHED' ? root : undefined;
    });
  } finally {
    await worker.stop();
  }
}

/** The organization's notifications of one type, newest first. */
export async function notifications(herald: Herald, type: string): Promise<string[]> {
  const rows = await herald.services.orm.em.fork().find(NotificationSchema, { organizationId: herald.organizationId, type }, { orderBy: { createdAt: 'desc' } });
  return rows.map((row) => row.content);
}

/** POST /posts of a one-item post with these settings, answered as it is (for the refusals at creation). */
export function scheduleWith(herald: Herald, channelId: string, settings: Record<string, unknown>) {
  return submitPost(herald, channelId, [{ content: '<p>x</p>', image: [] }], { settings });
}

