// Reading a Vagrant box (a gzip'd tar with metadata.json and the provider's files; an optional
// info.json describes it) from the stored upload: the tarball is read to its end (gzip's CRC proves
// it whole); info.json's common keys become the version's metadata, as Forgejo reads them.
// Anything else is a 400 naming the problem.
import { badRequest } from '../../errors.js';
import { compareSemver } from '../semver.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';
import { readRange } from '../zip.js';

/** Box names (one path segment). */
export const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
/** Versions as Vagrant (and Forgejo, with hashicorp/go-version) read them. */
export const VERSION = /^v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
/** Provider names (`virtualbox`, `libvirt`, ...). */
export const PROVIDER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export interface BoxMetadata {
  author?: string;
  description?: string;
  project_url?: string;
  repository_url?: string;
}

const isUrl = (v: string) => /^https?:\/\/\S+$/i.test(v);

/** info.json's common keys (there is no defined format: Forgejo's reading). */
export function parseInfo(text: string): BoxMetadata {
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch {
    throw badRequest('info.json is not valid JSON');
  }
  if (!values || typeof values !== 'object' || Array.isArray(values))
    throw badRequest('info.json is not an object');
  const m: BoxMetadata = {};
  for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
    if (typeof v !== 'string') continue;
    const key = k.toLowerCase();
    if (key === 'description' || key === 'short_description') m.description = v;
    else if ((key === 'website' || key === 'homepage' || key === 'url') && isUrl(v)) m.project_url = v;
    else if ((key === 'repository' || key === 'source') && isUrl(v)) m.repository_url = v;
    else if (key === 'author' || key === 'authors') m.author = v;
  }
  return m;
}

/** The box's metadata (400 when it is no gzip'd tar or holds no metadata.json). */
export async function readBox(file: StoredFile): Promise<BoxMetadata> {
  const what = 'the box';
  const magic = file.size >= 2 ? await readRange(file, 0, 2) : Buffer.alloc(0);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) throw badRequest(`${what} is not a gzip-compressed tar`);
  const keep = (n: string) => n === 'info.json' || n === 'metadata.json';
  const contents = await readTar(await file.open(), file.size, 'gzip', what, keep);
  if (!contents.kept.has('metadata.json')) throw badRequest(`${what} has no metadata.json`);
  const info = contents.kept.get('info.json');
  return info ? parseInfo(info.toString('utf8')) : {};
}

/** Orders box versions (missing minor and patch numbers as 0). */
export function compareBoxVersions(a: string, b: string): number {
  const norm = (v: string) => {
    const m = /^v?(\d+(?:\.\d+){0,2})(.*)$/.exec(v);
    if (!m) return v;
    const parts = m[1]!.split('.');
    while (parts.length < 3) parts.push('0');
    return parts.map((p) => String(Number(p))).join('.') + m[2];
  };
  return compareSemver(norm(a), norm(b));
}
