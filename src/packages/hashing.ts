// The four digests of a package file (MD5, SHA-1, SHA-256, SHA-512) computed in one pass while it
// streams to storage. Small files are hashed on the main thread. Large ones are hashed off it, by
// worker threads that each compute some of the digests of every chunk as it passes: one digest
// per thread when the machine has four cores or more (the slowest, MD5, then bounds the rate at
// some 700 MiB/s), else two threads of two digests each (MD5 + SHA-1, SHA-256 + SHA-512, about
// equal work). Bytes reach the workers through a ring of shared buffers (no copy per worker);
// when every buffer is still being hashed the stream waits, so at most RING x SLOT bytes are in
// flight whatever the file's size.
import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { forbidden } from '../errors.js';

export interface Digests {
  md5: string;
  sha1: string;
  sha256: string;
  sha512: string;
}

export interface HashingStream extends Transform {
  size: number;
  /** The digests, once the stream has ended. */
  digests(): Digests;
}

/** Uploads announced smaller than this are hashed on the main thread. */
const PARALLEL_FROM = 4 << 20;
const SLOT = 1 << 20;
const RING = 8;

const tooLarge = (limit: number) => forbidden(`the package file is larger than the limit of ${limit} bytes`);

/** Hashing on the main thread. */
class InlineHasher extends Transform implements HashingStream {
  private readonly hashes = ['md5', 'sha1', 'sha256', 'sha512'].map((a) => crypto.createHash(a));
  size = 0;
  private result: Digests | undefined;

  constructor(private readonly limit: number) {
    super({ highWaterMark: 1 << 20 });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.limit >= 0 && this.size > this.limit) return done(tooLarge(this.limit));
    for (const h of this.hashes) h.update(chunk);
    done(null, chunk);
  }

  digests(): Digests {
    if (!this.result) {
      const [md5, sha1, sha256, sha512] = this.hashes.map((h) => h.digest('hex'));
      this.result = { md5: md5!, sha1: sha1!, sha256: sha256!, sha512: sha512! };
    }
    return this.result;
  }
}

// The workers: each keeps the hashes of every job it is given, by job id.
const WORKER_CODE = `
const crypto = require('node:crypto');
const { parentPort, workerData } = require('node:worker_threads');
const jobs = new Map();
parentPort.on('message', (m) => {
  if (m.start) { jobs.set(m.job, workerData.map((a) => crypto.createHash(a))); return; }
  const hashes = jobs.get(m.job);
  if (m.end) {
    jobs.delete(m.job);
    parentPort.postMessage({ job: m.job, digests: hashes ? hashes.map((h) => h.digest('hex')) : [] });
    return;
  }
  if (m.drop) { jobs.delete(m.job); return; }
  if (!hashes) return;
  const view = new Uint8Array(m.buf, 0, m.len);
  for (const h of hashes) h.update(view);
  parentPort.postMessage({ job: m.job, ack: m.slot });
});
`;

type Reply = { job: number; ack?: number; digests?: string[] };

class HashWorker {
  private readonly worker: Worker;
  private readonly listeners = new Map<number, (r: Reply) => void>();

  constructor(readonly algorithms: string[]) {
    this.worker = new Worker(WORKER_CODE, { eval: true, workerData: algorithms });
    this.worker.unref();
    this.worker.on('message', (r: Reply) => this.listeners.get(r.job)?.(r));
  }

  listen(job: number, fn: (r: Reply) => void): void {
    this.listeners.set(job, fn);
  }

  forget(job: number): void {
    this.listeners.delete(job);
  }

  post(m: Record<string, unknown>): void {
    this.worker.postMessage(m);
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }
}

/** The digests each worker computes, for a machine of `cores` cores. */
export function hashGroups(cores: number): string[][] {
  return cores >= 4
    ? [['md5'], ['sha1'], ['sha256'], ['sha512']]
    : [
        ['md5', 'sha1'],
        ['sha256', 'sha512'],
      ];
}

let pool: HashWorker[] | undefined;
/** Rings of finished uploads, kept for the next ones (8 MiB each; a new ring per upload was garbage). */
const spareRings: SharedArrayBuffer[][] = [];
let nextJob = 1;

