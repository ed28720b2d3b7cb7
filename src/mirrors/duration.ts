// Go's time.Duration text ("8h0m0s", "10m", "1h30m", "0"), which Forgejo uses for mirror
// intervals in its API and configuration. Anvil keeps intervals as whole seconds.

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

// µ and μ escaped: one character outside Latin-1 in the bundle makes V8 keep all its source as
// two-byte characters (12 MB instead of 6).
const PART = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/;

/**
 * Parses a Go duration into whole seconds (fractions of a second are dropped, as Anvil schedules
 * by the second). Returns null when the text is not a valid, non-negative duration.
 */
export function parseGoDuration(text: string): number | null {
  let s = text.trim();
  if (s === '0' || s === '+0') return 0;
  if (s.startsWith('+')) s = s.slice(1);
  if (s === '' || s.startsWith('-')) return null;
  let ns = 0;
  while (s.length > 0) {
    const m = PART.exec(s);
    if (!m) return null;
    ns += Number(m[1]) * UNIT_NS[m[2]!]!;
    s = s.slice(m[0].length);
  }
  if (!Number.isFinite(ns)) return null;
  return Math.floor(ns / 1e9);
}

/** Whole seconds as Go prints a Duration: "8h0m0s", "10m0s", "45s", "0s". */
export function formatGoDuration(seconds: number): string {
  if (seconds <= 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
