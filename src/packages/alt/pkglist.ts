// The repository files of an ALT Linux (apt-rpm) group, per architecture, as Forgejo writes them
// (https://www.altlinux.org/APT_в_ALT_Linux/CreateRepository): `base/pkglist.classic`, the RPM
// headers of the packages one after the other (name, version, summary, dependencies, files,
// changelog, and apt's own tags: file name and size, MD5 and BLAKE2b of the .rpm, the directory
// `RPMS.classic`), the same compressed with xz, `base/release.classic` (the component) and
// `base/release` (MD5Sum and BLAKE2b of the three). Nothing is signed: Forgejo serves no key.
// Unlike Forgejo, a header keeps the dependencies' names (Forgejo leaves them empty), lists each
// directory once with DIRINDEXES, pads with NULs outside the strings and orders its tags, which is
// what librpm's header reader expects.
import crypto from 'node:crypto';
import { xz } from '../debian/repository.js';
import { TAG, type RawEntry, type RpmMetadata } from '../rpm/header.js';

/** What a package file's `rpm.metadata` says in the ALT format: raw dependencies, and the BLAKE2b. */
export interface AltMetadata extends Omit<RpmMetadata, 'requires' | 'provides' | 'conflicts' | 'obsoletes'> {
  requires: RawEntry[];
  provides: RawEntry[];
  conflicts: RawEntry[];
  obsoletes: RawEntry[];
  /** BLAKE2b-512 of the .rpm, hex. */
  blake2b: string;
}

export interface IndexedAltRpm {
  metadata: AltMetadata;
  fileName: string;
  size: number;
  md5: string;
}

export interface AltRepositoryFile {
  /** `{arch}/base/{name}`. */
  path: string;
  content: Buffer;
}

/** apt-rpm's own header tags. */
export const APT_TAG = {
  fileName: 1000000,
  fileSize: 1000001,
  md5: 1000005,
  blake2b: 1000009,
  directory: 1000010,
} as const;

const INT32 = 4;
const STRING = 6;
const STRING_ARRAY = 8;
const I18NSTRING = 9;

type Value =
  | { type: typeof INT32; values: number[] }
  | { type: typeof STRING | typeof I18NSTRING; value: string }
  | { type: typeof STRING_ARRAY; values: string[] };

const u32 = (n: number) => (Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), 0xffffffff) : 0);

/** An RPM header (magic, index, data) of the entries, in tag order, INT32 data aligned to 4. */
export function encodeHeader(entries: Map<number, Value>): Buffer {
  const tags = [...entries.keys()].sort((a, b) => a - b);
  const index = Buffer.alloc(tags.length * 16);
  const parts: Buffer[] = [];
  let size = 0;
  tags.forEach((tag, i) => {
    const v = entries.get(tag)!;
    let bytes: Buffer;
    let count: number;
    if (v.type === INT32) {
      const pad = (4 - (size % 4)) % 4;
      if (pad) {
        parts.push(Buffer.alloc(pad));
        size += pad;
      }
      bytes = Buffer.alloc(v.values.length * 4);
      v.values.forEach((n, j) => bytes.writeUInt32BE(u32(n), j * 4));
      count = v.values.length;
    } else if (v.type === STRING_ARRAY) {
      bytes = Buffer.concat(v.values.map((s) => Buffer.from(`${s}\0`)));
      count = v.values.length;
    } else {
      bytes = Buffer.from(`${v.value}\0`);
      count = 1;
    }
    index.writeUInt32BE(tag, i * 16);
    index.writeUInt32BE(v.type, i * 16 + 4);
    index.writeUInt32BE(size, i * 16 + 8);
    index.writeUInt32BE(count, i * 16 + 12);
    parts.push(bytes);
    size += bytes.length;
  });
  const intro = Buffer.alloc(16);
  intro.writeUInt32BE(0x8eade801, 0);
  intro.writeUInt32BE(tags.length, 8);
  intro.writeUInt32BE(size, 12);
  return Buffer.concat([intro, index, ...parts]);
}

