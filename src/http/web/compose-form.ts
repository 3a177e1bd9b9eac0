// The compose form as data, and as the requests it makes: the body of POST /posts (and of POST /posts/validate) for the
// chosen channels, the text written once with per-channel overrides, thread items or comments, media from the library
// and the platform settings. "Next free slot" is per channel, and a create request has one date: channels whose next
// free slots differ are created by one request per date (validated together first, so a problem creates nothing).
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Integration, Media, StoredMedia } from '../../db/entities.js';
import type { PostView } from '../../../tools/internal/post-view.js';
import { DomainError } from '../../errors.js';
import { canonicalZone, instantOf, localInputValue, parseWallClock } from '../../lib/time-zone.js';
import type { createPostBody } from '../../../tools/create-post.js';
import { providerOf } from '../../../tools/internal/integrations.js';
import { settingsTyped, settingsValues } from './settings-fields.js';
import { composedContent } from './compose-text.js';
import { repeatOf, type RepeatFields } from './recurring-pages.js';

export interface ComposeItem {
  content: string;
  /** Minutes after the previous item (thread items and comments). */
  delay: string;
  /** Media library ids, in order. */
  media: string[];
  /** Media id → its alt text (what screen readers say of a picture), sent with the item's media. */
  alt?: Record<string, string>;
}

export type Timing = 'date' | 'slot';

export interface ComposeState {
  channels: string[];
  items: ComposeItem[];
  /** Channel id → the text of each item for that channel (empty: the shared text). */
  overrides: Record<string, string[]>;
  /** Channel id → setting key → what was typed. */
  settings: Record<string, Record<string, string>>;
  timing: Timing;
  /** `YYYY-MM-DDTHH:MM` in `timeZone`. */
  date: string;
  timeZone: string;
  allowDuplicate: boolean;
  shortLink: boolean;
  /** This post goes without its channel's signature (`settings.signature: false`, tools/internal/signature.ts). */
  noSignature?: boolean;
  /** The Repeat fieldset as typed (recurring-pages.ts); unset when Repeat is not ticked. */
  repeat?: RepeatFields;
  /** Kept through re-renders of the form: sending it twice (a double click, a reload) creates once. */
  idempotencyKey: string;
  /** The post this form edits (the same composer saves it with updatePost); undefined for a new post. */
  editing?: string;
  /** Media of the post being edited that are not library files (URLs), and alt texts, kept as they were: id → media. */
  kept?: Record<string, StoredMedia>;
}

export const MAX_ITEMS = 25;

export const emptyState = (zone: string): ComposeState => ({
  channels: [],
  items: [{ content: '', delay: '', media: [] }],
  overrides: {},
  settings: {},
  timing: 'date',
  date: '',
  timeZone: zone,
  allowDuplicate: false,
  shortLink: false,
  idempotencyKey: randomUUID(),
});

export type Fields = Record<string, string[]>;

