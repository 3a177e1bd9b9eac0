// Weeks and months as a person lives them: local calendar days of a zone, turned into the UTC ranges the tools take. A
// local day is not always 24 hours (23 or 25 across a daylight-saving change), so ranges are built from local midnights.
import { addDays, dateKey, instantOf, wallClockOf, weekdayOf, type WallClock } from '../../lib/time-zone.js';

export type Day = Pick<WallClock, 'year' | 'month' | 'day'>;

const dayOf = (wall: WallClock): Day => ({ year: wall.year, month: wall.month, day: wall.day });
const midnight = (day: Day): WallClock => ({ ...day, hour: 0, minute: 0, second: 0 });

/** Today in a zone. */
export const today = (now: Date, zone: string): Day => dayOf(wallClockOf(now, zone));

export const plusDays = (day: Day, days: number): Day => dayOf(addDays(midnight(day), days));

export const dayKey = (day: Day) => dateKey(midnight(day));

/** The instants from a local day's midnight to the midnight `days` later (exclusive end), in a zone. */
export function rangeOf(first: Day, days: number, zone: string): { start: Date; end: Date } {
  return { start: instantOf(midnight(first), zone), end: instantOf(midnight(plusDays(first, days)), zone) };
}

/** The Monday of an ISO week `YYYY-Www`, or of the week of `fallback`. */
export function weekOf(value: unknown, fallback: Day): Day {
  const match = typeof value === 'string' ? /^(\d{4})-W(\d{2})$/.exec(value) : null;
  if (match && Number(match[2]) >= 1 && Number(match[2]) <= 53) {
    const january4: Day = { year: Number(match[1]), month: 1, day: 4 };
    const mondayOfWeek1 = plusDays(january4, -weekdayOf(midnight(january4)));
    return plusDays(mondayOfWeek1, (Number(match[2]) - 1) * 7);
  }
  return plusDays(fallback, -weekdayOf(midnight(fallback)));
}

/** `YYYY-Www` of the week starting on a Monday. */
export function isoWeekKey(monday: Day): string {
  const thursday = plusDays(monday, 3);
  const week = Math.floor((Date.UTC(thursday.year, thursday.month - 1, thursday.day) - Date.UTC(thursday.year, 0, 1)) / (7 * 86_400_000)) + 1;
  return `${thursday.year}-W${String(week).padStart(2, '0')}`;
}

/** The first day of a month `YYYY-MM`, or of the month of `fallback`. */
export function monthOf(value: unknown, fallback: Day): Day {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})$/.exec(value) : null;
  if (match && Number(match[2]) >= 1 && Number(match[2]) <= 12) return { year: Number(match[1]), month: Number(match[2]), day: 1 };
  return { year: fallback.year, month: fallback.month, day: 1 };
}

export const monthKey = (first: Day) => dayKey(first).slice(0, 7);

export const addMonths = (first: Day, months: number): Day => {
  const index = first.year * 12 + first.month - 1 + months;
  return { year: Math.floor(index / 12), month: (index % 12) + 1, day: 1 };
};

// Made once: toLocaleString builds a formatter per call, and a month grid names 42 days.
const MONTH_NAME = new Intl.DateTimeFormat('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
const DAY_NAME = new Intl.DateTimeFormat('en', { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' });

export const monthName = (first: Day) => MONTH_NAME.format(new Date(Date.UTC(first.year, first.month - 1, 1)));

export const dayName = (day: Day) => DAY_NAME.format(new Date(Date.UTC(day.year, day.month - 1, day.day)));

export const sameDay = (a: Day, b: Day) => a.year === b.year && a.month === b.month && a.day === b.day;

/** Monday = 0 … Sunday = 6. */
export const weekday = (day: Day) => weekdayOf(midnight(day));
