// Reading a CRAN package (a source .tar.gz as `R CMD build` makes it, or a binary .zip as
// `R CMD INSTALL --build` makes it on Windows and macOS) from the stored upload: its DESCRIPTION
// (at the root or in the one folder the archive holds) names the package and its version and
// says what R needs to resolve it. A source tarball is read to its end (gzip's CRC proves it
// whole). Anything else is a 400 naming the problem.
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';
import { readRange, readZipDirectory, readZipMember } from '../zip.js';

/** R's rule for package names (Forgejo's too). */
const NAME = /^[a-zA-Z][a-zA-Z0-9.]*[a-zA-Z0-9]$/;
/** R's package versions: at least two numbers separated by `.` or `-`. */
const VERSION = /^[0-9]+(?:[.-][0-9]+)+$/;
const FIELD = /^\S+:/;
const MAX_DESCRIPTION = 1 << 20;

/** What is kept of a DESCRIPTION (the version's metadata, Forgejo's field names). */
export interface CranMetadata {
  title?: string;
  description?: string;
  project_url?: string[];
  license?: string;
  authors?: string[];
  depends?: string[];
  imports?: string[];
  suggests?: string[];
  linking_to?: string[];
  needs_compilation: boolean;
}

export interface CranPackage {
  name: string;
  version: string;
  /** `.tar.gz` (source) or `.zip` (binary). */
  extension: '.tar.gz' | '.zip';
  metadata: CranMetadata;
}

const list = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Parses a DESCRIPTION file (Debian control syntax: `Field: value`, continuation lines indented). */
export function parseDescription(text: string): Omit<CranPackage, 'extension'> {
  const fields = new Map<string, string>();
  let current: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    if (FIELD.test(line) && !/^\s/.test(raw)) {
      const at = line.indexOf(':');
      current = line.slice(0, at).trim();
      fields.set(current, line.slice(at + 1).trim());
    } else if (current) fields.set(current, `${fields.get(current)} ${line}`.trim());
  }
  const name = fields.get('Package') ?? '';
  const version = fields.get('Version') ?? '';
  if (!name) throw badRequest('DESCRIPTION names no package (Package:)');
  if (!NAME.test(name) || name.length > 255) throw badRequest(`package name is invalid [name: ${name}]`);
  if (!version) throw badRequest('DESCRIPTION has no Version:');
  if (!VERSION.test(version) || version.length > 255) {
    throw badRequest(`package version is invalid [version: ${version}]`);
  }
  const metadata: CranMetadata = { needs_compilation: fields.get('NeedsCompilation') === 'yes' };
  const set = (key: keyof CranMetadata, field: string, fn: (v: string) => unknown = (v) => v) => {
    const v = fields.get(field);
    if (v) (metadata as unknown as Record<string, unknown>)[key] = fn(v);
  };
  set('title', 'Title');
  set('description', 'Description');
  set('project_url', 'URL', list);
  set('license', 'License');
  set('authors', 'Author', (v) => list(v.replace(/[[(].+?[\])]/g, '')));
  set('depends', 'Depends', list);
  set('imports', 'Imports', list);
  set('suggests', 'Suggests', list);
  set('linking_to', 'LinkingTo', list);
  return { name, version, metadata };
}

/** DESCRIPTION at the root or one folder deep (`pkg/DESCRIPTION`). */
const isDescription = (name: string) => /^(?:[^/]+\/)?DESCRIPTION$/.test(name.replace(/^\.\//, ''));

/** The package in a stored upload: a gzipped tarball or a zip, told apart by their magic bytes. */
export async function readCranPackage(file: StoredFile): Promise<CranPackage> {
  if (file.size < 4) throw badRequest('the package is neither a gzipped tarball nor a zip');
  const magic = await readRange(file, 0, 4);
  if (magic[0] === 0x1f && magic[1] === 0x8b) {
    const what = 'the package tarball';
    const contents = await readTar(await file.open(), file.size, 'gzip', what, isDescription);
    const found = [...contents.kept.entries()].find(([n]) => isDescription(n));
    if (!found) throw badRequest('DESCRIPTION file is missing');
    return {
      ...parseDescription(found[1].subarray(0, MAX_DESCRIPTION).toString('utf8')),
      extension: '.tar.gz',
    };
  }
  if (magic.toString('latin1') === 'PK\x03\x04') {
    const what = 'the package zip';
    const entries = await readZipDirectory(file, what);
    const entry = entries.find((e) => isDescription(e.name));
    if (!entry) throw badRequest('DESCRIPTION file is missing');
    const text = (await readZipMember(file, entry, what, MAX_DESCRIPTION)).toString('utf8');
    return { ...parseDescription(text), extension: '.zip' };
  }
  throw badRequest('the package is neither a gzipped tarball nor a zip');
}

/** Compares R versions number by number. */
export function compareCranVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map(Number);
  const pb = b.split(/[.-]/).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? -1) - (pb[i] ?? -1);
    if (d) return d;
  }
  return 0;
}