function workers(): HashWorker[] {
  return (pool ??= hashGroups(os.availableParallelism()).map((algorithms) => new HashWorker(algorithms)));
}

/** Stops the hashing workers (they start again when needed). */
export async function stopHashWorkers(): Promise<void> {
  const p = pool;
  pool = undefined;
  if (p) await Promise.all(p.map((w) => w.terminate()));
}

/** Hashing by the workers. */
class ParallelHasher extends Transform implements HashingStream {
  size = 0;
  private readonly job = nextJob++;
  private readonly ring = spareRings.pop() ?? Array.from({ length: RING }, () => new SharedArrayBuffer(SLOT));
  /** Acknowledgements still awaited per slot (0: free). */
  private readonly pending = new Array<number>(RING).fill(0);
  private slot = 0;
  private filled = 0;
  private waiting: (() => void) | undefined;
  private readonly pool = workers();
  private readonly results: Array<string[] | undefined> = this.pool.map(() => undefined);
  private finished: (() => void) | undefined;
  private result: Digests | undefined;

  constructor(private readonly limit: number) {
    super({ highWaterMark: 1 << 20 });
    this.pool.forEach((w, i) => {
      w.listen(this.job, (r) => {
        if (r.ack !== undefined) {
          this.pending[r.ack]!--;
          if (this.pending[this.slot] === 0 && this.waiting) {
            const go = this.waiting;
            this.waiting = undefined;
            go();
          }
        } else if (r.digests) {
          this.results[i] = r.digests;
          w.forget(this.job);
          if (this.results.every(Boolean)) {
            // Every worker is done with every slot: the ring serves the next upload.
            if (spareRings.length < 2) spareRings.push(this.ring);
            this.finished?.();
          }
        }
      });
      w.post({ job: this.job, start: true });
    });
  }

  private send(): void {
    if (this.filled === 0) return;
    const m = { job: this.job, buf: this.ring[this.slot], len: this.filled, slot: this.slot };
    this.pending[this.slot] = this.pool.length;
    for (const w of this.pool) w.post(m);
    this.slot = (this.slot + 1) % RING;
    this.filled = 0;
  }

  /** Resolves once the current slot may be written. */
  private free(): Promise<void> | undefined {
    if (this.pending[this.slot] === 0) return undefined;
    return new Promise((resolve) => (this.waiting = resolve));
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.limit >= 0 && this.size > this.limit) return done(tooLarge(this.limit));
    void this.copy(chunk).then(
      () => done(null, chunk),
      (err: Error) => done(err),
    );
  }

  private async copy(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      const wait = this.free();
      if (wait) await wait;
      const n = Math.min(SLOT - this.filled, chunk.length - offset);
      new Uint8Array(this.ring[this.slot]!, this.filled, n).set(chunk.subarray(offset, offset + n));
      this.filled += n;
      offset += n;
      if (this.filled === SLOT) this.send();
    }
  }

  override _flush(done: TransformCallback): void {
    const wait = this.free();
    void (wait ?? Promise.resolve()).then(() => {
      this.send();
      const all = new Promise<void>((resolve) => (this.finished = resolve));
      for (const w of this.pool) w.post({ job: this.job, end: true });
      void all.then(() => done());
    });
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    if (!this.results.every(Boolean)) {
      for (const w of this.pool) {
        w.forget(this.job);
        w.post({ job: this.job, drop: true });
      }
    }
    cb(err);
  }

  digests(): Digests {
    if (!this.result) {
      const hex = new Map<string, string>();
      this.pool.forEach((w, i) => w.algorithms.forEach((a, j) => hex.set(a, this.results[i]![j]!)));
      this.result = {
        md5: hex.get('md5')!,
        sha1: hex.get('sha1')!,
        sha256: hex.get('sha256')!,
        sha512: hex.get('sha512')!,
      };
    }
    return this.result;
  }
}

/** A stream that computes the digests of what passes, refusing more than `limit` bytes (-1: no limit). */
export function hashingStream(limit: number, announced?: number): HashingStream {
  return announced !== undefined && announced < PARALLEL_FROM
    ? new InlineHasher(limit)
    : new ParallelHasher(limit);
}
