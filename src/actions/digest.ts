// Tokens of runners, registrations and jobs are stored as SHA-256 digests and compared in
// constant time.
import crypto from 'node:crypto';

export const sha256 = (s: string): string => crypto.createHash('sha256').update(s).digest('hex');

/** Compares two hex digests in constant time. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
