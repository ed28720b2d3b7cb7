// Pages and JSON compressed for clients that accept it, brotli (quality 4: most of brotli's gain
// for a fraction of its CPU) or gzip, on the scopes that register it: the web pages and /api/v1.
// Beyond Forgejo, whose [server] ENABLE_GZIP is off by default and never covers the API. A
// 6,000-line file's page is 3.7 MB of HTML and 35 KB compressed. The compressing runs on libuv's
// thread pool, not on the event loop.
//
// A hook of our own over node:zlib rather than @fastify/compress: that plugin brings its own copy
// of readable-stream and mime-db (270 KB of source every server would parse at start-up and keep)
// for what is here an encoding choice and one zlib call.
//
// Left alone: answers under 1 KB, to HEAD, partial content, bodies already encoded, types other than
// HTML and JSON, and routes that send files as they are (`config: { compress: false }`: raw
// files, release assets), whose clients count on the file's own length. Transfers in formats of
// their own (git, LFS, packages, artifacts) are registered outside these scopes.
import { pipeline } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: never compress this route's answers. */
    compress?: false;
  }
}

const COMPRESSIBLE = /^(?:text\/html|application\/(?:[\w.-]+\+)?json)(?:;|$)/i;
const THRESHOLD = 1024;
const BROTLI = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } };
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

type Encoding = 'br' | 'gzip';

/**
 * The encoding to use for an `Accept-Encoding` header: brotli, else gzip, among those it accepts
 * (`q=0` refuses one; `*` accepts both); none when it names neither.
 */
export function chooseEncoding(header: string | undefined): Encoding | undefined {
  if (!header) return undefined;
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const wildcard = accepted.get('*');
  const ok = (e: Encoding) => (accepted.get(e) ?? wildcard ?? 0) > 0;
  return ok('br') ? 'br' : ok('gzip') ? 'gzip' : undefined;
}

function skip(request: FastifyRequest, reply: FastifyReply): boolean {
  const status = reply.statusCode;
  return (
    request.method === 'HEAD' ||
    status === 204 ||
    status === 206 ||
    status === 304 ||
    reply.routeOptions.config.compress === false ||
    reply.hasHeader('content-encoding') ||
    !COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? ''))
  );
}

function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (!vary) reply.header('vary', 'accept-encoding');
  else if (!/accept-encoding|\*/i.test(String(vary)))
    reply.header('vary', `${String(vary)}, accept-encoding`);
}

export function registerCompression(scope: FastifyInstance): void {
  // A callback hook: the common case (a client that names no encoding, an API script) costs one
  // header read and no promise.
  scope.addHook('onSend', (request, reply, payload, done) => {
    const header = request.headers['accept-encoding'];
    if (!header || payload === null || payload === undefined) return done(null, payload);
    const encoding = chooseEncoding(header);
    if (!encoding || skip(request, reply)) return done(null, payload);
    const isText = typeof payload === 'string' || Buffer.isBuffer(payload);
    const isStream = !isText && typeof (payload as NodeJS.ReadableStream).pipe === 'function';
    if (!isText && !isStream) return done(null, payload);
    if (isText && Buffer.byteLength(payload as string | Buffer) < THRESHOLD) return done(null, payload);
    varyOnEncoding(reply);
    reply.header('content-encoding', encoding);
    if (isStream) {
      reply.removeHeader('content-length');
      const out = encoding === 'br' ? zlib.createBrotliCompress(BROTLI) : zlib.createGzip();
      // A source that fails ends the compressed stream too (and so the response).
      return done(
        null,
        pipeline(payload as NodeJS.ReadableStream, out, () => {}),
      );
    }
    const input = payload as string | Buffer;
    (encoding === 'br' ? brotli(input, BROTLI) : gzip(input)).then(
      (body) => {
        reply.header('content-length', body.length);
        done(null, body);
      },
      (err: Error) => done(err),
    );
  });
}
