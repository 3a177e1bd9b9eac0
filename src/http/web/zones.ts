// Which zone a console page shows and reads times in, and how times are written: the person's own zone, else the zone
// their browser reported (a cookie the console's script sets), else the organization's default. Every time on a page
// names its zone; the APIs underneath stay UTC.
import type { Request, Response } from 'express';
import { canonicalZone, dateKey, timeKey, timeZoneNames, wallClockOf, zoneAbbreviation } from '../../lib/time-zone.js';
import { organizationZone } from '../../../tools/internal/time-zones.js';
import type { Services } from '../../../tools/types.js';
import { html, type Markup } from './html.js';
import { consoleLocals, cookies } from './session.js';

/** Set by the console's script to `Intl.DateTimeFormat().resolvedOptions().timeZone`. Not a secret; read only as a zone name. */
export const BROWSER_ZONE_COOKIE = 'herald_tz';

export interface ConsoleZones {
  /** Where this page shows and reads times. */
  viewer: string;
  source: 'person' | 'browser' | 'organization';
  /** The organization's default (channels without their own zone follow it). */
  organization: string;
  /** What the browser reported, when it did. */
  browser?: string;
}

/** The zones of a console request (read once per request). */
export async function consoleZones(services: Services, request: Request, response: Response): Promise<ConsoleZones> {
  const cached = response.locals.zones as ConsoleZones | undefined;
  if (cached) return cached;
  const signedIn = consoleLocals(response).signedIn;
  const organization = signedIn?.organization ? await organizationZone(services.orm.em.fork(), signedIn.organization.id) : 'UTC';
  const browser = canonicalZone(cookies(request)[BROWSER_ZONE_COOKIE]);
  const own = signedIn?.user.timeZone ? canonicalZone(signedIn.user.timeZone) : undefined;
  const zones: ConsoleZones = own
    ? { viewer: own, source: 'person', organization, browser }
    : browser
      ? { viewer: browser, source: 'browser', organization, browser }
      : { viewer: organization, source: 'organization', organization };
  response.locals.zones = zones;
  return zones;
}

/** The zone fields of a page's options (see PageOptions.zone). */
export const pageZone = (zones: ConsoleZones) => ({ name: zones.viewer, source: zones.source });

/** An instant as the person reads it: `2027-03-30 09:00 GMT+2` (UTC shows as `UTC`); with `seconds`, `09:00:05`. */
export function formatWhen(instant: Date | string, zone: string, seconds = false): string {
  const date = typeof instant === 'string' ? new Date(instant) : instant;
  if (Number.isNaN(date.getTime())) return '';
  const wall = wallClockOf(date, zone);
  return `${dateKey(wall)} ${timeKey(wall)}${seconds ? `:${String(wall.second).padStart(2, '0')}` : ''} ${zoneAbbreviation(date, zone)}`;
}

/** An instant in a `<time>` element: the local reading, the UTC instant in `datetime`, the zone's name on hover. */
export function when(instant: Date | string | null | undefined, zone: string, seconds = false): Markup {
  if (!instant) return html``;
  const date = typeof instant === 'string' ? new Date(instant) : instant;
  if (Number.isNaN(date.getTime())) return html``;
  return html`<time datetime="${date.toISOString()}" title="${zone}">${formatWhen(date, zone, seconds)}</time>`;
}

/** A UTC instant as the APIs write it into a text (`2026-12-05T10:00:00.000Z`, seconds optional). */
const UTC_INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z/;

/**
 * A text of the domain (an error, a warning, a notification) as a person reads it: the UTC instants it names (the tools
 * write them as the API does) in the zone, and where it writes only the UTC day of `at` (a token's expiry), that
 * instant's day and time in the zone; the rest escaped as it is.
 */
export function localTimes(text: string, zone: string, at?: string | Date | null): Markup {
  const day = at ? new Date(at).toISOString().slice(0, 10) : undefined;
  const named = new RegExp(day ? `${UTC_INSTANT.source}|\\b${day}\\b(?![T\\d]| \\d)` : UTC_INSTANT.source, 'g');
  const parts: (string | Markup)[] = [];
  let last = 0;
  for (const match of text.matchAll(named)) {
    parts.push(text.slice(last, match.index), when(match[0] === day ? at : match[0], zone));
    last = match.index + match[0].length;
  }
  parts.push(text.slice(last));
  return html`${parts}`;
}

const SOURCES: Record<ConsoleZones['source'], string> = {
  person: 'your zone',
  browser: "your browser's zone",
  organization: "the organization's zone",
};

/** The sentence on every page with times: which zone they are in, and where to change it. */
export const zoneNote = (zones: ConsoleZones) =>
  html`<p class="hint zone-note">Times are in <strong>${zones.viewer}</strong> (${SOURCES[zones.source]}). <a href="/settings">Change the time zone</a></p>`;

/** One list of every zone name for the page's zone fields (`list="time-zones"`): typed with suggestions, checked on the server. */
export const zoneDatalist = () => html`<datalist id="time-zones">${timeZoneNames().map((name) => html`<option value="${name}">`)}</datalist>`;

/** A zone field: a text input with the page's zone list. */
export function zoneField(id: string, name: string, value: string, label: string, hint?: string): Markup {
  return html`<label for="${id}">${label}</label>
    <input id="${id}" name="${name}" type="text" list="time-zones" value="${value}" autocomplete="off" spellcheck="false"${hint ? html` aria-describedby="${id}-hint"` : ''}>
    ${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}`;
}
