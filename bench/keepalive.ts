// A client for sequential latency measurements: node:http over one kept-alive connection, the
// whole body read. A request's promise resolves when its last byte has arrived; the body is decoded
// (gunzipped when it came gzipped, then read as UTF-8) only when asked for, so the client's own
// decoding and its garbage stay out of the measured time. fetch's own overhead and pauses would
// weigh on the measured tail.
import http from 'node:http';
import zlib from 'node:zlib';

export interface Response {
  status: number;
  /** Bytes on the wire. */
  bytes: number;
  /** The decoded body (decoded on first use). */
  readonly body: string;
}

export interface KeepAliveClient {
  get(headers?: Record<string, string>): Promise<Response>;
  close(): void;
}

export function keepAliveClient(url: string): KeepAliveClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (headers = {}) =>
      new Promise((resolve, reject) => {
        http
          .get(url, { agent, headers }, (res) => {
            // Chunks kept as they come and joined once: a large body makes no string per chunk.
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const raw = Buffer.concat(chunks);
              const gzipped = res.headers['content-encoding'] === 'gzip';
              let body: string | undefined;
              resolve({
                status: res.statusCode ?? 0,
                bytes: raw.length,
                get body() {
                  return (body ??= (gzipped ? zlib.gunzipSync(raw) : raw).toString('utf8'));
                },
              });
            });
          })
          .on('error', reject);
      }),
    close: () => agent.destroy(),
  };
}
