// The one shared runner: parse the input, scope to the caller's organization, run the handler, flush.
import type { z } from 'zod';
import { DomainError, invalidInput, refuseUnstorableText } from '../src/errors.js';
import { consumeRateLimit, HOUR_MS, refundRateLimit } from '../src/lib/rate-limit.js';
import { counted } from '../src/lib/words.js';
import type { Caller, Services, ToolContext, ToolDefinition } from './types.js';
import { withIdempotency, type IdempotencyOptions } from './internal/idempotency.js';
import { rateLimitRefused } from '../src/lib/metrics.js';
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

/**
 * Counts a post creation against the organization's hourly limit, and answers how to give it back: a create that is
 * refused (bad input, an unknown channel, a duplicate) created nothing and must not use up the allowance.
 */
export async function enforcePostCreationLimit(services: Services, caller: Caller): Promise<() => Promise<void>> {
  const window = { name: 'create_post', limit: services.config.createPostRateLimitPerHour, windowMs: HOUR_MS, now: services.now() };
  const state = await consumeRateLimit(services.orm.em.fork(), caller.organizationId, window.name, window.limit, window.now, window.windowMs);
  if (!state.allowed) {
    rateLimitRefused('post_creation');
    throw new DomainError('rate_limited', `Post creation limit reached: ${state.limit} per hour for this organization.`, {
      hint: `Wait ${counted(state.resetSeconds, 'second')}, or put several posts in one request.`,
      details: { limit: state.limit, remaining: 0, resetSeconds: state.resetSeconds },
    });
  }
  const own = caller.postsPerHour != null && caller.credentialKind === 'api_key' ? { ...window, name: 'create_post_key', limit: caller.postsPerHour } : undefined;
  if (own) {
    const subject = `key:${caller.credentialId}`;
    const mine = await consumeRateLimit(services.orm.em.fork(), subject, own.name, own.limit, own.now, own.windowMs);
    if (!mine.allowed) {
      await refundRateLimit(services.orm.em.fork(), caller.organizationId, window);
      throw new DomainError('rate_limited', `Post creation limit reached: ${mine.limit} per hour for this API key.`, {
        hint: `Wait ${counted(mine.resetSeconds, 'second')}, or ask an owner to raise the key's postsPerHour.`,
        details: { limit: mine.limit, remaining: 0, resetSeconds: mine.resetSeconds },
      });
    }
    return async () => {
      await refundRateLimit(services.orm.em.fork(), caller.organizationId, window);
      await refundRateLimit(services.orm.em.fork(), subject, own);
    };
  }
  return () => refundRateLimit(services.orm.em.fork(), caller.organizationId, window);
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
export type RunOptions = Pick<ToolContext, 'progress' | 'via' | 'log' | 'confirm'> & IdempotencyOptions;

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
    const refund = tool.countsAsPostCreation ? await enforcePostCreationLimit(services, caller) : undefined;
    try {
      const output = await runHandler(tool, input, caller, services, requestId, options);
      if (refund && tool.refused?.(output)) await refund();
      return output;
    } catch (error) {
      // A refusal (bad input, an unknown channel, a duplicate) created nothing; a failure of ours may have, and still counts.
      if (error instanceof DomainError && error.code !== 'internal' && error.code !== 'unavailable') await refund?.();
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
  options: RunOptions,
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
    log: options.log,
    confirm: options.confirm,
  };
  // Every lookup inside sees only the caller's channels (tools/internal/visibility.ts).
  const output = await asCaller(caller, () => tool.handler(input as z.output<Tool['input']>, context));
  // Nothing loaded, created or removed through the entity manager (the hot read paths use plain SQL): nothing to flush.
  const work = em.getUnitOfWork();
  if (work.getIdentityMap().keys().length > 0 || work.getPersistStack().size > 0 || work.getRemoveStack().size > 0) await em.flush();
  return output as z.output<Tool['output']>;
}
