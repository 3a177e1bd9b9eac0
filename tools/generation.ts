// The four AI generation tools of the spec, and the REST routes that read generations back. Generation runs in the
// `generate_media` job (tools/internal/generation-run.ts); these handlers record the request and wait for it.
import { z } from 'zod';
import { DomainError, notFound } from '../src/errors.js';
import type { Generation } from '../src/db/entities.js';
import { generatorOf, imageGenerator, unavailableReason, videoGenerators } from '../generators/index.js';
import { modelClients } from '../generators/clients.js';
import type { Generator, Orientation } from '../generators/types.js';
import { defineTool, readOnly, type ToolContext } from './types.js';
import { idParam, mediaRecordSchema, pageInput, pageOutput } from './shapes.js';
import { idempotencyKeyField } from './internal/idempotency.js';
import {
  availableGenerator,
  awaitGeneration,
  CANCELLED_MESSAGE,
  cancelGeneration,
  findGeneration,
  generatedMedia,
  generationError,
  isFinal,
  listGenerations,
  parseGeneratorParams,
  requestGeneration,
  resolveLibraryImages,
  stillRunningMessage,
  toGenerationRecord,
} from './internal/generation.js';

const generating = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** Records (or joins) a generation and waits for it; answers the finished generation, or the running one past the time limit. */
async function generate(context: ToolContext, generator: Generator, output: Orientation, raw: Record<string, unknown>): Promise<Generation & { state: 'queued' | 'running' | 'succeeded' }> {
  const { services, caller, em } = context;
  const params = parseGeneratorParams(generator, raw);
  if (Array.isArray(params.images)) params.images = await resolveLibraryImages(em, caller.organizationId, params.images as (string | { id?: string; path?: string })[]);
  const { generation, joined } = await requestGeneration(services, caller, generator, output, params);
  if (joined) context.logger.info({ generationId: generation.id }, 'joined an identical generation');
  // Followed as a task (MCP tasks extension): answered once recorded, the client reads the outcome with tasks/get.
  const finished = context.asTask && !isFinal(generation) ? generation : await awaitGeneration(services, generation.id, context.progress, context.signal);
  if (context.signal?.aborted && !isFinal(finished)) {
    // Cancelled by the client: a generation this call started stops; one it joined goes on for the call that started it.
    const stopped = !joined && (await cancelGeneration(services, generation.id));
    context.logger.info({ generationId: generation.id, stopped }, 'generation call cancelled');
    throw new DomainError('conflict', stopped ? CANCELLED_MESSAGE : 'The call was cancelled; the identical generation it joined goes on.', { details: { generationId: generation.id } });
  }
  if (finished.state === 'failed') throw generationError(finished);
  return finished as Generation & { state: 'queued' | 'running' | 'succeeded' };
}

/**
 * What generateImageTool or generateVideoTool answers for a generation that succeeded: the tools' own answer, and the
 * result of its MCP task (src/mcp/tasks.ts).
 */
export async function finishedOutput(em: ToolContext['em'], generation: Generation) {
  const media = await generatedMedia(em, generation);
  const done = { generationId: generation.id, state: 'succeeded' as const };
  return generation.kind === 'image' ? { id: media.id, path: media.path, ...done } : { url: media.path, media, ...done };
}

const pendingFields = {
  generationId: z.string().describe('Id of the generation: GET /generations/{id} reads it'),
  state: z.enum(['queued', 'running', 'succeeded']),
  message: z.string().optional().describe('While still running: how to get the result later'),
};

export const generateImageTool = defineTool({
  name: 'generateImageTool',
  title: 'Generate an image',
  description:
    "Generates a square image from a prompt into the media library; answers {id, path} for attachments. If the wait ends first, call again with the same prompt (nothing is paid twice).",
  annotations: generating,
  mcp: true,
  acceptsIdempotencyKey: true,
  input: z.object({ prompt: z.string().min(1).describe('What the image should show: subject, style, composition'), idempotencyKey: idempotencyKeyField }),
  output: z.object({ id: z.string().optional(), path: z.string().optional(), ...pendingFields }),
  handler: async (input, context) => {
    const generator = availableGenerator(imageGenerator as unknown as Generator, context.services);
    const generation = await generate(context, generator, 'square', { prompt: input.prompt });
    if (generation.state !== 'succeeded') {
      return { generationId: generation.id, state: generation.state, message: stillRunningMessage(context.services, generation, 'call generateImageTool again with the same prompt') };
    }
    return finishedOutput(context.em, generation);
  },
});

function videoGeneratorOf(identifier: string): Generator {
  const generator = generatorOf(identifier);
  if (!generator || generator.kind !== 'video') {
    throw notFound(`Unknown video generator "${identifier}".`, { hint: `Video generators: ${videoGenerators.map((item) => item.identifier).join(', ')} (see generateVideoOptions).` });
  }
  return generator;
}

