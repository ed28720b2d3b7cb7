// Reading a Dart/Flutter package archive (as `dart pub publish` makes it: a gzip'd tar with
// pubspec.yaml at its root) from the stored upload: the tarball is read to its end and
// pubspec.yaml checked as Forgejo checks it (a Dart identifier as the name, a semantic version).
// Anything else is a 400 naming the problem.
import YAML from 'yaml';
import { badRequest } from '../../errors.js';
import { isSemver } from '../semver.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';
import { readRange } from '../zip.js';

const NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,254}$/;

export interface PubPackage {
  name: string;
  version: string;
  /** The version's metadata: Forgejo's fields and the whole pubspec (served as `pubspec`). */
  metadata: Record<string, unknown>;
}

const url = (v: unknown) => (typeof v === 'string' && /^https?:\/\/\S+$/i.test(v) ? v : undefined);

export function parsePubspec(text: string): PubPackage {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw badRequest(`pubspec.yaml is not valid YAML: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw badRequest('pubspec.yaml is not a mapping');
  const y = doc as Record<string, unknown>;
  const name = typeof y['name'] === 'string' ? y['name'] : '';
  if (!NAME.test(name)) throw badRequest(`package name is invalid [name: ${name}]`);
  const version = typeof y['version'] === 'string' ? y['version'] : '';
  if (!isSemver(version)) throw badRequest(`package version is invalid [version: ${version}]`);
  const metadata: Record<string, unknown> = { pubspec: y };
  if (typeof y['description'] === 'string') metadata['description'] = y['description'];
  const fields: Array<[string, string]> = [
    ['project_url', 'homepage'],
    ['repository_url', 'repository'],
    ['documentation_url', 'documentation'],
  ];
  for (const [key, field] of fields) if (url(y[field])) metadata[key] = y[field];
  return { name, version, metadata };
}

const PUBSPEC = /^(?:\.\/)?pubspec\.yaml$/;

/** The package in a stored upload. */
export async function readPubArchive(file: StoredFile): Promise<PubPackage> {
  const what = 'the package archive';
  const magic = file.size >= 2 ? await readRange(file, 0, 2) : Buffer.alloc(0);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) throw badRequest(`${what} is not a gzip-compressed tar`);
  const contents = await readTar(await file.open(), file.size, 'gzip', what, (n) => PUBSPEC.test(n));
  const found = [...contents.kept.entries()].find(([n]) => PUBSPEC.test(n));
  if (!found) throw badRequest('pubspec.yaml file is missing');
  return parsePubspec(found[1].toString('utf8'));
}
