// Reading a Helm chart archive (as `helm package` makes it: a gzip'd tar with
// `{chart}/Chart.yaml`) from the stored upload: the tarball is read to its end (gzip's CRC proves
// it whole) and Chart.yaml is checked as Forgejo checks it (apiVersion, type, name, a semantic
// version). Anything else is a 400 naming the problem.
import YAML from 'yaml';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';
import { readRange } from '../zip.js';

/** Chart names: what `helm create` takes (letters, digits, `-`, `_`, `.`), no path separators. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
/** Semantic versions as Helm reads them (a `v` prefix and missing minor or patch numbers allowed). */
const VERSION = /^v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const CHART_YAML = /^(?:\.\/)?[^/]+\/Chart\.yaml$/;

/** Chart.yaml's fields as Forgejo keeps them (its JSON names), with the YAML names they come from. */
const FIELDS: Array<[json: string, yaml: string]> = [
  ['api_version', 'apiVersion'],
  ['type', 'type'],
  ['name', 'name'],
  ['version', 'version'],
  ['app_version', 'appVersion'],
  ['home', 'home'],
  ['sources', 'sources'],
  ['description', 'description'],
  ['keywords', 'keywords'],
  ['maintainers', 'maintainers'],
  ['icon', 'icon'],
  ['condition', 'condition'],
  ['tags', 'tags'],
  ['deprecated', 'deprecated'],
  ['annotations', 'annotations'],
  ['kube_version', 'kubeVersion'],
  ['dependencies', 'dependencies'],
];

type Json = Record<string, unknown>;

export interface Chart {
  name: string;
  version: string;
  /** The version's metadata (Forgejo's JSON names). */
  metadata: Json;
}

/** The chart's file name, as Forgejo names it. */
export const chartFileName = (name: string, version: string) => `${name}-${version}.tgz`.toLowerCase();

/** Parses Chart.yaml (400 for what Forgejo refuses). */
export function parseChartYaml(text: string): Chart {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw badRequest(`Chart.yaml is not valid YAML: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw badRequest('Chart.yaml is not a mapping');
  const y = doc as Json;
  const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
  if (!str(y['apiVersion'])) throw badRequest('chart is invalid: Chart.yaml has no apiVersion');
  const type = str(y['type']);
  if (type && type !== 'application' && type !== 'library') {
    throw badRequest(`chart is invalid: type must be application or library [type: ${type}]`);
  }
  const name = str(y['name']);
  if (!NAME.test(name)) throw badRequest(`package name is invalid [name: ${name}]`);
  const version = str(y['version']);
  if (!VERSION.test(version) || version.length > 255) {
    throw badRequest(`package version is invalid [version: ${version}]`);
  }
  const metadata: Json = {};
  for (const [json, yaml] of FIELDS) {
    const v = y[yaml];
    if (v !== undefined && v !== null && v !== '') metadata[json] = v;
  }
  metadata['api_version'] = str(y['apiVersion']);
  metadata['name'] = name;
  metadata['version'] = version;
  if (typeof metadata['home'] === 'string' && !/^https?:\/\/\S+$/i.test(metadata['home']))
    delete metadata['home'];
  return { name, version, metadata };
}

/** The metadata back in Chart.yaml's names (an index.yaml entry). */
export function chartYamlFields(metadata: Json): Json {
  const out: Json = {};
  for (const [json, yaml] of FIELDS) if (metadata[json] !== undefined) out[yaml] = metadata[json];
  return out;
}

/** The chart in a stored upload. */
export async function readChart(file: StoredFile): Promise<Chart> {
  const what = 'the chart archive';
  const magic = file.size >= 2 ? await readRange(file, 0, 2) : Buffer.alloc(0);
  if (magic[0] !== 0x1f || magic[1] !== 0x8b) throw badRequest(`${what} is not gzip-compressed`);
  const contents = await readTar(await file.open(), file.size, 'gzip', what, (n) => CHART_YAML.test(n));
  const found = [...contents.kept.entries()].find(([n]) => CHART_YAML.test(n));
  if (!found) throw badRequest('Chart.yaml file is missing');
  return parseChartYaml(found[1].toString('utf8'));
}