export const generateVideoOptions = defineTool({
  name: 'generateVideoOptions',
  title: 'List video generators',
  description:
    "The video generators: {video: [{type, output, tools, customParams (JSON Schema), available, requires}]}; call before generateVideoTool.",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  mcp: true,
  input: z.object({}),
  output: z.object({ video: z.array(z.record(z.string(), z.unknown())) }),
  handler: async (_input, { services }) => ({
    video: videoGenerators.map((generator) => {
      const reason = unavailableReason(generator, services.config.generation);
      const schema = z.toJSONSchema(generator.params, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      delete schema.$schema;
      return {
        type: generator.identifier,
        title: generator.title,
        description: generator.description,
        output: generator.outputs.join('|'),
        tools: Object.entries(generator.functions ?? {}).map(([functionName, item]) => ({ functionName, description: item.description, output: item.output })),
        customParams: schema,
        available: reason === undefined,
        requires: generator.missingSettings(services.config.generation),
        ...(reason ? { unavailableReason: reason } : {}),
        models: generator.models(services.config.generation, {}),
        costs: generator.costs,
      };
    }),
  }),
});

export const videoFunctionTool = defineTool({
  name: 'videoFunctionTool',
  title: 'Run a video generator helper',
  description:
    "Runs a video generator's helper (generateVideoOptions tools), e.g. image-text-slides loadVoices answers {voices: [{id, name}]} for generateVideoTool's voice.",
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  mcp: true,
  // REST callers may add `params` (the anchor's body); no helper function takes any yet.
  input: z.looseObject({ identifier: z.string().min(1), functionName: z.string().min(1) }),
  output: z.looseObject({}),
  rest: { method: 'POST', path: '/video/function' },
  handler: async (input, { services }) => {
    const generator = availableGenerator(videoGeneratorOf(input.identifier), services);
    const functions = generator.functions ?? {};
    const helper = Object.hasOwn(functions, input.functionName) ? functions[input.functionName] : undefined;
    if (!helper) {
      const names = Object.keys(functions);
      throw notFound(`Function "${input.functionName}" not found on the ${generator.identifier} video generator.`, {
        hint: names.length > 0 ? `Its functions: ${names.join(', ')}.` : `${generator.identifier} has no helper functions.`,
      });
    }
    const params = (input as { params?: unknown }).params;
    return helper.run({ clients: modelClients(services.config), settings: services.config.generation }, params && typeof params === 'object' ? (params as Record<string, unknown>) : {});
  },
});

const videoOutput = z.object({
  url: z.string().optional().describe('Public URL of the stored video: use it as an attachment'),
  ...pendingFields,
  media: mediaRecordSchema.optional().describe('The stored video in the media library'),
});

export const generateVideoTool = defineTool({
  name: 'generateVideoTool',
  title: 'Generate a video',
  description:
    "Generates a video (identifier: a generateVideoOptions type) into the media library; answers {url, media} for attachments. Takes minutes; if the wait ends first, call again with the same parameters (nothing is paid twice).",
  annotations: generating,
  mcp: true,
  acceptsIdempotencyKey: true,
  input: z.object({
    identifier: z.string().min(1),
    output: z.enum(['vertical', 'horizontal']),
    customParams: z.array(z.object({ key: z.string(), value: z.any() })),
    idempotencyKey: idempotencyKeyField,
  }),
  output: videoOutput,
  rest: {
    method: 'POST',
    path: '/generate-video',
    toInput: ({ body }) => {
      const request = (body ?? {}) as { type?: unknown; output?: unknown; customParams?: unknown };
      const params = request.customParams && typeof request.customParams === 'object' ? Object.entries(request.customParams) : [];
      return { identifier: request.type, output: request.output, customParams: params.map(([key, value]) => ({ key, value })) };
    },
    body: z.object({
      type: z.string().describe('A generator identifier from generateVideoOptions'),
      output: z.enum(['vertical', 'horizontal']),
      customParams: z.record(z.string(), z.unknown()).describe('The generator\'s parameters'),
    }),
    // The anchor answers the stored media item; a generation still running answers 202 with how to fetch it.
    toResponse: (output) => output.media ?? { generationId: output.generationId, state: output.state, message: output.message },
    response: z.union([mediaRecordSchema, z.object(pendingFields)]),
    status: (output) => (output.media ? 200 : 202),
  },
  handler: async (input, context) => {
    const generator = availableGenerator(videoGeneratorOf(input.identifier), context.services);
    const raw = Object.fromEntries(input.customParams.map((entry) => [entry.key, entry.value]));
    const generation = await generate(context, generator, input.output, raw);
    if (generation.state !== 'succeeded') {
      return {
        generationId: generation.id,
        state: generation.state,
        message: stillRunningMessage(context.services, generation, 'call generateVideoTool again with the same parameters'),
      };
    }
    return finishedOutput(context.em, generation);
  },
});

const generationRecordSchema = z.looseObject({ id: z.string(), type: z.string(), state: z.string() });

export const generationStatus = defineTool({
  name: 'generationStatus',
  title: 'Read a generation',
  description:
    'GET /generations/{id}: one AI generation of the organization — type, models, prompt, state (queued, running, succeeded, failed), progress, ' +
    'the paid calls made (usage), the stored media and its url once succeeded, or the error.',
  annotations: readOnly,
  mcp: false,
  input: z.object({ id: idParam }),
  output: generationRecordSchema,
  rest: { method: 'GET', path: '/generations/:id' },
  handler: async (input, { em, caller }) => toGenerationRecord(em, await findGeneration(em, caller.organizationId, input.id)),
});

export const generationList = defineTool({
  name: 'generationList',
  title: 'List generations',
  description: 'GET /generations: the organization\'s AI generations, newest first (who asked, models, prompt, duration, paid calls, result), paged from 0.',
  annotations: readOnly,
  mcp: false,
  input: z.object(pageInput),
  output: z.object({ generations: z.array(generationRecordSchema), ...pageOutput }),
  rest: { method: 'GET', path: '/generations', toInput: ({ query }) => ({ page: query.page, pageSize: query.pageSize }) },
  handler: (input, { em, caller }) => listGenerations(em, caller.organizationId, input.page, input.pageSize),
});
