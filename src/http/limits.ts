// Limits that keep slow or oversized requests from tying up the server: how large a parsed body may
// be, and how slowly a request body may arrive. Forgejo has no settings for these (its [server]
// PER_WRITE_TIMEOUT and PER_WRITE_PER_KB_TIMEOUT time responses, and it sets no API body limit), so
// they are constants, documented in docs/api.md.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Largest JSON (or form) body Fastify parses on an ordinary route. */
export const BODY_LIMIT = 1024 * 1024;
/** Largest parsed body of the routes that take whole files as JSON (`/repos/{o}/{r}/contents/...`). */
export const LARGE_BODY_LIMIT = 64 * 1024 * 1024;

/** Request headers must have arrived this long after the connection (or the previous request). */
export const HEADERS_TIMEOUT_MS = 60_000;

export interface BodyTimeouts {
  /** A request body during which no byte arrives for this long is cut off (every route, streamed ones included). */
  bodyIdleMs: number;
  /**
   * A body of declared length up to LARGE_BODY_LIMIT must have arrived within `bodyIdleMs` plus one
   * second per `bodyMinRate` bytes. Larger bodies (git pushes, LFS, attachment and artifact uploads)
   * and chunked ones only have the idle timeout.
   */
  bodyMinRate: number;
}

export const BODY_TIMEOUTS: BodyTimeouts = { bodyIdleMs: 60_000, bodyMinRate: 4 * 1024 };

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Cuts off request bodies that arrive too slowly with a 408 in Forgejo's error shape
 * (`{"message","url"}`), then closes the connection. Requests without a body cost one check.
 */
export function guardSlowBodies(
  server: Server,
  docsUrl: string,
  timeouts: BodyTimeouts = BODY_TIMEOUTS,
): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!hasBody(req)) return;
    const socket = req.socket;
    let total: NodeJS.Timeout | undefined;
    const cutOff = (why: string) => {
      cleanUp();
      if (req.complete || socket.destroyed) return;
      if (!res.headersSent && socket.writable) {
        const body = JSON.stringify({ message: `request body timed out: ${why}`, url: docsUrl });
        socket.write(
          'HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json; charset=utf-8\r\n' +
            `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      }
      socket.destroy();
    };
    const onIdle = () => cutOff(`no data for ${timeouts.bodyIdleMs / 1000} s`);
    const cleanUp = () => {
      clearTimeout(total);
      req.off('timeout', onIdle);
      // Only the body read is timed: an idle socket timeout set now would also end slow handlers.
      if (!res.writableFinished) socket.setTimeout(0);
    };
    // The socket's idle timeout; the server emits `timeout` on a request whose body is incomplete.
    socket.setTimeout(timeouts.bodyIdleMs);
    req.on('timeout', onIdle);
    req.once('end', cleanUp);
    res.once('close', cleanUp);
    const length = Number(req.headers['content-length']);
    if (length > 0 && length <= LARGE_BODY_LIMIT) {
      const ms = timeouts.bodyIdleMs + Math.ceil((length / timeouts.bodyMinRate) * 1000);
      total = setTimeout(() => cutOff(`not received within ${Math.round(ms / 1000)} s`), ms);
      total.unref();
    }
  });
}
