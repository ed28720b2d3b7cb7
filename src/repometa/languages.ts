// Language statistics of a tree, as Forgejo computes them with enry (GitHub linguist's data): each
// regular file is given a language by its file name, else its extension; vendored, generated and
// documentation paths and dot files are left out; languages are folded into their group (TSX into
// TypeScript); only programming and markup languages count, unless no file has one, when the
// first other language found is the answer. Pure: the caller lists the tree.
//
// linguist's data (some 700 languages) is loaded by `loadLanguages()` on first use, not at start-up.

interface Lang {
  name: string;
  type: string;
  group?: string;
}

interface LinguistEntry {
  name: string;
  type: string;
  group?: string;
  extensions?: readonly string[];
  filenames?: readonly string[];
}

/**
 * Which language wins an extension that several languages claim, when no language has it as its
 * first (primary) extension or several do: the commoner one, as linguist's classifier mostly ends.
 */
const POPULAR = [
  'C',
  'C++',
  'Objective-C',
  'JavaScript',
  'TypeScript',
  'Python',
  'Java',
  'Go',
  'Rust',
  'Ruby',
  'PHP',
  'C#',
  'Shell',
  'Perl',
  'Markdown',
  'HTML',
  'CSS',
  'Kotlin',
  'Swift',
  'Scala',
  'Haskell',
  'Lua',
  'R',
  'MATLAB',
  'Prolog',
  'Pascal',
  'Fortran',
  'Erlang',
  'Elixir',
  'SQL',
  'XML',
  'JSON',
  'YAML',
  'Text',
];
const rank = (name: string) => {
  const i = POPULAR.indexOf(name);
  return i < 0 ? POPULAR.length : i;
};

const byFilename = new Map<string, Lang>();
const byExtension = new Map<string, Lang>();
const names = new Map<string, Lang>();
let loading: Promise<void> | undefined;

/** Loads linguist's data and builds the lookup tables (once); call before the functions below. */
export function loadLanguages(): Promise<void> {
  loading ??= import('linguist-languages').then((linguist) => build(Object.values(linguist)));
  return loading;
}

function build(entries: unknown[]): void {
  const ext = new Map<string, Array<{ lang: Lang; primary: boolean }>>();
  for (const e of entries) {
    const l = e as LinguistEntry;
    if (!l || typeof l !== 'object' || typeof l.name !== 'string') continue;
    const lang: Lang = { name: l.name, type: l.type, ...(l.group ? { group: l.group } : {}) };
    names.set(l.name, l as Lang);
    for (const f of l.filenames ?? []) if (!byFilename.has(f)) byFilename.set(f, lang);
    (l.extensions ?? []).forEach((x, i) => {
      const key = x.toLowerCase();
      const list = ext.get(key) ?? [];
      list.push({ lang, primary: i === 0 });
      ext.set(key, list);
    });
  }
  for (const [e, list] of ext) {
    const best = [...list].sort(
      (a, b) =>
        Number(b.primary) - Number(a.primary) ||
        rank(a.lang.name) - rank(b.lang.name) ||
        a.lang.name.localeCompare(b.lang.name),
    )[0]!;
    byExtension.set(e, best.lang);
  }
}

/** The language of a file by its path: its exact file name, else its longest known extension. */
export function languageOf(filePath: string): Lang | undefined {
  const base = filePath.slice(filePath.lastIndexOf('/') + 1);
  const named = byFilename.get(base);
  if (named) return named;
  const lower = base.toLowerCase();
  // Longest extension first: `.d.ts`, `.blade.php` before `.ts`, `.php`.
  for (let i = lower.indexOf('.', 1); i >= 0; i = lower.indexOf('.', i + 1)) {
    const hit = byExtension.get(lower.slice(i));
    if (hit) return hit;
  }
  return undefined;
}

