// Reading a Conda package's info/index.json and info/about.json from the stored file, without
// holding the archive in memory:
// - `.tar.bz2`: the file streams through the system `bzip2 -dc` into a tar reader, which stops
//   as soon as both files are read (or, since conda-build writes info/ first, at the first member
//   outside info/ once index.json is read).
// - `.conda`: a zip (conda-package-handling writes it uncompressed) holding metadata.json,
//   `pkg-*.tar.zst` and `info-*.tar.zst`. The zip's central directory is read from the end of the
//   file (zip64 too), then only the info member's bytes stream through `zstd -dc` into the tar
//   reader. A .conda's payload is never read.
import { spawn } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';

export interface InfoFiles {
  index: Buffer;
  about: Buffer | undefined;
}

/** The most of an info JSON file Anvil reads. */
const MAX_JSON = 4 << 20;
/** The most of a zip's central directory Anvil reads (a .conda has three members). */
const MAX_DIRECTORY = 1 << 20;

export type CondaKind = 'tar.bz2' | 'conda';

export function kindOf(filename: string): CondaKind | undefined {
  if (filename.endsWith('.tar.bz2')) return 'tar.bz2';
  if (filename.endsWith('.conda')) return 'conda';
  return undefined;
}

/** info/index.json and info/about.json of the stored package file (400 when it is not one). */
export async function readInfo(kind: CondaKind, file: StoredFile): Promise<InfoFiles> {
  if (kind === 'tar.bz2') {
    return readInfoTar(await file.open(), 'bzip2', 'a .tar.bz2 (bzip2) archive', true);
  }
  const member = await findInfoMember(file);
  const raw = await file.open({ start: member.start, end: member.start + member.size - 1 });
  let source: Readable = raw;
  if (member.method === 8) {
    // Bad deflate data is the uploader's fault (400), a failing read the server's.
    const inflate = zlib.createInflateRaw();
    const out = new PassThrough();
    inflate.on('error', () =>
      out.destroy(badRequest(`the .conda member ${member.name} is not valid deflate data`)),
    );
    raw.on('error', (err) => out.destroy(err));
    out.on('close', () => {
      raw.destroy();
      inflate.destroy();
    });
    raw.pipe(inflate).pipe(out);
    source = out;
  }
  return readInfoTar(source, 'zstd', `the zstd archive ${member.name}`, false);
}

/** Name, method and bytes (offset and compressed size) of the `info-*.tar.zst` member of a zip. */
async function findInfoMember(
  file: StoredFile,
): Promise<{ name: string; method: number; start: number; size: number }> {
  const notZip = () => badRequest('the file is not a .conda package: not a zip archive');
  const size = file.size;
  if (size < 22) throw notZip();
  const tailStart = Math.max(0, size - (22 + 0xffff));
  const tail = await readRange(file, tailStart, size - tailStart);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw notZip();
  let entries = tail.readUInt16LE(eocd + 10);
  let dirSize = tail.readUInt32LE(eocd + 12);
  let dirOffset = tail.readUInt32LE(eocd + 16);
  if (dirOffset === 0xffffffff || dirSize === 0xffffffff || entries === 0xffff) {
    // Zip64: the locator just before the end record names the zip64 end record.
    const loc = eocd - 20;
    if (loc < 0 || tail.readUInt32LE(loc) !== 0x07064b50) throw notZip();
    const recOffset = Number(tail.readBigUInt64LE(loc + 8));
    if (recOffset + 56 > size) throw notZip();
    const rec = await readRange(file, recOffset, 56);
    if (rec.readUInt32LE(0) !== 0x06064b50) throw notZip();
    entries = Number(rec.readBigUInt64LE(32));
    dirSize = Number(rec.readBigUInt64LE(40));
    dirOffset = Number(rec.readBigUInt64LE(48));
  }
  if (dirOffset + dirSize > size) throw notZip();
  if (dirSize > MAX_DIRECTORY) throw badRequest('the .conda zip has too large a central directory');
  const dir = dirSize > 0 ? await readRange(file, dirOffset, dirSize) : Buffer.alloc(0);
  let p = 0;
  for (let n = 0; n < entries && p + 46 <= dir.length; n++) {
    if (dir.readUInt32LE(p) !== 0x02014b50) throw notZip();
    const method = dir.readUInt16LE(p + 10);
    let csize = dir.readUInt32LE(p + 20);
    const usize = dir.readUInt32LE(p + 24);
    const nameLen = dir.readUInt16LE(p + 28);
    const extraLen = dir.readUInt16LE(p + 30);
    const commentLen = dir.readUInt16LE(p + 32);
    let local = dir.readUInt32LE(p + 42);
    const name = dir.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    const extra = dir.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (!/^info-.+\.tar\.zst$/.test(name)) continue;
    // Zip64 extra field: the 64-bit values, in order, of the fields that hold 0xffffffff.
    for (let e = 0; e + 4 <= extra.length;) {
      const id = extra.readUInt16LE(e);
      const len = extra.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        const next = () => {
          if (q + 8 > e + 4 + len) throw notZip();
          const v = Number(extra.readBigUInt64LE(q));
          q += 8;
          return v;
        };
        if (usize === 0xffffffff) next();
        if (csize === 0xffffffff) csize = next();
        if (local === 0xffffffff) local = next();
      }
      e += 4 + len;
    }
    if (method !== 0 && method !== 8) {
      throw badRequest(`the .conda member ${name} is compressed with an unsupported zip method (${method})`);
    }
    if (local + 30 > size) throw notZip();
    const head = await readRange(file, local, 30);
    if (head.readUInt32LE(0) !== 0x04034b50) throw notZip();
    const start = local + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    if (start + csize > size) throw notZip();
    return { name, method, start, size: csize };
  }
  throw badRequest('the .conda package has no info-*.tar.zst member');
}

