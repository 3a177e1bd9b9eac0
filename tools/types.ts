// The tool unit: one operation, served by MCP and REST through the one shared runner (tools/runner.ts).
import type { z } from 'zod';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../src/config.js';
import type { SecretBox } from '../src/lib/crypto.js';
import type { Logger } from '../src/lib/logger.js';
import type { PlatformFetch } from '../src/lib/platform-http.js';
import type { Orm } from '../src/db/orm.js';
import type { MediaFetcher } from '../src/lib/media-fetch.js';
import type { UrlGuard } from '../src/lib/ssrf.js';
import type { Storage } from '../src/lib/storage/index.js';
import type { PostChanges } from '../src/lib/events.js';
import type { ApiScope } from './internal/scopes.js';
import type { PostCreationLimit } from './internal/creation-limit.js';

export interface Services {
  config: Config;
  orm: Orm;
  secrets: SecretBox;
  fetch: PlatformFetch;
  /** Loads the bytes of a client's media URL at publish time, through `urlGuard`. */
  fetchMedia: MediaFetcher;
  /** The SSRF guard: every server-side fetch of a URL a client supplied goes through it. */
  urlGuard: UrlGuard;
  /**
   * The same guard's address check without the upload host allowlist, for platform calls to a host the user typed (a
   * Mastodon instance, a WordPress site): see `platformFetchFor`.
   */
  platformGuard: UrlGuard;
  /** Where media files live (local disk or S3-compatible). */
  storage: Storage;
  logger: Logger;
  /** The clock; tests replace it. */
  now: () => Date;
  /** Post changes for MCP resource subscribers, in this process and (through Postgres NOTIFY) in the others. */
  events?: PostChanges;
}

/** `preview_link`: whoever holds a customer preview link (tools/internal/preview-links.ts), never a person account. */
export type CredentialKind = 'api_key' | 'oauth_token' | 'session' | 'preview_link';

/** Who is calling: resolved from the API key or OAuth token before any tool runs. */
export interface Caller {
  organizationId: string;
  credentialId: string;
  credentialKind: CredentialKind;
  /** Named scopes (tools/internal/scopes.ts): an API key's own, an OAuth token's mapped, every scope for the console. */
  scopes: readonly string[];
  /** The credential's name for people: an API key's name (the audit trail, approval requests). */
  name?: string;
  /** The signed-in person's user id (console): the trail names a person, not one of their sessions. */
  personId?: string;
  /** The channels it may see and post to (resolved per request from the key's channels and customers); unset: every channel. */
  channelIds?: readonly string[];
  /** An API key's own approval gate: true (always wait), false (never), null/unset (the organization's rule). */
  approvalRequired?: boolean | null;
  /** An API key's own post-creation limit per hour (on top of the organization's). */
  postsPerHour?: number | null;
  /** Where the request came from, for the audit trail: set by the REST and MCP adapters and the console. */
  origin?: CallerOrigin;
}

export interface CallerOrigin {
  via: 'console' | 'rest' | 'mcp' | 'cli' | 'preview_link';
  /** The client's address (as express reads it, TRUST_PROXY applied). */
  address?: string | null;
  /** The User-Agent, or the MCP client's clientInfo ("Claude Desktop 1.2 (MCP)"). */
  client?: string | null;
}

export interface ToolContext {
  caller: Caller;
  em: EntityManager;
  services: Services;
  requestId: string;
  logger: Logger;
  /** Set when the MCP client asked for progress (a progress token): reports how far a long call is. */
  progress?: (progress: number, total?: number, message?: string) => Promise<void>;
  /** 'mcp' when the call came through an MCP session; REST and the console leave it unset. */
  via?: 'mcp';
  /**
   * MCP: aborted when the client cancels the call (notifications/cancelled, reaching whichever process runs it) or goes
   * away. A long tool stops what it has not started yet (a generation: no further paid model call).
   */
  signal?: AbortSignal;
  /**
   * MCP 2026-07-28 with the tasks extension: the client follows long work as a task, so a long tool answers as soon as the
   * work is recorded (a generation's id and state) instead of waiting for it; the client then reads it with tasks/get.
   */
  asTask?: boolean;
  /** MCP: a log notification to the client when at or above the level it set. Never pass secrets. */
  log?: (level: ToolLogLevel, message: string, data?: Record<string, unknown>) => void;
  /**
   * MCP: asks the user to confirm a destructive call (an elicitation when the client supports it, else the `confirm: true`
   * round trip). Unset on REST and in the console, where the request itself is the explicit act.
   */
  confirm?: (request: ConfirmationRequest) => Promise<ConfirmationAnswer>;
  /**
   * A tool with `countsAsPostCreation: 'in-handler'`: the limit this call counts against, which the handler counts in a
   * statement of its own (createPosts folds it into its read) before it creates anything.
   */
  postCreationLimit?: PostCreationLimit;
}

