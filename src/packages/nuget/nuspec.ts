// Reading a .nupkg as Forgejo does: the .nuspec at the root of the zip (at most 3 MiB), its
// <metadata> (id matching `\w+([.-]\w+)*`, a version normalized as hashicorp/go-version's
// semantic versions print themselves: at least three numeric segments), description, release
// notes, authors, project URL (dropped when not an http(s) URL), repository URL and the dependency
// groups (dependencies without an id or a version left out). Anything else is a 400.
import type * as FastXml from 'fast-xml-parser';
import { badRequest } from '../../errors.js';
import { lazyModule } from '../../lazy.js';
import type { StoredFile } from '../service.js';
import { readZipDirectory, readZipMember } from '../zip.js';

const MAX_NUSPEC = 3 << 20;
const ID = /^\w+(?:[.-]\w+)*$/;
/** hashicorp/go-version's semantic version pattern (an optional `v`, 1+ numeric segments). */
const VERSION =
  /^v?([0-9]+(?:\.[0-9]+)*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export interface NugetDependency {
  id: string;
  version: string;
}

/** The version metadata kept (Forgejo's JSON field names). */
export interface NugetMetadata {
  description: string;
  release_notes: string;
  authors: string;
  project_url: string;
  repository_url: string;
  require_license_acceptance: boolean;
  /** Target framework → dependencies. */
  dependencies: Record<string, NugetDependency[]>;
}

export interface Nuspec {
  id: string;
  version: string;
  metadata: NugetMetadata;
  /** Symbols packages (.snupkg) say so in <packageTypes>. */
  isSymbols: boolean;
}

/** A version as go-version's String() prints it; undefined when it is none. */
export function normalizeVersion(v: string): string | undefined {
  const m = VERSION.exec(v.trim());
  if (!m || v.length > 255) return undefined;
  const segments = m[1]!.split('.').map((s) => String(Number(s)));
  while (segments.length < 3) segments.push('0');
  let out = segments.join('.');
  if (m[2]) out += `-${m[2]}`;
  if (m[3]) out += `+${m[3]}`;
  return out;
}

const fastXml = lazyModule<typeof FastXml>('fast-xml-parser');
let parser: FastXml.XMLParser | undefined;
const nuspecParser = () =>
  (parser ??= new (fastXml().XMLParser)({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: true,
    htmlEntities: false,
    trimValues: true,
    isArray: (name) => ['group', 'dependency', 'packageType'].includes(name),
  }));

type Node = Record<string, unknown>;
const text = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as Node)['#text'] === 'string')
    return (v as Node)['#text'] as string;
  return '';
};
const node = (v: unknown): Node => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : {});
const list = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node) : []);
const isHttpUrl = (s: string) => {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};

/** The metadata of a .nuspec document; 400 when it is not one or its id or version is invalid. */
export function parseNuspec(xml: Buffer): Nuspec {
  const source = xml.toString('utf8').replace(/^\uFEFF/, '');
  if (/<!DOCTYPE/i.test(source)) throw badRequest('the nuspec file must not have a DOCTYPE');
  if (fastXml().XMLValidator.validate(source) !== true)
    throw badRequest('the nuspec file is not well-formed XML');
  const doc = nuspecParser().parse(source) as Node;
  if (!('package' in doc)) throw badRequest('the nuspec file must have a <package> root element');
  const m = node(node(doc['package'])['metadata']);
  const id = text(m['id']).trim();
  if (!ID.test(id)) throw badRequest('Nuspec file contains an invalid id');
  const version = normalizeVersion(text(m['version']));
  if (!version) throw badRequest('Nuspec file contains an invalid version');
  const projectUrl = text(m['projectUrl']).trim();
  const deps = node(m['dependencies']);
  const dependencies: Record<string, NugetDependency[]> = {};
  const add = (framework: string, items: Node[]) => {
    const found = items
      .map((d) => ({ id: text(d['@id']), version: text(d['@version']) }))
      .filter((d) => d.id !== '' && d.version !== '');
    if (found.length) dependencies[framework] = [...(dependencies[framework] ?? []), ...found];
  };
  for (const g of list(deps['group'])) add(text(g['@targetFramework']), list(g['dependency']));
  // Dependencies outside a group belong to every framework.
  add('', list(deps['dependency']));
  const types = list(node(m['packageTypes'])['packageType']).map((t) => text(t['@name']));
  return {
    id,
    version,
    isSymbols: types.includes('SymbolsPackage'),
    metadata: {
      description: text(m['description']),
      release_notes: text(m['releaseNotes']),
      authors: text(m['authors']),
      project_url: isHttpUrl(projectUrl) ? projectUrl : '',
      repository_url: text(node(m['repository'])['@url']),
      require_license_acceptance: text(m['requireLicenseAcceptance']).trim() === 'true',
      dependencies,
    },
  };
}

/** The .nuspec of a stored .nupkg (the root member whose name ends in .nuspec), parsed. */
export async function readNupkg(file: StoredFile): Promise<{ nuspec: Nuspec; xml: Buffer }> {
  const entries = await readZipDirectory(file, 'the package');
  const entry = entries.find((e) => !e.name.includes('/') && e.name.toLowerCase().endsWith('.nuspec'));
  if (!entry) throw badRequest('Nuspec file is missing');
  if (entry.size > MAX_NUSPEC) throw badRequest('Nuspec file is too large');
  const xml = await readZipMember(file, entry, 'the package', MAX_NUSPEC);
  return { nuspec: parseNuspec(xml), xml };
}
