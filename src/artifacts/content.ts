// The content of artifacts, behind the signed URLs: a plain PUT of the whole zip, or Azure Blob
// style blocks (`comp=block`, each its own storage object, in any order and in parallel) joined by
// `comp=blocklist` into one blob, in list order, by streaming; the row records the content's size
// and SHA-256, which FinalizeArtifact (service.ts) compares with the client's. Downloads read it.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type * as FastXml from 'fast-xml-parser';
import { lazyModule } from '../lazy.js';
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError, badRequest, conflict, forbidden, notFound, unauthorized } from '../errors.js';
import { faultPoint } from '../faults.js';
import { hashInto, sha256Passing, type BlobStore } from '../storage/storage.js';
import { ArtifactError, clip } from './errors.js';
import { UrlSigner, type UrlPurpose } from './signed-url.js';
import { UploadHashes } from './upload-hash.js';
import * as store from './store.js';
import type { ArtifactRow } from './tables.js';

/** Largest block list body (Azure allows 50,000 blocks of ids up to 64 bytes). */
const MAX_BLOCK_LIST_BYTES = 8 * 1024 * 1024;
const MAX_BLOCKS = 50_000;
/** Azure block ids: base64 of at most 64 bytes. */
const BLOCK_ID = /^[A-Za-z0-9+/=_-]{1,100}$/;
export const DECIMAL_ID = /^[1-9]\d{0,15}$/;

const blobKey = (artifactId: number) => `blobs/${artifactId}-${crypto.randomUUID()}.zip`;
const blockKey = (artifactId: number, blockId: string) =>
  `blocks/${artifactId}-${crypto.createHash('sha256').update(blockId).digest('hex')}`;

export interface ArtifactContentDeps {
  db: Db;
  log: Logger;
  /** Where the contents and blocks are (storage.artifacts). */
  blobs: BlobStore;
  /** [security] SECRET_KEY, which signs the URLs. */
  secretKey: string;
}

export class ArtifactContent {
  private signerInstance: UrlSigner | undefined;
  private readonly db: Db;
  private readonly blobs: BlobStore;
  private readonly hashes: UploadHashes;

  constructor(private readonly deps: ArtifactContentDeps) {
    this.db = deps.db;
    this.blobs = deps.blobs;
    this.hashes = new UploadHashes((key) => deps.blobs.open(key));
  }

  private get signer(): UrlSigner {
    return (this.signerInstance ??= new UrlSigner(this.deps.secretKey));
  }

  /**
   * The artifact a signed URL is for, after checking its signature (401 when missing or wrong,
   * 403 when expired) and that the artifact can take this request: uploads go to a pending
   * artifact (409 once finalized), downloads come from a finalized one that has not expired.
   */
  async requireSigned(
    purpose: UrlPurpose,
    idText: string,
    query: Record<string, unknown>,
  ): Promise<ArtifactRow> {
    const id = DECIMAL_ID.test(idText) ? Number(idText) : 0;
    const check = id ? this.signer.check(purpose, id, query['expires'], query['sig'], nowUnix()) : 'invalid';
    if (check === 'invalid') throw unauthorized('the signature of this URL is missing or does not match');
    if (check === 'expired') throw forbidden('this URL has expired');
    const a = await store.getById(this.db, id);
    if (!a) throw notFound(`artifact does not exist [id: ${id}]`);
    if (purpose === 'upload' && a.status !== 'pending') throw conflict('the artifact is already finalized');
    if (purpose === 'download' && (a.status !== 'uploaded' || a.expires_unix <= nowUnix())) {
      throw notFound(`artifact does not exist [id: ${id}]`);
    }
    return a;
  }

  /**
   * A plain PUT: the whole content at once, replacing whatever was uploaded before. `length`: the
   * body's declared length, when it has one.
   */
  async putContent(
    a: ArtifactRow,
    body: Readable,
    length?: number,
  ): Promise<{ size: number; sha256: string }> {
    const key = blobKey(a.id);
    const stored = await this.storeHashed(key, body, length);
    await this.adoptContent(a.id, key, stored);
    return stored;
  }

  /** Stores `data` under `key`, computing the SHA-256 that finalize checks on the way. */
  private async storeHashed(
    key: string,
    data: Readable,
    length?: number,
  ): Promise<{ size: number; sha256: string }> {
    const hashed = sha256Passing();
    data.on('error', (err) => hashed.destroy(err));
    const { size } = await this.blobs.put(key, data.pipe(hashed), { size: length });
    return { size, sha256: hashed.digest() };
  }

  /** `comp=block`: one block, stored as it arrives under a key derived from the artifact and block id. */
  async putBlock(
    a: ArtifactRow,
    blockId: string,
    body: Readable,
    length?: number,
  ): Promise<{ size: number }> {
    if (!BLOCK_ID.test(blockId)) throw badRequest('blockid must be a base64 string of at most 64 bytes');
    const key = blockKey(a.id, blockId);
    this.hashes.begin(a.id, blockId);
    let size: number;
    try {
      ({ size } = await this.blobs.put(key, body, { size: length }));
    } catch (err) {
      this.hashes.stored(a.id, blockId);
      throw err;
    }
    try {
      const now = nowUnix();
      await store.upsertBlock(this.db, {
        artifact_id: a.id,
        block_id: blockId,
        storage_key: key,
        size,
        created_unix: now,
      });
    } catch (err) {
      // The artifact went away meanwhile (its row's foreign key refuses the block).
      this.hashes.forget(a.id);
      await this.removeFiles([key]);
      if (isForeignKeyViolation(err)) throw notFound(`artifact does not exist [id: ${a.id}]`);
      throw err;
    }
    this.hashes.stored(a.id, blockId, key);
    return { size };
  }

