// Idempotent creates: a request carrying a key (REST `Idempotency-Key`, MCP `idempotencyKey`) is claimed in Postgres before it
// runs. The primary key (organization, key) decides between concurrent requests, never this process: the loser waits for the
// winner's answer (or answers request_in_progress). Within 24 hours the same key with the same request answers the stored
// answer and creates nothing; with another request (or on another operation) it answers idempotency_conflict.
// Stored answers are sealed with the encryption key: some carry a secret shown once (a webhook's signing secret, an OAuth
// client secret, an API key), and the replay store must not hold in clear what the rest of the database keeps hashed or
// sealed.
import { createHash, type Hash } from 'node:crypto';
import { pipeline, Transform, type Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { DomainError, invalidInput } from '../../src/errors.js';
import { sha256 } from '../../src/lib/crypto.js';
import type { Caller, Services, ToolDefinition } from '../types.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
/** How long a request waits for a concurrent one with the same key before answering request_in_progress. */
const WAIT_MS = 10_000;
const POLL_MS = 100;
/** A claim this old with no answer belongs to a request that died (a restart mid-request): its outcome is unknown. */
const ABANDONED_MS = 15 * 60 * 1000;

/** Exported for tools/list, which leaves it out: the field's description asks for a UUID, and a key outside it is refused with KEY_RULE. */
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const KEY_RULE = 'must be 1 to 255 printable ASCII characters without spaces (a UUID is a good key)';

export const idempotencyKeyField = z
  .string()
  .regex(KEY_PATTERN, KEY_RULE)
  .optional()
  .describe(
    'Your UUID; a retry with it gets the first answer',
  );

interface Claim {
  operation: string;
  request_hash: string | null;
  state: 'running' | 'done';
  /** The answer's JSON as it was sent, sealed (SecretBox); answers stored before sealing began are plain JSON. */
  output: string | null;
  /** Milliseconds since the epoch (timestamptz comes back from raw queries as text). */
  created_ms: string | number;
}

interface StreamField {
  stream: Readable;
  filename?: string;
}

const isStreamField = (value: unknown): value is StreamField =>
  typeof value === 'object' && value !== null && typeof (value as StreamField).stream?.pipe === 'function';

/** JSON with object keys sorted, so the same request always hashes the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/**
 * What identifies a request: its parsed input without the key. An upload's file is a stream, so it is identified by its
 * bytes' SHA-256 once read (with its file name): `streams` lists those fields, whose digests complete the hash.
 */
function fingerprintOf(input: Record<string, unknown>): { base: string; streams: string[] } {
  const streams = Object.keys(input).filter((key) => isStreamField(input[key]));
  const rest = Object.fromEntries(Object.entries(input).filter(([key]) => key !== 'idempotencyKey' && !streams.includes(key)));
  const names = streams.map((key) => `|${key}:${(input[key] as StreamField).filename ?? ''}`).join('');
  return { base: JSON.stringify(canonical(rest)) + names, streams };
}

const withDigests = (base: string, digests: [string, string][]) => sha256(base + digests.map(([key, digest]) => `|${key}=${digest}`).join(''));

/** Reads a replayed upload's file to its end, hashing it: the client sent it again and it must match the first one. */
async function drainedHash(input: Record<string, unknown>, base: string, streams: string[]): Promise<string> {
  const digests: [string, string][] = [];
  for (const key of streams) {
    const hash = createHash('sha256');
    for await (const chunk of (input[key] as StreamField).stream) hash.update(chunk as Buffer);
    digests.push([key, hash.digest('hex')]);
  }
  return withDigests(base, digests);
}

/** The input the handler reads: each file stream passes through a hash on its way. */
function hashingInput(input: Record<string, unknown>, streams: string[]): { input: Record<string, unknown>; digests: Map<string, Hash> } {
  const digests = new Map<string, Hash>();
  const wrapped = { ...input };
  for (const key of streams) {
    const field = input[key] as StreamField;
    const hash = createHash('sha256');
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        callback(null, chunk);
      },
    });
    // pipeline: an error or early end on either side ends both (a refused upload stops reading the client).
    pipeline(field.stream, hashing, () => undefined);
    digests.set(key, hash);
    wrapped[key] = { ...field, stream: hashing };
  }
  return { input: wrapped, digests };
}

function conflictError(key: string, why: string): DomainError {
  return new DomainError('idempotency_conflict', `The Idempotency-Key "${key}" was already used ${why}.`, {
    hint: 'Use a new key for a new request; send exactly the same request to get the first answer again.',
  });
}

async function claim(em: EntityManager, organizationId: string, key: string, operation: string, hash: string | null, now: Date): Promise<boolean> {
  const rows = await em.getConnection().execute<unknown[]>(
    `insert into idempotency_key (organization_id, key, operation, request_hash, state, created_at) values (?, ?, ?, ?, 'running', ?)
     on conflict (organization_id, key) do nothing returning key`,
    [organizationId, key, operation, hash, now],
  );
  return rows.length > 0;
}

