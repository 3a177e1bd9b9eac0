// Asking for a generation and waiting for it. A request is recorded in Postgres and run by the `generate_media` job, so a
// restart never loses a paid generation; the same request while one runs (or within an hour of its success) joins it instead
// of paying again; new ones count against the organization's hourly generation limit. The caller waits up to
// GENERATION_TIMEOUT_SECONDS with progress reports, then gets the generation id to fetch the result later.
import { counted } from '../../src/lib/words.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { paged } from '../shapes.js';
import { GenerationSchema, MediaSchema, type Generation, type Media } from '../../src/db/entities.js';
import { DomainError, invalidInput, notFound, notSupported } from '../../src/errors.js';
import { newId, sha256 } from '../../src/lib/crypto.js';
import { consumeRateLimit } from '../../src/lib/rate-limit.js';
import { isVideoType } from '../../src/lib/media-probe.js';
import { unavailableReason } from '../../generators/index.js';
import type { Generator, LibraryImage, Orientation } from '../../generators/types.js';
import type { Caller, Services, ToolContext } from '../types.js';
import { describeIssues } from '../runner.js';
import { findLibraryMedia, toMediaRecord, type MediaRecord } from './media.js';
import { GENERATE_TASK, generationJobKey } from './generation-run.js';

/** A successful generation is answered again (not paid again) to the same request within this time. */
const REUSE_MS = 60 * 60 * 1000;
const POLL_MS = 500;
/** Progress reports are sent at least this often while waiting, so clients that reset their time-out on progress keep waiting. */
const HEARTBEAT_MS = 10_000;

/** The generator, or not_supported naming the settings it needs. */
export function availableGenerator(generator: Generator, services: Services): Generator {
  const reason = unavailableReason(generator, services.config.generation);
  if (reason) {
    throw notSupported(reason, {
      hint: `Ask the operator to set ${generator.missingSettings(services.config.generation).join(' and ')} (see README, AI generation). Upload your own media with POST /upload meanwhile.`,
    });
  }
  return generator;
}

/** The customParams of a generator, parsed (invalid_input names the field and what to fix). */
export function parseGeneratorParams(generator: Generator, raw: Record<string, unknown>): Record<string, unknown> {
  const parsed = generator.params.safeParse(raw);
  if (!parsed.success) {
    throw invalidInput(`Invalid customParams for ${generator.identifier}: ${describeIssues(parsed.error)}.`, {
      hint: `See the customParams schema of "${generator.identifier}" in generateVideoOptions.`,
      details: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    });
  }
  return parsed.data;
}

/** Pictures named by media id or path, as this organization's library images (anything else is refused). */
export async function resolveLibraryImages(em: EntityManager, organizationId: string, refs: (string | { id?: string; path?: string })[]): Promise<LibraryImage[]> {
  const wanted = refs.map((ref) => (typeof ref === 'string' ? { id: ref, path: ref } : { id: ref.id ?? '', path: ref.path ?? '' }));
  const rows = await findLibraryMedia(em, organizationId, wanted);
  return wanted.map((ref, index) => {
    const row = rows.find((candidate) => candidate.id === ref.id) ?? rows.find((candidate) => candidate.path === ref.path);
    if (!row) {
      throw invalidInput(`Image ${index + 1} (${ref.id || ref.path}) is not in this organization's media library.`, {
        hint: 'Upload it first (POST /upload, /upload-from-url or generateImageTool) and pass the {id, path} it answers.',
      });
    }
    if (isVideoType(row.type)) throw invalidInput(`Image ${index + 1} (${row.name}) is a video, not a picture.`, { hint: 'Pass pictures (JPEG, PNG, WebP...).' });
    return { id: row.id, path: row.path, type: row.type };
  });
}

/** Stable JSON (sorted keys), so the same parameters always give the same request key. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export interface Requested {
  generation: Generation;
  /** True when an earlier identical request is answered instead of starting (and paying for) a new one. */
  joined: boolean;
}

