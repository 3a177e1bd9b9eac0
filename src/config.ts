// The only reader of process.env. Every setting is validated here and every bad variable is reported at once.
// Over 400 lines on purpose: each setting's variable, default, check and typed shape are read together in this one file
// (the README's settings table and .env.example follow it); split by topic they would drift apart.
import { z } from 'zod';
import fs from 'node:fs';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

const intFromEnv = (fallback: number, min = 0) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return fallback;
      const parsed = Number(value);
      if (!Number.isInteger(parsed) || parsed < min) {
        context.addIssue({ code: 'custom', message: `must be an integer >= ${min}, got "${value}"` });
        return z.NEVER;
      }
      return parsed;
    });

const boolFromEnv = (fallback: boolean) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return fallback;
      if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) return true;
      if (['0', 'false', 'no', 'off'].includes(value.toLowerCase())) return false;
      context.addIssue({ code: 'custom', message: `must be true or false, got "${value}"` });
      return z.NEVER;
    });

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const ROLES = ['web', 'worker', 'all'] as const;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const environmentSchema = z.object({
  PORT: intFromEnv(3000, 0),
  HERALD_ROLE: z.enum(ROLES).optional().default('all'),
  HOST: optionalString,
  PUBLIC_URL: optionalString,
  DATABASE_URL: optionalString,
  DATA_DIR: optionalString,
  EMBEDDED_POSTGRES_PORT: intFromEnv(54329, 1),
  EMBEDDED_POSTGRES_BINARIES: optionalString,
  ENCRYPTION_KEY: optionalString,
  ENCRYPTION_KEY_FILE: optionalString,
  API_RATE_LIMIT_PER_MINUTE: intFromEnv(300, 1),
  API_RATE_LIMIT_PER_HOUR: intFromEnv(0, 0),
  CREATE_POST_RATE_LIMIT_PER_HOUR: intFromEnv(90, 1),
  MCP_SESSION_IDLE_MINUTES: intFromEnv(30, 1),
  DEVICE_POLL_INTERVAL_SECONDS: intFromEnv(5, 1),
  WORKER_CONCURRENCY: intFromEnv(4, 1),
  PUBLISH_CONCURRENCY: intFromEnv(1024, 1),
  START_TIMEOUT_SECONDS: intFromEnv(120, 1),
  SWEEP_CRON: optionalString,
  DEFAULT_POSTING_TIMES: optionalString,
  SOCIAL_ENDPOINTS: optionalString,
  TIKTOK_APP_AUDITED: boolFromEnv(false),
  PLATFORM_TIMEOUT_SECONDS: intFromEnv(30, 1),
  PUBLISH_RECHECK_MAX_SECONDS: intFromEnv(300, 1),
  LOG_LEVEL: z.enum(LOG_LEVELS).optional().default('info'),
  ALLOW_SIGNUP: boolFromEnv(false),
  UPLOAD_MAX_IMAGE_BYTES: intFromEnv(10 * 1024 * 1024, 1),
  UPLOAD_MAX_VIDEO_BYTES: intFromEnv(1024 * 1024 * 1024, 1),
  UPLOAD_URL_ALLOWED_HOSTS: optionalString,
  FETCH_CONNECT_TIMEOUT_SECONDS: intFromEnv(10, 1),
  FETCH_TIMEOUT_SECONDS: intFromEnv(300, 1),
  DISABLE_SSRF_PROTECTION: boolFromEnv(false),
  STORAGE: z.enum(['local', 's3']).optional().default('local'),
  S3_ENDPOINT: optionalString,
  S3_REGION: optionalString,
  S3_BUCKET: optionalString,
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_PUBLIC_URL: optionalString,
  S3_FORCE_PATH_STYLE: boolFromEnv(true),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: optionalString,
  OPENAI_IMAGE_MODEL: optionalString,
  OPENAI_IMAGE_QUALITY: z.enum(['auto', 'low', 'medium', 'high']).optional().default('auto'),
  OPENAI_CHAT_MODEL: optionalString,
  OPENAI_TTS_MODEL: optionalString,
  FAL_KEY: optionalString,
  FAL_PROXY_URL: optionalString,
  FAL_IMAGE_MODEL: optionalString,
  FAL_VEO3_MODEL: optionalString,
  FAL_VEO3_IMAGE_MODEL: optionalString,
  FAL_VEO3_REFERENCE_MODEL: optionalString,
  IMAGE_GENERATOR: z.enum(['openai', 'fal']).optional(),
  GENERATION_TIMEOUT_SECONDS: intFromEnv(50, 1),
  GENERATION_MODEL_TIMEOUT_SECONDS: intFromEnv(300, 1),
  GENERATION_CHECK_SECONDS: intFromEnv(10, 1),
  GENERATION_LIMIT_PER_HOUR: intFromEnv(20, 1),
  WEBHOOKS_ALLOW_PRIVATE: boolFromEnv(false),
  LINK_SHORTENER: z.enum(['herald', 'dub', 'none']).optional(),
  DUB_API_KEY: optionalString,
  DUB_API_URL: optionalString,
  DUB_DOMAIN: optionalString,
  CHANNEL_EXPIRY_WARNING_DAYS: intFromEnv(7, 1),
  DUPLICATE_WINDOW_DAYS: intFromEnv(7, 0),
  METRICS_TOKEN: optionalString,
  METRICS_ALLOW: optionalString,
  ANALYTICS_HISTORY_DAYS: intFromEnv(400, 1),
  AUDIT_RETENTION_DAYS: intFromEnv(400, 1),
  COMMENT_POLL_SECONDS: intFromEnv(120, 5),
  COMMENT_POLL_DAYS: intFromEnv(14, 0),
});

