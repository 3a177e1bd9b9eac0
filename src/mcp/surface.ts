// What Herald answers over MCP, written once for both protocol revisions: each feature (tools, resources, prompts,
// completions, logging) registers its handlers through a `Handle`, which the 2025-11-25 session server (SDK 1.x, server.ts)
// and the 2026-07-28 per-request server (SDK 2.x, modern.ts) each implement on their own `Server`. So a tool, a resource
// or a prompt cannot behave differently in the two eras (test/mcp-eras.test.ts runs them through both).

/** The methods Herald's features answer (everything else is the SDK's: initialize, server/discover, ping, subscriptions/listen). */
export type HandledMethod =
  | 'tools/list'
  | 'tools/call'
  | 'resources/list'
  | 'resources/templates/list'
  | 'resources/read'
  | 'resources/subscribe'
  | 'resources/unsubscribe'
  | 'prompts/list'
  | 'prompts/get'
  | 'completion/complete'
  | 'logging/setLevel';

/** What a handler knows of the request beyond its params, the same in both eras. */
export interface HandlerExtra {
  era: 'legacy' | 'modern';
  requestId: string | number;
  /** A notification on this request's own stream (progress, log messages), before its answer. */
  notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void>;
  /** Aborted when the client cancels the request (notifications/cancelled) or goes away. */
  signal: AbortSignal;
  /** 2026-07-28: the answers a retried request carries to the input the server asked for (input_required). */
  inputResponses?: Record<string, unknown>;
  /** 2026-07-28: the requestState the server gave with its input_required result, echoed by the retried request. */
  requestState?: string;
  /** 2026-07-28: the request declared the tasks extension (src/mcp/tasks.ts): long work answers as a task. */
  tasks?: boolean;
}

// `params` is what the SDK parsed for the method (each SDK validates it against its own schema first); the handlers read
// the fields they use, as the spec names them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Handler = (params: any, extra: HandlerExtra) => Promise<object>;
export type Handle = (method: HandledMethod, handler: Handler) => void;

/** The server's identity, shown by clients beside its name (both eras: initialize's serverInfo, server/discover). */
export function serverInfo(publicUrl: string) {
  return {
    name: 'Herald',
    title: 'Herald social publishing',
    version: '0.1.0',
    websiteUrl: publicUrl,
    // The console's icon (an SVG, served at /favicon.ico).
    icons: [{ src: `${publicUrl}/favicon.ico`, mimeType: 'image/svg+xml', sizes: ['any'] }],
  };
}
