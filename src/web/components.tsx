// Small components several domains' pages share.
import type { VNode } from 'preact';

/** Previous/next links for a paged list. */
export function Pager(props: {
  path: string;
  page: number;
  pageSize: number;
  total: number;
  query?: string;
  /** The query parameter that carries the page number (`page`). */
  param?: string;
}) {
  const last = Math.max(1, Math.ceil(props.total / props.pageSize));
  if (last <= 1) return null;
  const link = (p: number) => {
    const params = new URLSearchParams(props.query ?? '');
    params.set(props.param ?? 'page', String(p));
    return `${props.path}?${params.toString()}`;
  };
  return (
    <nav class="pager" aria-label="Pages">
      {props.page > 1 ? <a href={link(props.page - 1)}>Previous</a> : <span>Previous</span>}
      <span>
        Page {props.page} of {last}
      </span>
      {props.page < last ? <a href={link(props.page + 1)}>Next</a> : <span>Next</span>}
    </nav>
  );
}

/** A date as people read it, with the exact time on hover. */
/** How long ago `unix` was, in words (a date once it is a month old, as Forgejo shows it). */
export function ago(unix: number, now = Date.now() / 1000): string {
  const s = Math.max(0, Math.round(now - unix));
  const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  if (s < 45) return 'just now';
  if (s < 90) return '1 minute ago';
  if (s < 3600) return count(Math.round(s / 60), 'minute');
  if (s < 86400) return count(Math.round(s / 3600), 'hour');
  if (s < 2 * 86400) return 'yesterday';
  if (s < 30 * 86400) return count(Math.round(s / 86400), 'day');
  return `on ${new Date(unix * 1000).toISOString().slice(0, 10)}`;
}

/** A time as people read it: how long ago, the exact time (UTC) on hover and for machines. */
export function When(props: { unix: number }): VNode {
  const d = new Date(props.unix * 1000);
  return (
    <time dateTime={d.toISOString()} title={`${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`}>
      {ago(props.unix)}
    </time>
  );
}

/** The page number of a `?page=` value (1 when absent or nonsense). */
export function pageNumber(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n >= 1 && n <= 1_000_000 ? n : 1;
}

/** A size in bytes as people read it (binary units: KiB, MiB, GiB, TiB). */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const text = i === 0 ? String(v) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
  return `${n < 0 ? '-' : ''}${text} ${units[i]}`;
}

/** The path (with query and fragment) of one of this site's absolute URLs, so links stay on the page's origin. */
export function sitePath(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname + u.search + u.hash;
  } catch {
    return url;
  }
}
