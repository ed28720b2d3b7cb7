// Checks on uploaded bytes as they stream by (size limit, allowed types) and reading a multipart
// upload part by part. Nothing here buffers more than the first few KiB of a file.
import path from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { AppError, badRequest } from '../errors.js';

/** Bytes looked at to tell a file's type. */
const HEAD = 4100;

/** What a file's first bytes say it is, in the spirit of Go's http.DetectContentType. */
export async function sniffType(head: Buffer): Promise<string> {
  const found = head.length ? await (await import('file-type')).fileTypeFromBuffer(head) : undefined;
  if (found) return found.mime;
  // Bytes that never occur in text (Go's definition), else text.
  // eslint-disable-next-line no-control-regex -- exactly the control bytes that mark binary data
  return /[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]/.test(head.toString('latin1'))
    ? 'application/octet-stream'
    : 'text/plain';
}

/**
 * Whether a file named `name` of type `mime` may be uploaded under `allowed` (Forgejo's
 * ALLOWED_TYPES entries: `.ext`, `type/subtype`, `type/*`, or `*\/*`; an empty list allows all).
 */
export function typeAllowed(allowed: readonly string[], name: string, mime: string): boolean {
  const entries = allowed.map((e) => e.trim().toLowerCase()).filter(Boolean);
  if (entries.length === 0) return true;
  const ext = path.posix.extname(name).toLowerCase();
  return entries.some(
    (e) =>
      e === '*/*' ||
      (e.startsWith('.') && e === ext) ||
      e === mime ||
      (e.endsWith('/*') && mime.startsWith(e.slice(0, -1))),
  );
}

/**
 * Passes a file's bytes through while enforcing the size limit and, from its first bytes, the
 * type check. A violation does not stop the flow: the rest is read and dropped (so a client still
 * sending gets the answer), and the stream fails at its end, which makes the store keep nothing.
 */
export class UploadGate extends Transform {
  private size = 0;
  private head: Buffer[] = [];
  private headLength = 0;
  private checked: boolean;
  private failure: Error | undefined;

  constructor(
    private readonly maxSize: number,
    private readonly check?: (head: Buffer) => Promise<Error | undefined>,
  ) {
    super();
    this.checked = check === undefined;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.failure) return done();
    this.size += chunk.length;
    if (this.size > this.maxSize) {
      this.failure = new AppError(
        'payload_too_large',
        `the file is larger than the limit of ${formatSize(this.maxSize)}`,
      );
      this.head = [];
      return done();
    }
    if (this.checked) return done(null, chunk);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < HEAD) return done();
    this.runCheck(done);
  }

  override _flush(done: TransformCallback): void {
    if (this.failure) return done(this.failure);
    if (this.checked) return done();
    this.runCheck((err, data) => {
      if (err) return done(err);
      if (this.failure) return done(this.failure);
      if (data) this.push(data);
      done();
    });
  }

  private runCheck(done: TransformCallback): void {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.checked = true;
    this.check!(head).then(
      (failure) => {
        if (failure) {
          this.failure = failure;
          done();
        } else {
          done(null, head);
        }
      },
      (err: Error) => done(err),
    );
  }
}

export function formatSize(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** The file name of a path as a browser or client may send it (Go's multipart does the same). */
export function baseName(filename: string): string {
  const parts = filename.split(/[\\/]/);
  return parts[parts.length - 1] ?? '';
}

export interface MultipartUpload<T> {
  /** Text fields by name (the last value of a repeated field). */
  fields: Record<string, string>;
  /** What `onFile` made of the first file part named as asked, if there was one. */
  result: T | undefined;
  /** Set when the upload failed (then `result`, if any, must be thrown away). */
  error: unknown;
}

/**
 * Reads a multipart body part by part: the first file part named `field` goes to `onFile` as a
 * stream (with its file name), any other file is read and dropped, text fields are collected.
 * Every part is read to its end whatever happens, so the answer always reaches the client.
 */
export async function readMultipart<T>(
  request: FastifyRequest,
  field: string,
  /** `fields`: the text fields that came before the file. */
  onFile: (filename: string, stream: Readable, fields: Record<string, string>) => Promise<T>,
): Promise<MultipartUpload<T>> {
  const fields: Record<string, string> = {};
  let result: T | undefined;
  let error: unknown;
  let seen = false;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        fields[part.fieldname] = String(part.value as unknown);
        continue;
      }
      if (part.fieldname === field && !seen && error === undefined) {
        seen = true;
        try {
          result = await readingClientStream(part.file, () =>
            onFile(baseName(part.filename), part.file, fields),
          );
        } catch (err) {
          error = err;
        }
      }
      if (!part.file.readableEnded) {
        part.file.resume();
        await finished(part.file).catch(() => undefined);
      }
    }
  } catch (err) {
    // Busboy's own complaints (a malformed body) carry no status: they are the client's fault.
    const status = (err as { statusCode?: number }).statusCode;
    error ??=
      err instanceof AppError || (status !== undefined && status >= 400 && status < 500)
        ? err
        : badRequest(`malformed multipart body: ${(err as Error).message}`);
  }
  return { fields, result, error };
}

/**
 * Runs `fn`, which consumes `stream` (a request body or one of its parts): when that stream fails
 * (a malformed body, a client going away), the failure is the client's, a 400, not a server error.
 */
export async function readingClientStream<T>(stream: Readable, fn: () => Promise<T>): Promise<T> {
  // A part of a body that arrived whole may have failed before anyone listened.
  if (stream.errored || (stream.destroyed && !stream.readableEnded)) {
    throw badRequest(`the upload failed: ${stream.errored?.message ?? 'the body ended early'}`);
  }
  let failed: Error | undefined;
  const onError = (err: Error) => (failed ??= err);
  const onClose = () => {
    if (!stream.readableEnded) failed ??= new Error('the body ended early');
  };
  stream.on('error', onError);
  stream.on('close', onClose);
  try {
    return await fn();
  } catch (err) {
    if (failed && !(err instanceof AppError)) throw badRequest(`the upload failed: ${failed.message}`);
    throw err;
  } finally {
    stream.off('error', onError);
    stream.off('close', onClose);
  }
}
