// The S3-compatible blob store (AWS S3, MinIO, Garage, Ceph RGW, ...), through the AWS SDK v3.
//
//   put             a body larger than 8 MiB whose size is declared: one streamed PutObject of
//                   that length (nothing buffered); otherwise lib-storage's Upload: a multipart
//                   upload of 8 MiB parts, two in flight, so memory stays bounded whatever the
//                   size; the object exists only once the upload completes (or the single
//                   PutObject of a small body succeeds).
//   open            GetObject, with a Range header for a byte range.
//   stat / delete   HeadObject / DeleteObject (ifUnmodifiedSince: HeadObject's LastModified first).
//   move            CopyObject then DeleteObject (a multipart copy above 5 GiB).
//   compose         one multipart upload whose parts are UploadPartCopy of the stored parts where
//                   S3's rules allow (every part but the last >= 5 MiB, none > 5 GiB), the rest
//                   streamed through UploadPart; servers without UploadPartCopy get every part
//                   streamed (see `planCompose`).
//   list            ListObjectsV2, page by page as the caller iterates.
//   sweepTemporary  ListMultipartUploads + AbortMultipartUpload of uploads initiated before the
//                   cut-off; a server without them has nothing to sweep.
//   ping            HeadBucket (the bucket is created at start-up when missing, as Forgejo does).
//   directUrl       a presigned GetObject URL when SERVE_DIRECT is on.
import { PassThrough, Readable, Transform, pipeline as pipe } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  UploadPartCopyCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Settings } from '../config/storage.js';
import { notFound } from '../errors.js';
import { faultPoint } from '../faults.js';
import { PacedStream, paceStreamed } from './pacer.js';
import {
  checkKey,
  type BlobStore,
  type ListedBlob,
  type RemovedLeftover,
  type StoredBlob,
  PRESIGN_SECONDS,
} from './storage.js';

/** S3's smallest part (every part of a multipart upload but the last). */
export const MIN_PART = 5 * 1024 * 1024;
/** S3's largest part, and the largest object CopyObject copies. */
export const MAX_PART = 5 * 1024 * 1024 * 1024;
/** Parts of Anvil's own streamed uploads. */
const PUT_PART = 8 * 1024 * 1024;
/** The largest object one PutObject may write. */
const SINGLE_PUT_MAX = 5 * 1024 * 1024 * 1024;

/** How `compose` builds its multipart upload: parts copied server-side or streamed through Anvil. */
export type ComposeStep = { kind: 'copy'; part: number } | { kind: 'stream'; parts: number[]; size: number };

/**
 * The parts (indexes into `sizes`) of a composed object. With `partCopy`, a part of 5 MiB to
 * 5 GiB is copied server-side when no streamed group is pending, and so is a smaller one when it
 * is the last; otherwise consecutive parts are streamed together into one uploaded part that
 * reaches 5 MiB (only the last may be smaller). Without `partCopy`, or when a part is larger
 * than 5 GiB (UploadPartCopy's limit), every part is streamed, in groups of at most 5 GiB.
 * Empty parts add nothing and are skipped.
 */
export function planCompose(sizes: number[], partCopy: boolean): ComposeStep[] {
  const steps: ComposeStep[] = [];
  let group: { kind: 'stream'; parts: number[]; size: number } | undefined;
  const copyable = partCopy && sizes.every((s) => s <= MAX_PART);
  const nonEmpty = sizes.map((s, i) => ({ s, i })).filter((p) => p.s > 0);
  nonEmpty.forEach(({ s, i }, n) => {
    const last = n === nonEmpty.length - 1;
    if (copyable && !group && (s >= MIN_PART || last)) {
      steps.push({ kind: 'copy', part: i });
      return;
    }
    if (group && group.size + s > MAX_PART && group.size >= MIN_PART) group = undefined;
    if (!group) steps.push((group = { kind: 'stream', parts: [], size: 0 }));
    group.parts.push(i);
    group.size += s;
    if (group.size >= MIN_PART && copyable) group = undefined;
  });
  return steps;
}