export type LogLevel = (typeof LOG_LEVELS)[number];

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret?: string;
  /** The app's bot token (`<IDENTIFIER>_BOT_TOKEN`): Discord posts as the app's one bot, whatever server installed it. */
  botToken?: string;
}

export interface S3Settings {
  /** Absent: AWS's own endpoint for the region. */
  endpoint?: string;
  region: string;
  bucket: string;
  /** Both or neither; neither uses the AWS SDK's default credential chain (environment, instance role...). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Public origin (and optional path) under which the bucket's objects are served; media paths start with it. */
  publicUrl: string;
  forcePathStyle: boolean;
}

/** AI image and video generation (generators/). A missing key leaves the generators that need it unavailable, never faked. */
export interface GenerationSettings {
  openai?: { apiKey: string; baseUrl: string };
  /** FAL_PROXY_URL: every fal request goes there with the real URL in `x-fal-target-url` (fal's proxy protocol). */
  fal?: { apiKey: string; proxyUrl?: string };
  /** Which service draws images (generateImageTool and the slides): IMAGE_GENERATOR, else OpenAI when its key is set, else fal. */
  imageService: 'openai' | 'fal';
  models: {
    openaiImage: string;
    openaiImageQuality: 'auto' | 'low' | 'medium' | 'high';
    openaiChat: string;
    openaiSpeech: string;
    falImage: string;
    veo3: string;
    veo3Image: string;
    veo3Reference: string;
  };
  /** How long a tool call (MCP or REST) waits for a generation before answering how to fetch it later. */
  waitSeconds: number;
  /** Time limit of one model call. */
  modelTimeoutMs: number;
  /** Seconds between two checks of a queued model job (fal) after the first short wait. */
  checkSeconds: number;
  /** New generations per organization per hour (joined or reused ones do not count). */
  limitPerHour: number;
}

/**
 * How `shortLink: true` shortens links at publish time: Herald's own `PUBLIC_URL/l/<code>` (clicks counted per day), Dub's
 * API (clicks read from Dub's analytics), or not at all (links posted as they are, with a warning).
 */
