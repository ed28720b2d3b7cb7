// Reading a Chef cookbook archive (what `knife supermarket share` uploads: a gzip'd tar with
// `{cookbook}/metadata.json`) from the stored upload: the tarball is read to its end (gzip's CRC
// proves it whole) and metadata.json is checked as Forgejo checks it (a name without white space,
// a version of two or three numbers). Anything else is a 400 naming the problem.
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';
import { readRange } from '../zip.js';

const NAME = /^\S{1,255}$/;
const VERSION = /^\d+\.\d+(?:\.\d+)?$/;
/** metadata.json one directory down (Forgejo reads only a member with exactly one `/`). */
const METADATA = /^[^/]+\/metadata\.json$/;

/** The version's metadata, in Forgejo's JSON names. */
export interface ChefMetadata {
  description?: string;
  long_description?: string;
  author?: string;
  license?: string;
  repository_url?: string;
  dependencies?: Record<string, string>;
}

export interface Cookbook {
  name: string;
  version: string;
  metadata: ChefMetadata;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** metadata.json's fields as Forgejo keeps them (400 for what it refuses). */
export function parseChefMetadata(text: string): Cookbook {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw badRequest(`metadata.json is not valid JSON: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw badRequest('metadata.json is not an object');
  const m = doc as Record<string, unknown>;
  const name = str(m['name']);
  if (!NAME.test(name)) throw badRequest(`package name is invalid [name: ${name}]`);
  const version = str(m['version']);
  if (!VERSION.test(version) || version.length > 255) {
    throw badRequest(`package version is invalid [version: ${version}]`);
  }
  const metadata: ChefMetadata = {};
  const set = (key: Exclude<keyof ChefMetadata, 'dependencies'>, v: unknown) => {
    if (str(v)) metadata[key] = str(v);
  };
  set('description', m['description']);
  set('long_description', m['long_description']);
  set('author', m['maintainer']);
  set('license', m['license']);
  if (/^https?:\/\/\S+$/i.test(str(m['source_url']))) metadata.repository_url = str(m['source_url']);
  const deps = m['dependencies'];
  if (deps && typeof deps === 'object' && !Array.isArray(deps)) {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(deps)) if (typeof v === 'string') out[k] = v;
    if (Object.keys(out).length) metadata.dependencies = out;
  }
  return { name, version, metadata };
}

/** The cookbook in a stored upload. */
export async function readCookbook(file: StoredFile): Promise<Cookbook> {
  const what = 'the cookbook archive';
  const magic = file.size >= 2 ? await readRange(file, 0, 2) : Buffer.alloc(0);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) throw badRequest(`${what} is not a gzip-compressed tar`);
  const contents = await readTar(await file.open(), file.size, 'gzip', what, (n) => METADATA.test(n));
  const found = [...contents.kept.entries()].find(([n]) => METADATA.test(n));
  if (!found) throw badRequest('metadata.json file is missing');
  return parseChefMetadata(found[1].toString('utf8'));
}
