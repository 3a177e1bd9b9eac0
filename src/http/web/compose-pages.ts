// "New post": a person writes a post in the console. Everything goes through the API's tools as the signed-in person
// (createPost, validatePost, findSlotTool, uploadMedia), so idempotency, the duplicate guard and the approval rules are
// the API's. The preview is validatePost's answer, rendered here; the console's script asks for it as the person types
// (POST /compose/preview answers the preview's HTML), and the Preview button shows it without JavaScript.
import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { MediaSchema, CustomerSchema, type Media } from '../../db/entities.js';
import { listIntegrations, providerOf } from '../../../tools/internal/integrations.js';
import { unshownSentence, unshownTags } from './compose-text.js';
import type { PostPreview } from '../../../tools/internal/preview.js';
import { createPost } from '../../../tools/create-post.js';
import { findSlot } from '../../../tools/find-slot.js';
import { uploadMedia } from '../../../tools/upload-media.js';
import { validatePost } from '../../../tools/validate-post.js';
import { runTool } from '../../../tools/runner.js';
import type { Services } from '../../../tools/types.js';
import { DomainError } from '../../errors.js';
import { clientError, html, sendPage, sentence } from './html.js';
import { composeRequests, emptyState, fieldsOf, MAX_ITEMS, stateOf, stateOfPost, type ComposeState, type PostType } from './compose-form.js';
import { postView } from '../../../tools/internal/post-view.js';
import { updatePost } from '../../../tools/update-post.js';
import { composeMarkup, previewMarkup } from './compose-view.js';
import { readMultipart } from './multipart.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { consoleZones, localTimes, pageZone, zoneDatalist, zoneNote } from './zones.js';
import { saveSetFromCompose, setChoiceMarkup, stateOfSet } from './set-pages.js';
import { createRulesFromCompose } from './recurring-pages.js';

const LIBRARY_SHOWN = 24;

async function libraryFor(services: Services, organizationId: string, chosen: string[]): Promise<Media[]> {
  const em = services.orm.em.fork();
  const recent = await em.find(MediaSchema, { organizationId, deletedAt: null }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: LIBRARY_SHOWN });
  const missing = chosen.filter((id) => !recent.some((media) => media.id === id));
  const more = missing.length ? await em.find(MediaSchema, { organizationId, deletedAt: null, id: { $in: missing } }) : [];
  return [...more, ...recent];
}

export async function channelsOf(services: Services, organizationId: string) {
  const em = services.orm.em.fork();
  const channels = (await listIntegrations(em, organizationId)).filter((channel) => !channel.inBetweenSteps);
  const customers = await em.find(CustomerSchema, { organizationId });
  return { channels, customers: new Map(customers.map((customer) => [customer.id, customer.name])) };
}

/** validatePost for each request of the form (one per date), as the person. */
async function previewsOf(services: Services, request: Request, response: Response, state: ComposeState, type: PostType): Promise<PostPreview[]> {
  const organizationId = consoleCaller(response).organizationId;
  const { channels } = await channelsOf(services, organizationId);
  const library = new Map((await libraryFor(services, organizationId, state.items.flatMap((item) => item.media))).map((media) => [media.id, media]));
  const requests = await composeRequests(state, type, channels, library, async (id) => (await runConsoleTool(findSlot, { id }, response, services)).date);
  const previews: PostPreview[] = [];
  const byId = new Map(channels.map((channel) => [channel.id, channel]));
  for (const { body } of requests) {
    // An edited post is not a duplicate of itself: its save (updatePost) runs the guard against the others.
    const preview = await runConsoleTool(validatePost, state.editing ? { ...body, allowDuplicate: true } : body, response, services);
    // Tags the platform's content does not keep are named, not dropped without a word.
    for (const entry of preview.entries) {
      const channel = byId.get(entry.integrationId);
      const sent = body.posts.find((post) => post.integration.id === entry.integrationId);
      if (!channel || !sent) continue;
      const provider = providerOf(channel);
      const unshown = unshownSentence([...new Set(sent.value.flatMap((item) => unshownTags(item.content ?? '', provider)))], provider.name);
      if (unshown) entry.warnings.unshift(unshown);
    }
    previews.push(preview);
  }
  return previews;
}