async function readRange(file: StoredFile, start: number, length: number): Promise<Buffer> {
  if (length === 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const c of await file.open({ start, end: start + length - 1 })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Streams `source` through `<tool> -dc` into a tar reader and keeps info/index.json and
 * info/about.json; stops early once both are read (or, with `infoFirst`, at the first member
 * outside info/ after index.json). 400 when the data is not what it should be.
 */
function readInfoTar(source: Readable, tool: 'bzip2' | 'zstd', what: string, infoFirst: boolean) {
  return new Promise<InfoFiles>((resolve, reject) => {
    const child = spawn(tool, ['-dcq'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const extract = tar.extract();
    let index: Buffer | undefined;
    let about: Buffer | undefined;
    let settled = false;
    let tarDone = false;
    let toolDone = false;

    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      source.destroy();
      child.stdin.destroy();
      child.stdout.destroy();
      if (child.exitCode === null) child.kill();
      extract.destroy();
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else if (!index) reject(badRequest('the package has no info/index.json'));
      else resolve({ index, about });
    };

    source.on('error', (err) => finish(err));
    child.stdin.on('error', () => undefined); // the tool gave up on bad data: its exit status says so
    child.stdout.on('error', () => undefined);
    child.stderr.resume();
    child.on('error', (err) => finish(err));
    child.on('close', (code) => {
      if (settled) return;
      if (code !== 0) return finish(badRequest(`the file is not ${what}`));
      toolDone = true;
      if (tarDone) finish();
    });
    extract.on('error', (err: Error) =>
      finish(badRequest(`the file is not ${what} of a tar: ${err.message}`)),
    );
    extract.on('finish', () => {
      tarDone = true;
      if (toolDone) finish();
    });
    extract.on('entry', (header, stream, next) => {
      const name = header.name.replace(/^(\.\/)+/, '');
      const wanted = header.type === 'file' && (name === 'info/index.json' || name === 'info/about.json');
      if (!wanted) {
        if (infoFirst && index && !name.startsWith('info/')) return finish();
        stream.on('end', () => next());
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let length = 0;
      stream.on('data', (c: unknown) => {
        const chunk = c as Buffer;
        length += chunk.length;
        if (length > MAX_JSON) finish(badRequest(`${name} is larger than ${MAX_JSON} bytes`));
        else chunks.push(chunk);
      });
      stream.on('end', () => {
        if (settled) return;
        if (name === 'info/index.json') index = Buffer.concat(chunks);
        else about = Buffer.concat(chunks);
        if (index && about) return finish();
        next();
      });
    });
    source.pipe(child.stdin);
    child.stdout.pipe(extract);
  });
}
