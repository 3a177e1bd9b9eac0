// Bulk import in the console (issue 35): a CSV or JSON file and the zone its dates are in, checked row by row by
// importPostsTool's dry run (a create's validation: every row with all its problems), then imported at once. The file's
// text and an idempotency key travel in the confirmation form, so a double submit (or a reload) imports once.
import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { importPostsTool } from '../../../tools/import-posts.js';
import { runTool } from '../../../tools/runner.js';
import type { Services } from '../../../tools/types.js';
import { clientError, csrfField, html, sendPage, sentence } from './html.js';
import { readMultipart } from './multipart.js';
import { consoleCaller, consoleLocals, requireSignedIn } from './session.js';
import { consoleZones, localTimes, pageZone, when, zoneDatalist, zoneField, zoneNote } from './zones.js';

/** What the console reads of a file: 2 MB, as POST /posts/import takes. */
const MAX_FILE_BYTES = 2_000_000;

type Report = Awaited<ReturnType<typeof importPostsTool.handler>>;

interface ImportForm {
  data: string;
  timeZone: string;
  idempotencyKey: string;
}

/** A file's rows for the tool: a JSON array (a .json file, or text starting with "["), else CSV. */
function importInput(form: ImportForm, dryRun: boolean) {
  const json = form.data.trimStart().startsWith('[');
  let rows: unknown;
  if (json) {
    try {
      rows = JSON.parse(form.data);
    } catch (error) {
      return { problem: `The file is not valid JSON (${(error as Error).message}): give a JSON array of row objects, or a CSV file.` };
    }
  }
  return { input: { ...(json ? { rows } : { csv: form.data }), timeZone: form.timeZone || undefined, dryRun } };
}

async function importPage(services: Services, request: Request, response: Response, view: { form?: ImportForm; report?: Report; problem?: { text: string; status: number } } = {}) {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const form = view.form ?? { data: '', timeZone: zones.viewer, idempotencyKey: randomUUID() };
  const report = view.report;
  const action = (to: string) => `${to}?_csrf=${encodeURIComponent(csrf)}`;
  sendPage(
    response,
    { title: 'Import posts', signedIn, csrf, section: 'posts', zone: pageZone(zones), status: view.problem?.status, flash: view.problem ? { kind: 'error', text: view.problem.text } : undefined },
    html`<h1>Import posts</h1>${zoneNote(zones)}
    <form method="post" action="${action('/posts/import')}" enctype="multipart/form-data" class="card" aria-labelledby="file-title">
      <h2 id="file-title">1. The file</h2>
      <p>CSV with a header row (channel, date, timeZone, text, media, settings, type, tags), or a JSON array of objects with the same keys. The channel is its id or its name; text is plain text; dates such as <code>2026-12-08 09:00</code> are read in the row's timeZone, else the zone below.</p>
      <label for="import-file">CSV or JSON file</label>
      <input id="import-file" name="file" type="file" accept=".csv,.json,text/csv,application/json" required>
      ${zoneField('import-zone', 'timeZone', form.timeZone, 'Dates without a zone are in', 'An IANA zone such as Europe/Berlin; daylight-saving time is taken into account.')}
      <button type="submit" name="action" value="check">Check the file (nothing is imported)</button>
    </form>
    ${report
      ? html`<section class="card" aria-labelledby="check-title"><h2 id="check-title">2. ${report.dryRun ? 'What the import would do' : 'Imported'}</h2>
        <p class="flash ${report.invalid ? 'error' : 'ok'}">${report.dryRun
          ? report.invalid ? `${report.invalid} of ${report.rows.length} rows have problems: fix them in the file and check it again. Nothing is imported while a row is wrong.` : `All ${report.rows.length} rows can be imported.`
          : `${report.rows.length} posts imported.`}</p>
        <table><caption class="visually-hidden">Rows of the file</caption>
          <thead><tr><th scope="col">Row</th><th scope="col">Channel</th><th scope="col">When (${zones.viewer})</th><th scope="col">Type</th><th scope="col">${report.dryRun ? 'Problems' : 'Post'}</th></tr></thead>
          <tbody>${report.rows.map(
            (row) => html`<tr class="${row.problems.length ? 'over' : ''}"><td>${row.row}</td><td>${row.channel ? html`${row.channel.name} <span class="hint">${row.channel.platform}</span>` : '—'}</td>
              <td>${row.date ? when(row.date, zones.viewer) : '—'}${row.timeZone && row.timeZone !== zones.viewer ? html`<br><span class="hint">read in ${row.timeZone}</span>` : ''}</td><td>${row.type ?? '—'}</td>
              <td>${row.postId ? html`<a href="/posts/${row.postId}">Open the post</a>` : row.problems.length ? html`<ul>${row.problems.map((problem) => html`<li>${localTimes(problem, zones.viewer)}</li>`)}</ul>` : html`<span class="badge ok">ready</span>`}</td></tr>`,
          )}</tbody></table>
        ${report.dryRun && report.invalid === 0
          ? html`<form method="post" action="/posts/import">${csrfField(csrf)}
              <input type="hidden" name="idempotencyKey" value="${form.idempotencyKey}"><input type="hidden" name="timeZone" value="${form.timeZone}">
              <input type="hidden" name="data" value="${form.data}">
              <button type="submit" name="action" value="import">Import ${report.rows.length} posts</button></form>`
          : ''}
      </section>`
      : ''}
    ${zoneDatalist()}`,
  );
}

