// Confirmation of destructive tools in an MCP session: an elicitation (form) when the client supports it, otherwise the
// two-call rule: the first call answers what would be deleted and is remembered for 10 minutes in this session; only a
// call with confirm: true for the same action after it deletes. The agent passing confirm: true never replaces asking the
// user when the client can ask.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ConfirmationAnswer, ConfirmationRequest } from '../../tools/types.js';

const PREVIEW_MS = 10 * 60_000;
/** A person answers: give them time. */
const ELICITATION_TIMEOUT_MS = 10 * 60_000;

export class SessionConfirmations {
  private readonly previews = new Map<string, number>();

  constructor(private readonly server: Server) {}

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
      for (const [action, at] of this.previews) if (now - at > PREVIEW_MS) this.previews.delete(action);
      if (request.confirmed && this.previews.has(request.action)) {
        this.previews.delete(request.action);
        return 'confirmed';
      }
      this.previews.set(request.action, now);
      return 'needs_confirmation';
    };
  }
}
