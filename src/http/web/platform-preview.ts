// A post drawn as its platform shows it (issues 33 and 36): one channel's entry of validatePost's answer
// (tools/internal/preview.ts) as an HTML fragment, for the console's composer and a post's page, customer preview links
// and the MCP Apps preview view (src/mcp/apps.ts). The length, the text readers see and the formatting a platform cannot
// show come from the preview (measure, formattingNotes): nothing is counted or converted twice here. Every user string is
// escaped (html.ts) and isolated for bidirectional text (bdi, dir=auto); no script, no style attribute: the look is
// PLATFORM_PREVIEW_STYLE, a stylesheet the page serves or inlines under its own Content-Security-Policy.
import { findProvider } from '../../../providers/index.js';
import type { PostPreview } from '../../../tools/internal/preview.js';
import type { PostPreview as StoredPreview } from '../../../tools/internal/post-view.js';
import { html, Markup, safeUrl } from './html.js';
import { formatWhen, localTimes } from './zones.js';

/** One channel's entry of validatePost's answer (postPreviewSchema). */
export type EntryPreview = PostPreview['entries'][number];
type ItemPreview = EntryPreview['items'][number];
type MediaPreview = ItemPreview['media'][number];

export interface PlatformPreviewOptions {
  /** The IANA zone the date is shown in (the organization's or the person's). */
  zone: string;
  /** The author as the platform shows it (default: the channel's name). */
  author?: { name?: string; handle?: string };
  /** false: no date line (a draft without a date, or a page that says the date itself). */
  dated?: boolean;
}

export const LENGTH_UNITS: Record<string, string> = {
  characters: 'characters',
  twitter: 'weighted characters (X counting)',
  graphemes: 'graphemes (what readers see as characters)',
  bytes: 'bytes (UTF-8: a character beyond ASCII takes 2 to 4)',
};

type Look = 'microblog' | 'linkedin' | 'telegram' | 'instagram' | 'reddit' | 'generic';
const LOOKS: Record<string, Look> = {
  x: 'microblog', bluesky: 'microblog', threads: 'microblog', mastodon: 'microblog', warpcast: 'microblog', nostr: 'microblog',
  linkedin: 'linkedin', 'linkedin-page': 'linkedin',
  telegram: 'telegram',
  instagram: 'instagram', 'instagram-standalone': 'instagram',
  reddit: 'reddit', lemmy: 'reddit',
};

