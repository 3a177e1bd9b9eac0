// Time zones from the IANA database that ships with Node's Intl (full ICU): never hand-made offsets. The APIs speak UTC;
// people see and enter wall-clock times of a zone, and recurring local times (posting times) are kept as wall-clock
// times with their zone, so 09:00 stays 09:00 across daylight-saving changes (DESIGN §10).

/** A wall-clock reading: what a clock on the wall of that zone shows. Months are 1–12. */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second?: number;
}

const readers = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: building an Intl.DateTimeFormat costs far more than using one (a month of posts reads 1,000). */
function reader(zone: string): Intl.DateTimeFormat {
  let format = readers.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    readers.set(zone, format);
  }
  return format;
}

/**
 * The canonical IANA name of a zone ("europe/paris" → "Europe/Paris", "UTC"), or undefined when it is not one. Offsets
 * such as "+02:00" are refused: a fixed offset does not follow daylight-saving time, which is the point of a zone.
 */
export function canonicalZone(name: unknown): string | undefined {
  if (typeof name !== 'string' || !/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name.trim())) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name.trim() }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

let names: string[] | undefined;

/** Every zone name Intl knows, UTC first (Intl's list leaves UTC out). */
export function timeZoneNames(): string[] {
  names ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((name) => name !== 'UTC')];
  return names;
}

const asUtc = (wall: WallClock) => Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second ?? 0);

/** The zone's offset at a whole second, read from Intl (the slow path). */
function readOffset(epochMs: number, zone: string): number {
  const parts: Record<string, number> = {};
  for (const part of reader(zone).formatToParts(new Date(epochMs))) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second) - epochMs;
}

/**
 * Offsets per zone and span of time (a UTC day, then an hour of a day with a transition). When a span starts and ends at
 * the same offset no transition lies inside it (no zone changes twice within a day), so every instant of it has that
 * offset; only the hour of a transition is read exactly. Reading Intl is slow: a month of posts reads it a few times.
 */
const spanOffsets = new Map<string, number | null>();

function spanOffset(zone: string, start: number, length: number): number | null {
  const key = `${zone}|${start}|${length}`;
  let offset = spanOffsets.get(key);
  if (offset === undefined) {
    const first = readOffset(start, zone);
    offset = first === readOffset(start + length, zone) ? first : null;
    if (spanOffsets.size > 100_000) spanOffsets.clear();
    spanOffsets.set(key, offset);
  }
  return offset;
}

/** The zone's offset from UTC at an instant, in milliseconds (Paris in summer: 7,200,000). */
function offsetMs(instant: Date, zone: string): number {
  const whole = Math.floor(instant.getTime() / 1000) * 1000;
  return (
    spanOffset(zone, Math.floor(whole / 86_400_000) * 86_400_000, 86_400_000) ??
    spanOffset(zone, Math.floor(whole / 3_600_000) * 3_600_000, 3_600_000) ??
    readOffset(whole, zone)
  );
}

/** The zone's offset from UTC at an instant, in minutes (Paris in summer: 120). */
export const offsetMinutes = (instant: Date, zone: string) => Math.round(offsetMs(instant, zone) / 60_000);

/** The wall-clock reading of an instant in a zone. */
export function wallClockOf(instant: Date, zone: string): Required<WallClock> {
  const whole = Math.floor(instant.getTime() / 1000) * 1000;
  const shifted = new Date(whole + offsetMs(instant, zone));
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
    hour: shifted.getUTCHours(),
    minute: shifted.getUTCMinutes(),
    second: shifted.getUTCSeconds(),
  };
}

const sameWall = (a: WallClock, b: WallClock) =>
  a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute && (a.second ?? 0) === (b.second ?? 0);

/**
 * The instant a wall-clock time of a zone names. Across daylight-saving changes it does what a person means (as
 * Temporal's "compatible"): a time that happens twice (clocks go back) is the first one; a time that never happens
 * (clocks go forward, 02:30 in Paris on the last Sunday of March) is read with the offset before the change, so it lands
 * just after it (03:30).
 */
export function instantOf(wall: WallClock, zone: string): Date {
  const local = asUtc(wall);
  // The offsets a day either side cover every zone's transitions (none moves more than a day or happens twice in one).
  const before = offsetMs(new Date(local - 86_400_000), zone);
  const after = offsetMs(new Date(local + 86_400_000), zone);
  const candidates = [...new Set([before, after])]
    .map((offset) => local - offset)
    .filter((candidate) => sameWall(wallClockOf(new Date(candidate), zone), wall))
    .sort((a, b) => a - b);
  return new Date(candidates[0] ?? local - before);
}

/** The next calendar day of a date (months and years roll over). */
export function addDays(wall: WallClock, days: number): WallClock {
  const date = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + days));
  return { ...wall, year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

/** Monday = 0 … Sunday = 6, of a calendar date. */
export const weekdayOf = (wall: WallClock) => (new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay() + 6) % 7;

const pad = (value: number, length = 2) => String(value).padStart(length, '0');

/** `YYYY-MM-DD` of a wall-clock reading. */
export const dateKey = (wall: WallClock) => `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`;

/** `HH:MM` of a wall-clock reading. */
export const timeKey = (wall: WallClock) => `${pad(wall.hour)}:${pad(wall.minute)}`;

/** `YYYY-MM-DDTHH:MM` (the value of an `<input type="datetime-local">`) of an instant in a zone. */
export function localInputValue(instant: Date, zone: string): string {
  const wall = wallClockOf(instant, zone);
  return `${dateKey(wall)}T${timeKey(wall)}${wall.second ? `:${pad(wall.second)}` : ''}`;
}

/** Reads `YYYY-MM-DD` and `HH:MM[:SS]` (or one `YYYY-MM-DDTHH:MM[:SS]`) as a wall-clock time; undefined when malformed or impossible (31 February). */
export function parseWallClock(date: string, time = ''): WallClock | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(`${date.trim()}${time.trim() ? `T${time.trim()}` : ''}`);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((value) => (value === undefined ? 0 : Number(value)));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return undefined;
  return { year, month, day, hour, minute, second };
}

/** An instant as ISO 8601 with the zone's offset at that moment: `2027-03-30T09:00:00+02:00`. */
export function isoWithOffset(instant: Date, zone: string): string {
  const wall = wallClockOf(instant, zone);
  const offset = offsetMinutes(instant, zone);
  const sign = offset < 0 ? '-' : '+';
  const hours = pad(Math.floor(Math.abs(offset) / 60));
  return `${dateKey(wall)}T${timeKey(wall)}:${pad(wall.second)}${offset === 0 ? 'Z' : `${sign}${hours}:${pad(Math.abs(offset) % 60)}`}`;
}

const abbreviationFormats = new Map<string, Intl.DateTimeFormat>();
/** Names per zone and offset: a zone's short name follows its offset (CET at +1, CEST at +2). */
const abbreviations = new Map<string, string>();

/** The zone's short name at an instant, as Intl gives it in English: "EST", "EDT", or "GMT+2" where English has none. */
export function zoneAbbreviation(instant: Date, zone: string): string {
  const key = `${zone}|${offsetMs(instant, zone)}`;
  let name = abbreviations.get(key);
  if (name === undefined) {
    let format = abbreviationFormats.get(zone);
    if (!format) {
      format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'short' });
      abbreviationFormats.set(zone, format);
    }
    name = format.formatToParts(instant).find((part) => part.type === 'timeZoneName')?.value ?? zone;
    abbreviations.set(key, name);
  }
  return name;
}
