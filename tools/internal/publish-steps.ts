// The recorded steps of a publication (DESIGN.md §5): `context.step` of one item, each creating platform call recorded in the
// item's publish progress before and after it, so a later run never repeats a finished step and asks the provider to look an
// interrupted one up (publish.ts stops the item with "could not confirm" when it cannot).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Post, PublishProgress } from '../../src/db/entities.js';
import { PlatformHttpError } from '../../src/lib/platform-http.js';
import type { JsonValue, ProviderContext, StepAttempt } from '../../providers/types.js';
import type { Services } from '../types.js';
import { attachChain } from './publish-chain.js';

/** A step of a provider was interrupted mid-call and the provider cannot look its result up. */
export class OutcomeUnknown extends Error {
  constructor(readonly step: string) {
    super(`the "${step}" step was interrupted before the platform answered`);
  }
}

/** `context.step` of one item: results recorded in the item's publish progress before the next step. */
export function stepsOf(services: Services, em: EntityManager, chain: Post[], item: Post): ProviderContext['step'] {
  const save = async (change: (progress: PublishProgress) => void) => {
    attachChain(em, chain);
    const progress: PublishProgress = structuredClone(item.publishProgress ?? { steps: {} });
    change(progress);
    item.publishProgress = progress;
    await em.flush();
  };
  return async <T extends JsonValue>(name: string, call: () => Promise<T>, recover?: (attempt: StepAttempt) => Promise<T | undefined>): Promise<T> => {
    const recorded = item.publishProgress?.steps[name];
    if (recorded?.state === 'done') return recorded.result as T;
    if (recorded?.state === 'started') {
      if (!recover) throw new OutcomeUnknown(name);
      // Steps recorded before start times were kept: the item's attempt is the earliest the call can have begun.
      const startedAt = recorded.startedAt ? new Date(recorded.startedAt) : (item.attemptStartedAt ?? item.createdAt);
      const found = await recover({ startedAt });
      if (found !== undefined) {
        await save((progress) => (progress.steps[name] = { state: 'done', result: found }));
        return found;
      }
    }
    await save((progress) => (progress.steps[name] = { state: 'started', startedAt: services.now().toISOString() }));
    let result: T;
    try {
      result = await call();
    } catch (error) {
      // A definite answer (the platform refused, or was never reached) means nothing was created: forget the step.
      if (!(error instanceof PlatformHttpError && error.outcomeUnknown)) await save((progress) => delete progress.steps[name]);
      throw error;
    }
    await save((progress) => (progress.steps[name] = { state: 'done', result }));
    return result;
  };
}

