// Confirmation of destructive tools over MCP. The person is asked when the client can ask them:
// - 2025-11-25: an elicitation (form) sent on the call's stream;
// - 2026-07-28: an input_required result (MRTR): the client asks, then calls again with the answer in inputResponses;
// otherwise the two-call rule: the first call answers what would be deleted and is remembered for 10 minutes (in the
// session, or for the credential when there is no session); only a call with confirm: true for the same action after it
// deletes. The agent passing confirm: true never replaces asking the user when the client can ask.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ConfirmationAnswer, ConfirmationRequest } from '../../tools/types.js';
import type { SessionContext } from './sessions.js';
import type { HandlerExtra } from './surface.js';

const PREVIEW_MS = 10 * 60_000;
/** A person answers: give them time. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

/** Previews answered, action → when (ms). */
export type Previews = Record<string, number>;

/** Where the previews of the two-call rule are kept: a session's state, or a credential's row (2026-07-28 has no sessions). */
export interface PreviewStore {
  read(): Promise<Previews>;
  write(previews: Previews): Promise<void>;
}

/** The form both eras show the person. */
export const CONFIRM_SCHEMA = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Yes, delete', description: 'Tick to delete; nothing is deleted otherwise.', default: false } },
  required: ['confirm'],
};

/** The two-call rule: a confirm: true counts only after a preview of the same action. */
export async function twoCallRule(store: PreviewStore, request: ConfirmationRequest, now = Date.now()): Promise<ConfirmationAnswer> {
  const previews: Previews = Object.fromEntries(Object.entries(await store.read()).filter(([, at]) => now - at <= PREVIEW_MS));
  const confirmed = request.confirmed && previews[request.action] !== undefined;
  if (confirmed) delete previews[request.action];
  else previews[request.action] = now;
  await store.write(previews);
  return confirmed ? 'confirmed' : 'needs_confirmation';
}

export class SessionConfirmations {
  private readonly previews: PreviewStore;

  constructor(
    private readonly server: Server,
    session: SessionContext,
  ) {
    this.previews = {
      read: async () => (session.state.confirmations as Previews | undefined) ?? {},
      write: async (previews) => void (await session.updateState({ confirmations: previews })),
    };
  }

  supportsElicitation(): boolean {
    return Boolean(this.server.getClientCapabilities()?.elicitation?.form);
  }

  /** The `confirm` of one tool call (`relatedRequestId`: the elicitation travels on that call's stream). */
  forRequest(relatedRequestId: string | number): (request: ConfirmationRequest) => Promise<ConfirmationAnswer> {
    return async (request) => {
      if (!this.supportsElicitation()) return twoCallRule(this.previews, request);
      try {
        const result = await this.server.elicitInput({ mode: 'form', message: request.message, requestedSchema: CONFIRM_SCHEMA }, { relatedRequestId, timeout: ELICITATION_TIMEOUT_MS });
        return result.action === 'accept' && result.content?.confirm === true ? 'confirmed' : 'declined';
      } catch {
        // No answer (time-out, the client went away): nothing is deleted.
        return 'declined';
      }
    };
  }
}

/**
 * 2026-07-28: a tool needs an answer from the person before it goes on (a confirmation). Thrown from the tool's `confirm`
 * before anything is done, and answered as an input_required result asking for `confirm`, with the action as its
 * requestState; the client asks, then calls again with the answer.
 */
export class InputRequired extends Error {
  constructor(readonly request: ConfirmationRequest) {
    super('input required');
  }
}

/**
 * The `confirm` of a 2026-07-28 call: the answer the retried call carries when the request states the same action, else a
 * new question (InputRequired); the two-call rule for a client that declared no elicitation.
 */
export function modernConfirmations(elicitation: boolean, previews: PreviewStore) {
  return (extra: HandlerExtra) =>
    async (request: ConfirmationRequest): Promise<ConfirmationAnswer> => {
      if (!elicitation) return twoCallRule(previews, request);
      const answer = extra.inputResponses?.confirm as { action?: unknown; content?: { confirm?: unknown } } | undefined;
      if (answer && typeof answer.action === 'string' && extra.requestState === request.action) {
        return answer.action === 'accept' && answer.content?.confirm === true ? 'confirmed' : 'declined';
      }
      throw new InputRequired(request);
    };
}
