// Blob storage for large data (LFS objects, attachments, artifacts, packages). One interface;
// the local-disk backend is below, and the S3-compatible backend (s3.ts) implements the same calls
// (`compose` as a multipart upload completed from existing objects). backends.ts picks one per
// kind from the configuration.
// Keys are Anvil's own (ids and digests), checked so none can step outside the store's root.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform, pipeline as pipe } from 'node:stream';
import { notFound } from '../errors.js';
import { faultPoint } from '../faults.js';
import { PacedStream, paceStreamed } from './pacer.js';

/** `source` counted for the collection pacing; an error or an early close of either ends both. */
function paced(source: Readable): Readable {
  const out = new PacedStream();
  pipe(source, out, () => undefined);
  return out;
}

/** How long a presigned download URL is valid (Forgejo: 5 minutes). */
export const PRESIGN_SECONDS = 300;

export interface StoredBlob {
  size: number;
}

/** A stored blob as a listing sees it (S3's ListObjectsV2 gives the same: key, size, last modified). */
export interface ListedBlob {
  key: string;
  size: number;
  mtime: Date;
}

/** A leftover of an interrupted write that `sweepTemporary` removed. */
export interface RemovedLeftover {
  /** Where it was, relative to the store (for the log). */
  name: string;
  size: number;
}

