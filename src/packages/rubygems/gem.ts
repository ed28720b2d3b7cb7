// Reading a .gem (as `gem build` makes it: a plain tar of metadata.gz, data.tar.gz and
// checksums.yaml.gz) from the stored upload: the tar is read to its end, metadata.gz (the
// Gem::Specification as YAML, Ruby's tags and all) is kept and read into what the index files
// need. Anything else is a 400 naming the problem.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import YAML from 'yaml';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';

const gunzip = promisify(zlib.gunzip);

/** RubyGems' name rule (letters, digits, `._-`). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Gem::Version::ANCHORED_VERSION_PATTERN. */
const VERSION = /^[0-9]+(?:\.[0-9a-zA-Z]+)*(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
const PLATFORM = /^[A-Za-z0-9_.-]{1,64}$/;
const OPERATORS = new Set(['=', '!=', '>', '<', '>=', '<=', '~>']);

/** [operator, version] pairs of a Gem::Requirement. */
export type Requirement = Array<[string, string]>;

export interface GemDependency {
  name: string;
  type: 'runtime' | 'development';
  requirements: Requirement;
}

/** What the registry keeps of a gem's specification (the version's metadata). */
export interface GemMetadata {
  platform: string;
  summary: string;
  description: string;
  authors: string[];
  email: string[];
  homepage: string;
  licenses: string[];
  rubygems_version: string;
  specification_version: number;
  date: string;
  required_ruby_version: Requirement;
  required_rubygems_version: Requirement;
  dependencies: GemDependency[];
}

export interface Gem {
  name: string;
  version: string;
  metadata: GemMetadata;
}

/** Whether a version is a pre-release (Gem::Version: it holds a letter). */
export const isPrerelease = (version: string) => /[a-zA-Z]/.test(version);

/** The file name of a gem: `{name}-{version}[-{platform}].gem`. */
export const gemFileName = (name: string, version: string, platform: string) =>
  `${name}-${version}${platform === 'ruby' ? '' : `-${platform}`}.gem`;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(str).filter(Boolean) : typeof v === 'string' && v ? [v] : [];

function requirement(v: unknown): Requirement {
  const list = obj(v)['requirements'];
  if (!Array.isArray(list)) return [['>=', '0']];
  const out: Requirement = [];
  for (const r of list) {
    if (!Array.isArray(r)) continue;
    const op = str(r[0]);
    const version = str(obj(r[1])['version']);
    if (!OPERATORS.has(op) || !VERSION.test(version))
      throw badRequest(`invalid requirement ${op} ${version}`);
    out.push([op, version]);
  }
  return out.length ? out : [['>=', '0']];
}

/** The specification of a gem's metadata.gz YAML (400 when it names no valid gem). */
export function parseSpec(yamlText: string): Gem {
  let doc: unknown;
  try {
    doc = YAML.parse(yamlText, { logLevel: 'silent', maxAliasCount: 100 });
  } catch {
    throw badRequest('the gem specification is not valid YAML');
  }
  const spec = obj(doc);
  const name = str(spec['name']);
  const version = str(obj(spec['version'])['version']);
  const platform = str(spec['platform']) || 'ruby';
  if (!NAME.test(name)) throw badRequest(`invalid gem name [name: ${name.slice(0, 100)}]`);
  if (!VERSION.test(version)) throw badRequest(`invalid gem version [version: ${version.slice(0, 100)}]`);
  if (!PLATFORM.test(platform))
    throw badRequest(`invalid gem platform [platform: ${platform.slice(0, 100)}]`);
  const dependencies: GemDependency[] = [];
  for (const d of Array.isArray(spec['dependencies']) ? spec['dependencies'] : []) {
    const dep = obj(d);
    const depName = str(dep['name']);
    if (!NAME.test(depName)) throw badRequest(`invalid dependency name [name: ${depName.slice(0, 100)}]`);
    dependencies.push({
      name: depName,
      type: str(dep['type']) === ':development' ? 'development' : 'runtime',
      requirements: requirement(dep['requirement']),
    });
  }
  const date = /^\d{4}-\d\d-\d\d/.exec(str(spec['date']))?.[0] ?? new Date().toISOString().slice(0, 10);
  return {
    name,
    version,
    metadata: {
      platform,
      summary: str(spec['summary']),
      description: str(spec['description']),
      authors: strings(spec['authors']),
      email: strings(spec['email']),
      homepage: str(spec['homepage']),
      licenses: strings(spec['licenses']),
      rubygems_version: str(spec['rubygems_version']) || '0',
      specification_version: Math.min(4, Math.max(1, Number(spec['specification_version']) || 4)),
      date,
      required_ruby_version: requirement(spec['required_ruby_version']),
      required_rubygems_version: requirement(spec['required_rubygems_version']),
      dependencies,
    },
  };
}

/** The specification of the stored .gem (400 when it is none). */
export async function readGem(file: StoredFile): Promise<Gem> {
  const tar = await readTar(await file.open(), file.size, 'none', 'the gem', (n) => n === 'metadata.gz');
  const gz = tar.kept.get('metadata.gz');
  if (!gz) throw badRequest('the gem has no metadata.gz');
  let text: string;
  try {
    text = (await gunzip(gz, { maxOutputLength: 16 << 20 })).toString('utf8');
  } catch {
    throw badRequest('the gem metadata.gz is not valid gzip data');
  }
  return parseSpec(text);
}
