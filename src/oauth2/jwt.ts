// HS256 JSON Web Tokens for the OAuth2 provider: signing, and verifying a token this server (or a
// client's secret, for id_tokens) signed. Verification accepts HS256 only (never "none" nor
// another algorithm a header names), compares the signature in constant time and checks `exp`.
// Pure: keys are given by the caller.
import crypto from 'node:crypto';

/** A token longer than this is not one of ours; refused before any work. */
const MAX_TOKEN_LENGTH = 4096;

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

const mac = (key: Buffer | string, input: string) => crypto.createHmac('sha256', key).update(input).digest();

export function signJwt(key: Buffer | string, claims: Record<string, unknown>): string {
  const input = `${HEADER}.${b64(JSON.stringify(claims))}`;
  return `${input}.${b64(mac(key, input))}`;
}

function decodePart(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `token` is shaped as a JWT at all (three base64url parts). */
export const looksLikeJwt = (token: string): boolean =>
  token.length <= MAX_TOKEN_LENGTH && /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);

/**
 * The claims of a token signed with `key` whose `exp` (seconds since the epoch, required) is after
 * `now`; undefined for anything else.
 */
export function verifyJwt(
  key: Buffer | string,
  token: string,
  now = Math.floor(Date.now() / 1000),
): Record<string, unknown> | undefined {
  if (!looksLikeJwt(token)) return undefined;
  const [headerPart, payloadPart, signaturePart] = token.split('.') as [string, string, string];
  const header = decodePart(headerPart);
  if (!header || header['alg'] !== 'HS256') return undefined;
  const expected = mac(key, `${headerPart}.${payloadPart}`);
  const given = Buffer.from(signaturePart, 'base64url');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined;
  const claims = decodePart(payloadPart);
  if (!claims || typeof claims['exp'] !== 'number' || claims['exp'] <= now) return undefined;
  return claims;
}