/** Records a generation and queues its job, or joins the identical one that is running (or just succeeded). */
export async function requestGeneration(
  services: Services,
  caller: Caller,
  generator: Generator,
  output: Orientation,
  params: Record<string, unknown>,
): Promise<Requested> {
  const organizationId = caller.organizationId;
  const paramsKey = sha256(canonical([generator.identifier, output, params]));
  return services.orm.em.fork().transactional(async (em) => {
    // Two identical requests at once: the second waits here, then finds the first one's row.
    await em.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [`generation:${organizationId}:${paramsKey}`], 'all', em.getTransactionContext());
    const now = services.now();
    const earlier = await em.findOne(
      GenerationSchema,
      { organizationId, paramsKey, $or: [{ state: { $in: ['queued', 'running'] } }, { state: 'succeeded', finishedAt: { $gte: new Date(now.getTime() - REUSE_MS) } }] },
      { orderBy: { createdAt: 'desc' } },
    );
    if (earlier && (earlier.state !== 'succeeded' || (await em.count(MediaSchema, { id: earlier.mediaId!, deletedAt: null })) > 0)) {
      return { generation: earlier, joined: true };
    }
    const limit = await consumeRateLimit(services.orm.em.fork(), organizationId, 'generation', services.config.generation.limitPerHour, now);
    if (!limit.allowed) {
      throw new DomainError('rate_limited', `Generation limit reached: ${limit.limit} new generations per hour for this organization.`, {
        hint: `Wait ${counted(limit.resetSeconds, 'second')}. Repeating a request that is still running does not count: it joins it.`,
        details: { limit: limit.limit, remaining: 0, resetSeconds: limit.resetSeconds },
      });
    }
    const settings = services.config.generation;
    const generation = em.create(GenerationSchema, {
      id: newId(),
      organizationId,
      requestedBy: `${caller.credentialKind}:${caller.credentialId}`,
      generator: generator.identifier,
      kind: generator.kind,
      output,
      params,
      paramsKey,
      prompt: generator.promptOf(params),
      models: generator.models(settings, params),
      state: 'queued',
      progress: 0,
      progressMessage: 'Queued',
      steps: {},
      usage: {},
      mediaId: null,
      errorCode: null,
      errorStatus: null,
      error: null,
      errorHint: null,
      warnings: [],
      nextCheckAt: null,
      createdAt: now,
      startedAt: null,
      finishedAt: null,
    });
    await em.flush();
    // In the same transaction as the row: a generation never exists without its job.
    await em
      .getConnection()
      .execute(
        `select graphile_worker.add_job(?, json_build_object('generationId', ?::text), max_attempts := 5, job_key := ?, job_key_mode := 'replace')`,
        [GENERATE_TASK, generation.id, generationJobKey(generation.id)],
        'all',
        em.getTransactionContext(),
      );
    services.logger.info({ generationId: generation.id, organizationId, generator: generator.identifier, models: generation.models }, 'generation requested');
    return { generation, joined: false };
  });
}

export const isFinal = (generation: Generation) => generation.state === 'succeeded' || generation.state === 'failed';

/** What a generation its caller cancelled says when read later (its state `failed`). */
export const CANCELLED_MESSAGE = 'Cancelled by the client that asked for it, before it finished: no model call was made after that.';

/**
 * The caller cancelled its call (MCP notifications/cancelled, or it went away): the generation stops before its next paid
 * model call (the job checks before each one, generation-run.ts). A call already under way may still be billed; a
 * generation that already ended is left as it is. Answers whether it was stopped.
 */
export async function cancelGeneration(services: Services, id: string): Promise<boolean> {
  const stopped = await services.orm.em.fork().nativeUpdate(
    GenerationSchema,
    { id, state: { $in: ['queued', 'running'] } },
    { state: 'failed', errorCode: 'conflict', errorStatus: 409, error: CANCELLED_MESSAGE, errorHint: 'Start the generation again if you still want it.', finishedAt: services.now(), nextCheckAt: null },
  );
  return stopped > 0;
}

/**
 * Waits until the generation ends, GENERATION_TIMEOUT_SECONDS pass or `signal` aborts (the caller cancelled), reporting
 * progress (percent) meanwhile.
 */
export async function awaitGeneration(services: Services, id: string, progress?: ToolContext['progress'], signal?: AbortSignal): Promise<Generation> {
  const deadline = Date.now() + services.config.generation.waitSeconds * 1000;
  let sent = -1;
  let sentMessage: string | null = null;
  let sentAt = 0;
  for (;;) {
    const generation = await services.orm.em.fork().findOneOrFail(GenerationSchema, { id });
    if (isFinal(generation)) return generation;
    if (progress) {
      const percent = Math.round(generation.progress * 1000) / 10;
      if (percent > sent || generation.progressMessage !== sentMessage || Date.now() - sentAt >= HEARTBEAT_MS) {
        // MCP progress must grow with every notification: a heartbeat adds a tenth of a percent.
        const value = Math.min(99.9, Math.max(percent, sent + 0.1));
        await progress(value, 100, generation.progressMessage ?? undefined).catch(() => undefined);
        sent = value;
        sentMessage = generation.progressMessage ?? null;
        sentAt = Date.now();
      }
    }
    if (Date.now() >= deadline || signal?.aborted) return generation;
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), undefined, { signal }).catch(() => undefined);
  }
}