export type ShortLinkSettings = { kind: 'herald' } | { kind: 'dub'; apiKey: string; apiUrl: string; domain?: string } | { kind: 'none' };

export type StorageSettings = { kind: 'local' } | ({ kind: 's3' } & S3Settings);

export interface UploadSettings {
  maxImageBytes: number;
  maxVideoBytes: number;
  /** Hostnames /upload-from-url may fetch from (exact, or `*.example.com` for subdomains); empty = any public host. */
  allowedHosts: string[];
  connectTimeoutMs: number;
  /** Whole fetch, body included. */
  timeoutMs: number;
}

/** What a process runs: the HTTP service (REST, MCP, console), the publishing worker, or both (the default). */
export type Role = (typeof ROLES)[number];

export interface Config {
  /** HERALD_ROLE, or `--role` on the command line: any number of web and worker processes share one Postgres. */
  role: Role;
  port: number;
  host: string;
  /** Absolute origin used in every link Herald hands out (no trailing slash). */
  publicUrl: string;
  databaseUrl?: string;
  dataDir: string;
  embeddedPostgresPort: number;
  /** A Postgres build (bin/, lib/, share/) to run instead of the npm package's. */
  embeddedPostgresBinaries?: string;
  encryptionKey?: string;
  /** Every REST call of an organization, per sliding minute. */
  apiRateLimitPerMinute: number;
  /** Every REST call of an organization, per sliding hour; 0 = none (30 is the spec's strict reading). */
  apiRateLimitPerHour: number;
  createPostRateLimitPerHour: number;
  mcpSessionIdleMinutes: number;
  /** How often device-login clients (RFC 8628) may poll for their token. */
  devicePollIntervalSeconds: number;
  /** Jobs at a time of the CPU and database work (generation, comments, webhooks…), per worker process. */
  workerConcurrency: number;
  /**
   * Publishing jobs at a time per worker process: most of a publication is waiting on the platform, which costs no CPU slot;
   * the calls in flight are bounded per platform and per account by each provider's limits (Provider.concurrency).
   */
  publishConcurrency: number;
  /** A start that is not serving by then (listening on HTTP; a worker-only process: running its worker) exits with 1. */
  startTimeoutSeconds: number;
  sweepCron: string;
  /** Minutes after midnight, wall-clock times of each new channel's zone (its organization's). */
  defaultPostingTimes: number[];
  /**
   * Per-provider endpoint overrides, e.g. {"bluesky":{"video":"http://127.0.0.1:4100"}}; keys ending in `Version` are API versions.
   * TikTok's also carries `appAudited` ("true"/"false", from TIKTOK_APP_AUDITED): the provider's one view of the deployment.
   */
  socialEndpoints: Record<string, Record<string, string>>;
  /** OAuth app credentials per platform identifier, from `<IDENTIFIER>_CLIENT_ID` / `_CLIENT_SECRET` (and `_BOT_TOKEN`). */
  oauthClients: Record<string, OAuthClientCredentials>;
  platformTimeoutMs: number;
  /** Upper bound of the wait between two checks of a platform's processing (a video, a container); providers ask for less. */
  publishRecheckMaxSeconds: number;
  logLevel: LogLevel;
  allowSignup: boolean;
  uploads: UploadSettings;
  /** False only with DISABLE_SSRF_PROTECTION=true: server-side fetches may then reach private addresses. Dangerous. */
  ssrfProtection: boolean;
  storage: StorageSettings;
  generation: GenerationSettings;
  /** WEBHOOKS_ALLOW_PRIVATE: webhook URLs may resolve to private and loopback addresses (DISABLE_SSRF_PROTECTION allows it too). */
  webhooksAllowPrivate: boolean;
  shortLinks: ShortLinkSettings;
  /** A channel whose token cannot be refreshed is warned about (and shown as token_expiring) this many days before expiry. */
  channelExpiryWarningDays: number;
  /** The duplicate guard: a post whose text (nearly) repeats one on the same channel less than this many days apart is refused; 0 turns it off. */
  duplicateWindowDays: number;
  /**
   * Reading comments on published posts (tools/internal/comment-poll.ts): a young post is read every `pollSeconds`, older
   * ones less often; posts older than `pollDays` are not read; 0 turns reading off.
   */
  comments: { pollSeconds: number; pollDays: number };
  /** Analytics history (channel metrics per day, post snapshots) older than this many days is deleted. */
  analyticsHistoryDays: number;
  /** Audit trail events (tools/internal/audit.ts) older than this many days are deleted by the daily prune. */
  auditRetentionDays: number;
  metrics: MetricsSettings;
}