// Telegram's parse_mode HTML as readers see it: these tags are formatting, everything else is text.
const TELEGRAM_TAG = /<(\/?)(b|strong|i|em|u|ins|s|strike|del|code|pre|a)(?:\s+href="([^"]*)")?\s*>/gi;
const TELEGRAM_ELEMENT: Record<string, string> = { b: 'strong', strong: 'strong', i: 'em', em: 'em', u: 'u', ins: 'u', s: 's', strike: 's', del: 's', code: 'code', pre: 'pre', a: 'a' };
const ENTITY: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'" };
const decodeTelegram = (text: string) => text.replace(/&(amp|lt|gt|quot|#39|apos);/g, (_, name: string) => ENTITY[name]);

/**
 * The message Telegram shows for its HTML: the formatting tags become the same elements (links only to http(s), opened
 * as new tabs without a referrer), every other character is text, escaped again; tags left open are closed.
 */
export function telegramMarkup(text: string): Markup {
  const open: string[] = [];
  const parts: Markup[] = [];
  let last = 0;
  for (const match of text.matchAll(TELEGRAM_TAG)) {
    parts.push(html`${decodeTelegram(text.slice(last, match.index))}`);
    last = match.index + match[0].length;
    const element = TELEGRAM_ELEMENT[match[2].toLowerCase()];
    if (match[1]) {
      const at = open.lastIndexOf(element);
      if (at === -1) continue;
      parts.push(html`${open.splice(at).reverse().map((name) => new Markup(`</${name}>`))}`);
      continue;
    }
    const href = element === 'a' ? safeUrl(decodeTelegram(match[3] ?? '')) : undefined;
    if (element === 'a' && !href) {
      open.push('span');
      parts.push(new Markup('<span>'));
      continue;
    }
    open.push(element);
    parts.push(element === 'a' ? html`<a href="${href}" rel="noopener noreferrer nofollow" target="_blank">` : new Markup(`<${element}>`));
  }
  parts.push(html`${decodeTelegram(text.slice(last))}`);
  parts.push(new Markup(open.reverse().map((name) => `</${name}>`).join('')));
  return html`${parts}`;
}

const initials = (name: string) => Array.from(name.trim()).find((character) => /\p{L}|\p{N}/u.test(character))?.toUpperCase() ?? '?';

function mediaMarkup(media: MediaPreview[], platform: string): Markup {
  if (media.length === 0) return html``;
  return html`<ul class="pp-media pp-media-${Math.min(media.length, 4)} preview-media media-list" aria-label="Media">${media.map((file) => {
    const src = safeUrl(file.kind === 'video' ? file.thumbnail : file.path);
    const label = file.kind === 'video' ? 'Video' : 'Picture';
    const picture = src
      ? html`<img src="${src}" alt="${file.alt ?? ''}" referrerpolicy="no-referrer" loading="lazy">`
      : html`<span class="pp-placeholder" aria-hidden="true">${file.kind === 'video' ? '▶' : '▣'}</span>`;
    return html`<li class="pp-file ${file.accepted ? 'accepted' : 'pp-refused refused'}"><figure>${picture}${file.kind === 'video' ? html`<span class="pp-play" aria-hidden="true">▶</span>` : ''}
      <figcaption><span class="pp-kind">${label}${file.kind === 'video' && !src ? ' (no poster)' : ''}</span>
        ${file.alt ? html`<span class="pp-alt">Alt text: <bdi>${file.alt}</bdi></span>` : file.kind === 'image' ? html`<span class="pp-alt pp-missing">No alt text: screen readers on ${platform} say nothing of it</span>` : ''}
        ${file.accepted ? '' : html`<span class="pp-rule">Refused: <bdi>${file.rule ?? `${platform} refuses this file`}</bdi></span>`}</figcaption></figure></li>`;
  })}</ul>`;
}

function lengthMarkup(entry: EntryPreview, item: ItemPreview): Markup {
  const unit = LENGTH_UNITS[entry.lengthMethod ?? 'characters'] ?? entry.lengthMethod;
  return html`<p class="pp-length${item.withinLimit ? '' : ' pp-over'}"><span class="length${item.withinLimit ? '' : ' over'}">${item.length} / ${entry.maxLength ?? '?'} ${unit}${item.withinLimit ? '' : ' — too long'}</span></p>`;
}

function notesMarkup(item: ItemPreview): Markup {
  const notes = item.formatting ?? [];
  return notes.length ? html`<ul class="pp-notes" aria-label="Formatting">${notes.map((note) => html`<li>${note}</li>`)}</ul>` : html``;
}

/** The text as readers see it: Telegram's formatting drawn, every other platform's visible text as it is. */
function textMarkup(look: Look, item: ItemPreview): Markup {
  if (!item.visibleText && !item.text) return html`<p class="pp-text pp-empty">(no text)</p>`;
  // A pre keeps the platform's line breaks and spaces as they are (the console's tests read .preview-text).
  return html`<pre class="pp-text preview-text" dir="auto">${look === 'telegram' ? telegramMarkup(item.text) : item.visibleText}</pre>`;
}

function author(entry: EntryPreview, options: PlatformPreviewOptions): Markup {
  const name = options.author?.name ?? entry.channel;
  return html`<header class="pp-author"><span class="pp-avatar" aria-hidden="true">${initials(name)}</span>
    <span class="pp-who"><bdi class="pp-name">${name}</bdi>${options.author?.handle ? html` <bdi class="pp-handle">${options.author.handle}</bdi>` : ''}</span></header>`;
}

function itemBody(look: Look, entry: EntryPreview, item: ItemPreview, platform: string, title: string | undefined): Markup {
  const media = mediaMarkup(item.media, platform);
  const text = textMarkup(look, item);
  const heading = title && item.position === 0 ? html`<p class="pp-title" dir="auto"><bdi>${title}</bdi></p>` : '';
  // Instagram shows the picture first and the caption under it.
  const body = look === 'instagram' ? html`${media}${text}` : html`${heading}${text}${media}`;
  return html`${body}${lengthMarkup(entry, item)}${notesMarkup(item)}`;
}

/** One channel's post as its platform shows it: an HTML fragment, every user string escaped. */
export function platformPreview(entry: EntryPreview, options: PlatformPreviewOptions): Markup {
  const provider = entry.platform ? findProvider(entry.platform) : undefined;
  const platform = provider?.name ?? entry.platform ?? 'the platform';
  const look = LOOKS[entry.platform ?? ''] ?? 'generic';
  const chain = provider?.chain === 'comments' ? 'comment' : 'reply';
  const title = look === 'reddit' && typeof entry.settings.values.title === 'string' ? entry.settings.values.title : undefined;
  const date = options.dated === false ? '' : html`<p class="pp-date">${entry.state === 'DRAFT' ? 'Draft for' : 'To be published'} <time datetime="${entry.slot.date}">${formatWhen(entry.slot.date, options.zone)}</time></p>`;
  const many = entry.items.length > 1;
  const items = entry.items.map(
    (item) => html`<li class="pp-item${item.withinLimit ? '' : ' pp-over'}"><article class="pp-post" aria-label="${many ? `${item.position === 0 ? 'Post' : `${chain[0].toUpperCase()}${chain.slice(1)} ${item.position}`} of ${entry.items.length}` : 'Post'} on ${platform}">
      ${item.position === 0 || look === 'microblog' || look === 'telegram' ? author(entry, options) : html`<p class="pp-chain">${chain} by <bdi>${options.author?.name ?? entry.channel}</bdi></p>`}
      ${itemBody(look, entry, item, platform, title)}</article></li>`,
  );
  return html`<div class="pp pp-${look}${entry.valid ? '' : ' pp-invalid'}" role="group" aria-label="${entry.channel} on ${platform}" data-platform="${entry.platform ?? ''}">
    <p class="pp-platform"><span class="pp-badge">${platform}</span> <bdi>${entry.channel}</bdi></p>${date}
    ${entry.problem ? html`<p class="pp-problem"><bdi>${localTimes(entry.problem, options.zone)}</bdi></p>` : ''}
    <ol class="pp-items${many ? ' pp-thread' : ''}">${items}</ol>
    ${entry.settings.valid ? '' : html`<p class="pp-problem"><bdi>${entry.settings.problem ?? ''}</bdi></p>`}
    ${entry.warnings.length ? html`<ul class="pp-warnings">${entry.warnings.map((warning) => html`<li><bdi>${warning}</bdi></li>`)}</ul>` : ''}
  </div>`;
}

/**
 * A stored post's preview (post-view.ts: the post's page, the approvals queue, customer preview links) as the entry the
 * renderer draws: the text as the platform receives it, counted the same way (previewChain's measure).
 */
export function storedEntry(preview: StoredPreview, channel: { id: string; name: string }): EntryPreview {
  const root = preview.items[0];
  return {
    integrationId: channel.id,
    channel: channel.name,
    platform: preview.platform.identifier,
    valid: preview.items.every((item) => !item.overLimit),
    state: root?.state === 'DRAFT' ? 'DRAFT' : 'QUEUE',
    slot: { date: '', takenBy: [] },
    maxLength: preview.maxLength,
    lengthMethod: preview.platform.lengthMethod,
    settings: { valid: true, values: {} },
    items: preview.items.map((item) => ({
      position: item.position,
      text: item.text,
      visibleText: item.text,
      length: item.length,
      withinLimit: !item.overLimit,
      media: item.media.map((media) => ({ ...media, source: 'library' as const, accepted: true })),
    })),
    warnings: [],
  };
}

/** The stylesheet of the previews (classes pp-*), for /console.css and the MCP Apps views. */
export const PLATFORM_PREVIEW_STYLE = `
.pp{border:1px solid #d1d9e0;border-radius:12px;padding:12px 14px;margin:0 0 16px;background:#fff;color:#1b1f24;max-width:36rem;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.pp-platform{margin:0 0 4px;font-size:.9rem;color:#59636e}.pp-badge{display:inline-block;border-radius:999px;padding:0 8px;background:#eef1f4;color:#1b1f24;font-weight:600}
.pp-date{margin:0 0 8px;font-size:.85rem;color:#59636e}
.pp-items{list-style:none;margin:0;padding:0}.pp-thread .pp-item{position:relative;padding-left:0}.pp-thread .pp-item+.pp-item{margin-top:8px}
.pp-thread.pp-items .pp-item:not(:last-child) .pp-post{border-left:3px solid #d1d9e0}
.pp-post{padding:8px 10px;border-radius:8px}
.pp-author{display:flex;gap:8px;align-items:center;margin-bottom:4px}.pp-avatar{display:inline-flex;align-items:center;justify-content:center;width:36px;height:36px;border-radius:50%;background:#0b5cad;color:#fff;font-weight:700}
.pp-name{font-weight:700}.pp-handle{color:#59636e}
.pp-text{white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0;unicode-bidi:isolate;font:inherit;background:none;border:0;padding:0}.pp-empty{color:#59636e;font-style:italic}
.pp-title{font-weight:700;font-size:1.1rem;margin:4px 0}
.pp-length{font-size:.85rem;color:#59636e;margin:4px 0}.pp-over .pp-length,.pp-length.pp-over{color:#b3261e;font-weight:700}
.pp-notes{font-size:.85rem;color:#6a4a00;background:#fff8e1;border-radius:6px;margin:4px 0;padding:4px 8px 4px 24px}
.pp-problem{color:#b3261e;font-weight:600}.pp-warnings{font-size:.85rem;color:#6a4a00}
.pp-media{display:grid;gap:4px;list-style:none;margin:6px 0;padding:0;grid-template-columns:1fr}.pp-media-2,.pp-media-3,.pp-media-4{grid-template-columns:1fr 1fr}
.pp-file figure{margin:0;position:relative}.pp-file img{display:block;width:100%;max-height:20rem;object-fit:cover;border-radius:8px;background:#eef1f4}
.pp-placeholder{display:flex;align-items:center;justify-content:center;height:8rem;border-radius:8px;background:#eef1f4;color:#59636e;font-size:2rem}
.pp-play{position:absolute;top:.5rem;left:.5rem;background:#1b1f24;color:#fff;border-radius:50%;width:2rem;height:2rem;display:flex;align-items:center;justify-content:center}
.pp-file figcaption{font-size:.8rem;color:#59636e;display:flex;flex-direction:column}.pp-missing{color:#6a4a00}.pp-refused img{opacity:.5}.pp-rule{color:#b3261e}
.pp-linkedin .pp-avatar{border-radius:4px;background:#0a66c2}.pp-telegram .pp-post{background:#effdde;border-radius:12px 12px 12px 2px}.pp-telegram .pp-avatar{background:#2aabee}
.pp-instagram .pp-file img{aspect-ratio:1/1}.pp-instagram .pp-avatar{background:#c13584}.pp-reddit .pp-avatar{background:#d93a00}.pp-microblog .pp-avatar{background:#1b1f24}
.pp-chain{font-size:.85rem;color:#59636e;margin:0 0 4px}.pp-invalid{border-color:#b3261e}
`;
