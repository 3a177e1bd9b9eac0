// Recurring posts in the console (issue 35): the Recurring posts page (each rule's text, channel, schedule in words, status
// and next occurrence in the viewer's local time, pause/resume and delete), each rule's page with its occurrences, the
// composer's "Repeat" fieldset (every N days or weeks, weekdays, time, start, end, variations, what to do after downtime).
// Everything goes through the recurring-post tools as the signed-in person, as on REST.
import type { Request, Response, Router } from 'express';
import type { Integration, Media } from '../../db/entities.js';
import { DomainError } from '../../errors.js';
import type { Services } from '../../../tools/types.js';
import { providerOf } from '../../../tools/internal/integrations.js';
import { WEEKDAY_NAMES } from '../../../tools/internal/recurrence-schedule.js';
import { changeRecurringPost, createRecurringPost, deleteRecurringPost, recurringPostList, recurringPostShow } from '../../../tools/recurring-posts.js';
import { integrationList } from '../../../tools/integration-list.js';
import { csrfField, html, sendPage, type Markup } from './html.js';
import { excerpt } from '../../lib/content.js';
import { badge } from './post-pages.js';
import type { ComposeState, Fields } from './compose-form.js';
import { composedContent } from './compose-text.js';
import { settingsValues } from './settings-fields.js';
import { consoleLocals, requireSignedIn, runConsoleTool } from './session.js';
import { consoleZones, pageZone, when, zoneNote } from './zones.js';

type Rule = Awaited<ReturnType<typeof recurringPostShow.handler>>;
type RuleSummary = Awaited<ReturnType<typeof recurringPostList.handler>>['output'][number];

const DAY_LABELS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const STATUS: Record<string, [string, string]> = { active: ['Active', 'ok'], paused: ['Paused', 'warn'], ended: ['Ended', ''] };
const OUTCOMES: Record<string, string> = { created: 'Made', missed: 'Skipped: Herald was not running at its time', failed: 'Refused' };
const NOTICES: Record<string, string> = {
  created: 'Recurring post made: its occurrences for the next 14 days are in the calendar.',
  paused: 'Paused: its waiting occurrences were removed (those you edited stay). Resume it to go on from then.',
  resumed: 'Resumed: its occurrences from now on are made.',
  deleted: 'Recurring post deleted.',
};

/** "Every 2 weeks on Monday and Thursday at 09:00 (Europe/Berlin), until 2027-06-30". */
export function scheduleWords(rule: RuleSummary): string {
  const days = rule.weekdays.map((day) => DAY_LABELS[WEEKDAY_NAMES.indexOf(day as (typeof WEEKDAY_NAMES)[number])] ?? day);
  const every = rule.interval === 1 ? `Every ${rule.every}` : `Every ${rule.interval} ${rule.every}s`;
  const on = days.length > 0 && !(rule.every === 'day' && days.length === 7) ? ` on ${days.length > 1 ? `${days.slice(0, -1).join(', ')} and ${days.at(-1)}` : days[0]}` : '';
  const end = rule.endDate ? `, until ${rule.endDate}` : rule.count ? `, ${rule.count} times` : '';
  return `${every}${on} at ${rule.time} (${rule.timeZone})${end}`;
}

/**
 * Pause or resume, and delete (keeping its waiting posts or not): the forms of a rule. An ended rule makes no more
 * occurrences but may still have posts waiting, so its delete offers the same choice.
 */
function ruleActions(csrf: string, rule: RuleSummary): Markup {
  const named = html`<span class="visually-hidden"> ${excerpt(rule.content, 100)}</span>`;
  const toggle = rule.status === 'ended'
    ? ''
    : html`<form method="post" action="/recurring-posts/${rule.id}/${rule.status === 'paused' ? 'resume' : 'pause'}" class="inline">${csrfField(csrf)}
      <button type="submit" class="secondary">${rule.status === 'paused' ? 'Resume' : 'Pause'}${named}</button></form>`;
  return html`${toggle}
    <form method="post" action="/recurring-posts/${rule.id}/delete" class="inline">${csrfField(csrf)}
      <span class="choice"><input type="checkbox" id="keep-${rule.id}" name="keep" value="yes"><label for="keep-${rule.id}">keep its waiting posts</label></span>
      <button type="submit" class="secondary">Delete${named}</button></form>`;
}

/** When the next occurrence is made: its date, or why there is none. */
const nextWords = (rule: RuleSummary, zone: string): Markup | string =>
  rule.status === 'active' ? when(rule.nextAt, zone) : rule.status === 'ended' ? 'None: every occurrence is made' : '—';

