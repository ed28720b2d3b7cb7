// Reading an Arch Linux package (alpm-package): a tar archive compressed with zstd, xz or gzip
// (told by its magic bytes), read to its end, whose `.PKGINFO` (`key = value` lines) names the
// package. Anything else is a 400 naming the problem. Names and versions are checked as
// Forgejo checks them.
import type { Readable } from 'node:stream';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar, type Codec } from '../tar.js';

/** alpm-package-name: letters, digits and `@._+-`, not starting with `-` or `.`. */
const NAME = /^[a-zA-Z0-9@_+][a-zA-Z0-9@._+-]{0,254}$/;
/** [epoch:]pkgver-pkgrel. */
const VERSION = /^(?:[0-9]{1,9}:)?[a-zA-Z0-9._+]+-[0-9]+(?:\.[0-9]+)?$/;
const ARCHITECTURE = /^[a-zA-Z0-9_]{1,64}$/;

/** Fields of .PKGINFO kept for the database's desc file (alpm-repo-desc), by desc section. */
const LISTS = {
  license: 'LICENSE',
  group: 'GROUPS',
  provides: 'PROVIDES',
  depend: 'DEPENDS',
  optdepend: 'OPTDEPENDS',
  makedepend: 'MAKEDEPENDS',
  checkdepend: 'CHECKDEPENDS',
  conflict: 'CONFLICTS',
  replaces: 'REPLACES',
} as const;

export interface ArchPackage {
  name: string;
  version: string;
  architecture: string;
  base: string;
  description: string;
  url: string;
  builddate: string;
  packager: string;
  /** Installed size. */
  size: string;
  /** Lists by desc section (`DEPENDS`: [...]). */
  lists: Record<string, string[]>;
}

function codecOf(magic: Buffer): Codec | undefined {
  if (magic.subarray(0, 4).equals(Buffer.from([0x28, 0xb5, 0x2f, 0xfd]))) return 'zstd';
  if (magic.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]))) return 'xz';
  if (magic[0] === 0x1f && magic[1] === 0x8b) return 'gzip';
  return undefined;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The package's .PKGINFO, checked (400 when the file is no Arch package). */
export async function readArchPackage(file: StoredFile): Promise<ArchPackage> {
  const magic = file.size >= 6 ? await readAll(await file.open({ start: 0, end: 5 })) : Buffer.alloc(0);
  const codec = codecOf(magic);
  if (!codec) throw badRequest('the package is not a zstd, xz or gzip compressed tar archive');
  const tar = await readTar(await file.open(), file.size, codec, 'the package', (n) => n === '.PKGINFO');
  const info = tar.kept.get('.PKGINFO');
  if (!info) throw badRequest('.PKGINFO file is missing');
  return parsePkginfo(info.toString('utf8'));
}

export function parsePkginfo(text: string): ArchPackage {
  const one = new Map<string, string>();
  const lists: Record<string, string[]> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.includes(' = ')) continue;
    const at = line.indexOf(' = ');
    const key = line.slice(0, at).trim();
    const value = line.slice(at + 3).trim();
    const section = LISTS[key as keyof typeof LISTS];
    if (section) (lists[section] ??= []).push(value);
    else if (!one.has(key)) one.set(key, value);
  }
  const name = one.get('pkgname') ?? '';
  const version = one.get('pkgver') ?? '';
  const architecture = one.get('arch') ?? '';
  if (!NAME.test(name)) throw badRequest(`invalid package name [name: ${name.slice(0, 100)}]`);
  if (!VERSION.test(version)) throw badRequest(`invalid package version [version: ${version.slice(0, 100)}]`);
  if (!ARCHITECTURE.test(architecture)) {
    throw badRequest(`invalid package architecture [arch: ${architecture.slice(0, 100)}]`);
  }
  const url = one.get('url') ?? '';
  return {
    name,
    version,
    architecture,
    base: one.get('pkgbase') || name,
    description: one.get('pkgdesc') ?? '',
    url: /^https?:\/\/\S+$/.test(url) ? url : '',
    builddate: /^\d{1,15}$/.test(one.get('builddate') ?? '') ? one.get('builddate')! : '',
    packager: one.get('packager') ?? '',
    size: /^\d{1,15}$/.test(one.get('size') ?? '') ? one.get('size')! : '',
    lists,
  };
}