// linguist's vendor.yml (the common part): dependencies and third-party code kept in the tree.
const VENDOR = [
  /(^|\/)cache\//,
  /^[Dd]ependencies\//,
  /(^|\/)dist\//,
  /^deps\//,
  /(^|\/)configure$/,
  /(^|\/)config\.guess$/,
  /(^|\/)config\.sub$/,
  /(^|\/)node_modules\//,
  /(^|\/)bower_components\//,
  /(^|\/)jspm_packages\//,
  /(^|\/)\.yarn\//,
  /(^|\/)_?vendors?\//,
  /(^|\/)(3rd|[Tt]hird)[-_]?[Pp]arty\//,
  /(^|\/)[Ee]xtern(als?)?\//,
  /(^|\/)Godeps\/_workspace\//,
  /(^|\/)Pods\//,
  /(^|\/)Carthage\//,
  /(^|\/)venv\//,
  /(^|\/)\.venv\//,
  /(^|\/)gradlew(\.bat)?$/,
  /(^|\/)mvnw(\.cmd)?$/,
  /(^|\/)\.mvn\/wrapper\//,
  /(^|\/)gradle\/wrapper\//,
  /\.min\.(js|css)$/,
  /([^\s]*)import\.(css|less|scss|styl)$/,
  /(^|\/)bootstrap([^/.]*)(\..*)?\.(js|css|less|scss|styl)$/,
  /(^|\/)jquery([^.]*)\.js$/,
  /(^|\/)jquery-\d\.\d+(\.\d+)?\.js$/,
  /(^|\/)jquery-ui(-\d\.\d+(\.\d+)?)?(\.\w+)?\.(js|css)$/,
  /(^|\/)modernizr(-\d\.\d+(\.\d+)?)?\.js$/,
  /(^|\/)fontawesome([^/.]*)(\..*)?\.(js|css)$/,
  /(^|\/)\.google_apis\//,
  /(^|\/)\.github\//,
  /(^|\/)\.gitea\//,
  /(^|\/)\.forgejo\//,
];

// linguist's documentation.yml.
const DOCUMENTATION = [
  /^[Dd]ocs?\//,
  /(^|\/)[Dd]ocumentation\//,
  /(^|\/)[Gg]roovydoc\//,
  /(^|\/)[Jj]avadoc\//,
  /^[Mm]an\//,
  /^[Ee]xamples\//,
  /^[Dd]emos?\//,
  /(^|\/)inst\/doc\//,
  /(^|\/)CITATION(\.cff|(S)?(\.(bib|md))?)$/,
  /(^|\/)CHANGE(S|LOG)?(\.|$)/,
  /(^|\/)CONTRIBUTING(\.|$)/,
  /(^|\/)COPYING(\.|$)/,
  /(^|\/)INSTALL(\.|$)/,
  /(^|\/)LICEN[CS]E(\.|$)/,
  /(^|\/)[Ll]icen[cs]e(\.|$)/,
  /(^|\/)README(\.|$)/,
  /(^|\/)[Rr]eadme(\.|$)/,
  /^[Ss]amples?\//,
];

// Generated files recognisable by name (linguist's generated.rb, without reading the content).
const GENERATED = [
  /\.min\.(js|css)$/,
  /-min\.(js|css)$/,
  /\.(js|css)\.map$/,
  /(^|\/)package-lock\.json$/,
  /(^|\/)npm-shrinkwrap\.json$/,
  /(^|\/)yarn\.lock$/,
  /(^|\/)pnpm-lock\.yaml$/,
  /(^|\/)composer\.lock$/,
  /(^|\/)Cargo\.lock$/,
  /(^|\/)Gemfile\.lock$/,
  /(^|\/)Pipfile\.lock$/,
  /(^|\/)poetry\.lock$/,
  /(^|\/)go\.sum$/,
  /(^|\/)flake\.lock$/,
  /\.pb\.go$/,
  /\.pb\.(cc|h)$/,
  /_pb2(_grpc)?\.py$/,
  /\.designer\.(cs|vb)$/,
  /\.g\.dart$/,
  /\.freezed\.dart$/,
  /(^|\/)__generated__\//,
  /\.generated\.\w+$/,
];

/** Whether a path is left out of the statistics: dot files, vendored, documentation or generated. */
export function isExcluded(filePath: string): boolean {
  const base = filePath.slice(filePath.lastIndexOf('/') + 1);
  if (base.startsWith('.')) return true;
  return (
    VENDOR.some((r) => r.test(filePath)) ||
    DOCUMENTATION.some((r) => r.test(filePath)) ||
    GENERATED.some((r) => r.test(filePath))
  );
}

export interface SizedFile {
  path: string;
  /** Bytes. */
  size: number;
}

