// Wall-clock times of IANA zones (src/lib/time-zone.ts), the ground the console's local times and the posting times
// stand on: daylight-saving gaps and overlaps, zone names, and the cache that keeps a month of posts cheap.
import { describe, expect, it } from 'vitest';
import { canonicalZone, instantOf, isoWithOffset, localInputValue, offsetMinutes, parseWallClock, timeZoneNames, wallClockOf, zoneAbbreviation } from '../src/lib/time-zone.js';

describe('time zones', () => {
  it('09:00 in Paris is 08:00Z before the spring change and 07:00Z after it', () => {
    expect(instantOf({ year: 2027, month: 3, day: 27, hour: 9, minute: 0 }, 'Europe/Paris').toISOString()).toBe('2027-03-27T08:00:00.000Z');
    expect(instantOf({ year: 2027, month: 3, day: 28, hour: 9, minute: 0 }, 'Europe/Paris').toISOString()).toBe('2027-03-28T07:00:00.000Z');
    expect(instantOf({ year: 2027, month: 11, day: 7, hour: 9, minute: 0 }, 'America/New_York').toISOString()).toBe('2027-11-07T14:00:00.000Z');
    expect(instantOf({ year: 2027, month: 11, day: 6, hour: 9, minute: 0 }, 'America/New_York').toISOString()).toBe('2027-11-06T13:00:00.000Z');
  });

  it('a time the clocks skip lands just after the change; a time that happens twice is the first one', () => {
    // 02:30 does not exist in Paris on 2027-03-28 (02:00 → 03:00): read with the winter offset, it is 03:30 summer time.
    const skipped = instantOf({ year: 2027, month: 3, day: 28, hour: 2, minute: 30 }, 'Europe/Paris');
    expect(isoWithOffset(skipped, 'Europe/Paris')).toBe('2027-03-28T03:30:00+02:00');
    // 02:30 happens twice on 2027-10-31 (03:00 → 02:00): the first, still summer time.
    const twice = instantOf({ year: 2027, month: 10, day: 31, hour: 2, minute: 30 }, 'Europe/Paris');
    expect(twice.toISOString()).toBe('2027-10-31T00:30:00.000Z');
    expect(wallClockOf(new Date(twice.getTime() + 3_600_000), 'Europe/Paris')).toMatchObject({ hour: 2, minute: 30 });
  });

  it('reads instants back as wall-clock times, offsets and short names, in half- and quarter-hour zones too', () => {
    const instant = new Date('2027-07-01T12:00:00Z');
    expect(localInputValue(instant, 'Asia/Kathmandu')).toBe('2027-07-01T17:45');
    expect(offsetMinutes(instant, 'Asia/Kolkata')).toBe(330);
    expect(isoWithOffset(instant, 'America/St_Johns')).toBe('2027-07-01T09:30:00-02:30');
    expect(isoWithOffset(instant, 'UTC')).toBe('2027-07-01T12:00:00Z');
    expect(zoneAbbreviation(instant, 'America/New_York')).toBe('EDT');
    expect(zoneAbbreviation(new Date('2027-01-01T12:00:00Z'), 'America/New_York')).toBe('EST');
    expect(zoneAbbreviation(instant, 'UTC')).toBe('UTC');
  });

  it('every instant of a day with a change reads right (the offset cache splits that day by hour)', () => {
    const start = Date.parse('2027-03-27T22:00:00Z');
    for (let minute = 0; minute < 8 * 60; minute += 7) {
      const instant = new Date(start + minute * 60_000);
      const exact = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hourCycle: 'h23', hour: '2-digit', minute: '2-digit' }).format(instant);
      const wall = wallClockOf(instant, 'Europe/Paris');
      expect(`${String(wall.hour).padStart(2, '0')}:${String(wall.minute).padStart(2, '0')}`, instant.toISOString()).toBe(exact);
    }
  });

  it('knows zone names (UTC included, aliases canonical) and refuses offsets and inventions', () => {
    expect(canonicalZone('europe/paris')).toBe('Europe/Paris');
    expect(canonicalZone('UTC')).toBe('UTC');
    expect(canonicalZone('US/Eastern')).toBe('America/New_York');
    expect(canonicalZone('+02:00')).toBeUndefined();
    expect(canonicalZone('Mars/Olympus_Mons')).toBeUndefined();
    expect(canonicalZone(42)).toBeUndefined();
    expect(timeZoneNames()[0]).toBe('UTC');
    expect(timeZoneNames()).toContain('Pacific/Chatham');
  });

  it('parses form dates and refuses impossible ones', () => {
    expect(parseWallClock('2027-03-28T09:05')).toEqual({ year: 2027, month: 3, day: 28, hour: 9, minute: 5, second: 0 });
    expect(parseWallClock('2027-03-28', '09:05:30')).toEqual({ year: 2027, month: 3, day: 28, hour: 9, minute: 5, second: 30 });
    expect(parseWallClock('2027-02-29T09:00')).toBeUndefined();
    expect(parseWallClock('2027-03-28T24:00')).toBeUndefined();
    expect(parseWallClock('tomorrow')).toBeUndefined();
  });
});