export interface BlobStore {
  /**
   * Streams `data` into `key`; the blob appears whole or not at all. `size`, when the caller knows
   * it exactly in advance (a declared Content-Length), lets a backend write in one request of that
   * length; a body of another size then fails the write. A caller that checks the content as it
   * streams (a digest) must hold the last bytes back until the check passes (see LFS's
   * `verifying`): such a request never completes with content that fails.
   */
  put(key: string, data: Readable, opts?: { size?: number }): Promise<StoredBlob>;
  /** A stream of the blob (optionally a byte range, end inclusive); 404 when absent. */
  open(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  stat(key: string): Promise<{ size: number } | undefined>;
  /**
   * Removes the blob; absent blobs are not an error. With `ifUnmodifiedSince`, a blob written at
   * or after that time is kept (a sweep deciding from an older listing never removes a blob
   * written since; S3: HeadObject's LastModified, then DeleteObject). Whether it removed one.
   */
  delete(key: string, opts?: { ifUnmodifiedSince?: Date }): Promise<boolean>;
  /** Renames blob `from` to `to` (replacing it); no byte is copied where the backend can. */
  move(from: string, to: string): Promise<void>;
  /**
   * Makes `key` the concatenation of the blobs `parts` (in order; one may repeat), which are
   * consumed: moved, not copied, where the backend can.
   */
  compose(key: string, parts: string[]): Promise<StoredBlob>;
  /**
   * Every blob whose key starts with `prefix` (a plain string prefix, as S3's), composed blobs
   * included, lazily: a store of millions of keys is never held in memory.
   */
  list(prefix?: string): AsyncIterable<ListedBlob>;
  /**
   * Removes the backend's own leftovers of writes that never finished (the local backend's
   * temporary files and directories; an S3 backend's incomplete multipart uploads) last modified
   * before `before`; what it removed (with `dryRun`, what it would remove, removing nothing).
   */
  sweepTemporary(before: Date, opts?: { dryRun?: boolean }): Promise<RemovedLeftover[]>;
  /** Throws when the store cannot be written (health checks). */
  ping(): Promise<void>;
  /**
   * Where a client may fetch the blob itself (an S3 backend with SERVE_DIRECT: a presigned URL
   * that expires), or undefined when Anvil streams it. Callers check access first.
   */
  directUrl?(key: string, opts?: { filename?: string; contentType?: string }): Promise<string | undefined>;
  /** Releases the backend's connections. */
  close?(): void;
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

/** Reads `data` to its end, keeping nothing; how many bytes it had. */
export async function drained(data: Readable): Promise<number> {
  let n = 0;
  for await (const chunk of data) n += (chunk as Buffer).length;
  return n;
}

/** Feeds every byte of `data` into `hash` (for blobs already stored). */
export async function hashInto(hash: crypto.Hash, data: Readable): Promise<void> {
  for await (const chunk of data) hash.update(chunk as Buffer);
}

const KEY = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Keys name files under the store's root; no segment may start with a dot (Anvil's own files do). */
export function checkKey(key: string): void {
  if (!KEY.test(key) || key.split('/').some((p) => p.startsWith('.'))) {
    throw new Error(`invalid storage key: ${JSON.stringify(key)}`);
  }
}

export class LocalBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  async ping(): Promise<void> {
    await fs.promises.mkdir(this.root, { recursive: true });
    await fs.promises.access(this.root, fs.constants.W_OK);
  }

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
      const written = pipeline(data, out);
      data.on('data', (chunk: Buffer) => paceStreamed(chunk.length));
      await written;
      faultPoint('storage:written');
      fs.renameSync(tmp, target);
    } catch (err) {
      // A stream destroyed before its file was opened still opens (and creates) it, then closes:
      // remove the file only once it is closed, or it appears again after the removal.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    return { size: out.bytesWritten };
  }

  /** Where the parts of a composed blob live (a directory of numbered part files). */
  private partsDir(key: string): string {
    checkKey(key);
    return path.join(this.root, '.parts', key);
  }

  /** The part files of a composed blob with their sizes, or undefined when `key` is not one. */
  private parts(key: string): Array<{ file: string; size: number }> | undefined {
    const dir = this.partsDir(key);
    let names: string[];
    try {
      names = fs.readdirSync(dir).sort();
    } catch {
      return undefined;
    }
    return names.map((n) => {
      const file = path.join(dir, n);
      return { file, size: fs.statSync(file).size };
    });
  }

  async open(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    const file = this.file(key);
    if (fs.existsSync(file)) {
      const stream = fs.createReadStream(file, {
        ...(range ? { start: range.start, end: range.end } : {}),
        highWaterMark: 256 << 10,
      });
      return paced(stream);
    }
    const parts = this.parts(key);
    if (!parts) throw notFound(`blob does not exist [key: ${key}]`);
    const start = range?.start ?? 0;
    const end = range?.end ?? Infinity;
    async function* chunks() {
      let offset = 0;
      for (const p of parts!) {
        const first = offset;
        offset += p.size;
        const last = offset - 1;
        if (p.size === 0 || last < start || first > end) continue;
        yield* fs.createReadStream(p.file, {
          start: Math.max(start - first, 0),
          end: Math.min(end, last) - first,
          highWaterMark: 1 << 20,
        });
      }
    }
    return paced(Readable.from(chunks(), { objectMode: false }));
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    try {
      return { size: fs.statSync(this.file(key)).size };
    } catch {
      const parts = this.parts(key);
      return parts && { size: parts.reduce((n, p) => n + p.size, 0) };
    }
  }

  async delete(key: string, opts: { ifUnmodifiedSince?: Date } = {}): Promise<boolean> {
    const found = [this.file(key), this.partsDir(key)].flatMap((p) => {
      try {
        return [{ p, st: fs.lstatSync(p) }];
      } catch {
        return [];
      }
    });
    const since = opts.ifUnmodifiedSince?.getTime();
    if (since !== undefined && found.some((f) => f.st.mtimeMs >= since)) return false;
    for (const f of found) fs.rmSync(f.p, { recursive: true, force: true });
    return found.length > 0;
  }

  async move(from: string, to: string): Promise<void> {
    const target = this.file(to);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.renameSync(this.file(from), target);
  }

  /**
   * The parts are renamed into a directory of their own (a part named twice is hard-linked),
   * which then takes its place under `.parts/` in one rename: no byte is copied.
   */
  async compose(key: string, parts: string[]): Promise<StoredBlob> {
    const target = this.partsDir(key);
    const tmp = path.join(this.root, '.tmp', `${crypto.randomUUID()}`);
    fs.mkdirSync(tmp, { recursive: true });
    try {
      const moved = new Map<string, string>();
      let size = 0;
      parts.forEach((part, i) => {
        const dest = path.join(tmp, String(i).padStart(8, '0'));
        const earlier = moved.get(part);
        if (earlier) fs.linkSync(earlier, dest);
        else {
          fs.renameSync(this.file(part), dest);
          moved.set(part, dest);
        }
        size += fs.statSync(dest).size;
      });
      await this.delete(key);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.renameSync(tmp, target);
      return { size };
    } catch (err) {
      fs.rmSync(tmp, { recursive: true, force: true });
      throw err;
    }
  }

  async *list(prefix = ''): AsyncIterable<ListedBlob> {
    // Only the directory the prefix names is walked; the rest of the prefix filters names.
    const slash = prefix.lastIndexOf('/');
    const dir = slash < 0 ? '' : prefix.slice(0, slash);
    if (dir) checkKey(dir);
    for await (const b of walkBlobs(this.root, dir)) if (b.key.startsWith(prefix)) yield b;
    // Composed blobs: under .parts/, each key is a directory of part files.
    for await (const b of walkParts(path.join(this.root, '.parts'), dir))
      if (b.key.startsWith(prefix)) yield b;
  }

  async sweepTemporary(before: Date, opts: { dryRun?: boolean } = {}): Promise<RemovedLeftover[]> {
    const tmp = path.join(this.root, '.tmp');
    const removed: RemovedLeftover[] = [];
    let names: string[];
    try {
      names = await fs.promises.readdir(tmp);
    } catch {
      return removed;
    }
    for (const name of names) {
      const full = path.join(tmp, name);
      // A write in progress keeps touching its file (or, composing, its directory's files).
      const seen = newestIn(full);
      if (!seen || seen.mtimeMs >= before.getTime()) continue;
      if (!opts.dryRun) fs.rmSync(full, { recursive: true, force: true });
      removed.push({ name: `.tmp/${name}`, size: seen.size });
    }
    return removed;
  }
}