async function composePage(services: Services, request: Request, response: Response, state: ComposeState, extra: { previews?: PostPreview[]; problem?: { text: string; status: number } } = {}) {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const organizationId = consoleCaller(response).organizationId;
  const { channels, customers } = await channelsOf(services, organizationId);
  const library = await libraryFor(services, organizationId, state.items.flatMap((item) => item.media));
  sendPage(
    response,
    {
      title: state.editing ? 'Edit post' : 'New post',
      signedIn,
      csrf,
      section: state.editing ? 'posts' : 'compose',
      zone: pageZone(zones),
      status: extra.problem?.status,
      flash: extra.problem ? { kind: 'error', text: extra.problem.text } : undefined,
    },
    html`<h1>${state.editing ? 'Edit post' : 'New post'}</h1>${zoneNote(zones)}
    ${state.editing ? '' : await setChoiceMarkup(services, organizationId)}
    ${composeMarkup({ state, channels, customers, library, csrf, zone: zones.viewer, previews: extra.previews })}
    ${zoneDatalist()}`,
  );
}

/** A preview that cannot be made (no channel, a date that is not one) says why in the preview's place. */
async function previewOrProblem(services: Services, request: Request, response: Response, state: ComposeState): Promise<{ previews?: PostPreview[]; problem?: string }> {
  try {
    // Without a date yet, what a draft would be: the preview says no date is chosen rather than "published now".
    return { previews: await previewsOf(services, request, response, state, state.date || state.timing === 'slot' ? 'schedule' : 'draft') };
  } catch (raw) {
    return { problem: sentence(clientError(raw)) };
  }
}

/** The edit form saved: its one channel's items, settings and (when chosen) date, through updatePost. */
async function saveEdit(services: Services, request: Request, response: Response, state: ComposeState): Promise<void> {
  const id = state.editing!;
  try {
    const organizationId = consoleCaller(response).organizationId;
    const { channels } = await channelsOf(services, organizationId);
    const library = new Map((await libraryFor(services, organizationId, state.items.flatMap((item) => item.media))).map((media) => [media.id, media]));
    const [{ body }] = await composeRequests(state, 'draft', channels, library, async (channelId) => (await runConsoleTool(findSlot, { id: channelId }, response, services)).date);
    const [entry] = body.posts;
    await runConsoleTool(updatePost, { id, ...(body.date ? { date: body.date } : {}), value: entry.value, settings: entry.settings, allowDuplicate: state.allowDuplicate }, response, services);
  } catch (raw) {
    const error = clientError(raw);
    const { previews } = await previewOrProblem(services, request, response, state);
    return composePage(services, request, response, state, { previews, problem: { text: sentence(error), status: error.status } });
  }
  response.redirect(303, `/posts/${id}?notice=saved`);
}

