// Reading an RPM package (rpm's file format, https://rpm-software-management.github.io/rpm/manual/format.html)
// from the stored upload: the 96-byte lead (magic ed ab ee db), the signature header (padded to
// 8 bytes), then the main header, whose tags say what the package is; the payload after it is
// not read. A header is its magic 8e ad e8 01, four reserved bytes, the entry count and the data
// size, then 16-byte entries (tag, type, offset, count) into the data. Anything else is a 400
// naming the problem.
import type { Readable } from 'node:stream';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';

const LEAD = 96;
/** Headers larger than this are refused (rpm's own limit is 256 MiB; real ones are far smaller). */
const MAX_HEADER = 32 * 1024 * 1024;
const NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]{0,199}$/;
const VERSION = /^[A-Za-z0-9._+~^]{1,100}$/;
const ARCH = /^[A-Za-z0-9_]{1,40}$/;

export const TAG = {
  name: 1000,
  version: 1001,
  release: 1002,
  epoch: 1003,
  summary: 1004,
  description: 1005,
  buildTime: 1006,
  size: 1009,
  vendor: 1011,
  license: 1014,
  packager: 1015,
  group: 1016,
  url: 1020,
  arch: 1022,
  fileSizes: 1028,
  fileModes: 1030,
  fileFlags: 1037,
  sourceRpm: 1044,
  archiveSize: 1046,
  provideName: 1047,
  requireFlags: 1048,
  requireName: 1049,
  requireVersion: 1050,
  conflictFlags: 1053,
  conflictName: 1054,
  conflictVersion: 1055,
  changelogTime: 1080,
  changelogName: 1081,
  changelogText: 1082,
  obsoleteName: 1090,
  provideFlags: 1112,
  provideVersion: 1113,
  obsoleteFlags: 1114,
  obsoleteVersion: 1115,
  dirIndexes: 1116,
  baseNames: 1117,
  dirNames: 1118,
  longSize: 5009,
  longArchiveSize: 271,
} as const;

/** A header's entries, decoded: strings, string lists or numbers. */
export type Header = Map<number, string | string[] | number[]>;

/** A dependency entry (requires, provides, conflicts, obsoletes) as repodata writes it. */
export interface Entry {
  name: string;
  flags?: string;
  epoch?: string;
  version?: string;
  release?: string;
  pre?: boolean;
}

export interface RpmFile {
  path: string;
  type?: 'dir' | 'ghost';
  primary: boolean;
}

export interface Changelog {
  author: string;
  date: number;
  text: string;
}

/** Everything the repository indexes say of a package file (stored as its rpm.metadata). */
export interface RpmMetadata {
  name: string;
  epoch: string;
  version: string;
  release: string;
  arch: string;
  summary: string;
  description: string;
  license: string;
  url: string;
  vendor: string;
  packager: string;
  group: string;
  buildTime: number;
  installedSize: number;
  archiveSize: number;
  sourceRpm: string;
  headerStart: number;
  headerEnd: number;
  requires: Entry[];
  provides: Entry[];
  conflicts: Entry[];
  obsoletes: Entry[];
  files: RpmFile[];
  changelogs: Changelog[];
}

export interface RpmPackage {
  name: string;
  /** Forgejo's package version: `{version}-{release}` (the epoch is metadata). */
  version: string;
  arch: string;
  metadata: RpmMetadata;
  /** The main header as read (for formats that index more of it, such as ALT's pkglist). */
  header: Header;
}