/** The file of the multipart form (its text, at most MAX_FILE_BYTES) and its fields. */
async function uploadedForm(request: Request): Promise<{ form: ImportForm; problem?: string }> {
  let data = '';
  let tooLarge = false;
  const { fields } = await readMultipart(request, async (_field, file) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of file.stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_FILE_BYTES) tooLarge = true;
      else chunks.push(chunk);
    }
    data = Buffer.concat(chunks).toString('utf8');
  });
  const form = { data, timeZone: (fields.timeZone?.[0] ?? '').trim(), idempotencyKey: randomUUID() };
  if (tooLarge) return { form: { ...form, data: '' }, problem: `The file is larger than ${MAX_FILE_BYTES / 1_000_000} MB: split it and import each part.` };
  if (!data.trim()) return { form, problem: 'Choose a CSV or JSON file with at least one row.' };
  return { form };
}

export function importPages(router: Router, services: Services): void {
  router.get('/posts/import', requireSignedIn, (request, response) => importPage(services, request, response));

  router.post('/posts/import', requireSignedIn, async (request, response) => {
    // The file itself (multipart), or the confirmation with its text and key (urlencoded).
    const multipart = Boolean(request.is('multipart/form-data'));
    const uploaded = multipart ? await uploadedForm(request) : undefined;
    const key = String(request.body?.idempotencyKey ?? '');
    const form: ImportForm = uploaded?.form ?? { data: String(request.body?.data ?? ''), timeZone: String(request.body?.timeZone ?? '').trim(), idempotencyKey: /^[\x21-\x7e]{1,200}$/.test(key) ? key : randomUUID() };
    if (uploaded?.problem) return importPage(services, request, response, { form, problem: { text: uploaded.problem, status: 400 } });
    const dryRun = multipart || request.body?.action !== 'import';
    const { input, problem } = importInput(form, dryRun);
    if (!input) return importPage(services, request, response, { form, problem: { text: problem!, status: 400 } });
    try {
      const report = await runTool(importPostsTool, input, consoleCaller(response), services, String(response.locals.requestId), dryRun ? {} : { idempotencyKey: `console-import:${form.idempotencyKey}` });
      await importPage(services, request, response, { form, report });
    } catch (raw) {
      const error = clientError(raw);
      // A refused import lists its rows (details.rows): shown as the dry run shows them.
      const rows = (error.details as { rows?: Report['rows'] } | undefined)?.rows;
      await importPage(services, request, response, { form, ...(rows ? { report: { dryRun: true, rows, valid: 0, invalid: rows.length } } : {}), problem: { text: sentence(error), status: error.status } });
    }
  });
}