  /**
   * `comp=blocklist`: the XML list of block ids (`<BlockList><Latest>id</Latest>...</BlockList>`,
   * `Committed` and `Uncommitted` taken alike) becomes the content: the storage composes it from
   * the listed blocks (moved, not copied); its SHA-256 was mostly computed as the blocks came, or
   * is read now. Then every other block of the artifact is removed (as Azure discards uncommitted
   * blocks).
   */
  async commitBlocks(a: ArtifactRow, body: Readable): Promise<{ size: number; sha256: string }> {
    const ids = parseBlockList(await readLimited(body, MAX_BLOCK_LIST_BYTES));
    const blocks = new Map((await store.blocksOf(this.db, [a.id])).map((b) => [b.block_id, b]));
    const missing = ids.find((id) => !blocks.has(id));
    if (missing !== undefined) {
      throw new ArtifactError(
        'bad_request',
        `the block list names a block that was not uploaded [blockid: ${clip(missing)}]`,
        { azure: 'InvalidBlockList' },
      );
    }
    const storage = this.blobs;
    // Usually hashed already, as the blocks came (upload-hash.ts); read otherwise.
    const early = await this.hashes.digest(a.id, ids);
    const key = blobKey(a.id);
    const { size } = await storage.compose(
      key,
      ids.map((id) => blocks.get(id)!.storage_key),
    );
    faultPoint('artifact:composed');
    let stored: { size: number; sha256: string };
    try {
      let sha256 = early;
      if (sha256 === undefined) {
        const hash = crypto.createHash('sha256');
        await hashInto(hash, await storage.open(key));
        sha256 = hash.digest('hex');
      }
      stored = { size, sha256 };
    } catch (err) {
      await this.removeFiles([key]);
      throw err;
    }
    await this.adoptContent(a.id, key, stored);
    await store.removeBlocks(this.db, a.id, [...blocks.keys()]);
    await this.removeFiles([...blocks.values()].map((b) => b.storage_key));
    return stored;
  }

  /** Makes a freshly written blob the artifact's content (dropping the previous one), if still pending. */
  private async adoptContent(
    id: number,
    key: string,
    stored: { size: number; sha256: string },
  ): Promise<void> {
    const previous = await transaction(this.db, async (tx) => {
      const a = await store.getById(tx, id);
      if (!a || a.status !== 'pending') return undefined;
      return (await store.setContent(tx, id, a.storage_key, { ...stored, storageKey: key }, nowUnix()))
        ? a.storage_key
        : undefined;
    });
    if (previous === undefined) {
      await this.removeFiles([key]);
      throw conflict('the artifact was finalized or removed during the upload');
    }
    if (previous) await this.removeFiles([previous]);
  }

  open(a: ArtifactRow, range?: { start: number; end: number }): Promise<Readable> {
    return this.blobs.open(a.storage_key, range);
  }

  private removeFiles(keys: string[]): Promise<void> {
    return removeFiles(this.blobs, this.deps.log, keys);
  }
}

/** Removes stored files of artifacts (contents and blocks); a failure is logged, not thrown. */
export async function removeFiles(blobs: BlobStore, log: Logger, keys: string[]): Promise<void> {
  for (const key of keys) {
    try {
      await blobs.delete(key);
    } catch (err) {
      log.error({ err, key }, 'removing an artifact file failed');
    }
  }
}

async function readLimited(body: Readable, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > max) throw new AppError('payload_too_large', `the block list is larger than ${max} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** fast-xml-parser, loaded with the first block list (not at start-up). */
const fastXml = lazyModule<typeof FastXml>('fast-xml-parser');
let xmlParser: FastXml.XMLParser | undefined;
const xml = () =>
  (xmlParser ??= new (fastXml().XMLParser)({
    preserveOrder: true,
    ignoreAttributes: true,
    parseTagValue: false,
    processEntities: false,
    trimValues: true,
  }));

/** The block ids of an Azure Put Block List body, in order; 400 when it is not one. */
export function parseBlockList(text: string): string[] {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badRequest('the block list must not contain a DOCTYPE');
  if (fastXml().XMLValidator.validate(text) !== true)
    throw badRequest('the block list is not well-formed XML');
  const doc = xml().parse(text) as Array<Record<string, unknown>>;
  const root = doc.find((n) => 'BlockList' in n);
  if (!root) throw badRequest('the block list must be a <BlockList> element');
  const ids: string[] = [];
  for (const entry of root['BlockList'] as Array<Record<string, unknown>>) {
    const tag = Object.keys(entry).find((k) => k !== ':@');
    if (tag === '#text') continue;
    if (tag !== 'Latest' && tag !== 'Committed' && tag !== 'Uncommitted') {
      throw badRequest(`unexpected element <${clip(tag ?? '')}> in the block list`);
    }
    const content = entry[tag] as Array<Record<string, unknown>>;
    const id =
      content.length === 1 && typeof content[0]!['#text'] === 'string'
        ? (content[0]!['#text'] as string)
        : '';
    if (!BLOCK_ID.test(id))
      throw badRequest('a block id in the block list is not a base64 string of at most 64 bytes');
    ids.push(id);
  }
  if (ids.length > MAX_BLOCKS) throw badRequest(`the block list has more than ${MAX_BLOCKS} blocks`);
  return ids;
}

function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
