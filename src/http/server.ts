// The one HTTP server Herald listens with (src/main.ts, and the test harness), so its socket behaviour is the same in both.
import http from 'node:http';

/**
 * How long an idle connection stays open: longer than proxies and HTTP clients keep one for reuse (Node's agent 5 s, nginx's
 * upstream keepalive and cloud load balancers 60 s). With Node's default of 5 s, Herald closed idle connections just as a
 * proxy sent the next request on them, and under load the proxy's request failed with ECONNRESET. The client closes first.
 */
export const KEEP_ALIVE_MS = 65_000;

export function createHttpServer(app: http.RequestListener): http.Server {
  const server = http.createServer(app);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // A client that half-closes its socket once the request is sent (a shell pipe, `nc -N`, some proxies) still waits for the
  // answer: with Node's default (false) the server ends its side on the client's FIN, and the answer, written later, is lost.
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true; // read by Node's lib/_http_server.js (socketOnEnd); not in @types/node
  // An event stream, though, has no end for the answer to wait for: a client that closes its side of one has gone away (an
  // MCP client that will resume with Last-Event-ID elsewhere), so the stream is closed as Node did before.
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const clientEnded = () => {
      if (String(response.getHeader('content-type') ?? '').startsWith('text/event-stream')) response.destroy();
    };
    request.socket.once('end', clientEnded);
    // A kept-alive socket serves many requests: each one's listener goes with its response.
    response.once('close', () => request.socket.off('end', clientEnded));
  });
  return server;
}
