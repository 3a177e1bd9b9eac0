// Confirmation of destructive tools in an MCP session: an elicitation (form) when the client supports it, otherwise the
// two-call rule: the first call answers what would be deleted and is remembered for 10 minutes in this session; only a
// call with confirm: true for the same action after it deletes. The agent passing confirm: true never replaces asking the
// user when the client can ask.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ConfirmationAnswer, ConfirmationRequest } from '../../tools/types.js';
import type { SessionContext } from './sessions.js';

const PREVIEW_MS = 10 * 60_000;
/** A person answers: give them time. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

/** Previews answered in a session, kept in its state (each request builds its own server): action → when (ms). */
type Previews = Record<string, number>;

export class SessionConfirmations {
  constructor(
    private readonly server: Server,
    private readonly session: SessionContext,
  ) {}

  supportsElicitation(): boolean {
    return Boolean(this.server.getClientCapabilities()?.elicitation?.form);
  }

  /** The `confirm` of one tool call (`relatedRequestId`: the elicitation travels on that call's stream). */
  forRequest(relatedRequestId: string | number): (request: ConfirmationRequest) => Promise<ConfirmationAnswer> {
    return async (request) => {
      if (this.supportsElicitation()) {
        try {
          const result = await this.server.elicitInput(
            {
              mode: 'form',
              message: request.message,
              requestedSchema: {
                type: 'object',
                properties: { confirm: { type: 'boolean', title: 'Yes, delete', description: 'Tick to delete; nothing is deleted otherwise.', default: false } },
                required: ['confirm'],
              },
            },
            { relatedRequestId, timeout: ELICITATION_TIMEOUT_MS },
          );
          return result.action === 'accept' && result.content?.confirm === true ? 'confirmed' : 'declined';
        } catch {
          // No answer (time-out, the client went away): nothing is deleted.
          return 'declined';
        }
      }
      const now = Date.now();
      const previews: Previews = Object.fromEntries(
        Object.entries((this.session.state.confirmations as Previews | undefined) ?? {}).filter(([, at]) => now - at <= PREVIEW_MS),
      );
      const confirmed = request.confirmed && previews[request.action] !== undefined;
      if (confirmed) delete previews[request.action];
      else previews[request.action] = now;
      await this.session.updateState({ confirmations: previews });
      return confirmed ? 'confirmed' : 'needs_confirmation';
    };
  }
}
