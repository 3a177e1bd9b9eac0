// Running a generation inside the `generate_media` job. Every paid model call is a recorded step: marked started before the
// call and done (with its result) after, so a job run after a restart reuses what was already paid for, and a call that was
// interrupted mid-way is never made again (the generation stops with "could not confirm" instead). Waits on a model queue
// re-schedule the job. The result is stored through the media library like an upload, in one transaction with the
// generation's success, so nothing is ever half-stored.
import fs from 'node:fs';
import path from 'node:path';
import { GenerationSchema, type Generation, type GenerationSteps } from '../../src/db/entities.js';
import { DomainError } from '../../src/errors.js';
import { MediaFetchError } from '../../src/lib/media-fetch.js';
import { modelClients } from '../../generators/clients.js';
import { generatorOf } from '../../generators/index.js';
import { CheckLater, ModelFailure, ModelRefusal, type GenerationContext, type Orientation, type StepOptions } from '../../generators/types.js';
import type { Services } from '../types.js';
import { ingestMedia, loadLibraryMedia, publicReachabilityWarning } from './media.js';

export const GENERATE_TASK = 'generate_media';
export const generationJobKey = (generationId: string) => `generation:${generationId}`;

export type GenerationOutcome = { kind: 'finished'; state: 'succeeded' | 'failed' } | { kind: 'waiting'; runAt: Date } | { kind: 'skipped'; reason: string };

/** The generation was cancelled by its caller (tools/internal/generation.ts cancelGeneration): no paid call is made after. */
class Cancelled extends Error {}

/** A paid step found started (not done) after a crash: whether the model ran it is unknown, and it is not made again. */
class OutcomeUnknown extends Error {
  constructor(readonly step: string) {
    super(`the "${step}" call was interrupted before the model answered`);
  }
}

interface Failure {
  code: DomainError['code'];
  status?: number;
  message: string;
  hint?: string;
}

function failureOf(error: unknown): Failure | undefined {
  if (error instanceof ModelRefusal) {
    return {
      code: 'invalid_input',
      status: 422,
      message: error.message,
      hint: 'Rephrase the prompt (or use other pictures) and try again. Nothing was stored.',
    };
  }
  if (error instanceof ModelFailure) return { code: 'provider_error', message: error.message, hint: `${error.hint} Nothing was stored.` };
  if (error instanceof OutcomeUnknown) {
    return {
      code: 'provider_error',
      message: `Could not confirm whether the "${error.step}" model call finished: Herald stopped while it was running. It may have been billed, so it is not repeated.`,
      hint: 'Start the generation again if you still want it.',
    };
  }
  if (error instanceof DomainError) return { code: error.code, status: error.status, message: error.message, hint: error.hint };
  return undefined;
}

const sqlText = (value: unknown) => JSON.stringify(value);