/** Who may read GET /metrics: any request with the token (when set), and any client address in `allow` (CIDR ranges). */
export interface MetricsSettings {
  token?: string;
  allow: string[];
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
  }
}

function parsePostingTimes(value: string | undefined, problems: string[]): number[] {
  if (value === undefined) return [120, 400, 700];
  const times = value.split(',').map((part) => Number(part.trim()));
  if (times.length === 0 || times.some((time) => !Number.isInteger(time) || time < 0 || time >= 1440)) {
    problems.push(`DEFAULT_POSTING_TIMES: must be a comma-separated list of minutes after midnight (0-1439), wall-clock times of each channel's zone, got "${value}"`);
    return [120, 400, 700];
  }
  return [...new Set(times)].sort((a, b) => a - b);
}

/** Keys ending in `Version` carry an API version (Graph API `v23.0`, LinkedIn-Version `202510`); every other value is a base URL. */
const endpointValue = z.string().min(1);

function parseEndpoints(value: string | undefined, problems: string[]): Record<string, Record<string, string>> {
  if (value === undefined) return {};
  let parsed: Record<string, Record<string, string>>;
  try {
    parsed = z.record(z.string(), z.record(z.string(), endpointValue)).parse(JSON.parse(value));
  } catch {
    problems.push('SOCIAL_ENDPOINTS: must be JSON like {"bluesky":{"service":"https://pds.example"},"facebook":{"graphVersion":"v23.0"}}');
    return {};
  }
  for (const [identifier, entries] of Object.entries(parsed)) {
    for (const [key, entry] of Object.entries(entries)) {
      if (key.endsWith('Version')) continue;
      // Nostr relays: a comma-separated list of WebSocket URLs.
      if (key === 'relays') {
        const relays = entry.split(',').map((relay) => relay.trim());
        if (!relays.every((relay) => z.url({ protocol: /^wss?$/ }).safeParse(relay).success)) problems.push(`SOCIAL_ENDPOINTS: ${identifier}.relays must be ws(s) URLs separated by commas, got "${entry}"`);
        continue;
      }
      if (!z.url({ protocol: /^https?$/ }).safeParse(entry).success) problems.push(`SOCIAL_ENDPOINTS: ${identifier}.${key} must be an http(s) URL, got "${entry}"`);
    }
  }
  return parsed;
}

const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'];

/** METRICS_ALLOW: addresses and CIDR ranges, `loopback` (the default), or `none` (the token only). */
function parseMetricsAllow(value: string | undefined, problems: string[]): string[] {
  const entries = (value ?? 'loopback').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 1 && entries[0] === 'none') return [];
  const ranges: string[] = [];
  const bad: string[] = [];
  for (const entry of entries) {
    if (entry === 'loopback') ranges.push(...LOOPBACK_RANGES);
    // Four-part decimal only: ipaddr.js also reads "10" or "0x7f.1" as IPv4 addresses, which no one means here.
    else if (ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) || ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValidCIDR(entry) || ipaddr.IPv6.isValid(entry)) ranges.push(entry);
    else bad.push(entry);
  }
  if (bad.length > 0) problems.push(`METRICS_ALLOW: must be comma-separated addresses or CIDR ranges (e.g. loopback,10.0.0.0/8,192.0.2.7), or none; got "${bad.join(', ')}"`);
  return ranges;
}

