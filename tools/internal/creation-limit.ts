// The hourly post-creation limits of a caller: the organization's (CREATE_POST_RATE_LIMIT_PER_HOUR), and an API key's own
// `postsPerHour` when it has one. A create counts against both before it creates anything; a refused create (bad input, an
// unknown channel, a duplicate) is given back, so refusals cost nothing. Counted either in its own round trip (`consume`),
// or folded into a statement the create runs anyway (`fold`, then `settle` with what it answered: createPosts reads its
// channels in the same statement, so a create spends no round trip on the limit).
import { DomainError } from '../../src/errors.js';
import { rateLimitRefused } from '../../src/lib/metrics.js';
import { consumeParameters, consumeSql, consumeWindow, HOUR_MS, rateLimitState, refundRateLimit, type ConsumedRow, type Window } from '../../src/lib/rate-limit.js';
import { counted } from '../../src/lib/words.js';
import type { Caller, Services } from '../types.js';

interface Counted {
  subject: string;
  window: Window;
  /** Whose limit: the refusal's words. */
  of: 'organization' | 'key';
}

/** The SQL of a folded count: CTEs to put in a `with`, columns to select (each a JSON object or null), their parameters. */
export interface FoldedLimit {
  ctes: string;
  columns: string;
  parameters: unknown[];
}

export class PostCreationLimit {
  private readonly limits: Counted[];
  /** The windows that granted this create, to give back if it is refused. */
  private granted: Counted[] = [];
  /** Counted already (by `consume` or `settle`). */
  consumed = false;

  constructor(
    private readonly services: Services,
    caller: Caller,
  ) {
    const window = { name: 'create_post', limit: services.config.createPostRateLimitPerHour, windowMs: HOUR_MS, now: services.now() };
    this.limits = [{ subject: caller.organizationId, window, of: 'organization' }];
    if (caller.postsPerHour != null && caller.credentialKind === 'api_key') {
      this.limits.push({ subject: `key:${caller.credentialId}`, window: { ...window, name: 'create_post_key', limit: caller.postsPerHour }, of: 'key' });
    }
  }

  /** A call of an in-handler tool that creates nothing (a bulk import's dry run): nothing to count. */
  createsNothing(): void {
    this.consumed = true;
  }

  /** Counts the create in its own round trips; throws `rate_limited` when a limit refuses it. */
  async consume(): Promise<void> {
    const rows: (ConsumedRow | undefined)[] = [];
    for (const limit of this.limits) {
      const row = await consumeWindow(this.services.orm.em.fork(), limit.subject, limit.window);
      rows.push(row);
      if (row?.granted !== true) break;
    }
    await this.settleRows(rows);
  }

  /** The count as CTEs of another statement whose parameters so far end at $`after`; `settle` reads the selected columns. */
  fold(after: number): FoldedLimit {
    const parameters: unknown[] = [];
    const ctes: string[] = [];
    const columns: string[] = [];
    this.limits.forEach((limit, index) => {
      const at = after + parameters.length + 1;
      parameters.push(limit.subject, ...consumeParameters(limit.window));
      ctes.push(`creation_limit_${index} as (${consumeSql(`$${at}::text`, '', at + 1)})`);
      columns.push(`(select row_to_json(creation_limit_${index}) from creation_limit_${index}) as creation_limit_${index}`);
    });
    return { ctes: ctes.join(',\n'), columns: columns.join(', '), parameters };
  }

  /** What the folded CTEs answered (the row of the statement); throws `rate_limited` when a limit refused the create. */
  async settle(row: Record<string, unknown>): Promise<void> {
    await this.settleRows(this.limits.map((_, index) => row[`creation_limit_${index}`] as ConsumedRow | undefined));
  }

  /** Gives back what this create counted (it was refused and created nothing). */
  async refund(): Promise<void> {
    const granted = this.granted;
    this.granted = [];
    for (const limit of granted) await refundRateLimit(this.services.orm.em.fork(), limit.subject, limit.window);
  }

  private async settleRows(rows: (ConsumedRow | undefined)[]): Promise<void> {
    this.consumed = true;
    this.granted = this.limits.filter((_, index) => rows[index]?.granted === true);
    const refusedAt = this.limits.findIndex((_, index) => rows[index] !== undefined && rows[index]!.granted !== true);
    if (refusedAt < 0) return;
    const refused = this.limits[refusedAt];
    // A refused create counts against no limit: give back what the others granted.
    await this.refund();
    const state = rateLimitState(rows[refusedAt], refused.window);
    rateLimitRefused('post_creation');
    throw new DomainError('rate_limited', `Post creation limit reached: ${state.limit} per hour for this ${refused.of === 'key' ? 'API key' : 'organization'}.`, {
      hint:
        refused.of === 'key'
          ? `Wait ${counted(state.resetSeconds, 'second')}, or ask an owner to raise the key's postsPerHour.`
          : `Wait ${counted(state.resetSeconds, 'second')}, or put several posts in one request.`,
      details: { limit: state.limit, remaining: 0, resetSeconds: state.resetSeconds },
    });
  }
}
