// The generator unit (DESIGN.md §4 "A generator"): identifier, output kind, zod params, helper functions, and
// `generate(params, context)`, which calls the models through the clients built once from config (generators/clients.ts).
import type { z } from 'zod';
import type { GenerationSettings } from '../src/config.js';
import type { LoadedMedia } from '../src/lib/media-fetch.js';
import type { ModelClients } from './clients.js';

export type Orientation = 'square' | 'vertical' | 'horizontal';

/** A library image a generator was given (already checked to belong to the organization). */
export interface LibraryImage {
  id: string;
  path: string;
  type: string;
}

export interface StepOptions {
  /** Counted in the generation's `usage` under this name when the call is made (a paid call). */
  usage?: string;
  /**
   * A free call (an upload, a look-up): an interrupted one is simply made again. Without it an interrupted step stops the
   * generation ("could not confirm"), so a paid call is never made twice.
   */
  free?: boolean;
}

export interface GenerationContext {
  clients: ModelClients;
  settings: GenerationSettings;
  output: Orientation;
  /** A directory of this generation that survives a restart (DATA_DIR/generations/<id>); removed when it ends. */
  workDir: string;
  /**
   * Runs `run` once per generation: its JSON result is recorded, and a later run of the job (after a restart or a
   * re-scheduled check) gets the recorded result instead of calling again. Names are unique within a generation.
   */
  step<T>(name: string, run: () => Promise<T>, options?: StepOptions): Promise<T>;
  /** Reports how far the work is (0 to 1) with a sentence for the user. */
  progress(fraction: number, message: string): Promise<void>;
  /** The bytes of an image of the organization's media library, and whether model services can fetch its public URL. */
  libraryImage(image: LibraryImage): Promise<LoadedMedia & { publicUrl?: string }>;
  /** Downloads a model's result URL through the SSRF guard. */
  download(url: string): Promise<LoadedMedia>;
}

export interface GeneratedFile {
  /** Absolute path of the finished file (inside `workDir`). */
  file: string;
  /** File name offered to the media library. */
  name: string;
  warnings?: string[];
}

export interface GeneratorFunction {
  description: string;
  /** What it answers, for generateVideoOptions' `tools`. */
  output: string;
  run(context: { clients: ModelClients; settings: GenerationSettings }, params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export interface Generator<Params extends Record<string, unknown> = Record<string, unknown>> {
  identifier: string;
  title: string;
  /** For an agent: what it makes, and what each parameter does. */
  description: string;
  kind: 'image' | 'video';
  outputs: readonly Orientation[];
  /** The customParams schema (its JSON Schema is what generateVideoOptions shows). */
  params: z.ZodType<Params>;
  /** The settings that are missing for this generator to work (empty when available). */
  missingSettings(settings: GenerationSettings): string[];
  /** The models a generation with these params calls (recorded with the generation). */
  models(settings: GenerationSettings, params: Params): string[];
  /** The prompt recorded with the generation. */
  promptOf(params: Params): string;
  /** What one generation costs, in model calls (README and generateVideoOptions). */
  costs: string;
  functions?: Record<string, GeneratorFunction>;
  generate(params: Params, context: GenerationContext): Promise<GeneratedFile>;
}

/** The model refused the request (a safety system): a 422-style invalid_input carrying the model's reason. */
export class ModelRefusal extends Error {
  constructor(
    readonly service: string,
    readonly reason: string,
  ) {
    super(`${service} refused to generate this: ${reason}`);
    this.name = 'ModelRefusal';
  }
}

/** A model error or time-out: provider_error with what to try. */
export class ModelFailure extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'ModelFailure';
  }
}

/** The model is still working: the job is run again after `seconds` instead of holding a worker. */
export class CheckLater extends Error {
  constructor(
    readonly seconds: number,
    message: string,
  ) {
    super(message);
    this.name = 'CheckLater';
  }
}

/**
 * Waits for every promise before failing, so nothing keeps running in the background (and recording steps) after the job
 * run ended; a real failure wins over "check later".
 */
export async function settleAll<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failures = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected').map((result) => result.reason as unknown);
  const failure = failures.find((reason) => !(reason instanceof CheckLater)) ?? failures[0];
  if (failure !== undefined) throw failure;
  return results.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** Runs `tasks` at most `limit` at a time (none is started after one failed), then settles them as `settleAll` does. */
export async function runLimited(limit: number, tasks: (() => Promise<void>)[]): Promise<void> {
  const settled: Promise<void>[] = [];
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (next < tasks.length && !failed) {
      const run = tasks[next++]();
      settled.push(run);
      await run.catch(() => {
        failed = true;
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  await settleAll(settled);
}