/** A urlencoded body (express) as the same field lists as a multipart one. */
export function fieldsOf(body: unknown): Fields {
  const fields: Fields = {};
  for (const [key, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    fields[key] = Array.isArray(value) ? value.map(String) : [String(value)];
  }
  return fields;
}

const first = (fields: Fields, name: string) => fields[name]?.[0] ?? '';

export function stateOf(fields: Fields, fallbackZone: string): ComposeState {
  const count = Math.min(Math.max(Number.parseInt(first(fields, 'items'), 10) || 1, 1), MAX_ITEMS);
  const items = Array.from({ length: count }, (_, index) => ({
    content: first(fields, `content-${index}`),
    delay: first(fields, `delay-${index}`),
    media: [...new Set(fields[`media-${index}`] ?? [])],
    alt: Object.fromEntries(
      Object.entries(fields)
        .filter(([name, values]) => name.startsWith(`alt-${index}-`) && values[0]?.trim())
        .map(([name, values]) => [name.slice(`alt-${index}-`.length), values[0].trim()]),
    ),
  }));
  const overrides: ComposeState['overrides'] = {};
  const settings: ComposeState['settings'] = {};
  for (const [name, values] of Object.entries(fields)) {
    const override = /^override:([^:]+):(\d+)$/.exec(name);
    if (override && Number(override[2]) < count) (overrides[override[1]] ??= [])[Number(override[2])] = values[0];
    const setting = /^setting:([^:]+):(.+)$/.exec(name);
    if (setting) (settings[setting[1]] ??= {})[setting[2]] = values[0];
  }
  const key = first(fields, 'idempotencyKey');
  return {
    channels: [...new Set(fields.channel ?? [])],
    items,
    overrides,
    settings,
    timing: first(fields, 'timing') === 'slot' ? 'slot' : 'date',
    date: first(fields, 'date').trim(),
    timeZone: canonicalZone(first(fields, 'timeZone')) ?? fallbackZone,
    allowDuplicate: first(fields, 'allowDuplicate') === 'yes',
    shortLink: first(fields, 'shortLink') === 'yes',
    ...(first(fields, 'noSignature') === 'yes' ? { noSignature: true } : {}),
    ...(repeatOf(fields) ? { repeat: repeatOf(fields) } : {}),
    idempotencyKey: /^[\x21-\x7e]{1,200}$/.test(key) ? key : randomUUID(),
    ...(/^[A-Za-z0-9_-]{1,64}$/.test(first(fields, 'edit')) ? { editing: first(fields, 'edit') } : {}),
  };
}

export type CreateBody = z.input<typeof createPostBody>;
export type PostType = 'draft' | 'schedule' | 'now';

/** The items that will be sent: trailing empty items (no text, no media) are the form's spare slots, not items. */
function usedItems(state: ComposeState): { item: ComposeItem; index: number }[] {
  const items = state.items.map((item, index) => ({ item, index }));
  while (items.length > 1) {
    const last = items.at(-1)!;
    const overridden = Object.values(state.overrides).some((texts) => texts[last.index]?.trim());
    if (last.item.content.trim() || last.item.media.length || overridden) break;
    items.pop();
  }
  return items;
}

/** The date the form names, as an instant; undefined when none was typed. */
export function chosenDate(state: ComposeState): Date | undefined {
  if (!state.date) return undefined;
  const wall = parseWallClock(state.date);
  if (!wall) throw new DomainError('invalid_input', `The date "${state.date}" is not a date and time; write it as YYYY-MM-DDTHH:MM (${state.timeZone}).`);
  return instantOf(wall, state.timeZone);
}

/**
 * The create request(s) of the form: one per distinct date (one in all cases but "next free slot" on channels whose
 * slots differ). `slotOf` answers a channel's next free slot (findSlotTool).
 */
export async function composeRequests(
  state: ComposeState,
  type: PostType,
  channels: Integration[],
  library: Map<string, Media>,
  slotOf: (channelId: string) => Promise<string>,
): Promise<{ date?: string; body: CreateBody }[]> {
  if (state.channels.length === 0) throw new DomainError('invalid_input', 'Choose at least one channel to post to.');
  const byId = new Map(channels.map((channel) => [channel.id, channel]));
  const items = usedItems(state);
  const entries = state.channels.map((id) => {
    const channel = byId.get(id);
    if (!channel) throw new DomainError('not_found', 'One of the chosen channels does not exist any more.', { hint: 'Reload the page and choose again.' });
    return {
      integration: { id },
      value: items.map(({ item, index }) => {
        const override = state.overrides[id]?.[index];
        return {
          content: composedContent(override?.trim() ? override : item.content),
          image: item.media.flatMap((mediaId) => {
            const kept = state.kept?.[mediaId];
            const file = library.get(mediaId);
            const alt = item.alt?.[mediaId] ?? kept?.alt;
            if (file) return [{ id: mediaId, path: file.path, ...(alt ? { alt } : {}) }];
            return kept ? [{ id: kept.id, path: kept.path, ...(alt ? { alt } : {}) }] : [];
          }),
          delay: Math.max(0, Number.parseInt(item.delay, 10) || 0),
        };
      }),
      settings: { ...settingsValues(providerOf(channel), channel.name, state.settings[id] ?? {}), ...(state.noSignature ? { signature: false } : {}) },
    };
  });
  const common = { type, shortLink: state.shortLink, ...(state.allowDuplicate ? { allowDuplicate: true } : {}), tags: [] };
  if (type === 'now') return [{ body: { ...common, posts: entries } }];
  if (state.timing === 'date') {
    const date = chosenDate(state);
    // A draft without a date keeps none: it takes no posting slot until it is scheduled.
    if (!date && type === 'draft') return [{ body: { ...common, posts: entries } }];
    if (!date) throw new DomainError('invalid_input', `Choose a date and time (${state.timeZone}), or "the next free slot of each channel".`);
    return [{ date: date.toISOString(), body: { ...common, date: date.toISOString(), posts: entries } }];
  }
  const groups = new Map<string, typeof entries>();
  for (const entry of entries) {
    const date = await slotOf(entry.integration.id);
    groups.set(date, [...(groups.get(date) ?? []), entry]);
  }
  return [...groups].map(([date, posts]) => ({ date, body: { ...common, date, posts } }));
}

/**
 * A post as the compose form (its page's Edit, and Duplicate): its channel, every item's text, delay and media, and its
 * settings as the form's fields. `withDate` false (a duplicate) leaves the date to choose.
 */
export function stateOfPost(view: PostView, zone: string, options: { withDate: boolean; editing: boolean }): ComposeState {
  const channelId = view.integration.id;
  const kept: Record<string, StoredMedia> = {};
  for (const media of view.chain.flatMap((item) => item.media)) kept[media.id] = media;
  const { __type: _type, ...settings } = view.root.settings;
  return {
    ...emptyState(zone),
    channels: [channelId],
    items: view.chain.map((item) => ({
      content: item.content,
      delay: item.position > 0 && item.delay ? String(item.delay) : '',
      media: item.media.map((media) => media.id),
      alt: Object.fromEntries(item.media.filter((media) => media.alt).map((media) => [media.id, media.alt!])),
    })),
    settings: { [channelId]: settingsTyped(providerOf(view.integration), settings) },
    date: options.withDate && !isUndated(view.root) ? localInputValue(view.root.publishDate, zone).slice(0, 16) : '',
    shortLink: view.root.shortLink,
    kept,
    ...(options.editing ? { editing: view.root.id } : {}),
  };
}

/** A draft saved without a date is kept at the instant it was created (create-posts.ts): it has no date of its own. */
export const isUndated = (post: { state: string; publishDate: Date; createdAt: Date }) => post.state === 'DRAFT' && post.publishDate.getTime() === post.createdAt.getTime();
