// Sending repository files and archives over HTTP, for the API (/repos/{o}/{r}/raw, /media,
// /archive) and the web pages (/{o}/{r}/raw/..., /media/..., /archive/...) alike: streamed from
// git (or LFS), content types sniffed and never HTML, conditional on the object id.
import contentDisposition from 'content-disposition';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as trees from './trees.js';
import type { GitDataService, Target } from './data-service.js';

/** Content types of raw files as Forgejo serves them: sniffed, never HTML. */
export async function contentTypeOf(head: Buffer): Promise<{ type: string; csp?: string }> {
  const sniffed = await (await import('file-type')).fileTypeFromBuffer(head);
  if (sniffed?.mime === 'application/pdf') {
    return { type: sniffed.mime, csp: "default-src 'none'; style-src 'unsafe-inline'" };
  }
  if (sniffed && /^(image|audio|video)\//.test(sniffed.mime)) return { type: sniffed.mime };
  if (!sniffed && !head.includes(0)) {
    const text = head.toString('utf8');
    if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text)) {
      return { type: 'image/svg+xml', csp: "default-src 'none'; style-src 'unsafe-inline'; sandbox" };
    }
    return { type: 'text/plain; charset=utf-8' };
  }
  return { type: 'application/octet-stream' };
}

/** A file of the repository (its LFS object with `media`), streamed. */
export async function sendEntry(
  svc: GitDataService,
  t: Target,
  entry: trees.TreeEntry,
  name: string,
  media: boolean,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const lfs = media ? await svc.lfsObjectFor(t, entry) : undefined;
  const etag = lfs ? `"${lfs.oid}"` : `"${entry.oid}"`;
  const objectType = entry.mode === '120000' ? 'symlink' : 'file';
  reply
    .header('ETag', etag)
    .header('Cache-Control', 'private, max-age=300')
    .header('X-Gitea-Object-Type', objectType)
    .header('X-Forgejo-Object-Type', objectType);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  let body: Readable;
  if (lfs) {
    body = await svc.openLfs(lfs);
    reply.raw.once('close', () => body.destroy());
  } else {
    const blob = trees.streamBlob(t.dir, entry.oid);
    reply.raw.once('close', blob.kill);
    body = blob.stdout;
  }
  const { head, whole } = await trees.peek(body, 4100);
  const ct = await contentTypeOf(head);
  if (ct.csp) reply.header('Content-Security-Policy', ct.csp);
  return reply
    .header('Content-Type', ct.type)
    .header('Content-Length', String(lfs ? lfs.size : entry.size))
    .header('Content-Disposition', contentDisposition(name, { type: 'inline' }))
    .header('X-Content-Type-Options', 'nosniff')
    .send(whole);
}

/** `<ref>.zip` or `<ref>.tar.gz` of the repository, streamed from `git archive`. */
export async function sendArchive(
  svc: GitDataService,
  t: Target,
  archiveName: string,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const a = await svc.archive(t, archiveName);
  const etag = `"${a.oid}-${a.format}"`;
  reply.header('ETag', etag);
  if (request.headers['if-none-match'] === etag) return reply.code(304).send();
  const archive = trees.streamArchive(t.dir, a.oid, a.format, a.prefix);
  reply.raw.once('close', archive.kill);
  return reply
    .header('Content-Type', a.format === 'zip' ? 'application/zip' : 'application/gzip')
    .header('Content-Disposition', contentDisposition(a.filename))
    .send(archive.stdout);
}
