// Bulk import (issue 35): posts from a CSV or JSON file, one row each (channel, date in a stated zone, text, media, settings),
// checked row by row with the validation of a create before anything is made (`dryRun`, the default), then made all at once
// by one create (all or nothing: a file with a bad row creates nothing). A retried import with the same idempotency key
// answers the first answer; without one, the duplicate guard refuses rows that repeat posts already made.
//
// CSV: RFC 4180 (a header row; fields in double quotes may hold commas, quotes doubled, and line breaks; CRLF or LF; a
// UTF-8 byte-order mark ignored). Columns, by header name (case and `_`/`-`/space ignored): channel (an id, or a channel's
// name when no other channel has it), date (a wall-clock `2026-12-08 09:00` read in the row's zone, or an instant with its
// offset `2026-12-08T09:00:00+01:00`), timeZone (IANA; else the request's, else the channel's, else the organization's),
// text, media (URLs or media library ids, separated by spaces or `|`), settings (a JSON object), type (schedule or draft),
// tags (separated by `|`). Text is plain text unless the request says `textFormat: "html"`: each line becomes a paragraph,
// `&`, `<` and `>` are shown as typed.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Integration } from '../../src/db/entities.js';
import { invalidInput } from '../../src/errors.js';
import { plainTextContent } from '../../src/lib/content.js';
import { canonicalZone, instantOf, isoWithOffset, parseWallClock } from '../../src/lib/time-zone.js';
import type { ToolContext } from '../types.js';
import { checkPlan, createForCaller, planOptions, type CreatedPost, type PlanEntry } from './create-posts.js';
import { findDuplicates } from './duplicates.js';
import { listIntegrations } from './integrations.js';
import { channelZone, organizationZone } from './time-zones.js';

export const IMPORT_MAX_ROWS = 500;

/** One row as the file gives it, every value a string (JSON values other than strings are kept as they are for settings). */
export type ImportRow = Record<string, unknown>;

export interface ImportRowReport {
  /** The row's number in the file: 1 for the first row after the CSV header (the first element of a JSON array). */
  row: number;
  channel?: { id: string; name: string; platform: string };
  /** The instant, UTC. */
  date?: string;
  /** The same instant in the row's zone, with its offset. */
  localDate?: string;
  timeZone?: string;
  type?: 'schedule' | 'draft';
  /** Every problem of the row; empty when it can be created. */
  problems: string[];
  /** After the import: the post made from the row. */
  postId?: string;
}

export interface ImportReport {
  dryRun: boolean;
  rows: ImportRowReport[];
  valid: number;
  invalid: number;
}

/** Parses RFC 4180 CSV into rows of strings; an unterminated quoted field is an error naming its line. */
export function parseCsv(text: string): string[][] {
  const input = text.replace(/^\uFEFF/, '');
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let quoteLine = 0;
  for (let index = 0; index < input.length; index++) {
    const char = input[index];
    if (quoted) {
      if (char === '"') {
        if (input[index + 1] === '"') {
          field += '"';
          index++;
        } else quoted = false;
      } else {
        if (char === '\n') line++;
        field += char;
      }
    } else if (char === '"' && field === '') {
      quoted = true;
      quoteLine = line;
    } else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && input[index + 1] === '\n') index++;
      line++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += char;
  }
  if (quoted) throw invalidInput(`data: the quoted field opened on line ${quoteLine} of the CSV is never closed.`, { hint: 'Close it with a double quote; a double quote inside a field is written twice ("").' });
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((cells) => cells.some((cell) => cell.trim() !== ''));
}

const COLUMN = (name: string) => name.toLowerCase().replace(/[\s_-]+/g, '');
const KNOWN = new Map(['channel', 'date', 'timezone', 'text', 'media', 'settings', 'type', 'tags'].map((name) => [name, name]));

/** The rows of a CSV file as records keyed by the known column names; an unknown column is refused (a typo loses data). */
export function csvRows(text: string): ImportRow[] {
  const [header, ...body] = parseCsv(text);
  if (!header) throw invalidInput('data: the CSV is empty.', { hint: 'Start with a header row: channel,date,text (and timeZone, media, settings, type, tags as needed).' });
  const columns = header.map((name) => KNOWN.get(COLUMN(name)) ?? name);
  const unknown = columns.filter((name) => !KNOWN.has(name));
  if (unknown.length > 0) {
    throw invalidInput(`data: the CSV has columns Herald does not know: ${unknown.map((name) => `"${name.slice(0, 40)}"`).join(', ')}.`, {
      hint: 'Use the columns channel, date, timeZone, text, media, settings, type and tags (text is required, and channel and date for a scheduled post).',
    });
  }
  return body.map((cells) => Object.fromEntries(columns.map((name, index) => [name, cells[index] ?? ''])));
}

