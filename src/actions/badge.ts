// A workflow's status badge (Forgejo's /{owner}/{repo}/actions/workflows/{file}/badge.svg): the
// workflow's name (the file's, without .yml) and the status of its newest run, as a flat SVG.

const WORDS: Record<string, string> = {
  success: 'passing',
  failure: 'failing',
  cancelled: 'cancelled',
  skipped: 'skipped',
  waiting: 'waiting',
  running: 'running',
  blocked: 'blocked',
};

const COLOURS: Record<string, string> = {
  passing: '#2e7d32',
  failing: '#c62828',
  running: '#8a6d00',
  waiting: '#8a6d00',
};

/** The badge's words for a run's status (none: "no status"). */
export function badgeText(status: string | undefined): string {
  return status ? (WORDS[status] ?? status) : 'no status';
}

const xml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );

/** About how wide text is at 11 px Verdana (the badges' font), in pixels. */
function textWidth(s: string): number {
  let w = 0;
  for (const ch of s)
    w += /[ilj.,:;|!'I1 ]/.test(ch) ? 3.5 : /[mwMW@]/.test(ch) ? 10 : /[A-Z]/.test(ch) ? 8 : 6.6;
  return Math.ceil(w);
}

export function badgeSvg(label: string, status: string | undefined): string {
  const message = badgeText(status);
  const colour = COLOURS[message] ?? '#616161';
  const lw = textWidth(label) + 12;
  const mw = textWidth(message) + 12;
  const w = lw + mw;
  const title = `${label}: ${message}`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${xml(title)}">` +
    `<title>${xml(title)}</title>` +
    `<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>` +
    `<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${colour}"/><rect width="${w}" height="20" fill="url(#s)"/></g>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">` +
    `<text x="${lw / 2}" y="14">${xml(label)}</text>` +
    `<text x="${lw + mw / 2}" y="14">${xml(message)}</text>` +
    `</g></svg>`
  );
}

/** The badge's label for a workflow file ("ci.yml" → "ci"). */
export const badgeLabel = (file: string): string => file.replace(/\.ya?ml$/i, '') || file;
