// A channel's time zone and wall-clock arithmetic in it, through Intl's time-zone database only (never hand-made offsets):
// best times are weekday × hour buckets in the zone the channel's audience lives in, and find-slot turns "Tuesday 09:00"
// back into an instant on the right side of a daylight-saving change.
import type { Integration } from '../../src/db/entities.js';

export const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'] as const;

/** Whether Intl knows the IANA zone name (e.g. Europe/Berlin). */
export function isTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.trim() === '') return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/**
 * The IANA zone of a channel: its own (a `timeZone` column, or `timeZone` in its additional settings), else the
 * organization's, else UTC. The one place that decides it, so the console's time-zone fields plug in here.
 */
export function channelTimeZone(integration: Pick<Integration, 'additionalSettings'> & { timeZone?: unknown }, organization?: { timeZone?: unknown } | null): string {
  for (const candidate of [integration.timeZone, integration.additionalSettings?.timeZone, organization?.timeZone]) {
    if (isTimeZone(candidate)) return candidate;
  }
  return 'UTC';
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      weekday: 'long',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
}

/** The wall-clock time of an instant in a zone. */
export function wallClock(date: Date, timeZone: string): WallClock {
  const parts: Record<string, string> = {};
  for (const part of formatterOf(timeZone).formatToParts(date)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday as (typeof WEEKDAYS)[number]),
  };
}

/** How far the zone's wall clock is ahead of UTC at an instant, in milliseconds (from Intl, not a table of ours). */
function offsetAt(date: Date, timeZone: string): number {
  const clock = wallClock(date, timeZone);
  const asUtc = Date.UTC(clock.year, clock.month - 1, clock.day, clock.hour, clock.minute, clock.second);
  return asUtc - Math.floor(date.getTime() / 1000) * 1000;
}

/**
 * The instant at which the zone's clock shows this date and time. A time skipped by a daylight-saving change (02:30 on
 * the spring-forward night) answers the instant an hour later on the clock, as most calendars do.
 */
export function zonedInstant(year: number, month: number, day: number, hour: number, minute: number, timeZone: string): Date {
  const wanted = Date.UTC(year, month - 1, day, hour, minute);
  let guess = wanted - offsetAt(new Date(wanted), timeZone);
  // The offset at the guess may differ from the one at `wanted` (a change between them): a second pass settles it.
  guess = wanted - offsetAt(new Date(guess), timeZone);
  return new Date(guess);
}

/** The calendar date `days` after the zone's date of `from` (noon-anchored, so it never slips across a change). */
export function zonedDatePlus(from: Date, days: number, timeZone: string): { year: number; month: number; day: number; weekday: number } {
  const clock = wallClock(from, timeZone);
  const noon = new Date(Date.UTC(clock.year, clock.month - 1, clock.day + days, 12));
  return { year: noon.getUTCFullYear(), month: noon.getUTCMonth() + 1, day: noon.getUTCDate(), weekday: (noon.getUTCDay() + 6) % 7 };
}

export const hourLabel = (hour: number) => `${String(hour).padStart(2, '0')}:00`;