export function recurringPages(router: Router, services: Services): void {
  const channelNames = async (response: Response) =>
    new Map((await runConsoleTool(integrationList, {}, response, services)).output.map((channel: { id: string; name: string; identifier: string }) => [channel.id, `${channel.name} (${channel.identifier})`]));

  router.get('/recurring-posts', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const [{ output: rules }, names, zones] = await Promise.all([runConsoleTool(recurringPostList, {}, response, services), channelNames(response), consoleZones(services, request, response)]);
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    sendPage(
      response,
      { title: 'Recurring posts', signedIn, csrf, section: 'recurring-posts', zone: pageZone(zones), flash: notice ? { kind: 'ok', text: notice } : undefined },
      html`<h1>Recurring posts</h1>
      <p>A recurring post repeats at the same local time of its zone, also across daylight-saving changes. Its occurrences are ordinary posts, made 14 days ahead: edit or delete one alone in the calendar, and the rule goes on. After Herald was not running, missed occurrences are skipped with a notification, never published all at once. To make one, write a post and tick “Repeat” under When in <a href="/compose">New post</a>.</p>
      ${zoneNote(zones)}
      ${rules.length === 0
        ? html`<p class="card">No recurring post yet.</p>`
        : html`<table><caption class="visually-hidden">Recurring posts</caption><thead><tr><th scope="col">Post</th><th scope="col">Channel</th><th scope="col">Schedule</th><th scope="col">Status</th><th scope="col">Next to make</th><th scope="col">Actions</th></tr></thead><tbody>${rules.map(
            (rule) => html`<tr><td><a href="/recurring-posts/${rule.id}">${excerpt(rule.content, 100) || '(no text)'}</a>${rule.variations.length ? html`<br><span class="hint">and ${rule.variations.length} variation${rule.variations.length === 1 ? '' : 's'}</span>` : ''}</td>
              <td>${names.get(rule.channel) ?? rule.channel}</td><td>${scheduleWords(rule)}</td><td>${badge(STATUS, rule.status)}</td>
              <td>${nextWords(rule, zones.viewer)}</td><td class="actions">${ruleActions(csrf, rule)}</td></tr>`,
          )}</tbody></table>`}`,
    );
  });

  router.get('/recurring-posts/:id', requireSignedIn, async (request, response) => {
    const { signedIn, csrf } = consoleLocals(response);
    const [rule, names, zones] = await Promise.all([runConsoleTool(recurringPostShow, { id: String(request.params.id) }, response, services) as Promise<Rule>, channelNames(response), consoleZones(services, request, response)]);
    const notice = typeof request.query.notice === 'string' ? NOTICES[request.query.notice] : undefined;
    // Occurrences are made ahead, so the next one to publish is the soonest still waiting, not the next to make.
    const now = services.now().getTime();
    const nextPost = rule.occurrences.filter((item) => (item.state === 'QUEUE' || item.state === 'DRAFT') && Date.parse(item.scheduledFor) >= now).at(-1);
    sendPage(
      response,
      { title: 'Recurring post', signedIn, csrf, section: 'recurring-posts', zone: pageZone(zones), flash: notice ? { kind: 'ok', text: notice } : undefined },
      html`<p><a href="/recurring-posts">← All recurring posts</a></p>
      <h1>Recurring post ${badge(STATUS, rule.status)}</h1>
      ${zoneNote(zones)}
      <dl class="card"><dt>Channel</dt><dd>${names.get(rule.channel) ?? rule.channel}</dd><dt>Schedule</dt><dd>${scheduleWords(rule)}</dd>
        <dt>After downtime</dt><dd>${rule.missed === 'latest' ? 'Only the latest missed occurrence is published' : 'Missed occurrences are skipped'}</dd>
        <dt>Next post</dt><dd>${nextPost ? when(nextPost.scheduledFor, zones.viewer) : 'None waiting'}</dd><dt>Next to make</dt><dd>${nextWords(rule, zones.viewer)}</dd><dt>Occurrences so far</dt><dd>${rule.made}</dd></dl>
      <h2>Text</h2>
      ${[rule.content, ...rule.variations].map((text, index) => html`<section class="card" aria-label="${index === 0 ? 'Text' : `Variation ${index}`}"><p class="hint">${index === 0 ? 'Text' : `Variation ${index}`}</p><p>${excerpt(text, 100)}</p></section>`)}
      <div class="actions">${ruleActions(csrf, rule)}</div>
      <h2>Occurrences</h2>
      ${rule.occurrences.length === 0
        ? html`<p class="card">None yet.</p>`
        : html`<table><caption class="visually-hidden">Occurrences, latest first</caption><thead><tr><th scope="col">Date</th><th scope="col">What came of it</th><th scope="col">Post</th></tr></thead><tbody>${rule.occurrences.map(
            (item) => html`<tr><td>${when(item.scheduledFor, zones.viewer)}</td><td>${OUTCOMES[item.outcome] ?? item.outcome}${item.error && item.outcome === 'failed' ? html`<br><span class="hint">${item.error}</span>` : ''}</td>
              <td>${item.postId && item.state ? html`<a href="/posts/${item.postId}">${item.state.toLowerCase().replace('_', ' ')}</a>` : item.postId ? 'deleted' : '—'}</td></tr>`,
          )}</tbody></table>`}`,
    );
  });

  const act = (path: string, run: (request: Request, response: Response, id: string) => Promise<string>) =>
    router.post(`/recurring-posts/:id/${path}`, requireSignedIn, async (request, response) => {
      const id = String(request.params.id);
      const notice = await run(request, response, id);
      response.redirect(303, notice === 'deleted' ? '/recurring-posts?notice=deleted' : `/recurring-posts/${id}?notice=${notice}`);
    });
  act('pause', async (_request, response, id) => (await runConsoleTool(changeRecurringPost, { id, paused: true }, response, services), 'paused'));
  act('resume', async (_request, response, id) => (await runConsoleTool(changeRecurringPost, { id, paused: false }, response, services), 'resumed'));
  act('delete', async (request, response, id) => {
    await runConsoleTool(deleteRecurringPost, { id, keepOccurrences: (request.body as Record<string, unknown>)?.keep === 'yes' }, response, services);
    return 'deleted';
  });
}