function parseHostList(value: string | undefined, problems: string[]): string[] {
  if (value === undefined) return [];
  const hosts = value
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter((host) => host !== '');
  const bad = hosts.filter((host) => !/^(\*\.)?[a-z0-9.-]+$/.test(host) && !/^\[[0-9a-f:.]+\]$/.test(host));
  if (bad.length > 0) problems.push(`UPLOAD_URL_ALLOWED_HOSTS: must be comma-separated hostnames (e.g. cdn.example.com,*.images.example.com), got "${bad.join(', ')}"`);
  return hosts;
}

/** `value` as an origin and path without trailing slashes; `example`, when given, is named in the problem. */
function httpOrigin(name: string, value: string, problems: string[], example?: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
    return url.origin + url.pathname.replace(/\/+$/, '');
  } catch {
    problems.push(`${name}: must be an absolute http(s) URL${example ? ` such as ${example}` : ''}, got "${value}"`);
    return value;
  }
}

function storageSettings(values: z.output<typeof environmentSchema>, problems: string[]): StorageSettings {
  if (values.STORAGE === 'local') return { kind: 'local' };
  if (!values.S3_BUCKET) problems.push('S3_BUCKET: required when STORAGE=s3');
  if (!values.S3_PUBLIC_URL) problems.push('S3_PUBLIC_URL: required when STORAGE=s3 (the public address the bucket\'s files are served from)');
  if ((values.S3_ACCESS_KEY_ID === undefined) !== (values.S3_SECRET_ACCESS_KEY === undefined)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: set both, or neither to use the default AWS credential chain');
  }
  return {
    kind: 's3',
    endpoint: values.S3_ENDPOINT === undefined ? undefined : httpOrigin('S3_ENDPOINT', values.S3_ENDPOINT, problems),
    region: values.S3_REGION ?? 'us-east-1',
    bucket: values.S3_BUCKET ?? '',
    accessKeyId: values.S3_ACCESS_KEY_ID,
    secretAccessKey: values.S3_SECRET_ACCESS_KEY,
    publicUrl: values.S3_PUBLIC_URL === undefined ? '' : httpOrigin('S3_PUBLIC_URL', values.S3_PUBLIC_URL, problems),
    forcePathStyle: values.S3_FORCE_PATH_STYLE,
  };
}

function generationSettings(values: z.output<typeof environmentSchema>, problems: string[]): GenerationSettings {
  const openAiBase = values.OPENAI_BASE_URL === undefined ? 'https://api.openai.com/v1' : httpOrigin('OPENAI_BASE_URL', values.OPENAI_BASE_URL, problems);
  const falProxy = values.FAL_PROXY_URL === undefined ? undefined : httpOrigin('FAL_PROXY_URL', values.FAL_PROXY_URL, problems);
  return {
    openai: values.OPENAI_API_KEY ? { apiKey: values.OPENAI_API_KEY, baseUrl: openAiBase } : undefined,
    fal: values.FAL_KEY ? { apiKey: values.FAL_KEY, proxyUrl: falProxy } : undefined,
    imageService: values.IMAGE_GENERATOR ?? (values.OPENAI_API_KEY || !values.FAL_KEY ? 'openai' : 'fal'),
    models: {
      openaiImage: values.OPENAI_IMAGE_MODEL ?? 'gpt-image-2',
      openaiImageQuality: values.OPENAI_IMAGE_QUALITY,
      openaiChat: values.OPENAI_CHAT_MODEL ?? 'gpt-5.4-mini',
      openaiSpeech: values.OPENAI_TTS_MODEL ?? 'gpt-4o-mini-tts',
      falImage: values.FAL_IMAGE_MODEL ?? 'fal-ai/flux/dev',
      veo3: values.FAL_VEO3_MODEL ?? 'fal-ai/veo3',
      veo3Image: values.FAL_VEO3_IMAGE_MODEL ?? 'fal-ai/veo3/image-to-video',
      veo3Reference: values.FAL_VEO3_REFERENCE_MODEL ?? 'fal-ai/veo3.1/reference-to-video',
    },
    waitSeconds: values.GENERATION_TIMEOUT_SECONDS,
    modelTimeoutMs: values.GENERATION_MODEL_TIMEOUT_SECONDS * 1000,
    checkSeconds: values.GENERATION_CHECK_SECONDS,
    limitPerHour: values.GENERATION_LIMIT_PER_HOUR,
  };
}