export function composePages(router: Router, services: Services): void {
  router.get('/compose', requireSignedIn, async (request, response) => {
    const zones = await consoleZones(services, request, response);
    const duplicate = typeof request.query.duplicate === 'string' ? request.query.duplicate : undefined;
    const organizationId = consoleCaller(response).organizationId;
    // Duplicate: a new post with the text, media and settings of another, its date left to choose.
    const state = duplicate ? stateOfPost(await postView(services.orm.em.fork(), organizationId, duplicate), zones.viewer, { withDate: false, editing: false }) : emptyState(zones.viewer);
    if (!duplicate && typeof request.query.channel === 'string') state.channels = [request.query.channel];
    // Start from a set: its channels (a disconnected one left out, and said), text, media and settings.
    if (typeof request.query.set === 'string') {
      const { state: fromSet, warnings } = await stateOfSet(services, response, request.query.set, zones.viewer, (await channelsOf(services, organizationId)).channels);
      return composePage(services, request, response, fromSet, warnings.length ? { problem: { text: warnings.join(' '), status: 200 } } : {});
    }
    await composePage(services, request, response, state);
  });

  // Edit: the same composer and live preview, filled with the post, saved with updatePost.
  router.get('/posts/:id/edit', requireSignedIn, async (request, response) => {
    const zones = await consoleZones(services, request, response);
    const view = await postView(services.orm.em.fork(), consoleCaller(response).organizationId, String(request.params.id));
    if (view.chain.some((item) => item.state === 'PUBLISHED')) {
      throw new DomainError('conflict', 'This post went out: what was published stays on the platform.', { hint: 'Duplicate it to post a corrected version, or delete it from its page.' });
    }
    await composePage(services, request, response, stateOfPost(view, zones.viewer, { withDate: true, editing: true }));
  });

  // The script's live preview: the preview's HTML for the form as it is now.
  router.post('/compose/preview', requireSignedIn, async (request, response) => {
    const zones = await consoleZones(services, request, response);
    const state = stateOf(fieldsOf(request.body), zones.viewer);
    // Nothing chosen yet: the preview's hint, not an error.
    const { previews, problem } = state.channels.length ? await previewOrProblem(services, request, response, state) : { previews: [], problem: undefined };
    response
      .type('html')
      .setHeader('Cache-Control', 'no-store')
      .send((previews ? previewMarkup(previews, zones.viewer, !state.date && state.timing === 'date') : html`<p class="flash error">${localTimes(problem ?? '', zones.viewer)}</p>`).value);
  });

  // The script's uploads (a file input, files dropped on an item): one file, answered as the media library's record.
  router.post('/media/upload', requireSignedIn, async (request, response) => {
    if (!request.is('multipart/form-data')) throw new DomainError('invalid_input', 'Send the file as multipart/form-data in the field "file".', { status: 415 });
    const uploaded: unknown[] = [];
    const { problems } = await readMultipart(request, async (_field, file) => {
      uploaded.push(await runTool(uploadMedia, { file }, consoleCaller(response), services, String(response.locals.requestId)));
    });
    if (uploaded.length === 0) {
      response.status(400).json({ code: 'invalid_input', message: problems[0] ?? 'No file was sent: send it in the field "file".' });
      return;
    }
    response.json(uploaded[0]);
  });

  router.post('/compose', requireSignedIn, async (request, response) => {
    const zones = await consoleZones(services, request, response);
    const caller = consoleCaller(response);
    // Files chosen in the form (without the script) go to the library first and join their item's media. Each upload
    // carries a key made of the form's own (which comes before the files), so the same form sent twice (a double click)
    // stores each file once and sends the same create request, which then answers its first answer.
    const uploads: { field: string; id: string }[] = [];
    const perField = new Map<string, number>();
    const { fields, problems } = await readMultipart(request, async (field, file, before) => {
      const formKey = before.idempotencyKey?.[0];
      const count = perField.get(field) ?? 0;
      perField.set(field, count + 1);
      const idempotencyKey = formKey && /^[\x21-\x7e]{1,200}$/.test(formKey) ? `${formKey}:${field}:${count}` : undefined;
      const media = await runTool(uploadMedia, { file }, caller, services, String(response.locals.requestId), { idempotencyKey });
      uploads.push({ field, id: media.id });
    });
    const state = stateOf(fields, zones.viewer);
    // An edit keeps the post's media that are not library files, and every alt text, as they were.
    if (state.editing) state.kept = stateOfPost(await postView(services.orm.em.fork(), caller.organizationId, state.editing), zones.viewer, { withDate: false, editing: true }).kept;
    const sentKey = state.idempotencyKey;
    // A form shown again is a new submission: its uploads and its create get new keys.
    state.idempotencyKey = randomUUID();
    for (const upload of uploads) {
      const index = Number(/^upload-(\d+)$/.exec(upload.field)?.[1] ?? 0);
      state.items[Math.min(index, state.items.length - 1)].media.push(upload.id);
    }
    const action = fields.action?.at(-1) ?? 'preview';
    const uploadProblem = problems.length ? `Some files were not added: ${problems.join('; ')}` : undefined;
    if (action === 'add-item' || /^remove-\d+$/.test(action)) {
      if (action === 'add-item' && state.items.length < MAX_ITEMS) state.items.push({ content: '', delay: '', media: [] });
      if (action.startsWith('remove-')) {
        const index = Number(action.slice(7));
        if (index > 0 && index < state.items.length) {
          state.items.splice(index, 1);
          for (const texts of Object.values(state.overrides)) texts.splice(index, 1);
        }
      }
      return composePage(services, request, response, state, uploadProblem ? { problem: { text: uploadProblem, status: 400 } } : {});
    }
    if (action === 'save-set') {
      try {
        const { channels } = await channelsOf(services, caller.organizationId);
        const library = new Map((await libraryFor(services, caller.organizationId, state.items.flatMap((item) => item.media))).map((media) => [media.id, media]));
        await saveSetFromCompose(services, response, state, { name: fields.setName?.[0] ?? '', channels, library });
        return response.redirect(303, '/sets?notice=saved');
      } catch (raw) {
        const error = clientError(raw);
        return composePage(services, request, response, state, { problem: { text: sentence(error), status: error.status } });
      }
    }
    if (action === 'save' && state.editing) {
      if (uploadProblem) return composePage(services, request, response, state, { problem: { text: uploadProblem, status: 400 } });
      return saveEdit(services, request, response, state);
    }
    if (action !== 'schedule' && action !== 'draft' && action !== 'now') {
      const { previews, problem } = await previewOrProblem(services, request, response, state);
      const text = [uploadProblem, problem].filter(Boolean).join(' ');
      return composePage(services, request, response, state, { previews, problem: text ? { text, status: 400 } : undefined });
    }
    if (uploadProblem) return composePage(services, request, response, state, { problem: { text: uploadProblem, status: 400 } });
    try {
      const { channels } = await channelsOf(services, caller.organizationId);
      const library = new Map((await libraryFor(services, caller.organizationId, state.items.flatMap((item) => item.media))).map((media) => [media.id, media]));
      // Schedule with Repeat ticked: a recurring post per channel instead of one post.
      if (state.repeat && action === 'schedule') return response.redirect(303, await createRulesFromCompose(services, response, state, state.repeat, channels, library));
      const requests = await composeRequests(state, action, channels, library, async (id) => (await runConsoleTool(findSlot, { id }, response, services)).date);
      // Several dates (next free slots that differ): all validated before any is created.
      if (requests.length > 1) {
        for (const { body } of requests) {
          const preview = await runConsoleTool(validatePost, body, response, services);
          if (!preview.valid) throw new DomainError('invalid_input', preview.errors ?? 'A channel refused the post.', { hint: 'Nothing was created.' });
        }
      }
      const created: string[] = [];
      for (const [index, { body }] of requests.entries()) {
        const key = requests.length > 1 ? `${sentKey}:${index}` : sentKey;
        const answer = await runTool(createPost, body, caller, services, String(response.locals.requestId), { idempotencyKey: key });
        created.push(...answer.output.map((post) => post.postId));
      }
      response.redirect(303, `/posts/${created[0]}?notice=created`);
    } catch (raw) {
      const error = clientError(raw);
      const { previews } = await previewOrProblem(services, request, response, state);
      await composePage(services, request, response, state, { previews, problem: { text: sentence(error), status: error.status } });
    }
  });
}
