// The SHA-256 of an artifact uploaded in blocks, computed while its blocks arrive, so that the
// block list commit need not read the whole content again. Clients (the Azure SDK under
// @actions/artifact) list their blocks in the order they began uploading them, a few at a time:
// each stored block is hashed as soon as every block begun before it is stored. The commit uses
// the digest only when its list is exactly the blocks seen, in that order, each uploaded once;
// any other list (or a block sent twice, or a failed one) is hashed from the stored content.
// In memory only: after a restart, or with blocks spread over several servers, the commit reads.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { hashInto } from '../storage/storage.js';

interface Upload {
  hash: crypto.Hash;
  /** Block ids in the order their uploads began. */
  order: string[];
  seen: Set<string>;
  /** Storage keys of the blocks stored so far, by block id. */
  stored: Map<string, string>;
  /** How many blocks of `order` the hash has taken. */
  hashed: number;
  /** The hashing under way: one block at a time, in order. */
  work: Promise<void>;
  /** Nothing this hash could be trusted for any more. */
  spoiled: boolean;
}

/** Uploads followed at most at once; beyond that they are forgotten (their commits read). */
const MAX_UPLOADS = 1000;

export class UploadHashes {
  private readonly uploads = new Map<number, Upload>();

  constructor(private readonly open: (key: string) => Promise<Readable>) {}

  /** A block upload of artifact `artifactId` begins. */
  begin(artifactId: number, blockId: string): void {
    let u = this.uploads.get(artifactId);
    if (!u) {
      if (this.uploads.size >= MAX_UPLOADS) this.uploads.clear();
      u = {
        hash: crypto.createHash('sha256'),
        order: [],
        seen: new Set(),
        stored: new Map(),
        hashed: 0,
        work: Promise.resolve(),
        spoiled: false,
      };
      this.uploads.set(artifactId, u);
    }
    if (u.seen.has(blockId)) u.spoiled = true;
    u.seen.add(blockId);
    u.order.push(blockId);
  }

  /** The block was stored under `key`, or (no key) its upload failed. */
  stored(artifactId: number, blockId: string, key?: string): void {
    const u = this.uploads.get(artifactId);
    if (!u) return;
    if (key === undefined) {
      u.spoiled = true;
      return;
    }
    u.stored.set(blockId, key);
    u.work = u.work.then(() => this.advance(u));
  }

  /**
   * The SHA-256 (hex) of the blocks `ids` joined, when they are the blocks seen in the order their
   * uploads began; undefined otherwise. Forgets the upload either way. Call it before the blocks
   * are moved or removed.
   */
  async digest(artifactId: number, ids: string[]): Promise<string | undefined> {
    const u = this.uploads.get(artifactId);
    this.uploads.delete(artifactId);
    if (!u || u.spoiled || ids.length !== u.order.length || ids.some((id, i) => id !== u.order[i])) {
      return undefined;
    }
    await u.work;
    await this.advance(u);
    return !u.spoiled && u.hashed === u.order.length ? u.hash.digest('hex') : undefined;
  }

  forget(artifactId: number): void {
    this.uploads.delete(artifactId);
  }

  /** Hashes the stored blocks that come next in order. */
  private async advance(u: Upload): Promise<void> {
    try {
      while (!u.spoiled && u.hashed < u.order.length) {
        const key = u.stored.get(u.order[u.hashed]!);
        if (key === undefined) return;
        await hashInto(u.hash, await this.open(key));
        u.hashed++;
      }
    } catch {
      u.spoiled = true;
    }
  }
}
