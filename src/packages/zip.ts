// Reading an uploaded zip archive (wheels, jars, .conda packages) from the stored file without
// holding it in memory: the central directory is read from the end of the file (zip64 too), so a
// truncated file or one that is no zip is refused (400) before anything is kept; single members
// are read by their byte range (stored or deflated).
import { PassThrough, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { badRequest } from '../errors.js';
import type { StoredFile } from './service.js';

/** The most of a zip's central directory Anvil reads. */
const MAX_DIRECTORY = 16 << 20;

export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated (others are not read). */
  method: number;
  compressedSize: number;
  size: number;
  /** Where its local header is. */
  localOffset: number;
}

export async function readRange(file: StoredFile, start: number, length: number): Promise<Buffer> {
  if (length === 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const c of await file.open({ start, end: start + length - 1 })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The members of the zip `file` (`what` names it in errors), from its central directory. */
export async function readZipDirectory(file: StoredFile, what: string): Promise<ZipEntry[]> {
  const notZip = (why: string) => badRequest(`${what} is not a valid zip archive: ${why}`);
  const size = file.size;
  if (size < 22) throw notZip('too short');
  const tailStart = Math.max(0, size - (22 + 0xffff));
  const tail = await readRange(file, tailStart, size - tailStart);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw notZip('no end of central directory (truncated?)');
  let entries = tail.readUInt16LE(eocd + 10);
  let dirSize = tail.readUInt32LE(eocd + 12);
  let dirOffset = tail.readUInt32LE(eocd + 16);
  if (dirOffset === 0xffffffff || dirSize === 0xffffffff || entries === 0xffff) {
    // Zip64: the locator just before the end record names the zip64 end record.
    const loc = eocd - 20;
    if (loc < 0 || tail.readUInt32LE(loc) !== 0x07064b50) throw notZip('no zip64 locator');
    const recOffset = Number(tail.readBigUInt64LE(loc + 8));
    if (recOffset + 56 > size) throw notZip('the zip64 end record is outside the file');
    const rec = await readRange(file, recOffset, 56);
    if (rec.readUInt32LE(0) !== 0x06064b50) throw notZip('no zip64 end record');
    entries = Number(rec.readBigUInt64LE(32));
    dirSize = Number(rec.readBigUInt64LE(40));
    dirOffset = Number(rec.readBigUInt64LE(48));
  }
  if (dirOffset + dirSize > size) throw notZip('the central directory is outside the file (truncated?)');
  if (dirSize > MAX_DIRECTORY) throw badRequest(`${what} has too large a zip directory`);
  const dir = dirSize > 0 ? await readRange(file, dirOffset, dirSize) : Buffer.alloc(0);
  const out: ZipEntry[] = [];
  let p = 0;
  for (let n = 0; n < entries; n++) {
    if (p + 46 > dir.length || dir.readUInt32LE(p) !== 0x02014b50) {
      throw notZip('a broken central directory');
    }
    const method = dir.readUInt16LE(p + 10);
    let compressedSize = dir.readUInt32LE(p + 20);
    let usize = dir.readUInt32LE(p + 24);
    const nameLen = dir.readUInt16LE(p + 28);
    const extraLen = dir.readUInt16LE(p + 30);
    const commentLen = dir.readUInt16LE(p + 32);
    let localOffset = dir.readUInt32LE(p + 42);
    if (p + 46 + nameLen + extraLen + commentLen > dir.length) throw notZip('a broken central directory');
    const name = dir.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    const extra = dir.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
    p += 46 + nameLen + extraLen + commentLen;
    // Zip64 extra field: the 64-bit values, in order, of the fields that hold 0xffffffff.
    for (let e = 0; e + 4 <= extra.length;) {
      const id = extra.readUInt16LE(e);
      const len = extra.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        const next = () => {
          if (q + 8 > e + 4 + len) throw notZip('a broken zip64 field');
          const v = Number(extra.readBigUInt64LE(q));
          q += 8;
          return v;
        };
        if (usize === 0xffffffff) usize = next();
        if (compressedSize === 0xffffffff) compressedSize = next();
        if (localOffset === 0xffffffff) localOffset = next();
      }
      e += 4 + len;
    }
    if (localOffset + 30 + compressedSize > size) throw notZip(`${name} is outside the file`);
    out.push({ name, method, compressedSize, size: usize, localOffset });
  }
  return out;
}

/** The contents of one member (stored or deflated); bad deflate data fails the stream with a 400. */
export async function openZipMember(file: StoredFile, entry: ZipEntry, what: string): Promise<Readable> {
  if (entry.method !== 0 && entry.method !== 8) {
    throw badRequest(`${what}: ${entry.name} is compressed with an unsupported zip method (${entry.method})`);
  }
  const head = await readRange(file, entry.localOffset, 30);
  if (head.readUInt32LE(0) !== 0x04034b50) {
    throw badRequest(`${what} is not a valid zip archive: no local header for ${entry.name}`);
  }
  const start = entry.localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  if (start + entry.compressedSize > file.size) {
    throw badRequest(`${what} is not a valid zip archive: ${entry.name} is outside the file`);
  }
  if (entry.compressedSize === 0) return Readable.from([]);
  const raw = await file.open({ start, end: start + entry.compressedSize - 1 });
  if (entry.method === 0) return raw;
  // Bad deflate data is the uploader's fault (400), a failing read the server's.
  const inflate = zlib.createInflateRaw();
  const out = new PassThrough();
  inflate.on('error', () => out.destroy(badRequest(`${what}: ${entry.name} is not valid deflate data`)));
  raw.on('error', (err) => out.destroy(err));
  out.on('close', () => {
    raw.destroy();
    inflate.destroy();
  });
  raw.pipe(inflate).pipe(out);
  return out;
}

/** The whole contents of a (small) member; 400 beyond `max` bytes. */
export async function readZipMember(
  file: StoredFile,
  entry: ZipEntry,
  what: string,
  max: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const c of await openZipMember(file, entry, what)) {
    length += (c as Buffer).length;
    if (length > max) throw badRequest(`${what}: ${entry.name} is larger than ${max} bytes`);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}
