// Variable expansion in files of a template repository, as Forgejo does when generating a
// repository from it: the files matched by the globs listed in `.forgejo/template` (else
// `.gitea/template`) get $REPO_NAME, ${TEMPLATE_OWNER_SNAKE} and the like replaced, in their
// content and in their paths (sanitized there). Expansion follows Go's os.Expand: `$NAME` or
// `${NAME}`; an unknown name expands to itself without the `$`, as in Forgejo.
import picomatch from 'picomatch';

/** Where a template repository lists the files to expand, in the order Forgejo looks. */
export const TEMPLATE_FILES = ['.forgejo/template', '.gitea/template'];

export interface ExpansionRepo {
  owner: string;
  name: string;
  description: string;
  /** The web link (Forgejo's Link(): `/owner/name`), the HTTPS and SSH clone URLs. */
  link: string;
  httpsUrl: string;
  sshUrl: string;
}

/** Words of an identifier: split at separators and at lower-to-upper case changes. */
function words(s: string): string[] {
  return s
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z\d]+/)
    .filter(Boolean);
}

const upperFirst = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
/** xstrings.ToCamelCase: words separated by spaces, underscores or hyphens, each capitalized. */
const pascal = (s: string) =>
  s
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map(upperFirst)
    .join('');

const TRANSFORMERS: Array<[string, (s: string) => string]> = [
  ['SNAKE', (s) => words(s).join('_').toLowerCase()],
  ['KEBAB', (s) => words(s).join('-').toLowerCase()],
  [
    'CAMEL',
    (s) => {
      const p = pascal(s);
      return p.charAt(0).toLowerCase() + p.slice(1);
    },
  ],
  ['PASCAL', pascal],
  ['LOWER', (s) => s.toLowerCase()],
  ['UPPER', (s) => s.toUpperCase()],
  [
    'TITLE',
    (s) => s.replace(/[\p{L}\p{N}_']+/gu, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()),
  ],
];

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Every variable a template file may use, with its value. */
export function expansionMap(
  template: ExpansionRepo,
  generated: ExpansionRepo,
  now = new Date(),
): Map<string, string> {
  const map = new Map<string, string>();
  const pad = (n: number) => String(n).padStart(2, '0');
  const add = (name: string, value: string, transform: boolean) => {
    map.set(name, value);
    if (transform) for (const [t, f] of TRANSFORMERS) map.set(`${name}_${t}`, f(value));
  };
  add('YEAR', String(now.getFullYear()), false);
  add('MONTH', pad(now.getMonth() + 1), false);
  add('MONTH_ENGLISH', MONTHS[now.getMonth()]!, true);
  add('DAY', pad(now.getDate()), false);
  add('REPO_NAME', generated.name, true);
  add('TEMPLATE_NAME', template.name, true);
  add('REPO_DESCRIPTION', generated.description, false);
  add('TEMPLATE_DESCRIPTION', template.description, false);
  add('REPO_OWNER', generated.owner, true);
  add('TEMPLATE_OWNER', template.owner, true);
  add('REPO_LINK', generated.link, false);
  add('TEMPLATE_LINK', template.link, false);
  add('REPO_HTTPS_URL', generated.httpsUrl, false);
  add('TEMPLATE_HTTPS_URL', template.httpsUrl, false);
  add('REPO_SSH_URL', generated.sshUrl, false);
  add('TEMPLATE_SSH_URL', template.sshUrl, false);
  return map;
}

const isSpecial = (c: string) => '*#$@!?-0123456789'.includes(c);
const isAlphaNum = (c: string) => /[\w]/.test(c);

/** Go's os.Expand over `s` with `mapping`. */
export function goExpand(s: string, mapping: (name: string) => string): string {
  let out = '';
  let i = 0;
  for (let j = 0; j < s.length; j++) {
    if (s[j] !== '$' || j + 1 >= s.length) continue;
    out += s.slice(i, j);
    const rest = s.slice(j + 1);
    let name = '';
    let width = 0;
    if (rest[0] === '{') {
      if (rest.length > 2 && isSpecial(rest[1]!) && rest[2] === '}') {
        name = rest[1]!;
        width = 3;
      } else {
        const close = rest.indexOf('}', 1);
        if (close === 1)
          width = 2; // "${}": bad syntax, eaten
        else if (close < 0)
          width = 1; // "${" without its brace: eaten
        else {
          name = rest.slice(1, close);
          width = close + 1;
        }
      }
    } else if (isSpecial(rest[0]!)) {
      name = rest[0]!;
      width = 1;
    } else {
      while (width < rest.length && isAlphaNum(rest[width]!)) width++;
      name = rest.slice(0, width);
    }
    if (name === '' && width === 0) out += '$';
    else if (name !== '') out += mapping(name);
    j += width;
    i = j + 1;
  }
  return i === 0 ? s : out + s.slice(i);
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what file names must not hold
const SANITIZE = /\.\.|[<>:"/\\|?*\u0000-\u001f]|^(con|prn|aux|nul|com\d|lpt\d)$/gi;

/** Forgejo's fileNameSanitize: what could leave the directory or is not a file name becomes `_`. */
export function sanitizeFileName(s: string): string {
  return s.replace(SANITIZE, '_').trim();
}

/** Expands `src`; in a path (`forPath`) each expanded value is sanitized first. */
export function expand(src: string, vars: Map<string, string>, forPath = false): string {
  return goExpand(src, (name) => {
    const v = vars.get(name);
    if (v === undefined) return name;
    return forPath ? sanitizeFileName(v) : v;
  });
}

/** The matcher of a template file's globs (one a line; blank lines and `#` comments skipped). */
export function templateMatcher(content: string): (path: string) => boolean {
  const globs = content
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  if (globs.length === 0) return () => false;
  const matchers = globs.flatMap((g) => {
    try {
      return [picomatch(g, { dot: true })];
    } catch {
      return [];
    }
  });
  return (p) => matchers.some((m) => m(p));
}
