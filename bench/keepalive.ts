// A client for sequential latency measurements: node:http over one kept-alive connection, the
// whole body read. fetch's own overhead and pauses would weigh on the measured tail.
import http from 'node:http';

export interface KeepAliveClient {
  get(headers?: Record<string, string>): Promise<{ status: number; body: string }>;
  close(): void;
}

export function keepAliveClient(url: string): KeepAliveClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    get: (headers = {}) =>
      new Promise((resolve, reject) => {
        http
          .get(url, { agent, headers }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      }),
    close: () => agent.destroy(),
  };
}
