// The provider unit: a declarative descriptor of one platform plus its optional capabilities.
// A capability that is absent is not supported: callers answer `not_supported` (or the spec's empty answer), never a silent drop.
import type { z } from 'zod';
import type { EditorKind } from '../src/lib/content.js';
import type { LengthMethod } from '../src/lib/length.js';

export type { EditorKind, LengthMethod };
import type { LookupFunction } from 'node:net';
import type { PlatformFetch } from '../src/lib/platform-http.js';


export type AuthKind = 'oauth2' | 'oauth1' | 'credentials';

export interface CredentialField {
  key: string;
  label: string;
  type: 'text' | 'password' | 'url';
  required: boolean;
  description?: string;
  defaultValue?: string;
  /**
   * The field defaults to this key of the provider's endpoints, as the deployment sets them (SOCIAL_ENDPOINTS overrides the
   * descriptor): left empty, the provider uses `context.endpoints[endpoint]` itself, so a deployment's override always wins.
   */
  endpoint?: string;
}

export interface ProviderAuth {
  kind: AuthKind;
  /** OAuth scopes requested at authorization. */
  scopes?: string[];
  /** Fields of the connect form for credential platforms. */
  fields?: CredentialField[];
  /** Platforms that need a page/account choice after OAuth (channel stays "in between steps"). */
  betweenSteps?: boolean;
}

/** What the spec calls a tool of a channel (`integrationSchema.tools`, `triggerTool`). */
export interface HelperToolDeclaration {
  methodName: string;
  description: string;
  dataSchema: { key: string; type: string; description: string }[];
}

export interface HelperTool extends HelperToolDeclaration {
  /** Absent: declared for the schema, but running it answers not_supported until the platform's publishing lands. */
  run?: (context: ProviderContext, data: Record<string, string>) => Promise<unknown>;
}

/** The channel's stored credentials, decrypted. */
export interface ChannelAuth {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: Date;
  /** The account id on the platform. */
  internalId: string;
  /** Extra connection data (instance URL, chat id, app password...), stored encrypted. */
  data: Record<string, string>;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * What a recovery knows of the interrupted call. A lookup must identify exactly the item being recovered: a marker Herald sent
 * with it (the post id), or the same content created at or after `startedAt` (minus the platform's clock skew). An older item
 * with the same text or title is never taken for it; when nothing identifies it, answer undefined only if the platform proves
 * nothing was created, else throw (the item stops with "could not confirm").
 */
export interface StepAttempt {
  /** When the interrupted call began (Herald's clock). */
  startedAt: Date;
}

/**
 * For connections that do not go through `fetch` (WebSocket relays): undefined for the deployment's own hosts; for a host the
 * user typed, the SSRF guard checks it and answers the `lookup` to pass to the connection, which dials only the checked
 * addresses. Throws (a 400 `invalid_input` naming the host) when the host is refused.
 */
export type Dial = (url: string) => Promise<LookupFunction | undefined>;

export interface ProviderContext {
  fetch: PlatformFetch;
  dial: Dial;
  /** Default base URLs of the descriptor merged with deployment overrides (SOCIAL_ENDPOINTS). */
  endpoints: Record<string, string>;
  auth: ChannelAuth;
  /** What the provider stored about the account (`ConnectedAccount.channelSettings`, refreshed on `refresh`). */
  channel: Record<string, unknown>;
  /** The channel's settings for this post (validated against `settings`), `{}` outside publishing. */
  settings: Record<string, unknown>;
  /**
   * Runs one platform call that creates something (an upload session, a container, the post itself) exactly once per item.
   * Its result is recorded in Postgres before the next step; a later run of the same item (after a crash, a retry or a
   * `CheckAgainLater`) answers the recorded result without calling the platform again. A step interrupted mid-call has an
   * unknown outcome: `recover` looks the result up on the platform (answering undefined when nothing was created, so the call
   * is made again); without `recover` the item stops with "could not confirm". A step whose call failed with a definite
   * answer from the platform (4xx, 5xx, connection refused) is forgotten, so a retry makes the call again.
   * Outside publishing (helpers, analytics) it simply runs `run`.
   */
  step<T extends JsonValue>(name: string, run: () => Promise<T>, recover?: (attempt: StepAttempt) => Promise<T | undefined>): Promise<T>;
  /**
   * The deployment's OAuth app of this platform (`<IDENTIFIER>_CLIENT_ID`/`_SECRET`): token refreshes need it. Absent when none
   * is set. `botToken` (`<IDENTIFIER>_BOT_TOKEN`) is the app's bot, for platforms that post as it (Discord).
   */
  client?: { clientId: string; clientSecret?: string; botToken?: string };
  /**
   * Publishing only: stores bytes the provider derived from a post's media (an image re-encoded to a format the platform
   * takes) in the organization's media library, and answers their public URL, for platforms that pull media by URL.
   */
  storeMedia?: (bytes: Buffer, filename: string) => Promise<string>;
}

/**
 * Thrown by `publish`/`comment` while the platform is still processing (a video, a container): the job is re-scheduled to
 * run the item again after `seconds` (recorded steps are not repeated) instead of holding a worker asleep. After
 * `maxWaitSeconds` of waiting on one item (default one hour) the item fails with `message`.
 */
export class CheckAgainLater extends Error {
  constructor(
    readonly seconds: number,
    message: string,
    readonly maxWaitSeconds = 3600,
  ) {
    super(message);
    this.name = 'CheckAgainLater';
  }
}

/**
 * Thrown by a recovery that can neither find the item it recovers nor prove that nothing was created (see `StepAttempt`):
 * the item stops in ERROR with this message as it is, so the person checks the account instead of Herald posting twice.
 * `providers/recovery.ts` builds it (`couldNotConfirm`).
 */
export class CouldNotConfirm extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CouldNotConfirm';
  }
}