/** The composer's Repeat fields as typed (kept through re-renders of the form). */
export interface RepeatFields {
  every: string;
  interval: string;
  weekdays: string[];
  time: string;
  start: string;
  end: 'never' | 'date' | 'count';
  until: string;
  count: string;
  missed: string;
  variations: string;
}

/** The Repeat fields of a compose form; undefined when "Repeat" is not ticked. */
export function repeatOf(fields: Fields): RepeatFields | undefined {
  const first = (name: string) => fields[name]?.[0]?.trim() ?? '';
  if (first('repeat') !== 'yes') return undefined;
  const end = first('repeatEnd');
  return {
    every: first('repeatEvery') === 'day' ? 'day' : 'week',
    interval: first('repeatInterval') || '1',
    weekdays: (fields.repeatWeekday ?? []).filter((day) => (WEEKDAY_NAMES as readonly string[]).includes(day)),
    time: first('repeatTime'),
    start: first('repeatStart'),
    end: end === 'date' || end === 'count' ? end : 'never',
    until: first('repeatUntil'),
    count: first('repeatCount'),
    missed: first('repeatMissed') === 'latest' ? 'latest' : 'skip',
    variations: fields.repeatVariations?.[0] ?? '',
  };
}

/** The composer's "Repeat" fieldset, under When. */
export function repeatFieldset(repeat: RepeatFields | undefined): Markup {
  const value = repeat ?? { every: 'week', interval: '1', weekdays: [], time: '', start: '', end: 'never', until: '', count: '', missed: 'skip', variations: '' };
  const checked = (on: boolean) => (on ? html` checked` : html``);
  return html`<fieldset class="repeat"><legend>Repeat</legend>
    <div class="choice"><input type="checkbox" id="repeat" name="repeat" value="yes"${checked(repeat !== undefined)}><label for="repeat">Repeat this post (Schedule makes a recurring post)</label></div>
    <label for="repeat-interval">Every</label>
    <div class="actions"><input id="repeat-interval" name="repeatInterval" type="number" min="1" max="52" value="${value.interval}" class="short">
      <label for="repeat-every" class="visually-hidden">days or weeks</label><select id="repeat-every" name="repeatEvery"><option value="week"${value.every === 'week' ? html` selected` : ''}>weeks</option><option value="day"${value.every === 'day' ? html` selected` : ''}>days</option></select></div>
    <fieldset><legend>On</legend><ul class="choice-list">${WEEKDAY_NAMES.map(
      (day, index) => html`<li><input type="checkbox" id="repeat-${day}" name="repeatWeekday" value="${day}"${checked(value.weekdays.includes(day))}><label for="repeat-${day}">${DAY_LABELS[index]}</label></li>`,
    )}</ul><p class="hint">Weeks: the days of each week (none: the start's weekday). Days: only these weekdays (none: every day).</p></fieldset>
    <label for="repeat-time">At (HH:MM, in the time zone above)</label><input id="repeat-time" name="repeatTime" type="time" value="${value.time}">
    <label for="repeat-start">Starting on (empty: today)</label><input id="repeat-start" name="repeatStart" type="date" value="${value.start}">
    <fieldset><legend>Ends</legend>
      <div class="choice"><input type="radio" id="repeat-end-never" name="repeatEnd" value="never"${checked(value.end === 'never')}><label for="repeat-end-never">Never</label></div>
      <div class="choice"><input type="radio" id="repeat-end-date" name="repeatEnd" value="date"${checked(value.end === 'date')}><label for="repeat-end-date">On a date</label></div>
      <label for="repeat-until">Last day</label><input id="repeat-until" name="repeatUntil" type="date" value="${value.until}">
      <div class="choice"><input type="radio" id="repeat-end-count" name="repeatEnd" value="count"${checked(value.end === 'count')}><label for="repeat-end-count">After a number of times</label></div>
      <label for="repeat-count">Times</label><input id="repeat-count" name="repeatCount" type="number" min="1" max="1000" value="${value.count}" class="short">
    </fieldset>
    <label for="repeat-variations">Variations of the text (optional, separated by a line with ---)</label>
    <textarea id="repeat-variations" name="repeatVariations" rows="3" aria-describedby="repeat-variations-hint">${value.variations}</textarea>
    <p class="hint" id="repeat-variations-hint">The occurrences take the text, then each variation, in turn.</p>
    <div class="choice"><input type="checkbox" id="repeat-missed" name="repeatMissed" value="latest"${checked(value.missed === 'latest')}><label for="repeat-missed">After Herald was not running, publish the latest missed occurrence (otherwise every missed one is skipped)</label></div>
  </fieldset>`;
}