async function readClaim(em: EntityManager, organizationId: string, key: string): Promise<Claim | undefined> {
  const rows = await em
    .getConnection()
    .execute<Claim[]>(
      'select operation, request_hash, state, output, (extract(epoch from created_at) * 1000)::bigint as created_ms from idempotency_key where organization_id = ? and key = ?',
      [organizationId, key],
    );
  return rows[0];
}

export interface IdempotencyOptions {
  idempotencyKey?: string;
  onReplay?: () => void;
}

/**
 * Runs `run` at most once per (organization, key) within 24 hours. Answers that failed are not kept (nothing was created):
 * the claim is released, so sending the request again runs it again.
 */
export async function withIdempotency<Output>(
  services: Services,
  caller: Caller,
  tool: ToolDefinition,
  parsed: unknown,
  options: IdempotencyOptions,
  run: (input: unknown) => Promise<Output>,
): Promise<Output> {
  const input = (parsed ?? {}) as Record<string, unknown>;
  const fromInput = typeof input.idempotencyKey === 'string' ? input.idempotencyKey : undefined;
  const key = options.idempotencyKey?.trim() || fromInput;
  if (!tool.acceptsIdempotencyKey || !key) return run(parsed);
  if (!KEY_PATTERN.test(key)) throw invalidInput(`The Idempotency-Key ${KEY_RULE}.`);
  if (fromInput && fromInput !== key) throw invalidInput('The Idempotency-Key header and the idempotencyKey field differ.', { hint: 'Send the key once.' });

  const { organizationId } = caller;
  const em = services.orm.em.fork();
  const { base, streams } = fingerprintOf(input);
  const knownHash = streams.length === 0 ? sha256(base) : null;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const now = services.now();
    if (await claim(em, organizationId, key, tool.name, knownHash, now)) break;
    const existing = await readClaim(em, organizationId, key);
    if (!existing) continue; // released by a failed request a moment ago: claim again
    const createdAt = new Date(Number(existing.created_ms));
    const cutoff = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
    if (createdAt.getTime() <= cutoff.getTime()) {
      // Expired (the daily prune has not run yet): replaced, as if it had been pruned.
      await em.getConnection().execute('delete from idempotency_key where organization_id = ? and key = ? and created_at <= ?', [organizationId, key, cutoff]);
      continue;
    }
    if (existing.operation !== tool.name) throw conflictError(key, `for another operation (${existing.operation})`);
    if (knownHash && existing.request_hash && existing.request_hash !== knownHash) throw conflictError(key, 'with a different request body');
    if (existing.state === 'done') {
      const hash = knownHash ?? (await drainedHash(input, base, streams));
      if (existing.request_hash !== hash) throw conflictError(key, 'with a different request body');
      options.onReplay?.();
      return storedAnswer(services, existing.output) as Output;
    }
    if (now.getTime() - createdAt.getTime() > ABANDONED_MS) {
      throw new DomainError('request_in_progress', `The request with Idempotency-Key "${key}" started at ${createdAt.toISOString()} never finished (the server may have restarted); whether it created something is unknown.`, {
        hint: 'Check what exists (e.g. GET /posts) before creating again, then use a new key.',
      });
    }
    if (Date.now() >= deadline) {
      throw new DomainError('request_in_progress', `A request with Idempotency-Key "${key}" is still running.`, {
        hint: 'Send the same request again in a few seconds to get its answer.',
        details: { retryAfterSeconds: 2 },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }

  const hashing = streams.length > 0 ? hashingInput(input, streams) : undefined;
  let output: Output;
  try {
    output = await run(hashing ? hashing.input : parsed);
  } catch (error) {
    await em.getConnection().execute("delete from idempotency_key where organization_id = ? and key = ? and state = 'running'", [organizationId, key]);
    throw error;
  }
  const hash = knownHash ?? withDigests(base, [...hashing!.digests].map(([field, digest]) => [field, digest.digest('hex')]));
  await em.getConnection().execute(
    "update idempotency_key set state = 'done', output = ?, request_hash = ?, completed_at = ? where organization_id = ? and key = ?",
    [services.secrets.seal(JSON.stringify(output ?? null)), hash, services.now(), organizationId, key],
  );
  return output;
}

/** A stored answer: sealed (`v1.…`, which no JSON text starts with), or plain JSON kept before answers were sealed. */
function storedAnswer(services: Services, output: string | null): unknown {
  if (output === null) return null;
  return JSON.parse(output.startsWith('v1.') ? services.secrets.open(output) : output);
}

/** The daily prune: keys older than the 24-hour window are forgotten. */
export async function pruneIdempotencyKeys(em: EntityManager, now: Date): Promise<number> {
  const rows = await em.getConnection().execute<unknown[]>('delete from idempotency_key where created_at < ? returning key', [new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)]);
  return rows.length;
}
