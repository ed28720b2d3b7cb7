// Reading an Alpine package (apk v2): concatenated gzip streams, an optional signature segment
// (a tar with `.SIGN.*`), the control segment (a tar with `.PKGINFO`) and the data segment (a
// tar of the package's files). The control segment's gzip bytes give the package's checksum
// (`Q1` + base64 of their SHA-1, the APKINDEX's `C:`); the data segment is read to its end. A
// file that is not so is a 400 naming the problem, and .PKGINFO is read as Forgejo reads it.
import { Readable } from 'node:stream';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { MAX_KEPT, readTar } from '../tar.js';

/** Package names: letters, digits and `@._+-`, not starting with `-`, `.` or `@`. */
const NAME = /^[A-Za-z0-9_+][A-Za-z0-9@._+-]{0,254}$/;
/** Versions (`1.4.1-r3`, `2.0_rc1-r0`): no slash, space or leading punctuation. */
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+~-]{0,254}$/;
export const ARCHITECTURE = /^[A-Za-z0-9_]{1,64}$/;
/** The architecture whose packages are in every architecture's index. */
export const NOARCH = 'noarch';

/** The version's metadata (Forgejo's alpine VersionMetadata). */
export interface AlpineVersionMetadata {
  description?: string;
  license?: string;
  project_url?: string;
  maintainer?: string;
}

/** The file's metadata, kept as the file property alpine.metadata (Forgejo's FileMetadata). */
export interface AlpineFileMetadata {
  checksum: string;
  packager?: string;
  build_date?: number;
  size?: number;
  architecture: string;
  origin?: string;
  commit_hash?: string;
  install_if?: string;
  provides?: string[];
  dependencies?: string[];
  provider_priority?: number;
}

export interface AlpinePackage {
  name: string;
  version: string;
  versionMetadata: AlpineVersionMetadata;
  fileMetadata: AlpineFileMetadata;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** One gzip member at `start` of `buf`: its content and where it ends (400 when it is none). */
function gzipMember(buf: Buffer, start: number): { content: Buffer; end: number } {
  const bad = (problem: string) =>
    badRequest(`the package is not an apk (concatenated gzip streams): ${problem}`);
  if (buf.length - start < 18 || buf[start] !== 0x1f || buf[start + 1] !== 0x8b || buf[start + 2] !== 8) {
    throw bad(`no gzip stream at byte ${start}`);
  }
  const flags = buf[start + 3]!;
  let at = start + 10;
  if (flags & 0x04) at += 2 + buf.readUInt16LE(Math.min(at, buf.length - 2));
  for (const bit of [0x08, 0x10]) {
    if (!(flags & bit)) continue;
    const zero = buf.indexOf(0, at);
    if (zero < 0) throw bad('a gzip header is cut short');
    at = zero + 1;
  }
  if (flags & 0x02) at += 2;
  if (at >= buf.length) throw bad('a gzip header is cut short');
  let content: Buffer;
  let consumed: number;
  try {
    // With `info`, the engine tells how many bytes the deflate stream took.
    const out = zlib.inflateRawSync(buf.subarray(at), {
      info: true,
      maxOutputLength: MAX_KEPT,
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    content = out.buffer;
    consumed = out.engine.bytesWritten;
  } catch (err) {
    throw bad(`a gzip stream is damaged or too large (${(err as Error).message})`);
  }
  const trailer = at + consumed;
  if (trailer + 8 > buf.length) throw bad('a gzip stream is cut short');
  if (buf.readUInt32LE(trailer) !== zlib.crc32(content) || buf.readUInt32LE(trailer + 4) !== content.length) {
    throw bad('a gzip stream fails its CRC or length check');
  }
  return { content, end: trailer + 8 };
}

/** The package's metadata, its checksum and data segment checked (400 when it is no apk). */
export async function readAlpinePackage(file: StoredFile): Promise<AlpinePackage> {
  if (file.size === 0) throw badRequest('the package is empty');
  // The signature and control segments are small: they are read from the head of the file.
  const headEnd = Math.min(file.size, MAX_KEPT) - 1;
  const head = await readAll(await file.open({ start: 0, end: headEnd }));
  let start = 0;
  // At most a signature segment comes before the control segment.
  for (let segment = 0; segment < 2 && start < head.length; segment++) {
    const member = gzipMember(head, start);
    const tar = await readTar(
      Readable.from([member.content]),
      member.content.length,
      'none',
      'the package control segment',
      (name) => name === '.PKGINFO',
    );
    const info = tar.kept.get('.PKGINFO');
    if (!info) {
      start = member.end;
      continue;
    }
    const pkg = parsePackageInfo(info.toString('utf8'));
    pkg.fileMetadata.checksum = `Q1${crypto.createHash('sha1').update(head.subarray(start, member.end)).digest('base64')}`;
    if (member.end >= file.size) throw badRequest('the package has no data segment');
    await readTar(
      await file.open({ start: member.end }),
      file.size - member.end,
      'gzip',
      'the package data segment',
    );
    return pkg;
  }
  throw badRequest('PKGINFO file is missing');
}

/** .PKGINFO (`key = value` lines), read as Forgejo reads it, then checked. */
export function parsePackageInfo(text: string): AlpinePackage {
  const p: AlpinePackage = {
    name: '',
    version: '',
    versionMetadata: {},
    fileMetadata: { checksum: '', architecture: '' },
  };
  const v = p.versionMetadata;
  const f = p.fileMetadata;
  const int = (value: string) => (/^-?\d{1,15}$/.test(value) ? Number(value) : undefined);
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const at = line.indexOf('=');
    if (at < 0) continue;
    const key = line.slice(0, at).trim();
    const value = line.slice(at + 1).trim();
    switch (key) {
      case 'pkgname':
        p.name = value;
        break;
      case 'pkgver':
        p.version = value;
        break;
      case 'pkgdesc':
        v.description = value;
        break;
      case 'url':
        v.project_url = value;
        break;
      case 'builddate':
        f.build_date = int(value) ?? f.build_date;
        break;
      case 'size':
        f.size = int(value) ?? f.size;
        break;
      case 'arch':
        f.architecture = value;
        break;
      case 'origin':
        f.origin = value;
        break;
      case 'commit':
        f.commit_hash = value;
        break;
      case 'maintainer':
        v.maintainer = value;
        break;
      case 'packager':
        f.packager = value;
        break;
      case 'license':
        v.license = value;
        break;
      case 'install_if':
        f.install_if = value;
        break;
      case 'provider_priority':
        f.provider_priority = int(value) ?? f.provider_priority;
        break;
      case 'provides':
        if (value) (f.provides ??= []).push(value);
        break;
      case 'depend':
        if (value) (f.dependencies ??= []).push(value);
        break;
    }
  }
  if (!NAME.test(p.name)) throw badRequest(`package name is invalid [name: ${p.name.slice(0, 100)}]`);
  if (!VERSION.test(p.version))
    throw badRequest(`package version is invalid [version: ${p.version.slice(0, 100)}]`);
  if (!ARCHITECTURE.test(f.architecture)) {
    throw badRequest(`package architecture is invalid [arch: ${f.architecture.slice(0, 100)}]`);
  }
  if (v.project_url && !/^https?:\/\/\S+$/.test(v.project_url)) delete v.project_url;
  // Empty values are left out, as Forgejo's omitempty leaves them out of the JSON.
  for (const o of [v, f] as Array<Record<string, unknown>>) {
    for (const [k, value] of Object.entries(o))
      if (value === '' && k !== 'checksum' && k !== 'architecture') delete o[k];
  }
  return p;
}
