// What Forgejo reads from a recipe's conanfile.py (the version's metadata, by regular
// expressions on the first MiB: no Python is run) and a package's conaninfo.txt (its settings,
// options and requirements, which package searches answer with).
import { badRequest } from '../../errors.js';

export interface ConanMetadata {
  author?: string;
  license?: string;
  project_url?: string;
  repository_url?: string;
  description?: string;
  keywords?: string[];
}

const field = (name: string) => new RegExp(`^\\s*${name}\\s*=\\s*['"(](.+)['")]`, 'im');
const AUTHOR = field('author');
const HOMEPAGE = field('homepage');
const URL = field('url');
const LICENSE = field('license');
const DESCRIPTION = field('description');
const TOPICS = /^\s*topics\s*=\s*\((.+)\)/im;
const TOPIC = /\s*['"](.+?)['"]\s*,?/g;

export function parseConanfile(text: string): ConanMetadata {
  const out: ConanMetadata = {};
  const get = (re: RegExp) => re.exec(text)?.[1] || undefined;
  const author = get(AUTHOR);
  if (author) out.author = author;
  const license = get(LICENSE);
  if (license) out.license = license.replace(/['"]/g, '');
  const homepage = get(HOMEPAGE);
  if (homepage) out.project_url = homepage;
  const url = get(URL);
  if (url) out.repository_url = url;
  const description = get(DESCRIPTION);
  if (description) out.description = description;
  const topics = get(TOPICS);
  if (topics) {
    const list = [...topics.matchAll(TOPIC)].map((m) => m[1]!);
    if (list.length) out.keywords = list;
  }
  return out;
}

/** conaninfo.txt as Forgejo keeps it (its JSON names; null for a section that is absent). */
export interface Conaninfo {
  settings: Record<string, string> | null;
  full_settings: Record<string, string> | null;
  requires: string[] | null;
  full_requires: string[] | null;
  options: Record<string, string> | null;
  full_options: Record<string, string> | null;
  recipe_hash: string;
  environment: Record<string, string[]> | null;
}

function pairs(lines: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const line of lines) {
    const i = line.indexOf('=');
    if (i <= 0 || i === line.length - 1) continue;
    out.push([line.slice(0, i), line.slice(i + 1)]);
  }
  return out;
}

/** Parses conaninfo.txt (400 when there is text before the first section). */
export function parseConaninfo(text: string): Conaninfo {
  const sections = new Map<string, string[]>();
  let section = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith('[') && line.endsWith(']')) {
      section = line.slice(1, -1);
      sections.set(section, []);
    } else if (section !== '') {
      if (line !== '') sections.get(section)!.push(line);
    } else if (line !== '') throw badRequest('invalid conaninfo.txt');
  }
  const info: Conaninfo = {
    settings: null,
    full_settings: null,
    requires: null,
    full_requires: null,
    options: null,
    full_options: null,
    recipe_hash: '',
    environment: null,
  };
  for (const [name, lines] of sections) {
    if (lines.length === 0) continue;
    switch (name) {
      case 'settings':
      case 'full_settings':
      case 'options':
      case 'full_options':
        info[name] = Object.fromEntries(pairs(lines));
        break;
      case 'requires':
      case 'full_requires':
        info[name] = lines;
        break;
      case 'recipe_hash':
        info.recipe_hash = lines[0]!;
        break;
      case 'env':
        info.environment = Object.fromEntries(
          pairs(lines).map(([k, v]) => [k, v.startsWith('[') && v.endsWith(']') ? v.split(',') : [v]]),
        );
        break;
    }
  }
  return info;
}
