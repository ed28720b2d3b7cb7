// Wiki page names as Forgejo spells them. Three forms of one page:
//   title    what people read and type:           "Home Page", "2000-01-02 meeting", "100% Free"
//   web path the page's URL segment (and API name): "Home-Page", "2000-01-02+meeting.-", "100%25-Free"
//   git path the file in the wiki repository:       "Home-Page.md", "2000-01-02 meeting.-.md", "100%25-Free.md"
// A segment without '-' has its spaces written as '-'; one with a '-' (or ending in ".md") keeps its
// spaces and gets the ".-" marker instead; everything else is query-escaped. A web path ending in
// ".md" names a file directly. Pure functions: no git, no HTTP.

/** Page names the web interface uses for itself. */
export const RESERVED_NAMES = ['_pages', '_new', '_edit', 'raw'];

const DASH_MARKER = '.-';

/** Go's url.QueryEscape: unreserved bytes as they are, ' ' as '+', every other byte as %XX. */
export function queryEscape(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Go's url.QueryUnescape ('+' is a space) or PathUnescape; undefined for a malformed escape. */
export function unescape(s: string, plusIsSpace = true): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c === '+' && plusIsSpace) {
      bytes.push(0x20);
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Forgejo's util.PathJoinRelX for one element: a cleaned relative path ('' stays '', '/' is '.'). */
export function cleanRelative(s: string): string {
  if (s === '') return '';
  const parts: string[] = [];
  for (const part of s.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.length ? parts.join('/') : '.';
}

function hasDashMarker(s: string): boolean {
  return s.endsWith(DASH_MARKER);
}

/** A web path segment as its title (the marker removed, or '-' read as ' '); undefined when malformed. */
function unescapeSegment(s: string): { value: string; ok: boolean } {
  const bare = hasDashMarker(s) ? s.slice(0, -DASH_MARKER.length) : s.replace(/-/g, ' ');
  const value = unescape(bare);
  return value === undefined ? { value: bare, ok: false } : { value, ok: true };
}

/** A title segment as a web path segment. */
function escapeSegment(s: string, hadDashMarker: boolean): string {
  const marked =
    hadDashMarker || s.includes('-') || s.endsWith('.md') ? s + DASH_MARKER : s.replace(/ /g, '-');
  return queryEscape(marked);
}

/** The web path of a page titled `title` (Forgejo's UserTitleToWebPath): slashes are escaped. */
export function titleToWebPath(title: string): string {
  const p = cleanRelative(escapeSegment(title.trim(), false));
  return p === '' || p === '.' ? 'unnamed' : p;
}

/** The web path a request names (the raw, still escaped URL segment): one level, '/' kept as %2F. */
export function webPathFromRequest(raw: string): string {
  return cleanRelative(raw).replace(/\//g, '%2F');
}

/** The file a web path names (Forgejo's WebPathToGitPath). */
export function webPathToGitPath(web: string): string {
  if (web.endsWith('.md')) return cleanRelative(unescape(web, false) ?? '');
  return (
    web
      .split('/')
      .map((seg) => {
        const marked = hasDashMarker(seg);
        return escapeSegment(unescapeSegment(seg).value, marked).replace(/%20/g, ' ').replace(/\+/g, ' ');
      })
      .join('/') + '.md'
  );
}

/** The web path of a file in the wiki; undefined for a file that is no page (not ".md", bad escape). */
export function gitPathToWebPath(file: string): string | undefined {
  if (!file.endsWith('.md')) return undefined;
  const segs: string[] = [];
  for (const seg of file.slice(0, -3).split('/')) {
    const marked = hasDashMarker(seg);
    const u = unescapeSegment(seg);
    if (!u.ok) return undefined;
    segs.push(escapeSegment(u.value, marked));
  }
  return segs.join('/');
}

/** The title shown for a web path (Forgejo's WebPathToUserTitle). */
export function webPathToTitle(web: string): string {
  const slash = web.lastIndexOf('/');
  let display = slash < 0 ? web : web.slice(slash + 1);
  if (display.endsWith('.md')) {
    display = display.slice(0, -3);
    display = unescape(display, false) ?? display;
  }
  return unescapeSegment(display).value;
}

/** Whether any segment of the web path is a reserved name. */
export function isReserved(web: string): boolean {
  return web.split('/').some((seg) => RESERVED_NAMES.includes(unescapeSegment(seg).value));
}

/**
 * Whether `file` can be written into a wiki tree: a non-empty relative path without empty, `.`,
 * `..` or `.git` components and without NUL or other control characters.
 */
export function isSafeGitPath(file: string): boolean {
  // eslint-disable-next-line no-control-regex -- control characters never name a page file
  if (!file || /[\x00-\x1f\x7f]/.test(file)) return false;
  return file
    .split('/')
    .every((part) => part !== '' && part !== '.' && part !== '..' && part.toLowerCase() !== '.git');
}