function shortLinkSettings(values: z.output<typeof environmentSchema>, problems: string[]): ShortLinkSettings {
  const kind = values.LINK_SHORTENER ?? (values.DUB_API_KEY ? 'dub' : 'herald');
  if (kind !== 'dub') return { kind };
  if (!values.DUB_API_KEY) problems.push('DUB_API_KEY: required when LINK_SHORTENER=dub (a workspace API key from Dub\'s settings)');
  const apiUrl = values.DUB_API_URL === undefined ? 'https://api.dub.co' : httpOrigin('DUB_API_URL', values.DUB_API_URL, problems);
  return { kind, apiKey: values.DUB_API_KEY ?? '', apiUrl, domain: values.DUB_DOMAIN };
}

function readOAuthClients(environment: NodeJS.ProcessEnv): Record<string, OAuthClientCredentials> {
  const clients: Record<string, OAuthClientCredentials> = {};
  for (const [name, value] of Object.entries(environment)) {
    const match = /^([A-Z0-9_]+)_CLIENT_ID$/.exec(name);
    if (!match || !value) continue;
    const identifier = match[1].toLowerCase().replace(/_/g, '-');
    clients[identifier] = {
      clientId: value,
      clientSecret: environment[`${match[1]}_CLIENT_SECRET`] || undefined,
      botToken: environment[`${match[1]}_BOT_TOKEN`]?.trim() || undefined,
    };
  }
  return clients;
}