export async function runGeneration(services: Services, generationId: string): Promise<GenerationOutcome> {
  const em = services.orm.em.fork();
  const generation = await em.findOne(GenerationSchema, { id: generationId });
  if (!generation) return { kind: 'skipped', reason: 'generation not found' };
  if (generation.state === 'succeeded' || generation.state === 'failed') return { kind: 'skipped', reason: `already ${generation.state}` };
  const now = services.now();
  if (generation.nextCheckAt && generation.nextCheckAt.getTime() > now.getTime() + 1000) return { kind: 'waiting', runAt: generation.nextCheckAt };
  const logger = services.logger.child({ generationId, generator: generation.generator });
  const workDir = path.join(services.config.dataDir, 'generations', generation.id);
  const connection = em.getConnection();
  const fail = async (failure: Failure): Promise<GenerationOutcome> => {
    await em.nativeUpdate(
      GenerationSchema,
      { id: generationId, state: { $in: ['queued', 'running'] } },
      { state: 'failed', errorCode: failure.code, errorStatus: failure.status ?? null, error: failure.message, errorHint: failure.hint ?? null, finishedAt: services.now(), nextCheckAt: null },
    );
    await fs.promises.rm(workDir, { recursive: true, force: true });
    logger.warn({ code: failure.code }, `generation failed: ${failure.message}`);
    return { kind: 'finished', state: 'failed' };
  };

  const generator = generatorOf(generation.generator);
  if (!generator) return fail({ code: 'internal', message: `Unknown generator "${generation.generator}".` });
  const missing = generator.missingSettings(services.config.generation);
  if (missing.length > 0) {
    return fail({ code: 'not_supported', message: `${generator.title} is no longer available on this Herald: ${missing.join(' and ')} is not set.`, hint: 'Ask the operator to set it, then try again.' });
  }
  // Only while still queued or running: a cancel may have come since it was read.
  const started = await em.nativeUpdate(
    GenerationSchema,
    { id: generationId, state: { $in: ['queued', 'running'] } },
    { state: 'running', nextCheckAt: null, ...(generation.state === 'queued' ? { startedAt: now } : {}) },
  );
  if (started === 0) return { kind: 'skipped', reason: 'cancelled' };
  await fs.promises.mkdir(workDir, { recursive: true });

  const steps: GenerationSteps = { ...generation.steps };
  const setStep = (name: string, value: GenerationSteps[string] | null) =>
    value === null
      ? connection.execute('update generation set steps = steps - ? where id = ?', [name, generationId])
      : connection.execute('update generation set steps = jsonb_set(steps, array[?], ?::jsonb, true) where id = ?', [name, sqlText(value), generationId]);
  const context: GenerationContext = {
    clients: modelClients(services.config),
    settings: services.config.generation,
    output: generation.output as Orientation,
    workDir,
    async step<T>(name: string, run: () => Promise<T>, options: StepOptions = {}): Promise<T> {
      const recorded = steps[name];
      if (recorded?.state === 'done') return recorded.result as T;
      if (recorded?.state === 'started' && !options.free) throw new OutcomeUnknown(name);
      if (!options.free) {
        // Cancelled meanwhile: nothing more is paid for.
        const [row] = await connection.execute<{ state: string }[]>('select state from generation where id = ?', [generationId]);
        if (row?.state !== 'running') throw new Cancelled();
        steps[name] = { state: 'started', at: services.now().toISOString() };
        await setStep(name, steps[name]);
      }
      if (options.usage) {
        await connection.execute(`update generation set usage = jsonb_set(usage, array[?], to_jsonb(coalesce((usage->>?)::int, 0) + 1), true) where id = ?`, [
          options.usage,
          options.usage,
          generationId,
        ]);
      }
      let result: T;
      try {
        result = await run();
      } catch (error) {
        // The model answered (a refusal, an error, "not yet"): the call is over, so the started mark goes.
        if (!options.free && (error instanceof CheckLater || error instanceof ModelRefusal || error instanceof ModelFailure)) {
          delete steps[name];
          await setStep(name, null);
        }
        throw error;
      }
      steps[name] = { state: 'done', at: services.now().toISOString(), result };
      await setStep(name, steps[name]);
      return result;
    },
    async progress(fraction, message) {
      await connection.execute('update generation set progress = greatest(progress, ?), progress_message = ? where id = ?', [fraction, message, generationId]);
    },
    async libraryImage(image) {
      let loaded;
      try {
        loaded = await loadLibraryMedia(services, generation.organizationId, image.id);
      } catch (error) {
        throw new DomainError('invalid_input', `A picture of this generation cannot be read: ${(error as Error).message}.`, { hint: 'Upload the picture again and start a new generation.' });
      }
      return { ...loaded, publicUrl: publicReachabilityWarning(image.path) === undefined ? image.path : undefined };
    },
    async download(url) {
      try {
        return await services.fetchMedia(url);
      } catch (error) {
        const reason = error instanceof MediaFetchError ? error.message : (error as Error).message;
        throw new ModelFailure(`The generated file could not be downloaded: ${reason}.`, 'Try again in a few minutes.');
      }
    },
  };

  try {
    const generated = await generator.generate(generation.params, context);
    await services.orm.em.fork().transactional(async (tx) => {
      const media = await ingestMedia(services, tx, generation.organizationId, { stream: fs.createReadStream(generated.file), filename: generated.name });
      const update: Partial<Generation> = {
        state: 'succeeded',
        mediaId: media.id,
        progress: 1,
        progressMessage: 'Done',
        warnings: [...(generated.warnings ?? []), ...media.warnings],
        finishedAt: services.now(),
      };
      // Cancelled while the last call ran: the result is not stored (the transaction rolls back).
      if ((await tx.nativeUpdate(GenerationSchema, { id: generationId, state: 'running' }, update)) === 0) throw new Cancelled();
    });
    await fs.promises.rm(workDir, { recursive: true, force: true });
    logger.info('generation succeeded');
    return { kind: 'finished', state: 'succeeded' };
  } catch (error) {
    if (error instanceof Cancelled) {
      await fs.promises.rm(workDir, { recursive: true, force: true });
      logger.info('generation cancelled by its caller: stopped before the next paid call');
      return { kind: 'finished', state: 'failed' };
    }
    if (error instanceof CheckLater) {
      const runAt = new Date(services.now().getTime() + error.seconds * 1000);
      await em.nativeUpdate(GenerationSchema, { id: generationId }, { nextCheckAt: runAt, progressMessage: error.message });
      return { kind: 'waiting', runAt };
    }
    const failure = failureOf(error);
    if (failure) return fail(failure);
    logger.error({ err: error }, 'generation failed unexpectedly');
    return fail({ code: 'internal', message: 'The generation failed inside Herald; the error was logged.', hint: `Try again; report generation ${generationId} if it persists.` });
  }
}