/** JSON rows: keys matched like CSV headers. */
export function jsonRows(rows: unknown[]): ImportRow[] {
  return rows.map((row, index) => {
    if (!row || typeof row !== 'object' || Array.isArray(row)) throw invalidInput(`rows[${index}]: each row is an object such as {"channel": "…", "date": "…", "text": "…"}.`);
    return Object.fromEntries(Object.entries(row).map(([key, value]) => [KNOWN.get(COLUMN(key)) ?? key, value]));
  });
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : value === undefined || value === null ? '' : String(value));

/** The channel a row names: its id, or a name no other channel of the caller's has. */
function channelOf(name: string, channels: Integration[]): Integration | string {
  if (!name) return 'channel is missing: give the channel\'s id (integrationList, GET /integrations) or its name';
  const byId = channels.find((channel) => channel.id === name);
  if (byId) return byId;
  const named = channels.filter((channel) => channel.name.trim().toLowerCase() === name.toLowerCase());
  if (named.length === 1) return named[0];
  if (named.length > 1) return `channel "${name.slice(0, 80)}": ${named.length} channels have this name (${named.map((channel) => `${channel.id} on ${channel.providerIdentifier}`).join(', ')}): use the id`;
  return `channel "${name.slice(0, 80)}" is neither the id nor the name of one of your channels (integrationList, GET /integrations)`;
}

interface ReadRow {
  report: ImportRowReport;
  entry?: PlanEntry;
}

/** A row read into a plan entry, or its problems. */
function readRow(row: ImportRow, index: number, options: { channels: Integration[]; zone?: string; organizationZone: string; html: boolean; now: Date }): ReadRow {
  const report: ImportRowReport = { row: index + 1, problems: [] };
  const problems = report.problems;
  const channel = channelOf(text(row.channel), options.channels);
  if (typeof channel === 'string') problems.push(channel);
  else report.channel = { id: channel.id, name: channel.name, platform: channel.providerIdentifier };

  const typeValue = text(row.type).toLowerCase() || 'schedule';
  if (typeValue !== 'schedule' && typeValue !== 'draft') problems.push(`type "${typeValue.slice(0, 20)}" is neither schedule nor draft`);
  else report.type = typeValue;

  const zoneValue = text(row.timezone);
  const zone = zoneValue ? canonicalZone(zoneValue) : (options.zone ?? (typeof channel === 'string' ? options.organizationZone : channelZone(channel, options.organizationZone)));
  if (!zone) problems.push(`timeZone "${zoneValue.slice(0, 64)}" is not an IANA time zone (such as Europe/Berlin)`);
  else report.timeZone = zone;

  const dateValue = text(row.date);
  let date: Date | undefined;
  if (dateValue) {
    if (/(Z|[+-]\d\d:?\d\d)$/i.test(dateValue)) {
      const parsed = new Date(dateValue);
      if (Number.isNaN(parsed.getTime())) problems.push(`date "${dateValue.slice(0, 40)}" is not a date`);
      else date = parsed;
    } else {
      const wall = parseWallClock(dateValue);
      if (!wall) problems.push(`date "${dateValue.slice(0, 40)}" is not a date: write 2026-12-08 09:00 (in the row's time zone) or an instant with its offset`);
      else if (zone) date = instantOf(wall, zone);
    }
  } else if (report.type === 'schedule') problems.push('date is missing: a scheduled post needs its date (or type draft)');
  if (date) {
    report.date = date.toISOString();
    if (zone) report.localDate = isoWithOffset(date, zone);
    if (report.type === 'schedule' && date.getTime() < options.now.getTime()) problems.push(`date ${report.localDate ?? report.date} has passed: give a future date`);
  }

  const body = text(row.text);
  if (!body) problems.push('text is missing');

  let settings: Record<string, unknown> = {};
  const settingsValue = row.settings;
  if (settingsValue && typeof settingsValue === 'object' && !Array.isArray(settingsValue)) settings = settingsValue as Record<string, unknown>;
  else if (text(settingsValue)) {
    try {
      const parsed: unknown = JSON.parse(text(settingsValue));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      settings = parsed as Record<string, unknown>;
    } catch {
      problems.push('settings is not a JSON object such as {"who_can_reply_post": "everyone"} (integrationSchema lists each platform\'s)');
    }
  }
  const { __type: _ignored, ...cleanSettings } = settings;

  const media = text(row.media)
    .split(/[\s|]+/)
    .filter(Boolean)
    .map((reference) => ({ id: reference, path: reference }));
  const tags = text(row.tags)
    .split('|')
    .map((tag) => tag.trim())
    .filter(Boolean)
    .map((tag) => tag.slice(0, 100));

  if (problems.length > 0 || typeof channel === 'string') return { report };
  return {
    report,
    entry: {
      integrationId: channel.id,
      type: report.type!,
      date,
      shortLink: false,
      tags,
      groupKey: index,
      settings: cleanSettings,
      items: [{ content: options.html ? body : plainTextContent(body), media, delay: 0 }],
    },
  };
}

