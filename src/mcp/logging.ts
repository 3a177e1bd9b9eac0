// MCP logging: the level a session set with logging/setLevel (an unknown level is refused with -32602, as the spec asks),
// and the log notifications a tool call sends at or above it. Messages say what was validated, queued or deleted; they
// never carry secrets (tokens, keys, credentials) — tools log ids, counts and sentences only.
import { LoggingLevelSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { invalidParams } from './errors.js';
import { z } from 'zod';
import type { ToolLogLevel } from '../../tools/types.js';
import type { SessionContext } from './sessions.js';
import type { Handle } from './surface.js';

const LEVELS = LoggingLevelSchema.options;
const severity = (level: LoggingLevel) => LEVELS.indexOf(level);

/** Until the client sets a level: informational messages and above. */
const DEFAULT_LOG_LEVEL: LoggingLevel = 'info';

// A looser request schema than the SDK's, so an unknown level reaches the handler and gets -32602 instead of -32603.
export const SetLevelRequest = z.object({ method: z.literal('logging/setLevel'), params: z.object({ level: z.unknown() }).loose() });

/**
 * The log level of one session, read from the session's state (sessions live in Postgres: each request builds its own
 * server) and written back by logging/setLevel, so the process holding the session's stream reads it too.
 */
export class SessionLog {
  level: LoggingLevel;

  constructor(private readonly session: SessionContext) {
    this.level = session.state.logLevel ?? DEFAULT_LOG_LEVEL;
  }

  register(handle: Handle): void {
    handle('logging/setLevel', async (params: { level: unknown }) => {
      const parsed = LoggingLevelSchema.safeParse(params.level);
      if (!parsed.success) {
        throw invalidParams(`Unknown log level ${JSON.stringify(params.level)}: use one of ${LEVELS.join(', ')}.`);
      }
      this.level = parsed.data;
      await this.session.updateState({ logLevel: parsed.data });
      return {};
    });
  }

  enabled(level: LoggingLevel): boolean {
    return severity(level) >= severity(this.level);
  }

  /**
   * A logger for one request: notifications go on the request's own stream (before its answer). `flush` waits for the ones
   * sent, so none arrives after the answer.
   */
  forRequest(send: (notification: { method: 'notifications/message'; params: { level: LoggingLevel; logger: string; data: unknown } }) => Promise<void>, logger: string) {
    const sent: Promise<void>[] = [];
    const log = (level: ToolLogLevel, message: string, data?: Record<string, unknown>) => {
      if (!this.enabled(level)) return;
      sent.push(send({ method: 'notifications/message', params: { level, logger, data: data ? { message, ...data } : message } }).catch(() => undefined));
    };
    return { log, flush: () => Promise.all(sent).then(() => undefined) };
  }
}