export interface ConnectContext {
  fetch: PlatformFetch;
  dial: Dial;
  endpoints: Record<string, string>;
  /** The deployment's app of this platform (`<IDENTIFIER>_CLIENT_ID`/`_SECRET`), for credential platforms whose calls need it (Farcaster's Neynar API key). */
  client?: { clientId: string; clientSecret?: string };
}

export interface ConnectedAccount {
  internalId: string;
  name: string;
  profile: string;
  picture?: string;
  accessToken: string;
  refreshToken?: string;
  expiresAt?: Date;
  data?: Record<string, string>;
  /**
   * Facts about the account that set its limits (an instance's `max_characters`, an X subscription type), not secret:
   * merged into the channel's settings and handed back as `channel` to `maxLength`, `validate` and `ProviderContext`.
   */
  channelSettings?: Record<string, unknown>;
}

export interface MediaFile {
  /** Public URL of the media (our storage or the client's URL). */
  url: string;
  kind: 'image' | 'video';
  alt?: string;
  /** Loads the bytes (through the guarded fetcher) for platforms that take uploads. */
  load: () => Promise<{ bytes: Buffer; mimeType: string }>;
}

export interface PublishItem {
  /** Our post row id: stable, usable as an idempotency key. */
  postId: string;
  /** Content converted for the platform's editor kind. */
  text: string;
  media: MediaFile[];
}

/** A published item as the platform identifies it. */
export interface PublishedRef {
  id: string;
  url?: string;
  /** Extra identifiers needed to reply later (e.g. Bluesky's cid). */
  meta?: Record<string, string>;
  /**
   * What the platform did other than asked, in sentences for the person (e.g. "YouTube kept the video private: the API
   * project is not verified"). Stored on the item and shown with it (REST, MCP, console).
   */
  warnings?: string[];
}

/** Where a later item goes: the chain's root and the item it follows (see `Provider.comment`). */
export interface CommentThread {
  root: PublishedRef;
  parent: PublishedRef;
  /** The item answers a comment someone left (`parent`), not an item of Herald's own chain. */
  toComment?: boolean;
}

/** A comment or reply someone left on one of the account's posts, as the platform shows it. */
export interface PlatformComment {
  /** The platform's id of the comment (what `hideComment`, `deleteComment` and a reply's `parent.id` take). */
  id: string;
  /** The comment it answers; undefined (or the post's id) for a comment on the post itself. */
  parentId?: string;
  author: { id: string; name: string; handle?: string; url?: string; picture?: string };
  /** Plain text, as the platform shows it (HTML of instances converted). */
  text: string;
  /** ISO 8601. */
  createdAt: string;
  url?: string;
  /** Extra identifiers a reply or a moderation call needs (Bluesky's cid, YouTube's thread id). */
  meta?: Record<string, string>;
  /** Written by the account itself (Herald's own thread items and replies, or the person answering on the platform). */
  byAccount?: boolean;
  /** The platform shows it hidden (Facebook is_hidden, X hidden replies). */
  hidden?: boolean;
}

export interface AnalyticsMetric {
  label: string;
  data: { total: string; date: string }[];
  percentageChange: number;
}

