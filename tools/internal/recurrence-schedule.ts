// The dates of a recurring post: every N days or weeks, on chosen weekdays, at a wall-clock time of a zone (DESIGN §10: the
// same local hour across daylight-saving changes, read through src/lib/time-zone.ts), from a start date to an end date or
// a number of occurrences. Pure: the rule's state (how many were made, the next one) lives in tools/internal/recurrence.ts.
import type { RecurrenceUnit } from '../../src/db/recurrence-entities.js';
import { invalidInput } from '../../src/errors.js';
import { addDays, dateKey, instantOf, parseWallClock, wallClockOf, weekdayOf, type WallClock } from '../../src/lib/time-zone.js';

export const WEEKDAY_NAMES = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const FULL_NAMES = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

export interface Schedule {
  unit: RecurrenceUnit;
  interval: number;
  /** Monday = 0 … Sunday = 6. Weeks: the days of each week (never empty); days: the weekdays kept (empty: every day). */
  weekdays: number[];
  minuteOfDay: number;
  timeZone: string;
  /** `YYYY-MM-DD` of the zone. */
  startDate: string;
  endDate: string | null;
}

/** Weekday names ("mon", "Monday", "TUE") as numbers, Monday = 0; a name that is none is a clear 400. */
export function weekdaysInput(names: readonly string[]): number[] {
  const days = names.map((name) => {
    const typed = name.trim().toLowerCase();
    const day = typed.length >= 3 ? FULL_NAMES.findIndex((full) => full.startsWith(typed)) : -1;
    if (day < 0) throw invalidInput(`weekdays: "${name.slice(0, 20)}" is not a weekday.`, { hint: `Use ${WEEKDAY_NAMES.join(', ')} (or the full English names).` });
    return day;
  });
  return [...new Set(days)].sort((a, b) => a - b);
}

export const weekdayNames = (days: readonly number[]) => days.map((day) => WEEKDAY_NAMES[day]);

/** `HH:MM` as minutes after midnight; a clear 400 otherwise. */
export function timeInput(value: string): number {
  const match = /^(\d{1,2}):(\d{2})$/.exec(value.trim());
  const minutes = match ? Number(match[1]) * 60 + Number(match[2]) : NaN;
  if (!match || Number(match[1]) > 23 || Number(match[2]) > 59) throw invalidInput(`time: "${value.slice(0, 20)}" is not a time of day.`, { hint: 'Write it as HH:MM on a 24-hour clock, such as "09:00" or "17:30".' });
  return minutes;
}

export const timeText = (minuteOfDay: number) => `${String(Math.floor(minuteOfDay / 60)).padStart(2, '0')}:${String(minuteOfDay % 60).padStart(2, '0')}`;

/** `YYYY-MM-DD` checked; a clear 400 naming the field otherwise. */
export function dateInput(value: string, field: string): string {
  const wall = parseWallClock(value);
  if (!wall || value.trim().length !== 10) throw invalidInput(`${field}: "${value.slice(0, 20)}" is not a date.`, { hint: 'Write it as YYYY-MM-DD, such as "2027-03-01" (a day of the rule\'s time zone).' });
  return dateKey(wall);
}

const dayNumber = (date: WallClock) => Math.round(Date.UTC(date.year, date.month - 1, date.day) / 86_400_000);

/** Whether a calendar day is one of the schedule's. */
function isScheduleDay(schedule: Schedule, start: WallClock, day: WallClock): boolean {
  const offset = dayNumber(day) - dayNumber(start);
  if (offset < 0) return false;
  if (schedule.unit === 'day') return offset % schedule.interval === 0 && (schedule.weekdays.length === 0 || schedule.weekdays.includes(weekdayOf(day)));
  // Weeks are counted from the Monday of the start's week: "every 2 weeks on Mon and Thu" keeps both days of a kept week.
  const week = Math.floor((offset + weekdayOf(start)) / 7);
  return week % schedule.interval === 0 && schedule.weekdays.includes(weekdayOf(day));
}

/** Enough days to find the next occurrence of any schedule (52 weeks apart at most, and a weekday filter). */
const SEARCH_DAYS = 7 * 53 * 2;

/**
 * The schedule's occurrences after `after` (exclusive), in order, at most `limit`; none past `endDate`. Each is the instant
 * of the wall-clock time on its day (a time that does not exist that day, in the hour clocks skip, lands just after it).
 */
export function occurrencesAfter(schedule: Schedule, after: Date, limit: number): Date[] {
  const start = parseWallClock(schedule.startDate)!;
  const end = schedule.endDate ? parseWallClock(schedule.endDate)! : undefined;
  const found: Date[] = [];
  // From the day before `after` in the zone (its time may fall before `after` that day), or the start if later.
  const from = wallClockOf(after, schedule.timeZone);
  let day: WallClock = dayNumber(from) - 1 > dayNumber(start) ? addDays({ ...from, hour: 0, minute: 0, second: 0 }, -1) : { ...start, hour: 0, minute: 0, second: 0 };
  for (let searched = 0; found.length < limit && searched < SEARCH_DAYS + limit * 7 * schedule.interval; searched++, day = addDays(day, 1)) {
    if (end && dayNumber(day) > dayNumber(end)) break;
    if (!isScheduleDay(schedule, start, day)) continue;
    const instant = instantOf({ ...day, hour: Math.floor(schedule.minuteOfDay / 60), minute: schedule.minuteOfDay % 60, second: 0 }, schedule.timeZone);
    if (instant.getTime() > after.getTime()) found.push(instant);
  }
  return found;
}

/** The schedule's first occurrence after `after`, or null when there is none (it ended). */
export const nextOccurrence = (schedule: Schedule, after: Date): Date | null => occurrencesAfter(schedule, after, 1)[0] ?? null;
