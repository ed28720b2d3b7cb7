// The PyPI format: names (PEP 508, normalized as PEP 503 says), versions (PEP 440), file names,
// the distribution files themselves (checked sound before they are kept), the metadata twine
// sends with an upload, and the simple index of a project (PEP 503 HTML and PEP 691 JSON) with
// each file's sha256 and its version's Requires-Python.
import type { Identity } from '../../auth/identity.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import * as store from '../store.js';
import type { Db } from '../../db/database.js';
import type { PackageService, StoredFile } from '../service.js';
import type { PackageRow } from '../tables.js';
import { readTar } from '../tar.js';
import { readRange, readZipDirectory, readZipMember } from '../zip.js';

/** PEP 508 project names. */
const NAME = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/i;
/** PEP 440 versions (public and local), as Forgejo checks them. */
const VERSION =
  /^(?:[1-9][0-9]*!)?(?:[0-9]+(?:\.[0-9]+)*)(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?(?:[-_.]?(?:post|rev|r)[-_.]?[0-9]*|-[0-9]+)?(?:[-_.]?dev[-_.]?[0-9]*)?(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?$/i;
/** Distribution files: wheels, source archives, eggs. */
const FILE = /^[A-Za-z0-9][A-Za-z0-9._+-]*\.(?:whl|tar\.gz|tar\.bz2|tar\.xz|zip|egg)$/;

/** PEP 503: runs of `-`, `_` and `.` become one `-`, lower case. */
export function normalizeName(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

export function checkName(name: string): void {
  if (!NAME.test(name) || name.length > 255) throw badRequest(`invalid package name [name: ${name}]`);
}

export function checkVersion(version: string): void {
  if (!VERSION.test(version) || version.length > 255) {
    throw badRequest(`invalid package version [version: ${version}]: not a PEP 440 version`);
  }
}

export function checkFileName(name: string): void {
  if (!FILE.test(name) || name.length > 255) {
    throw badRequest(`invalid file name [name: ${name}]: a .whl, .tar.gz, .zip or .egg distribution`);
  }
}

/** The most of a wheel's METADATA read. */
const METADATA_MAX = 4 << 20;

/**
 * The stored distribution is what its name says, sound (else 400): a wheel is a zip with
 * `{name}.dist-info/METADATA` and `WHEEL`; a .zip or .egg a zip; an sdist a tar (gzip'd or
 * bzip2'd, read to its end) with `{name}-{version}/PKG-INFO`; a .tar.xz starts as xz data does.
 */
export async function checkDistribution(filename: string, file: StoredFile): Promise<void> {
  const what = `the file ${filename}`;
  if (/\.(?:whl|zip|egg)$/.test(filename)) {
    const entries = await readZipDirectory(file, what);
    if (!filename.endsWith('.whl')) return;
    const find = (member: string) =>
      entries.find((e) => new RegExp(`^[^/]+\\.dist-info/${member}$`).test(e.name));
    const metadata = find('METADATA');
    if (!metadata || !find('WHEEL'))
      throw badRequest(`${what} is no wheel: it has no *.dist-info/METADATA and WHEEL`);
    await readZipMember(file, metadata, what, METADATA_MAX);
    return;
  }
  if (filename.endsWith('.tar.xz')) {
    const head = file.size >= 6 ? await readRange(file, 0, 6) : Buffer.alloc(0);
    if (!head.equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00])))
      throw badRequest(`${what} is not xz data`);
    return;
  }
  const codec = filename.endsWith('.tar.bz2') ? 'bzip2' : 'gzip';
  const isPkgInfo = (n: string) => /^[^/]+\/PKG-INFO$/.test(n);
  const tar = await readTar(await file.open(), file.size, codec, what, isPkgInfo);
  if (tar.kept.size === 0)
    throw badRequest(`${what} is no source distribution: it has no {name}-{version}/PKG-INFO`);
}

/** The metadata fields of twine's upload form that Anvil keeps with a version. */
const METADATA_FIELDS: Record<string, string> = {
  author: 'author',
  author_email: 'author_email',
  description: 'long_description',
  description_content_type: 'long_description_content_type',
  summary: 'summary',
  home_page: 'project_url',
  license: 'license',
  keywords: 'keywords',
  requires_python: 'requires_python',
};

export function metadataOf(fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [form, key] of Object.entries(METADATA_FIELDS)) {
    const v = fields[form];
    if (v) out[key] = v.slice(0, 65536);
  }
  return out;
}

export interface IndexFile {
  filename: string;
  url: string;
  sha256: string;
  requiresPython: string;
}

export interface PypiServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'requirePackage'>;
  rootUrl: string;
}

export class PypiService {
  constructor(private readonly deps: PypiServiceDeps) {}

  /** The project `name` (any spelling PEP 503 normalizes alike) of `owner`, else 404. */
  async requireProject(owner: UserRow, name: string, identity: Identity | null): Promise<PackageRow> {
    return this.deps.packages.requirePackage(owner, 'pypi', normalizeName(name), identity);
  }

  /** Every file of every version of a project, oldest version first, for the simple index. */
  async indexFiles(owner: UserRow, pkg: PackageRow): Promise<IndexFile[]> {
    const db = this.deps.db;
    const versions = await store.versionsOf(db, pkg.id);
    const files = await store.filesOfVersions(
      db,
      versions.map((v) => v.id),
    );
    const byVersion = new Map(versions.map((v) => [v.id, v]));
    const base = `${this.deps.rootUrl}api/packages/${encodeURIComponent(owner.name)}/pypi/files`;
    const out: IndexFile[] = [];
    for (const f of files) {
      const v = byVersion.get(f.version_id);
      if (!v) continue;
      let requiresPython = '';
      try {
        requiresPython = String(
          (JSON.parse(v.metadata_json) as Record<string, unknown>)['requires_python'] ?? '',
        );
      } catch {
        // metadata written by Anvil is JSON; anything else counts as none
      }
      out.push({
        filename: f.name,
        url: `${base}/${encodeURIComponent(pkg.name)}/${encodeURIComponent(v.version)}/${encodeURIComponent(f.name)}`,
        sha256: f.hash_sha256,
        requiresPython,
      });
    }
    return out;
  }
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** PEP 503: the project's page of links. */
export function simpleHtml(name: string, files: IndexFile[]): string {
  const links = files.map((f) => {
    const rp = f.requiresPython ? ` data-requires-python="${escapeHtml(f.requiresPython)}"` : '';
    return `    <a href="${escapeHtml(f.url)}#sha256=${f.sha256}"${rp}>${escapeHtml(f.filename)}</a><br/>`;
  });
  return [
    '<!DOCTYPE html>',
    '<html>',
    `  <head><meta name="pypi:repository-version" content="1.0"><title>Links for ${escapeHtml(name)}</title></head>`,
    '  <body>',
    `    <h1>Links for ${escapeHtml(name)}</h1>`,
    ...links,
    '  </body>',
    '</html>',
    '',
  ].join('\n');
}

/** PEP 691: the same as JSON. */
export function simpleJson(name: string, files: IndexFile[]) {
  return {
    meta: { 'api-version': '1.0' },
    name: normalizeName(name),
    files: files.map((f) => ({
      filename: f.filename,
      url: f.url,
      hashes: { sha256: f.sha256 },
      ...(f.requiresPython ? { 'requires-python': f.requiresPython } : {}),
    })),
  };
}

export function notAProject(name: string) {
  return notFound(`package does not exist [name: ${name}]`);
}