/** A dependency entry as the header has it: name, rpm's sense flags and the raw `[E:]V[-R]`. */
export interface RawEntry {
  name: string;
  flags: number;
  version: string;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Decodes the header at `buf` (its magic first); returns it and its length in bytes. */
export function parseHeader(buf: Buffer, what: string): { header: Header; length: number } {
  if (buf.length < 16 || buf.readUInt32BE(0) !== 0x8eade801) throw badRequest(`${what} has no valid header`);
  const count = buf.readUInt32BE(8);
  const dataSize = buf.readUInt32BE(12);
  const length = 16 + count * 16 + dataSize;
  if (count > 65536 || length > MAX_HEADER) throw badRequest(`${what} is too large`);
  if (buf.length < length) throw badRequest(`${what} is truncated`);
  const data = buf.subarray(16 + count * 16, length);
  const header: Header = new Map();
  const cstrings = (offset: number, n: number) => {
    const out: string[] = [];
    let at = offset;
    for (let i = 0; i < n; i++) {
      const end = data.indexOf(0, at);
      if (end < 0) throw badRequest(`${what} has an unterminated string`);
      out.push(data.toString('utf8', at, end));
      at = end + 1;
    }
    return out;
  };
  for (let i = 0; i < count; i++) {
    const e = 16 + i * 16;
    const tag = buf.readUInt32BE(e);
    const type = buf.readUInt32BE(e + 4);
    const offset = buf.readUInt32BE(e + 8);
    const n = buf.readUInt32BE(e + 12);
    if (offset > data.length) throw badRequest(`${what} has an entry outside its data`);
    const size = { 2: 1, 3: 2, 4: 4, 5: 8 }[type as 2 | 3 | 4 | 5];
    if (size) {
      if (offset + size * n > data.length) throw badRequest(`${what} has an entry outside its data`);
      const nums: number[] = [];
      for (let j = 0; j < n; j++) {
        const at = offset + j * size;
        nums.push(
          size === 1
            ? data.readUInt8(at)
            : size === 2
              ? data.readUInt16BE(at)
              : size === 4
                ? data.readUInt32BE(at)
                : Number(data.readBigUInt64BE(at)),
        );
      }
      header.set(tag, nums);
    } else if (type === 6) header.set(tag, cstrings(offset, 1)[0]!);
    else if (type === 8 || type === 9) header.set(tag, cstrings(offset, type === 9 ? Math.min(n, 1) : n));
  }
  return { header, length };
}

const str = (h: Header, tag: number): string => {
  const v = h.get(tag);
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && typeof v[0] === 'string') return v[0];
  return '';
};
const strs = (h: Header, tag: number): string[] => {
  const v = h.get(tag);
  if (typeof v === 'string') return [v];
  return Array.isArray(v) && typeof v[0] === 'string' ? (v as string[]) : [];
};
const nums = (h: Header, tag: number): number[] => {
  const v = h.get(tag);
  return Array.isArray(v) && typeof v[0] === 'number' ? (v as number[]) : [];
};

const RPMSENSE_RPMLIB = 1 << 24;
const RPMSENSE_PREREQ_BITS = (1 << 6) | (1 << 9) | (1 << 10);

function entries(
  h: Header,
  nameTag: number,
  flagsTag: number,
  versionTag: number,
  requires = false,
): Entry[] {
  const names = strs(h, nameTag);
  const flags = nums(h, flagsTag);
  const versions = strs(h, versionTag);
  const out: Entry[] = [];
  const seen = new Set<string>();
  names.forEach((name, i) => {
    const f = flags[i] ?? 0;
    if (requires && (f & RPMSENSE_RPMLIB || name.startsWith('rpmlib('))) return;
    const e: Entry = { name };
    const cmp = { 2: 'LT', 4: 'GT', 8: 'EQ', 10: 'LE', 12: 'GE' }[f & 0xe];
    const evr = versions[i] ?? '';
    if (cmp && evr) {
      e.flags = cmp;
      const m = /^(?:(\d+):)?([^-]*)(?:-(.*))?$/.exec(evr)!;
      e.epoch = m[1] ?? '0';
      e.version = m[2];
      if (m[3] !== undefined) e.release = m[3];
    }
    if (requires && f & RPMSENSE_PREREQ_BITS) e.pre = true;
    const key = JSON.stringify(e);
    if (!seen.has(key)) out.push(e);
    seen.add(key);
  });
  return out;
}

/** The dependency entries of a kind (`TAG.requireName`, ...) unchanged: rpmlib ones too. */
export function rawEntries(h: Header, nameTag: number, flagsTag: number, versionTag: number): RawEntry[] {
  const flags = nums(h, flagsTag);
  const versions = strs(h, versionTag);
  return strs(h, nameTag).map((name, i) => ({ name, flags: flags[i] ?? 0, version: versions[i] ?? '' }));
}

/** Whether a path is one repodata lists in primary.xml (createrepo's rule). */
const primaryPath = (p: string) => p.startsWith('/etc/') || p === '/usr/lib/sendmail' || /bin\//.test(p);

