// Forms with files (multipart/form-data) in the web interface. The body is read only after the
// session was checked (see plugin.tsx), part by part in the order the browser sent them: fields
// are kept as values, and a file is written to a temporary file only once a valid CSRF token has
// been seen (the `X-Csrf-Token` header, or the `_csrf` field, which every form sends first). A file
// part that comes before a valid token refuses the form with nothing written. The temporary files
// live under APP_DATA_PATH/tmp/uploads (Forgejo's [repository.upload] TEMP_PATH), are removed when
// the request ends whatever way it ends, and what a crash leaves there is removed by the sweep
// (storage/sweep.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { finished, pipeline } from 'node:stream/promises';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

/** A file posted with a form (multipart/form-data), waiting in a temporary file. */
export interface Upload {
  filename: string;
  path: string;
  size: number;
}

/** The folder of temporary uploads under the data directory. */
export const uploadsTempDir = (appDataPath: string): string => path.join(appDataPath, 'tmp', 'uploads');

/** Thrown when a form's parts come without a valid CSRF token before its first file. */
export class FormCsrfError extends Error {}

export interface ReadFormOptions {
  /** Where the temporary files go. */
  dir: string;
  /** Whether the request's headers already carried a valid token. */
  csrfChecked: boolean;
  /** Checks a token from the form. */
  checkCsrf(token: unknown): boolean;
  /** Records a temporary file as soon as it exists (so it is removed whatever happens next). */
  track(upload: Upload): void;
}

/**
 * Reads a multipart form into `{ field: value }` as a urlencoded form reads (a value, or a list of
 * them for a repeated name; files as `Upload`s). Throws `FormCsrfError` when a `_csrf` field is
 * wrong or a file arrives before a valid token, and the parser's errors (too large, malformed,
 * body cut off) as they come; temporary files already written are left to `track`'s owner.
 */
export async function readMultipartForm(
  request: FastifyRequest,
  opts: ReadFormOptions,
): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const add = (name: string, value: unknown) => {
    const had = body[name];
    body[name] =
      had === undefined ? value : Array.isArray(had) ? [...(had as unknown[]), value] : [had, value];
  };
  let verified = opts.csrfChecked;
  let dirReady = false;
  for await (const part of request.parts()) {
    if (part.type === 'field') {
      const value = (part as MultipartValue).value;
      if (part.fieldname === '_csrf') {
        if (!opts.checkCsrf(value)) throw new FormCsrfError();
        verified = true;
      }
      add(part.fieldname, typeof value === 'string' ? value : String(value));
      continue;
    }
    const file = part as MultipartFile;
    if (!verified) throw new FormCsrfError();
    if (file.filename === '') {
      // An empty file input: nothing to keep.
      await finished(file.file.resume());
      continue;
    }
    if (!dirReady) {
      await fs.promises.mkdir(opts.dir, { recursive: true });
      dirReady = true;
    }
    const upload: Upload = {
      filename: file.filename,
      path: path.join(opts.dir, `upload-${crypto.randomUUID()}`),
      size: 0,
    };
    opts.track(upload);
    const out = fs.createWriteStream(upload.path, { flags: 'wx' });
    try {
      await pipeline(file.file, out);
    } catch (err) {
      // Removal comes later: only once the file is closed (a stream still opening creates it).
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE')
        throw new AppError('payload_too_large', `${file.filename} is too large`);
      throw err;
    }
    upload.size = (await fs.promises.stat(upload.path)).size;
    add(file.fieldname, upload);
  }
  return body;
}

/** Removes temporary files (never throws: a file already gone is fine). */
export async function removeUploads(uploads: readonly Upload[]): Promise<void> {
  await Promise.all(uploads.map((u) => fs.promises.rm(u.path, { force: true }).catch(() => undefined)));
}