/**
 * Adds to each readable row the problem a create would find (`checkPlan`: channel, length, media, settings) and the duplicate
 * guard's (a post already made, or an earlier row of the file, with the same text on the same channel).
 */
async function checkRows(em: EntityManager, context: ToolContext, read: ReadRow[], allowDuplicate: boolean): Promise<void> {
  const readable = read.filter((item) => item.entry);
  if (readable.length === 0) return;
  const entries = readable.map((item) => item.entry!);
  const { entryProblems, integrations } = await checkPlan(em, context.caller.organizationId, { creationMethod: 'API', entries }, planOptions(context.services));
  entryProblems.forEach((problem, index) => problem && readable[index].report.problems.push(problem.message));
  if (allowDuplicate) return;
  const duplicates = await findDuplicates(em, context.caller.organizationId, entries, integrations, { now: context.services.now(), windowDays: context.services.config.duplicateWindowDays });
  for (const [index, duplicate] of duplicates) {
    // "entry 3 repeats entry 1 of this request" in the file's words.
    const message = duplicate.message.replace(/^entry (\d+) repeats entry (\d+) of this request/, (_all, a: string, b: string) => `row ${readable[Number(a) - 1].report.row} repeats row ${readable[Number(b) - 1].report.row} of this file`);
    readable[index].report.problems.push(message);
  }
}

/**
 * Checks every row (dry run) or creates every row's post (when none has a problem). Rows are checked as a create checks
 * them (channel, length in the platform's counting, media, settings) and against the duplicate guard.
 */
export async function importPosts(
  context: ToolContext,
  rows: ImportRow[],
  options: { dryRun: boolean; timeZone?: string; textFormat: 'plain' | 'html'; allowDuplicate?: boolean },
): Promise<ImportReport> {
  const { em, caller, services } = context;
  if (rows.length === 0) throw invalidInput('data: the file has no rows.', { hint: 'Give one row per post after the CSV header (or a JSON array of row objects).' });
  if (rows.length > IMPORT_MAX_ROWS) throw invalidInput(`data: ${rows.length} rows; an import takes at most ${IMPORT_MAX_ROWS}.`, { hint: 'Split the file and import each part.' });
  const zone = options.timeZone === undefined ? undefined : canonicalZone(options.timeZone);
  if (options.timeZone !== undefined && !zone) throw invalidInput(`timeZone: "${options.timeZone.slice(0, 64)}" is not an IANA time zone.`, { hint: 'Use a zone name such as "Europe/Berlin".' });
  const channels = await listIntegrations(em, caller.organizationId);
  const defaultZone = await organizationZone(em, caller.organizationId);
  const now = services.now();
  const read = rows.map((row, index) => readRow(row, index, { channels, zone, organizationZone: defaultZone, html: options.textFormat === 'html', now }));
  await checkRows(em, context, read, options.allowDuplicate === true);
  const report = (): ImportReport => {
    const reports = read.map((item) => item.report);
    const invalid = reports.filter((item) => item.problems.length > 0).length;
    return { dryRun: options.dryRun, rows: reports, valid: reports.length - invalid, invalid };
  };
  if (options.dryRun) {
    context.postCreationLimit?.createsNothing();
    return report();
  }
  const bad = read.filter((item) => item.report.problems.length > 0);
  if (bad.length > 0) {
    throw invalidInput(`${bad.length} of ${read.length} rows have problems; nothing was imported. ${bad.slice(0, 5).map((item) => `Row ${item.report.row}: ${item.report.problems.join('; ')}.`).join(' ')}`, {
      hint: 'Fix every row listed in details.rows (a dry run lists them all) and import the whole file again.',
      details: { rows: bad.map((item) => item.report) },
    });
  }
  const created: CreatedPost[] = await createForCaller(context, context.via === 'mcp' ? 'MCP' : 'API', read.map((item) => item.entry!), options.allowDuplicate);
  created.forEach((post, index) => (read[index].report.postId = post.postId));
  return report();
}
