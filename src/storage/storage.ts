// Blob storage for large data (LFS objects, attachments, artifacts, packages). One interface;
// the local-disk backend is below, and an S3-compatible backend implements the same four calls.
// Keys are Anvil's own (ids and digests), checked so none can step outside the store's root.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform, type Readable } from 'node:stream';
import { notFound } from '../errors.js';

export interface StoredBlob {
  size: number;
}

export interface BlobStore {
  /** Streams `data` into `key`; the blob appears whole or not at all. */
  put(key: string, data: Readable): Promise<StoredBlob>;
  /** A stream of the blob (optionally a byte range, end inclusive); 404 when absent. */
  open(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  stat(key: string): Promise<{ size: number } | undefined>;
  /** Removes the blob; absent blobs are not an error. */
  delete(key: string): Promise<void>;
}

/**
 * Passes bytes through while computing their SHA-256 (hex, from `digest()` once the stream has
 * ended), for callers that need the digest of what they store: one pass over the data.
 */
export function sha256Passing(): Transform & { digest(): string } {
  const hash = crypto.createHash('sha256');
  let hex: string | undefined;
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  }) as Transform & { digest(): string };
  t.digest = () => (hex ??= hash.digest('hex'));
  return t;
}

const KEY = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

export function checkKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((p) => p === '.' || p === '..')) {
    throw new Error(`invalid storage key: ${JSON.stringify(key)}`);
  }
}

export class LocalBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  private file(key: string): string {
    checkKey(key);
    return path.join(this.root, key);
  }

  async put(key: string, data: Readable): Promise<StoredBlob> {
    const target = this.file(key);
    const tmp = path.join(this.root, '.tmp', `${crypto.randomUUID()}`);
    fs.mkdirSync(path.dirname(tmp), { recursive: true });
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const out = fs.createWriteStream(tmp, { highWaterMark: 1 << 20 });
    try {
      await pipeline(data, out);
      fs.renameSync(tmp, target);
    } catch (err) {
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    return { size: out.bytesWritten };
  }

  async open(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const file = this.file(key);
    if (!fs.existsSync(file)) throw notFound(`blob does not exist [key: ${key}]`);
    return fs.createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      return { size: fs.statSync(this.file(key)).size };
    } catch {
      return undefined;
    }
  }

  async delete(key: string): Promise<void> {
    fs.rmSync(this.file(key), { force: true });
  }
}

/** The stores Anvil uses, one per kind of data. */
export interface Storage {
  lfs: BlobStore;
  attachments: BlobStore;
  artifacts: BlobStore;
  packages: BlobStore;
}

export function localStorage(appDataPath: string): Storage {
  return {
    lfs: new LocalBlobStore(path.join(appDataPath, 'lfs')),
    attachments: new LocalBlobStore(path.join(appDataPath, 'attachments')),
    artifacts: new LocalBlobStore(path.join(appDataPath, 'artifacts')),
    packages: new LocalBlobStore(path.join(appDataPath, 'packages')),
  };
}