/** The blob files under `root/dir` (Anvil's own dot-directories skipped), as keys relative to `root`. */
async function* walkBlobs(root: string, dir: string): AsyncGenerator<ListedBlob> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(path.join(root, dir), { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const key = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) yield* walkBlobs(root, key);
    else if (e.isFile()) {
      let st: fs.Stats;
      try {
        st = await fs.promises.stat(path.join(root, key));
      } catch {
        continue; // removed meanwhile
      }
      yield { key, size: st.size, mtime: st.mtime };
    }
  }
}

/**
 * Composed blobs under `parts/dir`: a directory holding part files is one blob (its size their
 * sum, its time the directory's, which the compose set when it moved them in).
 */
async function* walkParts(parts: string, dir: string): AsyncGenerator<ListedBlob> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(path.join(parts, dir), { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files = entries.filter((e) => e.isFile());
  if (files.length && dir) {
    try {
      let size = 0;
      for (const f of files) size += (await fs.promises.stat(path.join(parts, dir, f.name))).size;
      const st = await fs.promises.stat(path.join(parts, dir));
      yield { key: dir, size, mtime: st.mtime };
    } catch {
      // removed meanwhile
    }
    return;
  }
  for (const e of entries) {
    if (e.isDirectory() && !e.name.startsWith('.'))
      yield* walkParts(parts, dir ? `${dir}/${e.name}` : e.name);
  }
}

/** The newest modification time anywhere in `p` (a file or a directory tree) and its total size. */
export function newestIn(p: string): { mtimeMs: number; size: number } | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return undefined;
  }
  let mtimeMs = st.mtimeMs;
  let size = st.isFile() ? st.size : 0;
  if (st.isDirectory()) {
    let names: string[] = [];
    try {
      names = fs.readdirSync(p);
    } catch {
      // gone meanwhile
    }
    for (const n of names) {
      const inner = newestIn(path.join(p, n));
      if (!inner) continue;
      mtimeMs = Math.max(mtimeMs, inner.mtimeMs);
      size += inner.size;
    }
  }
  return { mtimeMs, size };
}

/** The stores Anvil uses, one per kind of data. */
export interface Storage {
  lfs: BlobStore;
  attachments: BlobStore;
  artifacts: BlobStore;
  packages: BlobStore;
  /** Uploaded avatars of accounts and repositories, keyed by the SHA-256 of their bytes. */
  avatars: BlobStore;
}

export function localStorage(appDataPath: string): Storage {
  return {
    lfs: new LocalBlobStore(path.join(appDataPath, 'lfs')),
    attachments: new LocalBlobStore(path.join(appDataPath, 'attachments')),
    artifacts: new LocalBlobStore(path.join(appDataPath, 'artifacts')),
    packages: new LocalBlobStore(path.join(appDataPath, 'packages')),
    avatars: new LocalBlobStore(path.join(appDataPath, 'avatars')),
  };
}
