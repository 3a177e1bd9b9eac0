// Moving a post to another date: the plain form behind the calendar's "Move" links (keyboard and no-JavaScript fallback),
// and the same POST the calendar's script sends when a post is dragged (it asks for JSON). The new date is a wall-clock
// time of a zone, turned into the UTC instant updatePost takes, so the duplicate guard and approval rules are the API's.
import type { Request, Response, Router } from 'express';
import { DomainError } from '../../errors.js';
import { instantOf, localInputValue, parseWallClock } from '../../lib/time-zone.js';
import { postView } from '../../../tools/internal/post-view.js';
import { zoneInput } from '../../../tools/internal/time-zones.js';
import { updatePost } from '../../../tools/update-post.js';
import type { Services } from '../../../tools/types.js';
import { clientError, csrfField, html, sendPage } from './html.js';
import { consoleCaller, consoleLocals, requireSignedIn, runConsoleTool, safeNext } from './session.js';
import { consoleZones, formatWhen, pageZone, zoneDatalist, zoneField } from './zones.js';

interface MoveValues {
  date: string;
  time: string;
  timeZone: string;
  back: string;
}

/** What is wrong, then what to do, as sentences (validation messages end without a full stop). */
const sentence = (error: DomainError) => [error.message.replace(/([^.!?])$/, '$1.'), error.hint].filter(Boolean).join(' ');

const wantsJson = (request: Request) => (request.get('accept') ?? '').includes('application/json');

async function movePage(services: Services, request: Request, response: Response, id: string, values?: MoveValues, problem?: { text: string; status: number; duplicate: boolean }) {
  const { signedIn, csrf } = consoleLocals(response);
  const zones = await consoleZones(services, request, response);
  const view = await postView(services.orm.em.fork(), consoleCaller(response).organizationId, id);
  const zone = values?.timeZone ?? zones.viewer;
  const [date, time] = localInputValue(view.root.publishDate, zone).split('T');
  const shown = values ?? { date, time: time.slice(0, 5), timeZone: zone, back: safeNext(request.query.back) ?? `/posts/${view.root.id}` };
  sendPage(
    response,
    { title: `Move the post on ${view.integration.name}`, signedIn, csrf, section: 'calendar', zone: pageZone(zones), status: problem?.status, flash: problem ? { kind: 'error', text: problem.text } : undefined },
    html`<div class="narrow"><h1>Move the post on ${view.integration.name}</h1>
    <p>Now at <strong>${formatWhen(view.root.publishDate, zone)}</strong> (${zone}).</p>
    <form method="post" action="/posts/${view.root.id}/move" class="card">${csrfField(csrf)}
      <input type="hidden" name="back" value="${shown.back}">
      <label for="move-date">New date</label><input id="move-date" name="date" type="date" value="${shown.date}" required>
      <label for="move-time">Time</label><input id="move-time" name="time" type="time" step="1" value="${shown.time}" required>
      ${zoneField('move-zone', 'timeZone', shown.timeZone, 'Time zone of the date and time')}
      ${problem?.duplicate ? html`<label><input type="checkbox" name="allowDuplicate" value="yes"> Posting this text again on purpose (allows a near-duplicate)</label>` : ''}
      <button type="submit">Move</button>
    </form>
    <p><a href="${shown.back}">Cancel</a></p>${zoneDatalist()}</div>`,
  );
}

export function movePages(router: Router, services: Services): void {
  router.get('/posts/:id/move', requireSignedIn, (request, response) => movePage(services, request, response, String(request.params.id)));

  router.post('/posts/:id/move', requireSignedIn, async (request, response) => {
    const id = String(request.params.id);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const zones = await consoleZones(services, request, response);
    const values: MoveValues = {
      date: String(body.date ?? '').trim(),
      time: String(body.time ?? '').trim(),
      timeZone: String(body.timeZone ?? '').trim() || zones.viewer,
      back: safeNext(body.back) ?? `/posts/${id}`,
    };
    try {
      const zone = zoneInput(values.timeZone);
      const wall = parseWallClock(values.date, values.time);
      if (!wall || !values.time) throw new DomainError('invalid_input', `Give the new date as YYYY-MM-DD and the time as HH:MM (${zone}).`);
      const date = instantOf(wall, zone);
      const moved = await runConsoleTool(updatePost, { id, date: date.toISOString(), ...(body.allowDuplicate === 'yes' ? { allowDuplicate: true } : {}) }, response, services);
      if (wantsJson(request)) {
        response.json({ moved: true, id: moved.id, date: moved.date, local: formatWhen(moved.date, zone), state: moved.state });
        return;
      }
      const separator = values.back.includes('?') ? '&' : '?';
      response.redirect(303, `${values.back}${separator}notice=moved`);
    } catch (raw) {
      const error = clientError(raw);
      if (wantsJson(request)) {
        response.status(error.status).json({ moved: false, code: error.code, message: sentence(error) });
        return;
      }
      await movePage(services, request, response, id, values, { text: sentence(error), status: error.status, duplicate: /allowDuplicate/.test(error.message) });
    }
  });
}
