const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * Forgejo's time format (RFC 3339, UTC, whole seconds) from Unix seconds, computed with integer
 * arithmetic: several times faster than going through Date, which counts when a list holds
 * thousands of times.
 */
export function isoTime(unix: number): string {
  const days = Math.floor(unix / 86400);
  let s = unix - days * 86400;
  // Days to civil date (H. Hinnant's algorithm).
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const hh = Math.floor(s / 3600);
  s -= hh * 3600;
  const mm = Math.floor(s / 60);
  s -= mm * 60;
  const year = y >= 0 && y < 1000 ? String(y).padStart(4, '0') : String(y);
  return `${year}-${pad2(m)}-${pad2(d)}T${pad2(hh)}:${pad2(mm)}:${pad2(s)}Z`;
}