/**
 * What a repository's `.gitattributes` say of one file for the statistics (linguist's attributes;
 * undefined: not specified, so the built-in rules decide).
 */
export interface LinguistAttributes {
  vendored?: boolean;
  generated?: boolean;
  documentation?: boolean;
  detectable?: boolean;
  /** linguist-language, else gitlab-language (its part before any `?`). */
  language?: string;
}

/** The attributes `git check-attr` is asked for. */
export const LINGUIST_ATTRIBUTES = [
  'linguist-vendored',
  'linguist-generated',
  'linguist-documentation',
  'linguist-detectable',
  'linguist-language',
  'gitlab-language',
];

/** `git check-attr -z` output (path, attribute, value triples) as attributes by path. */
export function parseCheckAttr(out: string): Map<string, LinguistAttributes> {
  const fields = out.split('\0');
  const byPath = new Map<string, LinguistAttributes>();
  const flag = (v: string) =>
    v === 'set' || v === 'true' ? true : v === 'unset' || v === 'false' ? false : undefined;
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const [file, attr, value] = [fields[i]!, fields[i + 1]!, fields[i + 2]!];
    if (value === 'unspecified') continue;
    const a = byPath.get(file) ?? {};
    byPath.set(file, a);
    if (attr === 'linguist-language' || attr === 'gitlab-language') {
      const name = attr === 'gitlab-language' ? value.split('?')[0]! : value;
      if (name && name !== 'set' && name !== 'unset' && (attr === 'linguist-language' || !a.language))
        a.language = name;
    } else {
      const key = attr.slice('linguist-'.length) as 'vendored' | 'generated' | 'documentation' | 'detectable';
      const v = flag(value);
      if (v !== undefined) a[key] = v;
    }
  }
  return byPath;
}

/**
 * Bytes per language of the files (regular files only: the caller leaves out links and
 * submodules), with the `.gitattributes` overrides of `attrs` where given, as Forgejo applies them:
 * vendored, generated or documentation set, or detectable unset, leave a file out; a language set
 * counts it under that language whatever it is; an attribute set false keeps a file the built-in
 * rules would leave out; detectable set counts a language of any type.
 */
export function languageStats(
  files: Iterable<SizedFile>,
  attrs?: Map<string, LinguistAttributes>,
): Record<string, number> {
  const sizes = new Map<string, number>();
  const add = (name: string, size: number) => sizes.set(name, (sizes.get(name) ?? 0) + size);
  let firstOther: string | undefined;
  let firstOtherSize = 0;
  for (const f of files) {
    if (f.size === 0) continue;
    const a = attrs?.get(f.path);
    if (a) {
      if (a.vendored || a.generated || a.documentation || a.detectable === false) continue;
      if (a.language) {
        add(languageByName(a.language)?.group ?? a.language, f.size);
        continue;
      }
    }
    const base = f.path.slice(f.path.lastIndexOf('/') + 1);
    if (
      base.startsWith('.') ||
      (a?.vendored === undefined && VENDOR.some((r) => r.test(f.path))) ||
      (a?.documentation === undefined && DOCUMENTATION.some((r) => r.test(f.path))) ||
      (a?.generated === undefined && GENERATED.some((r) => r.test(f.path)))
    )
      continue;
    const lang = languageOf(f.path);
    if (!lang) continue;
    const name = lang.group ?? lang.name;
    // The group's type decides (TSX counts as TypeScript does).
    const type = lang.group ? (languageByName(lang.group)?.type ?? lang.type) : lang.type;
    if (type === 'programming' || type === 'markup' || a?.detectable === true) {
      add(name, f.size);
    } else if (sizes.size === 0 && (firstOther === undefined || firstOther === name)) {
      firstOther = name;
      firstOtherSize += f.size;
    }
  }
  if (sizes.size === 0 && firstOther !== undefined) sizes.set(firstOther, firstOtherSize);
  return Object.fromEntries([...sizes].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/** The largest language of the statistics ('' for none); ties go to the first name. */
export function primaryLanguage(stats: Record<string, number>): string {
  let best = '';
  let size = -1;
  for (const [name, n] of Object.entries(stats)) {
    if (n > size || (n === size && name < best)) {
      best = name;
      size = n;
    }
  }
  return best;
}

function languageByName(name: string): Lang | undefined {
  return names.get(name);
}
