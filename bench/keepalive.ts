// A client for sequential latency measurements: node:http over one kept-alive connection, the
// whole body read (and gunzipped when it comes gzipped). fetch's own overhead and pauses would weigh on the measured tail.
import http from 'node:http';
import zlib from 'node:zlib';

export interface KeepAliveClient {
  get(headers?: Record<string, string>): Promise<{ status: number; body: string; bytes: number }>;
  close(): void;
}

export function keepAliveClient(url: string): KeepAliveClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (headers = {}) =>
      new Promise((resolve, reject) => {
        http
          .get(url, { agent, headers }, (res) => {
            // Chunks kept as they come and decoded once: a large body makes no string per chunk.
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              // A gzipped body is decoded here, as its client would: the time counts.
              const raw = Buffer.concat(chunks);
              const body = res.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw;
              resolve({ status: res.statusCode ?? 0, body: body.toString('utf8'), bytes: raw.length });
            });
          })
          .on('error', reject);
      }),
    close: () => agent.destroy(),
  };
}
