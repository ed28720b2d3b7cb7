// What a Swift package release is made of (SE-0292, as Forgejo reads it): the scope and name
// rules, versions as Forgejo parses them (a leading `v`, one to many numeric segments, kept as
// their `major.minor.patch` core), the manifests of a source archive (`Package.swift` and the
// `Package@swift-X[.Y[.Z]].swift` alternates, wherever they are in the zip, each at most 128 KiB,
// with its `swift-tools-version`), and the optional `metadata` part (schema.org SoftwareSourceCode).
// No HTTP here.
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readZipDirectory, readZipMember } from '../zip.js';

export const SCOPE_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9-]{0,38}$/;
export const NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9-_]{0,99}$/;

const MAX_MANIFEST = 128 * 1024;
const MANIFEST = /^Package(?:@swift-(\d+(?:\.\d+)?(?:\.\d+)?))?\.swift$/;
const TOOLS_VERSION = /^\/\/ swift-tools-version:\s*(\d+(?:\.\d+)?(?:\.\d+)?)/;
/** Versions as Forgejo's version library reads them. */
const VERSION =
  /^v?([0-9]+(?:\.[0-9]+)*?)(?:-([0-9]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)|(?:-?([A-Za-z\-~]+[0-9A-Za-z\-~]*(?:\.[0-9A-Za-z\-~]+)*)))?(?:\+([0-9A-Za-z\-~]+(?:\.[0-9A-Za-z\-~]+)*))?$/;

export const PROPERTY_SCOPE = 'swift.scope';
export const PROPERTY_NAME = 'swift.name';
export const PROPERTY_REPOSITORY_URL = 'swift.repository_url';

/** The numeric segments of a version (at least three), or undefined when it is none. */
function segments(v: string): number[] | undefined {
  if (v.length > 128) return undefined;
  const m = VERSION.exec(v);
  if (!m) return undefined;
  const parts = m[1]!.split('.').map(Number);
  if (parts.some((n) => !Number.isSafeInteger(n))) return undefined;
  while (parts.length < 3) parts.push(0);
  return parts;
}

/** `major.minor.patch` of a version (`v1.2` → `1.2.0`), or undefined when it is none. */
export function versionCore(v: string): string | undefined {
  return segments(v)?.slice(0, 3).join('.');
}

/** `major.minor`, with `.patch` when it is not 0 (how manifests name Swift versions). */
export function trimmedVersion(v: string): string | undefined {
  const s = segments(v);
  if (!s) return undefined;
  return s[2] === 0 ? `${s[0]}.${s[1]}` : `${s[0]}.${s[1]}.${s[2]}`;
}

export interface Manifest {
  content: string;
  tools_version?: string;
}

export interface Person {
  name?: string;
  givenName?: string;
  middleName?: string;
  familyName?: string;
}

/** What is kept of a release (the version's metadata JSON, Forgejo's field names). */
export interface SwiftMetadata {
  description?: string;
  keywords?: string[];
  repository_url?: string;
  license?: string;
  author?: Person;
  /** By Swift version, '' for `Package.swift`. */
  manifests: Record<string, Manifest>;
}

/** The manifests of a source archive: 400 when it is no zip or `Package.swift` is missing. */
export async function readManifests(file: StoredFile): Promise<Record<string, Manifest>> {
  const manifests: Record<string, Manifest> = {};
  for (const entry of await readZipDirectory(file, 'source archive')) {
    const m = MANIFEST.exec(entry.name.slice(entry.name.lastIndexOf('/') + 1));
    if (!m) continue;
    if (entry.size > MAX_MANIFEST) throw badRequest('Package.swift file is too large');
    let swiftVersion = '';
    if (m[1]) {
      const v = trimmedVersion(m[1]);
      if (v === undefined) throw badRequest('manifest version is invalid');
      swiftVersion = v;
    }
    const content = (await readZipMember(file, entry, 'source archive', MAX_MANIFEST)).toString('utf8');
    const manifest: Manifest = { content };
    const tools = TOOLS_VERSION.exec(content);
    if (tools) manifest.tools_version = trimmedVersion(tools[1]!) ?? tools[1]!;
    manifests[swiftVersion] = manifest;
  }
  if (!manifests['']) throw badRequest('Package.swift file is missing');
  return manifests;
}

export interface ReleaseMetadata {
  metadata: Omit<SwiftMetadata, 'manifests'>;
  /** Where the package's sources are (`/identifiers?url=` finds the package by them). */
  repositoryUrls: string[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const isUrl = (v: string) => {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

/** The `metadata` part (schema.org SoftwareSourceCode): 400 when it is not a JSON object. */
export function parseReleaseMetadata(text: string | undefined): ReleaseMetadata {
  if (text === undefined || text === '') return { metadata: {}, repositoryUrls: [] };
  let ssc: unknown;
  try {
    ssc = JSON.parse(text);
  } catch (err) {
    throw badRequest(`metadata is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof ssc !== 'object' || ssc === null || Array.isArray(ssc)) {
    throw badRequest('metadata must be a JSON object');
  }
  const o = ssc as Record<string, unknown>;
  const a = (typeof o['author'] === 'object' && o['author'] !== null ? o['author'] : {}) as Record<
    string,
    unknown
  >;
  const author: Person = {};
  for (const k of ['name', 'givenName', 'middleName', 'familyName'] as const) {
    const v = str(a[k]);
    if (v !== undefined) author[k] = v;
  }
  author.name ??=
    [author.givenName, author.middleName, author.familyName].filter(Boolean).join(' ') || undefined;
  if (author.name === undefined) delete author.name;
  const metadata: ReleaseMetadata['metadata'] = {};
  const description = str(o['description']);
  if (description !== undefined) metadata.description = description;
  if (Array.isArray(o['keywords'])) {
    const keywords = o['keywords'].filter((k): k is string => typeof k === 'string');
    if (keywords.length) metadata.keywords = keywords;
  }
  const repository = str(o['codeRepository']);
  if (repository !== undefined && isUrl(repository)) metadata.repository_url = repository;
  const license = str(o['license']);
  if (license !== undefined) metadata.license = license;
  if (Object.keys(author).length) metadata.author = author;
  const urls = Array.isArray(o['repositoryURLs'])
    ? o['repositoryURLs'].filter((u): u is string => typeof u === 'string' && u !== '' && u.length <= 2048)
    : [];
  return { metadata, repositoryUrls: [...new Set(urls)] };
}
