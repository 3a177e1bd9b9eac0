// The one shared runner: parse the input, scope to the caller's organization, run the handler, flush.
import type { z } from 'zod';
import { DomainError, invalidInput, refuseUnstorableText } from '../src/errors.js';
import type { Caller, Services, ToolContext, ToolDefinition } from './types.js';
import { withIdempotency, type IdempotencyOptions } from './internal/idempotency.js';
import { PostCreationLimit } from './internal/creation-limit.js';
import { hasScope, toolScope } from './internal/scopes.js';
import { asCaller } from './internal/visibility.js';

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

export function parseInput<Schema extends z.ZodType>(schema: Schema, raw: unknown, hint?: string): z.output<Schema> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw invalidInput(`Invalid input: ${describeIssues(parsed.error)}.`, {
      hint: hint ?? 'Check the field names and types against the tool or endpoint description.',
      details: parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    });
  }
  return parsed.data;
}

/** Each tool needs its scope (tools/internal/scopes.ts); console sessions carry every scope. */
export function canCall(caller: Caller, tool: ToolDefinition): boolean {
  return hasScope(caller, toolScope(tool));
}

function refuseScope(caller: Caller, tool: ToolDefinition): DomainError {
  const scope = toolScope(tool);
  return new DomainError('forbidden', `This credential lacks the ${scope} scope, which ${tool.name} needs (it has: ${caller.scopes.join(', ') || 'none'}).`, {
    hint:
      caller.credentialKind === 'oauth_token'
        ? 'Authorize the app again and approve the mcp:write scope; approving and managing the organization are not granted to apps.'
        : `Ask an owner for a key with the ${scope} scope (POST /keys, or npm run herald -- key:create --scopes ...).`,
    details: { requiredScope: scope },
  });
}

/** `idempotencyKey`: REST's Idempotency-Key header; `onReplay`: told when the answer is the stored first answer. */
export type RunOptions = Pick<ToolContext, 'progress' | 'via' | 'log' | 'confirm' | 'signal' | 'asTask'> & IdempotencyOptions;
type HandlerOptions = RunOptions & Pick<ToolContext, 'postCreationLimit'>;

export async function runTool<Tool extends ToolDefinition>(
  tool: Tool,
  raw: unknown,
  caller: Caller,
  services: Services,
  requestId: string,
  options: RunOptions = {},
): Promise<z.output<Tool['output']>> {
  if (!canCall(caller, tool)) throw refuseScope(caller, tool);
  refuseUnstorableText(raw);
  const parsed = parseInput(tool.input, raw, `See the ${tool.name} description for the expected input.`);
  // A replayed answer creates nothing, so it does not count against the post-creation limit either.
  return withIdempotency(services, caller, tool, parsed, options, async (input) => {
    const limit = tool.countsAsPostCreation ? new PostCreationLimit(services, caller) : undefined;
    if (limit && tool.countsAsPostCreation !== 'in-handler') await limit.consume();
    try {
      const output = await runHandler(tool, input, caller, services, requestId, { ...options, postCreationLimit: limit });
      if (limit && !limit.consumed) throw new Error(`${tool.name} created without counting the post-creation limit`);
      if (limit && tool.refused?.(output)) await limit.refund();
      return output;
    } catch (error) {
      // A refusal (bad input, an unknown channel, a duplicate) created nothing; a failure of ours may have, and still counts.
      if (error instanceof DomainError && error.code !== 'internal' && error.code !== 'unavailable') await limit?.refund();
      throw error;
    }
  });
}

async function runHandler<Tool extends ToolDefinition>(
  tool: Tool,
  input: unknown,
  caller: Caller,
  services: Services,
  requestId: string,
  options: HandlerOptions,
): Promise<z.output<Tool['output']>> {
  const em = services.orm.em.fork();
  let logger: ToolContext['logger'] | undefined;
  const context: ToolContext = {
    caller,
    em,
    services,
    requestId,
    // Made when a tool logs (most calls do not: a child logger per call cost 1% of a REST request).
    get logger() {
      return (logger ??= services.logger.child({ requestId, tool: tool.name, organizationId: caller.organizationId }));
    },
    progress: options.progress,
    via: options.via,
    signal: options.signal,
    asTask: options.asTask,
    log: options.log,
    confirm: options.confirm,
    postCreationLimit: options.postCreationLimit,
  };
  // Every lookup inside sees only the caller's channels (tools/internal/visibility.ts).
  const output = await asCaller(caller, () => tool.handler(input as z.output<Tool['input']>, context));
  // Nothing loaded, created or removed through the entity manager (the hot read paths use plain SQL): nothing to flush.
  const work = em.getUnitOfWork();
  if (work.getIdentityMap().keys().length > 0 || work.getPersistStack().size > 0 || work.getRemoveStack().size > 0) await em.flush();
  return output as z.output<Tool['output']>;
}
