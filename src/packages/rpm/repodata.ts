// The repository metadata of a group (createrepo's format, which dnf and yum read):
// `repodata/primary.xml.gz` (each package: name, version, checksum, sizes, location, its
// dependencies and its files in /etc and bin directories), `filelists.xml.gz` (every file),
// `other.xml.gz` (changelogs), and `repomd.xml` listing them with their digests and sizes, signed
// with the owner's OpenPGP key in `repomd.xml.asc` (a detached, armored signature, what dnf's
// repo_gpgcheck verifies).
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { loadOpenpgp } from '../../signing/openpgp.js';
import type { Entry, RpmMetadata } from './header.js';

export interface IndexedRpm {
  metadata: RpmMetadata;
  /** Below the group's URL: `package/{name}/{version}/{arch}/{file}`. */
  href: string;
  size: number;
  sha256: string;
  created: number;
}

export interface RepodataFile {
  path: string;
  content: Buffer;
}

const esc = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

function entryList(tag: string, list: Entry[]): string {
  if (!list.length) return '';
  const items = list.map((e) => {
    let a = `<rpm:entry name="${esc(e.name)}"`;
    if (e.flags) a += ` flags="${e.flags}" epoch="${esc(e.epoch ?? '0')}" ver="${esc(e.version ?? '')}"`;
    if (e.flags && e.release !== undefined) a += ` rel="${esc(e.release)}"`;
    if (e.pre) a += ' pre="1"';
    return `${a}/>`;
  });
  return `<rpm:${tag}>${items.join('')}</rpm:${tag}>`;
}

const fileLine = (f: RpmMetadata['files'][number]) =>
  `<file${f.type ? ` type="${f.type}"` : ''}>${esc(f.path)}</file>`;

const version = (m: RpmMetadata) =>
  `<version epoch="${esc(m.epoch)}" ver="${esc(m.version)}" rel="${esc(m.release)}"/>`;

/** A package's entries in primary.xml, filelists.xml and other.xml (kept per file, see service.ts). */
export interface RpmFragments {
  primary: string;
  filelists: string;
  other: string;
}

/** The package's three entries, rendered once (at upload) and assembled by every rebuild. */
export function fragmentsOf({ metadata: m, href, size, sha256: sum, created }: IndexedRpm): RpmFragments {
  const primary = [
    '<package type="rpm">',
    `<name>${esc(m.name)}</name>`,
    `<arch>${esc(m.arch)}</arch>`,
    version(m),
    `<checksum type="sha256" pkgid="YES">${sum}</checksum>`,
    `<summary>${esc(m.summary)}</summary>`,
    `<description>${esc(m.description)}</description>`,
    `<packager>${esc(m.packager)}</packager>`,
    `<url>${esc(m.url)}</url>`,
    `<time file="${created}" build="${m.buildTime}"/>`,
    `<size package="${size}" installed="${m.installedSize}" archive="${m.archiveSize}"/>`,
    `<location href="${esc(href)}"/>`,
    '<format>',
    `<rpm:license>${esc(m.license)}</rpm:license>`,
    `<rpm:vendor>${esc(m.vendor)}</rpm:vendor>`,
    `<rpm:group>${esc(m.group)}</rpm:group>`,
    `<rpm:buildhost></rpm:buildhost>`,
    `<rpm:sourcerpm>${esc(m.sourceRpm)}</rpm:sourcerpm>`,
    `<rpm:header-range start="${m.headerStart}" end="${m.headerEnd}"/>`,
    entryList('provides', m.provides),
    entryList('requires', m.requires),
    entryList('conflicts', m.conflicts),
    entryList('obsoletes', m.obsoletes),
    ...m.files.filter((f) => f.primary).map(fileLine),
    '</format>',
    '</package>',
  ].join('\n');
  const filelists =
    `<package pkgid="${sum}" name="${esc(m.name)}" arch="${esc(m.arch)}">\n${version(m)}\n` +
    `${m.files.map(fileLine).join('\n')}\n</package>`;
  const other =
    `<package pkgid="${sum}" name="${esc(m.name)}" arch="${esc(m.arch)}">\n${version(m)}\n` +
    m.changelogs
      .map((c) => `<changelog author="${esc(c.author)}" date="${c.date}">${esc(c.text)}</changelog>\n`)
      .join('') +
    '</package>';
  return { primary, filelists, other };
}

const OPENERS = {
  primary:
    '<metadata xmlns="http://linux.duke.edu/metadata/common" xmlns:rpm="http://linux.duke.edu/metadata/rpm"',
  filelists: '<filelists xmlns="http://linux.duke.edu/metadata/filelists"',
  other: '<otherdata xmlns="http://linux.duke.edu/metadata/other"',
} as const;
const CLOSERS = { primary: '</metadata>', filelists: '</filelists>', other: '</otherdata>' } as const;

/** One whole document (primary.xml, ...) from the packages' entries, in their order. */
function document(kind: keyof RpmFragments, pkgs: RpmFragments[]): Buffer {
  const head = `<?xml version="1.0" encoding="UTF-8"?>\n${OPENERS[kind]} packages="${pkgs.length}">\n`;
  const parts: string[] = [head];
  for (let i = 0; i < pkgs.length; i++) parts.push(i ? '\n' : '', pkgs[i]![kind]);
  parts.push(`\n${CLOSERS[kind]}\n`);
  return Buffer.from(parts.join(''));
}

const gzip = (b: Buffer) =>
  new Promise<Buffer>((resolve, reject) =>
    zlib.gzip(b, { level: 9 }, (err, out) => (err ? reject(err) : resolve(out))),
  );

/** Every repodata file of the group, signed with `privateKey`; none when it has no package. */
export async function buildRepodata(
  pkgs: RpmFragments[],
  privateKey: string,
  now: number,
): Promise<RepodataFile[]> {
  if (!pkgs.length) return [];
  const kinds = ['primary', 'filelists', 'other'] as const;
  const opened = kinds.map((k) => document(k, pkgs));
  // Compressed on libuv's threads, the three at once.
  const zipped = await Promise.all(opened.map(gzip));
  const out: RepodataFile[] = [];
  let repomd =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<repomd xmlns="http://linux.duke.edu/metadata/repo" xmlns:rpm="http://linux.duke.edu/metadata/rpm">\n' +
    `<revision>${now}</revision>\n`;
  for (const [i, type] of kinds.entries()) {
    const open = opened[i]!;
    const gz = zipped[i]!;
    const path = `${type}.xml.gz`;
    out.push({ path, content: gz });
    repomd +=
      `<data type="${type}">\n` +
      `<checksum type="sha256">${sha256(gz)}</checksum>\n` +
      `<open-checksum type="sha256">${sha256(open)}</open-checksum>\n` +
      `<location href="repodata/${path}"/>\n` +
      `<timestamp>${now}</timestamp>\n` +
      `<size>${gz.length}</size>\n` +
      `<open-size>${open.length}</open-size>\n` +
      '</data>\n';
  }
  repomd += '</repomd>\n';
  const openpgp = await loadOpenpgp();
  const signingKeys = await openpgp.readPrivateKey({ armoredKey: privateKey });
  const asc = await openpgp.sign({
    message: await openpgp.createMessage({ binary: Buffer.from(repomd) }),
    signingKeys,
    detached: true,
  });
  out.push(
    { path: 'repomd.xml', content: Buffer.from(repomd) },
    { path: 'repomd.xml.asc', content: Buffer.from(asc) },
  );
  return out;
}