/** Validation input: one entry per item of the chain, with its media kinds. */
export interface ValidationItem {
  /** The item's text as the platform will receive it (converted for the provider's editor). */
  text: string;
  /**
   * Each media item's kind and URL; for a file of the media library also what the library measured (detected MIME type,
   * size in bytes, pixel dimensions), so size rules can be checked before anything is created. A client's own URL has none.
   */
  media: { kind: 'image' | 'video'; url: string; type?: string; size?: number; width?: number; height?: number }[];
}

export interface Provider {
  identifier: string;
  name: string;
  editor: EditorKind;
  /**
   * An article platform (WordPress, Medium, Hashnode, DEV, listmonk): its posts take Markdown in `content` and the rich HTML
   * an article needs (ol, em, blockquote, pre/code, h4–h6, table, img, figure), kept when the post is stored instead of cut
   * to the social set (DESIGN.md §1 Content; src/lib/article-content.ts).
   */
  article?: boolean;
  auth: ProviderAuth;
  /** Default base URLs. No absolute URL appears anywhere else in the file, so tests can point them at fakes. */
  endpoints: Record<string, string>;
  /** How length is counted on the converted text: UTF-16 characters, X's weighted length, or graphemes (Bluesky). */
  lengthMethod: LengthMethod;
  /**
   * `channel`: what the provider stored about the account when it connected or refreshed (`channelSettings`: an instance's
   * configured limits, an X subscription type), absent when no channel is known (the platform's catalog entry).
   */
  maxLength: (options: { isPremium?: boolean; settings?: Record<string, unknown>; channel?: Record<string, unknown> }) => number;
  rules: string;
  /**
   * When the provider converts the editor's output further before sending it (X: plain text; Telegram: its own HTML): the
   * text as the platform receives it and as its readers see it, which the preview shows and length is counted on. Absent:
   * the editor's output as sent, seen as its plain rendering.
   */
  render?: (converted: string) => { text: string; visible: string };
  /** Zod schema of `settings` (without `__type`); null means "No additional settings required". */
  settings: z.ZodObject | null;
  /** Thread-style (each item is a post replying to the previous) or comment-style (later items comment on the first). */
  chain: 'thread' | 'comments' | 'none';
  /** Media and settings rules checked at validation; returns the first problem as a sentence, or undefined. */
  validate?: (items: ValidationItem[], settings: Record<string, unknown>, channel?: Record<string, unknown>) => string | undefined;
  tools: HelperTool[];
  /** The platform fetches media from our public URL itself (instead of receiving the bytes), so PUBLIC_URL must be public https. */
  mediaByUrl?: boolean;
  /** True when the create call carries an idempotency key, so an attempt of unknown outcome may be repeated safely. */
  idempotentCreate?: boolean;
  /**
   * True when `publish`/`comment` wrap every platform call that creates something in `context.step`, so the provider itself
   * knows what an interrupted run left behind. The core then resumes an interrupted item instead of stopping it with
   * "could not confirm" (which it does for providers without steps and without `idempotentCreate`).
   */
  recordsSteps?: boolean;
  /**
   * Publishing calls (a post, a thread item, a comment) in flight at once, per account and across the platform (per worker
   * process), as the platform documents them: Herald waits for a free slot rather than send more. Absent fields take the
   * defaults of providers/shared.ts (PLATFORM_CONCURRENCY).
   */
  concurrency?: { perAccount?: number; perPlatform?: number };
  /**
   * Long-lived tokens that are refreshed by a scheduled job rather than on a 401 (Threads, Instagram standalone: 60 days):
   * the daily job refreshes the channel when its token expires within this many days.
   */
  refreshDaysBeforeExpiry?: number;
  /**
   * Why a channel whose credentials the platform refuses for good was disconnected, and what the person does now: it completes
   * the item's error `Channel "…" was disconnected because …` (e.g. WordPress: create a new application password and reconnect).
   * Absent: "its token expired or was revoked".
   */
  revokedCredentials?: string;