/** The failure of a generation as the error the tool answers. */
export function generationError(generation: Generation): DomainError {
  return new DomainError((generation.errorCode ?? 'internal') as DomainError['code'], generation.error ?? 'The generation failed.', {
    hint: generation.errorHint ?? undefined,
    status: generation.errorStatus ?? undefined,
    details: { generationId: generation.id },
  });
}

export async function generatedMedia(em: EntityManager, generation: Generation): Promise<MediaRecord> {
  const row = await em.findOne(MediaSchema, { id: generation.mediaId!, organizationId: generation.organizationId, deletedAt: null });
  if (!row) throw notFound(`The result of generation ${generation.id} was deleted from the media library.`, { hint: 'Generate it again.' });
  return toMediaRecord(row);
}

/** What to tell a caller whose wait ended before the generation did. */
export function stillRunningMessage(services: Services, generation: Generation, again: string): string {
  const where = `${services.config.publicUrl}/api/public/v1/generations/${generation.id}`;
  const state = generation.state === 'queued' ? 'queued' : `running, ${Math.round(generation.progress * 100)}% done${generation.progressMessage ? `: ${generation.progressMessage}` : ''}`;
  return (
    `Still generating after ${services.config.generation.waitSeconds} s (${state}). It keeps going and nothing is paid twice: ${again} to wait for it again ` +
    `(the same request joins this generation and answers its result once done), or read GET ${where}.`
  );
}

export type GenerationRecord = {
  id: string;
  type: string;
  kind: string;
  output: string;
  prompt: string;
  models: string[];
  state: string;
  progress: number;
  message?: string;
  requestedBy: string;
  usage: Record<string, number>;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  durationSeconds?: number;
  media?: MediaRecord;
  url?: string;
  error?: { code: string; message: string; hint?: string };
  warnings: string[];
};

export async function toGenerationRecord(em: EntityManager, generation: Generation): Promise<GenerationRecord> {
  return generationRecord(generation, generation.mediaId ? await em.findOne(MediaSchema, { id: generation.mediaId, deletedAt: null }) : null);
}

function generationRecord(generation: Generation, media: Media | null | undefined): GenerationRecord {
  const started = generation.startedAt ?? generation.createdAt;
  return {
    id: generation.id,
    type: generation.generator,
    kind: generation.kind,
    output: generation.output,
    prompt: generation.prompt,
    models: generation.models,
    state: generation.state,
    progress: Math.round(generation.progress * 100) / 100,
    ...(generation.progressMessage ? { message: generation.progressMessage } : {}),
    requestedBy: generation.requestedBy,
    usage: generation.usage,
    createdAt: generation.createdAt.toISOString(),
    ...(generation.startedAt ? { startedAt: generation.startedAt.toISOString() } : {}),
    ...(generation.finishedAt
      ? { finishedAt: generation.finishedAt.toISOString(), durationSeconds: Math.round((generation.finishedAt.getTime() - started.getTime()) / 100) / 10 }
      : {}),
    ...(media ? { media: toMediaRecord(media), url: media.path } : {}),
    ...(generation.state === 'failed'
      ? { error: { code: generation.errorCode ?? 'internal', message: generation.error ?? '', ...(generation.errorHint ? { hint: generation.errorHint } : {}) } }
      : {}),
    warnings: generation.warnings,
  };
}

export async function findGeneration(em: EntityManager, organizationId: string, id: string): Promise<Generation> {
  const generation = await em.findOne(GenerationSchema, { id, organizationId });
  if (!generation) throw notFound(`Generation ${id} not found in this organization.`, { hint: 'List them with GET /generations.' });
  return generation;
}

export async function listGenerations(em: EntityManager, organizationId: string, page: number, pageSize: number) {
  const [rows, total] = await em.findAndCount(GenerationSchema, { organizationId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: pageSize, offset: page * pageSize });
  // The pages' media in one query, not one per generation.
  const mediaIds = rows.flatMap((row) => (row.mediaId ? [row.mediaId] : []));
  const media = new Map((mediaIds.length > 0 ? await em.find(MediaSchema, { id: { $in: mediaIds }, deletedAt: null }) : []).map((row) => [row.id, row]));
  const generations = rows.map((row) => generationRecord(row, row.mediaId ? media.get(row.mediaId) : undefined));
  return { generations, ...paged(total, page, pageSize) };
}
