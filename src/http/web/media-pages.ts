// The media library in the console: every file, newest first, with upload and delete, through the API's tools
// (mediaListTool, uploadMedia, deleteMedia) as the signed-in person. Files chosen here are offered in the composer.
import type { Request, Response, Router } from 'express';
import { mediaList } from '../../../tools/media-list.js';
import { uploadMedia } from '../../../tools/upload-media.js';
import { deleteMedia } from '../../../tools/delete-media.js';
import { runTool } from '../../../tools/runner.js';
import type { Services } from '../../../tools/types.js';
import { DomainError } from '../../errors.js';
import { clientError, csrfField, html, safeUrl, sendPage, sentence } from './html.js';
import { readMultipart } from './multipart.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { consoleZones, pageZone, when } from './zones.js';

const NOTICES: Record<string, string> = { uploaded: 'Added to the media library.', deleted: 'Deleted from the media library.' };

const sizeOf = (bytes: number) => (bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1024))} KB`);

export function mediaPages(router: Router, services: Services): void {
  const page = async (request: Request, response: Response, problem?: { text: string; status: number }) => {
    const { signedIn, csrf } = consoleLocals(response);
    const zones = await consoleZones(services, request, response);
    const number = Math.max(0, Number.parseInt(String(request.query.page ?? '0'), 10) || 0);
    const listed = await runConsoleTool(mediaList, { page: number, pageSize: 40 }, response, services);
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    sendPage(
      response,
      { title: 'Media library', signedIn, csrf, section: 'media', zone: pageZone(zones), status: problem?.status, flash: problem ? { kind: 'error', text: problem.text } : notice ? { kind: 'ok', text: notice } : undefined },
      html`<h1>Media library</h1>
      <form method="post" action="/media?_csrf=${encodeURIComponent(csrf)}" enctype="multipart/form-data" class="card">
        <input type="hidden" name="_csrf" value="${csrf}">
        <label for="library-upload">Add pictures or videos</label>
        <input id="library-upload" name="file" type="file" multiple accept="image/*,video/mp4" required>
        <button type="submit">Upload</button>
      </form>
      ${listed.media.length === 0 ? html`<p class="card">No files yet.</p>` : ''}
      <ul class="media-library">${listed.media.map(
        (media) => html`<li class="card">
          ${media.type.startsWith('image/') && safeUrl(media.path) ? html`<img src="${safeUrl(media.path)}" alt="${media.name}" referrerpolicy="no-referrer">` : html`<p>${media.type.startsWith('video/') ? 'Video' : 'File'}</p>`}
          <p><strong>${media.name}</strong><br><span class="hint">${media.type}, ${sizeOf(media.size)}${media.width && media.height ? `, ${media.width}×${media.height}` : ''}, added ${when(media.createdAt, zones.viewer)}</span></p>
          <form method="post" action="/media/${media.id}/delete">${csrfField(csrf)}
            <label class="hint"><input type="checkbox" name="confirm" value="yes" required> posts scheduled with it will fail</label>
            <button type="submit" class="danger" aria-label="Delete ${media.name}">Delete</button></form>
        </li>`,
      )}</ul>
      <p>${number > 0 ? html`<a href="/media?page=${number - 1}">← Newer</a> ` : ''}${listed.hasMore ? html`<a href="/media?page=${number + 1}">Older →</a>` : ''}</p>`,
    );
  };

  router.get('/media', requireSignedIn, (request, response) => page(request, response));

  router.post('/media', requireSignedIn, async (request, response) => {
    let added = 0;
    const { problems } = await readMultipart(request, async (_field, file) => {
      await runTool(uploadMedia, { file }, consoleCaller(response), services, String(response.locals.requestId));
      added += 1;
    });
    if (problems.length || added === 0) return page(request, response, { text: problems.length ? `Some files were not added: ${problems.join('; ')}` : 'Choose a file to upload.', status: 400 });
    response.redirect(303, '/media?notice=uploaded');
  });

  router.post('/media/:id/delete', requireSignedIn, async (request, response) => {
    try {
      if (request.body?.confirm !== 'yes') throw new DomainError('invalid_input', 'Tick the box to confirm: posts scheduled with this file will fail to publish.');
      await runConsoleTool(deleteMedia, { id: String(request.params.id) }, response, services);
    } catch (raw) {
      const error = clientError(raw);
      return page(request, response, { text: sentence(error), status: error.status });
    }
    response.redirect(303, '/media?notice=deleted');
  });
}