  // Capabilities. Absent = not supported.
  connect?: (context: ConnectContext, fields: Record<string, string>) => Promise<ConnectedAccount>;
  /** OAuth platforms: trades the authorization code of the channel callback for the account. */
  exchangeCode?: (
    context: ConnectContext,
    options: {
      code: string;
      codeVerifier: string;
      redirectUri: string;
      clientId: string;
      clientSecret?: string;
      /** The other string parameters of the platform's redirect (VK ID sends the `device_id` its token calls need). */
      callback?: Record<string, string>;
    },
  ) => Promise<ConnectedAccount & { inBetweenSteps?: boolean }>;
  /** Channels "in between steps": the pages/accounts the user chooses from, and the choice. */
  accounts?: (context: ProviderContext) => Promise<{ id: string; name: string; picture?: string }[]>;
  selectAccount?: (context: ProviderContext, id: string) => Promise<ConnectedAccount>;
  authorizeUrl?: (options: { clientId: string; redirectUri: string; state: string; codeChallenge: string; endpoints: Record<string, string> }) => string;
  refresh?: (context: ProviderContext) => Promise<Partial<ChannelAuth> & { channelSettings?: Record<string, unknown> }>;
  publish?: (context: ProviderContext, item: PublishItem) => Promise<PublishedRef>;
  /**
   * Publishes a later item of a chain (a thread item or a comment on the root), or a reply to a comment someone left on the
   * account's post: then `toComment` is true, `parent` is that comment (its platform id and `meta` as `comments` answered
   * them) and `root` the account's post it was left on. A platform whose comments nest (a reply to a comment is a comment
   * whose parent is that comment) answers the comment itself, not the post.
   */
  comment?: (context: ProviderContext, item: PublishItem, thread: CommentThread) => Promise<PublishedRef>;
  /**
   * The comments and replies on one of the account's published posts (`post`, as `publish` answered it), the whole tree
   * flattened, oldest first. `since` (a cursor, not a filter): the newest `createdAt` Herald already holds, so a provider
   * may stop paging once it reaches older comments; answering more is harmless (Herald keeps each comment once). A platform
   * or API tier that does not let the account read them throws `not_supported` with the reason.
   */
  comments?: (context: ProviderContext, post: PublishedRef, since: Date | undefined) => Promise<PlatformComment[]>;
  /**
   * Hides (or shows again, `hidden` false) a comment on the account's post where the platform lets the author of the post do
   * so (Facebook, Instagram, YouTube's heldForReview, X, Threads, Bluesky's threadgate). `post`: the post it was left on.
   */
  hideComment?: (context: ProviderContext, comment: PublishedRef, hidden: boolean, post: PublishedRef) => Promise<void>;
  /** Deletes a comment on the account's post where the platform lets the author of the post (or a moderator) do so. */
  deleteComment?: (context: ProviderContext, comment: PublishedRef, post: PublishedRef) => Promise<void>;
  analytics?: (context: ProviderContext, days: number) => Promise<AnalyticsMetric[]>;
  postAnalytics?: (context: ProviderContext, post: PublishedRef, days: number) => Promise<AnalyticsMetric[]>;
  /** Recent content of the account, for linking a post whose releaseId is `missing`. */
  recent?: (context: ProviderContext) => Promise<{ id: string; url: string }[]>;

  /**
   * Changes what went out (tools/internal/platform-changes.ts): an edit of a published item, and its deletion, each run by the
   * `platform_change` job with `context.step` recorded like publishing. Both must be safe to run again after an interruption:
   * an edit sets the same content again; a delete of what is already gone answers as done (the platform's "not found"), never
   * deleting anything but `ref`. `thread` is set for a thread item or comment (absent: the post itself). `context.settings`
   * holds the post's settings (for an edit, the new ones). An edit answers the item as it now is (its URL may change).
   */
  editPublished?: (context: ProviderContext, ref: PublishedRef, item: EditItem, thread?: ChainRefs) => Promise<PublishedRef>;
  deletePublished?: (context: ProviderContext, ref: PublishedRef, thread?: ChainRefs) => Promise<void>;
  /**
   * What of a published post's settings the platform cannot change (a Reddit title, a YouTube video's privacy…): a sentence for
   * the person, or undefined when the edit is possible. Checked when the edit is asked, before anything is sent.
   */
  editProblem?: (before: Record<string, unknown>, after: Record<string, unknown>) => string | undefined;
  /**
   * Why the platform's API cannot edit or delete what went out, for platforms without `editPublished` / `deletePublished`
   * (e.g. "Bluesky posts are records that cannot be edited"): the refusal names it. A default sentence otherwise.
   */
  unchangeable?: { edit?: string; delete?: string };
}

/** The root and the previous item of a chain, for a thread item or comment. */
export interface ChainRefs {
  root: PublishedRef;
  parent: PublishedRef;
}

/** The new content of a published item: as `PublishItem` (converted for the editor, media unchanged), and what it replaces. */
export interface EditItem extends PublishItem {
  /** The text that went out before (converted the same way), e.g. to tell a caption from a message text. */
  previousText: string;
}
