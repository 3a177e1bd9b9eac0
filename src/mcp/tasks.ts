// The tasks extension of the 2026-07-28 revision (SEP-2663, `io.modelcontextprotocol/tasks`) for AI generations: a client
// that declares the extension in a request's client capabilities gets a generation call answered at once as a task (its
// id is the generation's), then reads it with tasks/get (the tool's own answer inlined once it is done) and stops it with
// tasks/cancel (no paid model call after that). Generations live in Postgres, so any process answers for any task. A
// client without the extension keeps the 50-second wait and "call again" (tools/generation.ts).
import { z } from 'zod';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import { GenerationSchema, type Generation } from '../db/entities.js';
import { asDomainError, toToolErrorText } from '../errors.js';
import type { Caller, Services } from '../../tools/types.js';
import { canCall } from '../../tools/runner.js';
import { toolByName } from '../../tools/index.js';
import { CANCELLED_MESSAGE, cancelGeneration, generationError } from '../../tools/internal/generation.js';
import { finishedOutput } from '../../tools/generation.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The tools whose work may answer as a task. */
export const TASK_TOOLS = new Set(['generateImageTool', 'generateVideoTool']);

/** A task stays readable this long (a generation's row is kept longer: the promise holds). */
const TTL_MS = 24 * 3_600_000;

/** Whether a request's envelope declares the tasks extension (`_meta[clientCapabilities].extensions`). */
export function declaresTasks(meta: Record<string, unknown> | undefined): boolean {
  const capabilities = meta?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return Boolean(capabilities?.extensions && typeof capabilities.extensions === 'object' && TASKS_EXTENSION in capabilities.extensions);
}

/** A generation's task status (`failed`, a protocol error, is never one: a generation's failure is the tool's error). */
type Status = 'working' | 'completed' | 'cancelled';

function statusOf(generation: Generation): Status {
  if (generation.state === 'queued' || generation.state === 'running') return 'working';
  if (generation.state === 'failed' && generation.error === CANCELLED_MESSAGE) return 'cancelled';
  // A generation that failed ran and reported an error: the tool's error, a completed task with isError (SEP-2663).
  return 'completed';
}

/** The Task fields of a generation (flat, as CreateTaskResult and tasks/get carry them). */
function taskFields(generation: Generation) {
  const last = generation.finishedAt ?? generation.startedAt ?? generation.createdAt;
  const status = statusOf(generation);
  return {
    taskId: generation.id,
    status,
    ...(generation.progressMessage && status === 'working' ? { statusMessage: generation.progressMessage } : {}),
    createdAt: generation.createdAt.toISOString(),
    lastUpdatedAt: last.toISOString(),
    ttlMs: TTL_MS,
    pollIntervalMs: generation.kind === 'image' ? 1000 : 5000,
  };
}

/** A tools/call answer of a generation still under way, as its task (`resultType: "task"`); undefined when it is done. */
export async function createdTask(services: Services, output: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
  if (typeof output.generationId !== 'string' || (output.state !== 'queued' && output.state !== 'running')) return undefined;
  const generation = await services.orm.em.fork().findOne(GenerationSchema, { id: output.generationId });
  return generation ? { resultType: 'task', ...taskFields(generation) } : undefined;
}

const taskParams = z.object({ taskId: z.string().max(100) }).loose();

/**
 * tasks/get and tasks/cancel on a 2026-07-28 request's server. `declared`: whether this request declared the extension
 * (else both answer -32021, as the extension requires). A task is the caller's organization's generation, and only a
 * credential that may call the generation tools sees it.
 */
export function registerTasks(server: Server, services: Services, caller: Caller, declared: boolean): void {
  const find = async (taskId: string) => {
    if (!declared) {
      throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, `${TASKS_EXTENSION} was not declared in this request's client capabilities.`, {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    const generation = await services.orm.em.fork().findOne(GenerationSchema, { id: taskId, organizationId: caller.organizationId });
    const tool = generation && toolByName.get(generation.kind === 'image' ? 'generateImageTool' : 'generateVideoTool');
    if (!generation || !tool || !canCall(caller, tool)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task "${taskId}".`);
    return generation;
  };
  server.setRequestHandler('tasks/get' as never, { params: taskParams } as never, (async ({ taskId }: { taskId: string }) => {
    const generation = await find(taskId);
    const task = taskFields(generation);
    if (task.status !== 'completed') return task;
    if (generation.state === 'failed') return { ...task, result: { isError: true, content: [{ type: 'text', text: toToolErrorText(generationError(generation)) }] } };
    try {
      const output = await finishedOutput(services.orm.em.fork(), generation);
      return { ...task, result: { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output } };
    } catch (error) {
      // The picture or video was deleted from the library since: the tool's answer would say so.
      return { ...task, result: { isError: true, content: [{ type: 'text', text: toToolErrorText(asDomainError(error)) }] } };
    }
  }) as never);
  server.setRequestHandler('tasks/cancel' as never, { params: taskParams } as never, (async ({ taskId }: { taskId: string }) => {
    const generation = await find(taskId);
    // A task that already ended answers the same empty acknowledgement (idempotent).
    if (statusOf(generation) === 'working') {
      const stopped = await cancelGeneration(services, generation.id);
      services.logger.info({ generationId: generation.id, stopped }, 'generation task cancelled');
    }
    return {};
  }) as never);
}
