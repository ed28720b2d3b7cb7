// The web interface's stylesheet and scripts: read once at start-up from src/web/assets, named by
// a hash of their content (so they are cached for good and never stale), served compressed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';

interface Asset {
  body: Buffer;
  gzip: Buffer;
  type: string;
  etag: string;
}

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The checkout's root: the nearest directory above this module with a package.json. */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the project root from ' + import.meta.url);
    dir = up;
  }
  return dir;
}

export class Assets {
  private readonly files = new Map<string, Asset>();
  /** Logical name (`style.css`) to its URL path (`/assets/style.css?v=hash`). */
  private readonly urls = new Map<string, string>();

  constructor(dir = path.join(projectRoot(), 'src', 'web', 'assets')) {
    for (const name of fs.readdirSync(dir)) {
      const type = TYPES[path.extname(name)];
      if (!type) continue;
      const body = fs.readFileSync(path.join(dir, name));
      const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 12);
      this.files.set(name, { body, gzip: zlib.gzipSync(body, { level: 9 }), type, etag: `"${hash}"` });
      this.urls.set(name, `/assets/${name}?v=${hash}`);
    }
  }

  url(name: string): string {
    const url = this.urls.get(name);
    if (!url) throw new Error(`no asset ${name}`);
    return url;
  }

  /** Bytes sent for every asset together, compressed (what a first page view costs at most). */
  compressedSize(): number {
    let n = 0;
    for (const a of this.files.values()) n += a.gzip.length;
    return n;
  }

  register(app: FastifyInstance): void {
    app.get<{ Params: { name: string } }>(
      '/assets/:name',
      { schema: { hide: true } },
      async (request, reply) => {
        const asset = this.files.get(request.params.name);
        if (!asset) throw notFound('no such asset');
        reply
          .header('Cache-Control', 'public, max-age=31536000, immutable')
          .header('ETag', asset.etag)
          .header('Vary', 'Accept-Encoding')
          .type(asset.type);
        if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
        if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
          return reply.header('Content-Encoding', 'gzip').send(asset.gzip);
        }
        return reply.send(asset.body);
      },
    );
  }
}