function packageHeader(p: IndexedAltRpm): Buffer {
  const m = p.metadata;
  const e = new Map<number, Value>();
  const str = (tag: number, value: string) => e.set(tag, { type: STRING, value });
  const deps = (list: RawEntry[], names: number, flags: number, versions: number) => {
    if (!list.length) return;
    e.set(names, { type: STRING_ARRAY, values: list.map((d) => d.name) });
    e.set(flags, { type: INT32, values: list.map((d) => d.flags) });
    e.set(versions, { type: STRING_ARRAY, values: list.map((d) => d.version) });
  };
  str(TAG.name, m.name);
  str(TAG.version, m.version);
  str(TAG.release, m.release);
  if (m.epoch !== '0' && /^\d+$/.test(m.epoch)) e.set(TAG.epoch, { type: INT32, values: [Number(m.epoch)] });
  e.set(TAG.summary, { type: I18NSTRING, value: m.summary });
  e.set(TAG.description, { type: I18NSTRING, value: m.description });
  e.set(TAG.buildTime, { type: INT32, values: [m.buildTime] });
  e.set(TAG.size, { type: INT32, values: [m.installedSize] });
  str(TAG.license, m.license);
  str(TAG.packager, m.packager);
  str(TAG.group, m.group);
  str(TAG.url, m.url);
  str(TAG.arch, m.arch);
  str(TAG.sourceRpm, m.sourceRpm);
  deps(m.provides, TAG.provideName, TAG.provideFlags, TAG.provideVersion);
  deps(m.requires, TAG.requireName, TAG.requireFlags, TAG.requireVersion);
  deps(m.conflicts, TAG.conflictName, TAG.conflictFlags, TAG.conflictVersion);
  deps(m.obsoletes, TAG.obsoleteName, TAG.obsoleteFlags, TAG.obsoleteVersion);
  if (m.changelogs.length) {
    e.set(TAG.changelogTime, { type: INT32, values: m.changelogs.map((c) => c.date) });
    e.set(TAG.changelogName, { type: STRING_ARRAY, values: m.changelogs.map((c) => c.author) });
    e.set(TAG.changelogText, { type: STRING_ARRAY, values: m.changelogs.map((c) => c.text) });
  }
  if (m.files.length) {
    const dirs: string[] = [];
    const dirIndexes: number[] = [];
    const baseNames: string[] = [];
    for (const f of m.files) {
      const cut = f.path.lastIndexOf('/') + 1;
      const dir = f.path.slice(0, cut);
      let at = dirs.indexOf(dir);
      if (at < 0) at = dirs.push(dir) - 1;
      dirIndexes.push(at);
      baseNames.push(f.path.slice(cut));
    }
    e.set(TAG.dirIndexes, { type: INT32, values: dirIndexes });
    e.set(TAG.baseNames, { type: STRING_ARRAY, values: baseNames });
    e.set(TAG.dirNames, { type: STRING_ARRAY, values: dirs });
  }
  str(APT_TAG.fileName, p.fileName);
  e.set(APT_TAG.fileSize, { type: INT32, values: [p.size] });
  str(APT_TAG.md5, p.md5);
  str(APT_TAG.blake2b, m.blake2b);
  str(APT_TAG.directory, 'RPMS.classic');
  return encodeHeader(e);
}

const hash = (algorithm: string, b: Buffer) => crypto.createHash(algorithm).update(b).digest('hex');

/** Every repository file of a group (none when it has no package), for each architecture. */
export async function buildAltRepository(
  pkgs: IndexedAltRpm[],
  label: string,
  now: number,
): Promise<AltRepositoryFile[]> {
  const byArch = new Map<string, IndexedAltRpm[]>();
  for (const p of pkgs) byArch.set(p.metadata.arch, [...(byArch.get(p.metadata.arch) ?? []), p]);
  const out: AltRepositoryFile[] = [];
  const date = new Date(now * 1000).toUTCString().replace(/GMT$/, 'UTC');
  for (const [arch, list] of [...byArch].sort(([a], [b]) => a.localeCompare(b))) {
    const pkglist = Buffer.concat(list.map(packageHeader));
    const releaseClassic = Buffer.from(
      `Archive: Alt Linux Team\nComponent: classic\nVersion: ${now}\nOrigin: Alt Linux Team\n` +
        `Label: ${label}\nArchitecture: ${arch}\nNotAutomatic: false\n`,
    );
    const files: Array<[string, Buffer]> = [
      ['pkglist.classic', pkglist],
      ['pkglist.classic.xz', await xz(pkglist)],
      ['release.classic', releaseClassic],
    ];
    const sums = (algorithm: string) =>
      files.map(([name, b]) => ` ${hash(algorithm, b)} ${b.length} base/${name}\n`).join('');
    const release = Buffer.from(
      `Origin: ${label}\nLabel: ${label}\nSuite: Sisyphus\nCodename: ${now}\nDate: ${date}\n` +
        `Architectures: ${arch}\nMD5Sum:\n${sums('md5')}BLAKE2b:\n${sums('blake2b512')}\n\n`,
    );
    for (const [name, content] of [...files, ['release', release] as [string, Buffer]])
      out.push({ path: `${arch}/base/${name}`, content });
  }
  return out;
}