/** Name, version, architecture and index metadata of the stored .rpm (400 when it is not one). */
export async function readRpm(file: StoredFile): Promise<RpmPackage> {
  const what = 'the package';
  const bytes = async (start: number, length: number) => {
    if (start + length > file.size) throw badRequest(`${what} is truncated`);
    return readAll(await file.open({ start, end: start + length - 1 }));
  };
  if (file.size < LEAD + 16) throw badRequest(`${what} is not an RPM package (too short)`);
  const lead = await bytes(0, LEAD);
  if (lead.readUInt32BE(0) !== 0xedabeedb) throw badRequest(`${what} is not an RPM package (no lead)`);
  if (lead.readUInt16BE(78) !== 5) throw badRequest(`${what} has an unsupported signature type`);
  const sigIntro = await bytes(LEAD, 16);
  if (sigIntro.readUInt32BE(0) !== 0x8eade801) throw badRequest(`${what} has no signature header`);
  const sigLength = 16 + sigIntro.readUInt32BE(8) * 16 + sigIntro.readUInt32BE(12);
  if (sigLength > MAX_HEADER) throw badRequest(`${what} has a too large signature header`);
  parseHeader(await bytes(LEAD, sigLength), `${what}'s signature header`);
  const headerStart = LEAD + sigLength + ((8 - (sigLength % 8)) % 8);
  const intro = await bytes(headerStart, 16);
  if (intro.readUInt32BE(0) !== 0x8eade801) throw badRequest(`${what} has no header`);
  const length = 16 + intro.readUInt32BE(8) * 16 + intro.readUInt32BE(12);
  if (length > MAX_HEADER) throw badRequest(`${what} has a too large header`);
  const { header: h } = parseHeader(await bytes(headerStart, length), `${what}'s header`);

  const name = str(h, TAG.name);
  const version = str(h, TAG.version);
  const release = str(h, TAG.release);
  const sourceRpm = str(h, TAG.sourceRpm);
  const arch = sourceRpm ? str(h, TAG.arch) : 'src';
  if (!NAME.test(name)) throw badRequest(`package name is invalid [name: ${name.slice(0, 100)}]`);
  if (!VERSION.test(version) || !VERSION.test(release))
    throw badRequest(`package version is invalid [version: ${`${version}-${release}`.slice(0, 100)}]`);
  if (!ARCH.test(arch))
    throw badRequest(`package architecture is invalid [architecture: ${arch.slice(0, 40)}]`);

  const dirs = strs(h, TAG.dirNames);
  const dirIndexes = nums(h, TAG.dirIndexes);
  const modes = nums(h, TAG.fileModes);
  const fileFlags = nums(h, TAG.fileFlags);
  const files: RpmFile[] = strs(h, TAG.baseNames).map((base, i) => {
    const path = `${dirs[dirIndexes[i] ?? 0] ?? ''}${base}`;
    const f: RpmFile = { path, primary: primaryPath(path) };
    if (((modes[i] ?? 0) & 0o170000) === 0o040000) f.type = 'dir';
    else if ((fileFlags[i] ?? 0) & (1 << 6)) f.type = 'ghost';
    return f;
  });
  const times = nums(h, TAG.changelogTime);
  const authors = strs(h, TAG.changelogName);
  const texts = strs(h, TAG.changelogText);
  const changelogs = times.map((date, i) => ({ date, author: authors[i] ?? '', text: texts[i] ?? '' }));
  const epoch = nums(h, TAG.epoch)[0];
  const metadata: RpmMetadata = {
    name,
    epoch: epoch === undefined ? '0' : String(epoch),
    version,
    release,
    arch,
    summary: str(h, TAG.summary),
    description: str(h, TAG.description),
    license: str(h, TAG.license),
    url: str(h, TAG.url),
    vendor: str(h, TAG.vendor),
    packager: str(h, TAG.packager),
    group: str(h, TAG.group),
    buildTime: nums(h, TAG.buildTime)[0] ?? 0,
    installedSize: nums(h, TAG.longSize)[0] ?? nums(h, TAG.size)[0] ?? 0,
    archiveSize: nums(h, TAG.longArchiveSize)[0] ?? nums(h, TAG.archiveSize)[0] ?? 0,
    sourceRpm,
    headerStart,
    headerEnd: headerStart + length,
    requires: entries(h, TAG.requireName, TAG.requireFlags, TAG.requireVersion, true),
    provides: entries(h, TAG.provideName, TAG.provideFlags, TAG.provideVersion),
    conflicts: entries(h, TAG.conflictName, TAG.conflictFlags, TAG.conflictVersion),
    obsoletes: entries(h, TAG.obsoleteName, TAG.obsoleteFlags, TAG.obsoleteVersion),
    files,
    changelogs,
  };
  return { name, version: `${version}-${release}`, arch, metadata, header: h };
}