/** The MCP log levels a tool uses (RFC 5424 names, lowest first). */
export type ToolLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error';

export interface ConfirmationRequest {
  /** What would be done, unique per target (e.g. `deleteIntegration:<id>`): a `confirm: true` must follow a preview of the same action. */
  action: string;
  /** What would be deleted, for the person. */
  message: string;
  /** The caller passed `confirm: true`. */
  confirmed: boolean;
}

/** `needs_confirmation`: nothing done; the answer tells the agent what would be deleted and to call again with confirm: true. */
export type ConfirmationAnswer = 'confirmed' | 'declined' | 'needs_confirmation';

export interface RestRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface RestBinding<Output> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Express-style path relative to the REST base (e.g. `/posts/:id/status`). */
  path: string;
  /** Maps the spec's REST request to the tool input. Defaults to `{...params, ...query, ...body}`. */
  toInput?: (request: RestRequest) => unknown;
  /** Maps the tool output to the spec's REST response body. Defaults to the output itself. */
  toResponse?: (output: Output) => unknown;
  /** The REST body's schema when `toInput` reshapes it (the OpenAPI document; otherwise the input schema is the body). */
  body?: z.ZodType;
  /** The REST answer's schema when `toResponse` does more than unwrap `{output}` (the OpenAPI document). */
  response?: z.ZodType;
  /** 50 MB JSON body instead of 1 MB (post creation). */
  largeBody?: boolean;
  /**
   * A multipart/form-data upload instead of JSON: the file of this form field reaches the tool input as `{file: IncomingMedia}`
   * (a stream, never buffered whole); other fields are ignored.
   */
  multipartFile?: string;
  /**
   * Answered as a file download (e.g. a CSV export) instead of JSON: its media type, the name offered to save it under and
   * its text, from the output.
   */
  file?: { contentType: string; of: (output: Output) => { filename: string; body: string } };
  /** Status of a successful answer (200 unless said), or chosen from the output (202 for work still running). */
  status?: number | ((output: Output) => number);
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolDefinition<InputSchema extends z.ZodType = z.ZodType, OutputSchema extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  /** Written for an agent: when to use it, what to call first, what comes back. */
  description: string;
  annotations: ToolAnnotations;
  input: InputSchema;
  /**
   * What tools/list shows of the input when repeating it would cost every conversation its bytes (validatePostTool names
   * schedulePostTool's socialPost instead of repeating it); `input` still parses every call.
   */
  listedInput?: z.ZodType;
  output: OutputSchema;
  /** Listed as an MCP tool. */
  mcp: boolean;
  /** The scope a caller needs (tools/internal/scopes.ts); unset: `read` when read-only, else `posts:write`. */
  scope?: ApiScope;
  rest?: RestBinding<z.output<OutputSchema>>;
  /**
   * Counts against the hourly post-creation limits (REST and MCP alike): `true`, the runner counts it before the handler
   * runs; `'in-handler'`, the handler counts `context.postCreationLimit` itself, before it creates anything, in a statement
   * it runs anyway (the runner checks that it did).
   */
  countsAsPostCreation?: boolean | 'in-handler';
  /**
   * Creates something: an `Idempotency-Key` header (REST) or `idempotencyKey` input field (MCP) makes a repeated request
   * answer the first answer instead of creating again (tools/internal/idempotency.ts, applied by the runner).
   */
  acceptsIdempotencyKey?: boolean;
  /**
   * True for an answer that refuses the request without throwing (schedulePostTool's `{output: {errors}}`): nothing was
   * created, so MCP marks the result `isError` and the post-creation limit is not used up.
   */
  refused?: (output: z.output<OutputSchema>) => boolean;
  handler: (input: z.output<InputSchema>, context: ToolContext) => Promise<z.output<OutputSchema>>;
}

export function defineTool<InputSchema extends z.ZodType, OutputSchema extends z.ZodObject>(
  tool: ToolDefinition<InputSchema, OutputSchema>,
): ToolDefinition<InputSchema, OutputSchema> {
  return tool;
}

export const readOnly: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