/** Schedule with Repeat ticked: one recurring post per chosen channel (its own text and settings). Answers where to go next. */
export async function createRulesFromCompose(services: Services, response: Response, state: ComposeState, repeat: RepeatFields, channels: Integration[], library: Map<string, Media>): Promise<string> {
  if (state.channels.length === 0) throw new DomainError('invalid_input', 'Choose at least one channel to post to.');
  if (!repeat.time) throw new DomainError('invalid_input', 'Repeat: choose the time of day (At).');
  const byId = new Map(channels.map((channel) => [channel.id, channel]));
  const item = state.items[0];
  const variations = repeat.variations.split(/^\s*---\s*$/m).map((text) => text.trim()).filter(Boolean).map(composedContent);
  const ids: string[] = [];
  for (const id of state.channels) {
    const channel = byId.get(id);
    if (!channel) throw new DomainError('not_found', 'One of the chosen channels does not exist any more.', { hint: 'Reload the page and choose again.' });
    const override = state.overrides[id]?.[0];
    const media = item.media.flatMap((mediaId) => {
      const file = library.get(mediaId) ?? state.kept?.[mediaId];
      return file ? [{ id: mediaId, path: file.path, ...(item.alt?.[mediaId] ? { alt: item.alt[mediaId] } : {}) }] : [];
    });
    const rule = await runConsoleTool(
      createRecurringPost,
      {
        channel: id,
        content: composedContent(override?.trim() ? override : item.content),
        ...(variations.length ? { variations } : {}),
        settings: { ...settingsValues(providerOf(channel), channel.name, state.settings[id] ?? {}), ...(state.noSignature ? { signature: false } : {}) },
        media,
        every: repeat.every,
        interval: Number(repeat.interval),
        weekdays: repeat.weekdays,
        time: repeat.time,
        timeZone: state.timeZone,
        ...(repeat.start ? { startDate: repeat.start } : {}),
        ...(repeat.end === 'date' ? { endDate: repeat.until } : {}),
        ...(repeat.end === 'count' ? { count: Number(repeat.count) } : {}),
        missed: repeat.missed,
        ...(state.allowDuplicate ? { allowDuplicate: true } : {}),
      },
      response,
      services,
    );
    ids.push(rule.id);
  }
  return ids.length === 1 ? `/recurring-posts/${ids[0]}?notice=created` : '/recurring-posts?notice=created';
}

