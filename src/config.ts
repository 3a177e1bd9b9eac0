// The only reader of process.env. Every setting is validated here and every bad variable is reported at once.
import { z } from 'zod';
import path from 'node:path';

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

const environmentSchema = z.object({
  PORT: intFromEnv(3000, 0),
  HOST: optionalString,
  PUBLIC_URL: optionalString,
  DATABASE_URL: optionalString,
  DATA_DIR: optionalString,
  EMBEDDED_POSTGRES_PORT: intFromEnv(54329, 1),
  ENCRYPTION_KEY: optionalString,
  API_RATE_LIMIT_PER_HOUR: intFromEnv(30, 1),
  CREATE_POST_RATE_LIMIT_PER_HOUR: intFromEnv(90, 1),
  MCP_SESSION_IDLE_MINUTES: intFromEnv(30, 1),
  WORKER_CONCURRENCY: intFromEnv(4, 1),
  SWEEP_CRON: optionalString,
  DEFAULT_POSTING_TIMES: optionalString,
  SOCIAL_ENDPOINTS: optionalString,
  PLATFORM_TIMEOUT_SECONDS: intFromEnv(30, 1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional().default('info'),
  ALLOW_SIGNUP: boolFromEnv(false),
});

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret?: string;
}

export interface Config {
  port: number;
  host: string;
  /** Absolute origin used in every link Herald hands out (no trailing slash). */
  publicUrl: string;
  databaseUrl?: string;
  dataDir: string;
  embeddedPostgresPort: number;
  encryptionKey?: string;
  apiRateLimitPerHour: number;
  createPostRateLimitPerHour: number;
  mcpSessionIdleMinutes: number;
  workerConcurrency: number;
  sweepCron: string;
  /** Minutes after midnight UTC. */
  defaultPostingTimes: number[];
  /** Per-provider endpoint overrides, e.g. {"bluesky":{"video":"http://127.0.0.1:4100"}}. */
  socialEndpoints: Record<string, Record<string, string>>;
  /** OAuth app credentials per platform identifier, from `<IDENTIFIER>_CLIENT_ID` / `<IDENTIFIER>_CLIENT_SECRET`. */
  oauthClients: Record<string, OAuthClientCredentials>;
  platformTimeoutMs: number;
  logLevel: LogLevel;
  allowSignup: boolean;
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
    problems.push(`DEFAULT_POSTING_TIMES: must be a comma-separated list of minutes after midnight UTC (0-1439), got "${value}"`);
    return [120, 400, 700];
  }
  return [...new Set(times)].sort((a, b) => a - b);
}

function parseEndpoints(value: string | undefined, problems: string[]): Record<string, Record<string, string>> {
  if (value === undefined) return {};
  try {
    const parsed = z.record(z.string(), z.record(z.string(), z.string().url())).parse(JSON.parse(value));
    return parsed;
  } catch {
    problems.push('SOCIAL_ENDPOINTS: must be JSON like {"bluesky":{"video":"https://video.example"}} with URL values');
    return {};
  }
}

function readOAuthClients(environment: NodeJS.ProcessEnv): Record<string, OAuthClientCredentials> {
  const clients: Record<string, OAuthClientCredentials> = {};
  for (const [name, value] of Object.entries(environment)) {
    const match = /^([A-Z0-9_]+)_CLIENT_ID$/.exec(name);
    if (!match || !value) continue;
    const identifier = match[1].toLowerCase().replace(/_/g, '-');
    clients[identifier] = { clientId: value, clientSecret: environment[`${match[1]}_CLIENT_SECRET`] || undefined };
  }
  return clients;
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
  let publicUrl = values.PUBLIC_URL ?? `http://localhost:${values.PORT}`;
  try {
    const url = new URL(publicUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('protocol');
    publicUrl = url.origin + url.pathname.replace(/\/+$/, '');
  } catch {
    problems.push(`PUBLIC_URL: must be an absolute http(s) URL such as https://herald.example.com, got "${publicUrl}"`);
  }
  if (values.ENCRYPTION_KEY !== undefined && !/^[0-9a-f]{64}$/i.test(values.ENCRYPTION_KEY)) {
    problems.push('ENCRYPTION_KEY: must be 64 hex characters (32 bytes); generate one with `openssl rand -hex 32`');
  }
  const defaultPostingTimes = parsePostingTimes(values.DEFAULT_POSTING_TIMES, problems);
  const socialEndpoints = parseEndpoints(values.SOCIAL_ENDPOINTS, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port: values.PORT,
    host,
    publicUrl,
    databaseUrl: values.DATABASE_URL,
    dataDir: path.resolve(values.DATA_DIR ?? './data'),
    embeddedPostgresPort: values.EMBEDDED_POSTGRES_PORT,
    encryptionKey: values.ENCRYPTION_KEY,
    apiRateLimitPerHour: values.API_RATE_LIMIT_PER_HOUR,
    createPostRateLimitPerHour: values.CREATE_POST_RATE_LIMIT_PER_HOUR,
    mcpSessionIdleMinutes: values.MCP_SESSION_IDLE_MINUTES,
    workerConcurrency: values.WORKER_CONCURRENCY,
    sweepCron: values.SWEEP_CRON ?? '* * * * *',
    defaultPostingTimes,
    socialEndpoints,
    oauthClients: readOAuthClients(environment),
    platformTimeoutMs: values.PLATFORM_TIMEOUT_SECONDS * 1000,
    logLevel: values.LOG_LEVEL,
    allowSignup: values.ALLOW_SIGNUP,
  };
}
