// The one check of every redirect target that comes from outside (`redirect_to` in a query or a
// form, and whatever else a page may be asked to send the browser back to): only a path of this
// site is ever sent as a Location. The target is read as the browser will read it, with the WHATWG
// URL parser (which drops tabs and newlines, reads `\` as `/` and resolves `.`/`..` and their
// percent-encoded forms), resolved against the site's own origin; what comes out must be of that
// origin, under the site's path, and must itself be a path the browser resolves to the same place
// (never `//host`). The normalised path, query and fragment are returned, so no control character,
// space or backslash ever reaches a header.

/** Where the site is: its origin and the path its pages live under ('/' unless served below one). */
export interface Site {
  origin: string;
  path: string;
}

/** The site of a ROOT_URL-like address, its pages served from the root of the host. */
export function siteOf(rootUrl: string, sitePath = '/'): Site {
  return { origin: new URL(rootUrl).origin, path: sitePath.endsWith('/') ? sitePath : `${sitePath}/` };
}

/**
 * A safe Location for `to` (a string from the request), or `fallback` when it is not a path of
 * this site. `fallback` is trusted (the caller's own path).
 */
export function safeRedirect(to: unknown, site: Site, fallback = '/'): string {
  if (typeof to !== 'string' || to === '' || to.length > 4096) return fallback;
  let url: URL;
  try {
    url = new URL(to, `${site.origin}${site.path}`);
  } catch {
    return fallback;
  }
  if (url.origin !== site.origin || (url.protocol !== 'http:' && url.protocol !== 'https:')) return fallback;
  if (url.username || url.password) return fallback;
  const path = url.pathname;
  // A path of another site once the browser reads it again: `//host` (after `/./` or `/..//`).
  if (!path.startsWith('/') || path.startsWith('//') || path.includes('\\')) return fallback;
  if (path !== site.path.slice(0, -1) && !path.startsWith(site.path)) return fallback;
  const out = path + url.search + url.hash;
  // Belt and braces: the result must mean the same URL when read again, and be a valid header.
  if (new URL(out, site.origin).href !== url.href || /[^\x21-\x7e]/.test(out)) return fallback;
  return out;
}