/** The service's settings: the environment, with `--role worker` or `--role=worker` on the command line over HERALD_ROLE. */
export function loadServiceConfig(commandLine: string[]): Config {
  for (let index = 0; index < commandLine.length; index++) {
    const match = /^--role(?:=(.*))?$/.exec(commandLine[index]);
    const role = match ? (match[1] ?? commandLine[index + 1]) : undefined;
    if (role !== undefined) return loadConfig({ ...process.env, HERALD_ROLE: role });
    if (match) break;
  }
  return loadConfig();
}

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(`${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(problems);
  }
  const values = parsed.data;
  const host = values.HOST ?? '127.0.0.1';
  const publicUrl = httpOrigin('PUBLIC_URL', values.PUBLIC_URL ?? `http://localhost:${values.PORT}`, problems, 'https://herald.example.com');
  let encryptionKey = values.ENCRYPTION_KEY;
  if (values.ENCRYPTION_KEY_FILE !== undefined) {
    if (encryptionKey !== undefined) problems.push('ENCRYPTION_KEY and ENCRYPTION_KEY_FILE: set one of them, not both');
    try {
      encryptionKey = fs.readFileSync(values.ENCRYPTION_KEY_FILE, 'utf8').trim();
    } catch (error) {
      problems.push(`ENCRYPTION_KEY_FILE: cannot read ${values.ENCRYPTION_KEY_FILE} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  if (encryptionKey !== undefined && !/^[0-9a-f]{64}$/i.test(encryptionKey)) {
    problems.push(`${values.ENCRYPTION_KEY_FILE ? 'ENCRYPTION_KEY_FILE: the file' : 'ENCRYPTION_KEY'} must hold 64 hex characters (32 bytes); generate one with \`openssl rand -hex 32\``);
  }
  const defaultPostingTimes = parsePostingTimes(values.DEFAULT_POSTING_TIMES, problems);
  const socialEndpoints = parseEndpoints(values.SOCIAL_ENDPOINTS, problems);
  // Until TikTok audits the deployment's app, every post it makes is private: the provider forces SELF_ONLY.
  socialEndpoints.tiktok = { ...socialEndpoints.tiktok, appAudited: String(values.TIKTOK_APP_AUDITED) };
  const allowedHosts = parseHostList(values.UPLOAD_URL_ALLOWED_HOSTS, problems);
  const storage = storageSettings(values, problems);
  const generation = generationSettings(values, problems);
  const shortLinks = shortLinkSettings(values, problems);
  const metricsAllow = parseMetricsAllow(values.METRICS_ALLOW, problems);
  if (values.METRICS_TOKEN !== undefined && values.METRICS_TOKEN.length < 16) problems.push('METRICS_TOKEN: must be at least 16 characters; generate one with `openssl rand -hex 32`');
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    role: values.HERALD_ROLE,
    port: values.PORT,
    host,
    publicUrl,
    databaseUrl: values.DATABASE_URL,
    dataDir: path.resolve(values.DATA_DIR ?? './data'),
    embeddedPostgresPort: values.EMBEDDED_POSTGRES_PORT,
    embeddedPostgresBinaries: values.EMBEDDED_POSTGRES_BINARIES === undefined ? undefined : path.resolve(values.EMBEDDED_POSTGRES_BINARIES),
    encryptionKey,
    apiRateLimitPerMinute: values.API_RATE_LIMIT_PER_MINUTE,
    apiRateLimitPerHour: values.API_RATE_LIMIT_PER_HOUR,
    createPostRateLimitPerHour: values.CREATE_POST_RATE_LIMIT_PER_HOUR,
    mcpSessionIdleMinutes: values.MCP_SESSION_IDLE_MINUTES,
    devicePollIntervalSeconds: values.DEVICE_POLL_INTERVAL_SECONDS,
    workerConcurrency: values.WORKER_CONCURRENCY,
    publishConcurrency: values.PUBLISH_CONCURRENCY,
    startTimeoutSeconds: values.START_TIMEOUT_SECONDS,
    sweepCron: values.SWEEP_CRON ?? '* * * * *',
    defaultPostingTimes,
    socialEndpoints,
    oauthClients: readOAuthClients(environment),
    platformTimeoutMs: values.PLATFORM_TIMEOUT_SECONDS * 1000,
    publishRecheckMaxSeconds: values.PUBLISH_RECHECK_MAX_SECONDS,
    logLevel: values.LOG_LEVEL,
    allowSignup: values.ALLOW_SIGNUP,
    uploads: {
      maxImageBytes: values.UPLOAD_MAX_IMAGE_BYTES,
      maxVideoBytes: values.UPLOAD_MAX_VIDEO_BYTES,
      allowedHosts,
      connectTimeoutMs: values.FETCH_CONNECT_TIMEOUT_SECONDS * 1000,
      timeoutMs: values.FETCH_TIMEOUT_SECONDS * 1000,
    },
    ssrfProtection: !values.DISABLE_SSRF_PROTECTION,
    storage,
    generation,
    webhooksAllowPrivate: values.WEBHOOKS_ALLOW_PRIVATE,
    shortLinks,
    channelExpiryWarningDays: values.CHANNEL_EXPIRY_WARNING_DAYS,
    duplicateWindowDays: values.DUPLICATE_WINDOW_DAYS,
    metrics: { token: values.METRICS_TOKEN, allow: metricsAllow },
    analyticsHistoryDays: values.ANALYTICS_HISTORY_DAYS,
    auditRetentionDays: values.AUDIT_RETENTION_DAYS,
    comments: { pollSeconds: values.COMMENT_POLL_SECONDS, pollDays: values.COMMENT_POLL_DAYS },
  };
}