/** Whether an SDK error is S3's answer for an operation the server does not implement. */
export function notImplemented(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  return (
    e.name === 'NotImplemented' ||
    e.Code === 'NotImplemented' ||
    e.name === 'MethodNotAllowed' ||
    status === 501 ||
    status === 405
  );
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

/** `source` counted for the collection pacing; an error or an early close of either ends both. */
function paced(source: Readable): Readable {
  const out = new PacedStream();
  pipe(source, out, () => undefined);
  return out;
}

/** Counts what passes; with `exact`, fails a stream that is longer or ends shorter than that. */
function counter(exact?: number): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      t.bytes += chunk.length;
      paceStreamed(chunk.length);
      if (exact !== undefined && t.bytes > exact)
        return done(new Error(`more than the ${exact} bytes announced`));
      done(null, chunk);
    },
    flush(done) {
      if (exact !== undefined && t.bytes !== exact)
        return done(new Error(`${t.bytes} bytes, not the ${exact} announced`));
      done();
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}

/** What makes two stores' clients interchangeable: the server, the account and how it is addressed. */
export function clientIdentity(s: S3Settings): string {
  return JSON.stringify([s.endpoint, s.useSsl, s.accessKeyId, s.secretAccessKey, s.location, s.bucketLookup]);
}

export function s3Client(s: S3Settings): S3Client {
  // The SDK warns on every start that its releases after January 2027 need Node 22: a fact for
  // whoever upgrades the lockfile (docs/operations.md, "S3 storage"), not for the operator of a running site.
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const aws = /(^|\.)amazonaws\.com(:\d+)?$/i.test(s.endpoint);
  return new S3Client({
    endpoint: `${s.useSsl ? 'https' : 'http'}://${s.endpoint}`,
    region: s.location || 'us-east-1',
    credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
    forcePathStyle: s.bucketLookup === 'path' || (s.bucketLookup === 'auto' && !aws),
    // Third-party servers (MinIO releases, s3rver, Ceph) do not all take the SDK's default
    // CRC32 checksums on every request; send them only where the operation requires one.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  /** Whether the server takes UploadPartCopy (learnt from its first refusal). */
  partCopy = true;
  /** Whether the server lists (and aborts) multipart uploads. */
  listsUploads = true;

  /** `client`: one shared with the stores of other kinds on the same server and account. */
  constructor(
    readonly settings: S3Settings,
    client?: S3Client,
  ) {
    this.client = client ?? s3Client(settings);
  }

  get bucket(): string {
    return this.settings.bucket;
  }

  /** Where `key` is in the bucket. */
  private k(key: string): string {
    checkKey(key);
    return this.settings.basePath + key;
  }

  /** Creates the bucket when it is missing (start-up). */
  async init(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.client.send(
          new CreateBucketCommand({
            Bucket: this.bucket,
            ...(this.settings.location && this.settings.location !== 'us-east-1'
              ? { CreateBucketConfiguration: { LocationConstraint: this.settings.location as never } }
              : {}),
          }),
        );
      } catch (e) {
        // Another node created it meanwhile.
        const name = (e as { name?: string }).name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw e;
      }
    }
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async put(key: string, data: Readable, opts: { size?: number } = {}): Promise<StoredBlob> {
    // A large body of a size known in advance goes up in one streamed PutObject (S3 allows 5 GiB):
    // no part is buffered, and servers that assemble multipart uploads slowly are spared it. A
    // body of at most one part is buffered by Upload and written (one PutObject) only once it has
    // ended, so a check failing at its very end keeps it out whatever its size.
    const single = opts.size !== undefined && opts.size > PUT_PART && opts.size <= SINGLE_PUT_MAX;
    const count = counter(opts.size);
    // pipeline, not pipe: a source that has already failed fails `body` too.
    const body = pipe(data, count, () => undefined);
    // A body that fails (cut off, or not of the announced size) aborts the request, whose server
    // would otherwise wait for the bytes still owed; its error is the one thrown below.
    const abort = new AbortController();
    body.on('error', () => abort.abort());
    try {
      if (single) {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: this.k(key),
            Body: body,
            ContentLength: opts.size,
          }),
          { abortSignal: abort.signal },
        );
      } else {
        await new Upload({
          client: this.client,
          params: { Bucket: this.bucket, Key: this.k(key), Body: body },
          partSize: PUT_PART,
          queueSize: 2,
          leavePartsOnError: false,
        }).done();
      }
    } catch (err) {
      body.destroy();
      // A body that failed half-way leaves no object (the upload was not completed); where the
      // server cannot abort, the incomplete upload stays for its own expiry rules. S3 refuses a
      // PutObject body shorter than its length; a server that keeps it instead (s3rver does) is
      // left with an object of the wrong size, which goes (one of the right size is a whole blob
      // another upload wrote, and stays).
      if (single) {
        const h = await this.head(key).catch(() => undefined);
        if (h && h.size !== opts.size)
          await this.client
            .send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(key) }))
            .catch(() => undefined);
      }
      throw (body.errored as Error | null) ?? (data.errored as Error | null) ?? err;
    }
    faultPoint('storage:written');
    return { size: count.bytes };
  }

  async open(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    try {
      const r = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.k(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}),
        }),
      );
      return paced(r.Body as Readable);
    } catch (err) {
      if (isNotFound(err)) throw notFound(`blob does not exist [key: ${key}]`);
      throw err;
    }
  }

  private async head(key: string): Promise<{ size: number; mtime: Date } | undefined> {
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
      return { size: r.ContentLength ?? 0, mtime: r.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async stat(key: string): Promise<{ size: number } | undefined> {
    const h = await this.head(key);
    return h && { size: h.size };
  }

  async delete(key: string, opts: { ifUnmodifiedSince?: Date } = {}): Promise<boolean> {
    const h = await this.head(key);
    if (!h) return false;
    // LastModified has whole seconds: a blob written within the second of the cut-off is kept.
    if (opts.ifUnmodifiedSince && h.mtime.getTime() + 1000 > opts.ifUnmodifiedSince.getTime()) {
      return false;
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(key) }));
    return true;
  }

  async move(from: string, to: string): Promise<void> {
    const h = await this.head(from);
    if (!h) throw notFound(`blob does not exist [key: ${from}]`);
    if (from === to) return;
    if (h.size > MAX_PART) {
      await this.compose(to, [from]);
      return;
    }
    await this.client.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: this.k(to),
        CopySource: `${this.bucket}/${encodeURI(this.k(from))}`,
      }),
    );
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.k(from) }));
  }

  async compose(key: string, parts: string[]): Promise<StoredBlob> {
    const sizes: number[] = [];
    for (const p of parts) {
      const h = await this.head(p);
      if (!h) throw notFound(`blob does not exist [key: ${p}]`);
      sizes.push(h.size);
    }
    const size = sizes.reduce((a, b) => a + b, 0);
    const distinct = [...new Set(parts)];
    if (size === 0 || (parts.length === 1 && sizes[0]! <= MAX_PART)) {
      if (parts.length === 1) await this.move(parts[0]!, key);
      else {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.k(key), Body: '' }));
        for (const p of distinct) await this.delete(p);
      }
      return { size };
    }
    let done = false;
    while (!done) {
      try {
        await this.multipartCompose(key, parts, sizes);
        done = true;
      } catch (err) {
        if (!(this.partCopy && notImplemented(err))) throw err;
        this.partCopy = false; // the server has no UploadPartCopy: stream every part
      }
    }
    for (const p of distinct) if (p !== key) await this.delete(p);
    return { size };
  }

  private async multipartCompose(key: string, parts: string[], sizes: number[]): Promise<void> {
    const target = this.k(key);
    const { UploadId } = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: target }),
    );
    const completed: CompletedPart[] = [];
    try {
      let n = 0;
      for (const step of planCompose(sizes, this.partCopy)) {
        const PartNumber = ++n;
        if (step.kind === 'copy') {
          const r = await this.client.send(
            new UploadPartCopyCommand({
              Bucket: this.bucket,
              Key: target,
              UploadId,
              PartNumber,
              CopySource: `${this.bucket}/${encodeURI(this.k(parts[step.part]!))}`,
            }),
          );
          completed.push({ PartNumber, ETag: r.CopyPartResult?.ETag });
        } else {
          const body = new PassThrough({ highWaterMark: 1 << 20 });
          const feed = (async () => {
            try {
              for (const i of step.parts) {
                for await (const c of await this.open(parts[i]!)) {
                  if (!body.write(c)) await new Promise((r) => body.once('drain', r));
                }
              }
              body.end();
            } catch (err) {
              body.destroy(err as Error);
            }
          })();
          const r = await this.client.send(
            new UploadPartCommand({
              Bucket: this.bucket,
              Key: target,
              UploadId,
              PartNumber,
              Body: body,
              ContentLength: step.size,
            }),
          );
          await feed;
          completed.push({ PartNumber, ETag: r.ETag });
        }
      }
      await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key: target,
          UploadId,
          MultipartUpload: { Parts: completed },
        }),
      );
    } catch (err) {
      await this.client
        .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: target, UploadId }))
        .catch(() => undefined);
      throw err;
    }
  }

  async *list(prefix = ''): AsyncIterable<ListedBlob> {
    const base = this.settings.basePath;
    let token: string | undefined;
    do {
      const r = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: base + prefix, ContinuationToken: token }),
      );
      for (const o of r.Contents ?? []) {
        if (!o.Key) continue;
        yield { key: o.Key.slice(base.length), size: o.Size ?? 0, mtime: o.LastModified ?? new Date(0) };
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  async sweepTemporary(before: Date, opts: { dryRun?: boolean } = {}): Promise<RemovedLeftover[]> {
    const removed: RemovedLeftover[] = [];
    if (!this.listsUploads) return removed;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    try {
      do {
        const r = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.settings.basePath,
            KeyMarker: keyMarker,
            UploadIdMarker: uploadIdMarker,
          }),
        );
        for (const u of r.Uploads ?? []) {
          if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated >= before) continue;
          if (!opts.dryRun) {
            await this.client.send(
              new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }),
            );
          }
          removed.push({ name: `multipart upload ${u.Key} (${u.UploadId})`, size: 0 });
        }
        const more = r.IsTruncated;
        keyMarker = more ? r.NextKeyMarker : undefined;
        uploadIdMarker = more ? r.NextUploadIdMarker : undefined;
      } while (keyMarker);
    } catch (err) {
      if (!notImplemented(err)) throw err;
      // The server keeps no listable incomplete uploads (s3rver): nothing Anvil can sweep.
      this.listsUploads = false;
    }
    return removed;
  }

  /** A presigned GetObject URL of `key`, valid for `expiresIn` seconds (default 5 minutes). */
  async presign(
    key: string,
    opts: { expiresIn?: number; filename?: string; contentType?: string } = {},
  ): Promise<string> {
    const name = opts.filename?.replace(/["\\\r\n]/g, '_');
    return getSignedUrl(
      this.client,
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.k(key),
        ...(opts.filename
          ? {
              ResponseContentDisposition: `attachment; filename="${name}"; filename*=UTF-8''${encodeURIComponent(opts.filename)}`,
            }
          : {}),
        ...(opts.contentType ? { ResponseContentType: opts.contentType } : {}),
      }),
      { expiresIn: opts.expiresIn ?? PRESIGN_SECONDS },
    );
  }

  /** With SERVE_DIRECT, a presigned URL of the blob (else undefined: the caller streams it). */
  async directUrl(
    key: string,
    opts: { filename?: string; contentType?: string } = {},
  ): Promise<string | undefined> {
    return this.settings.serveDirect ? this.presign(key, opts) : undefined;
  }

  close(): void {
    this.client.destroy();
  }
}
