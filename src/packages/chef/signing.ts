// Chef's signed requests (mixlib-authentication, what knife sends), checked as Forgejo checks
// them: X-Ops-Userid names the account, X-Ops-Timestamp (RFC 3339) must be within ten minutes of
// now, X-Ops-Sign gives the protocol version (1.0, 1.1, 1.2 or 1.3; an algorithm, if named, must
// be sha1, or sha256 with 1.3) and the base64 signature arrives cut into X-Ops-Authorization-1..N.
// The signed text is the method, the request path (cleaned), X-Ops-Content-Hash, the timestamp
// and the user id (base64 SHA-1 of it in 1.1 and 1.2); 1.3 also signs X-Ops-Sign and
// X-Ops-Server-API-Version. 1.0 and 1.1 are an RSA private-key encryption of that text (PKCS #1
// type 1 padding), 1.2 and 1.3 an RSASSA-PKCS1-v1_5 signature over SHA-1 or SHA-256.
// As in Forgejo, X-Ops-Content-Hash is signed but not compared with the body.
import crypto from 'node:crypto';
import path from 'node:path';

/** How far a request's timestamp may be from the server's clock. */
export const MAX_SKEW_MS = 10 * 60 * 1000;

export type Headers = Record<string, string | string[] | undefined>;

/** A signed request that does not hold up; the message says why. */
export class SignatureError extends Error {}

const header = (h: Headers, name: string): string => {
  const v = h[name.toLowerCase()];
  return (Array.isArray(v) ? v[0] : v) ?? '';
};

/** The account a request says it comes from ('' when it is not a signed request). */
export const signedUser = (h: Headers): string => header(h, 'x-ops-userid');

/** The protocol version of X-Ops-Sign. */
export function signVersion(h: Headers): string {
  const sign = header(h, 'x-ops-sign');
  if (!sign) throw new SignatureError('X-Ops-Sign header missing');
  const version = /version=(\d+\.\d+)/.exec(sign)?.[1];
  if (!version) throw new SignatureError('invalid X-Ops-Sign header');
  if (!['1.0', '1.1', '1.2', '1.3'].includes(version)) throw new SignatureError('unsupported version');
  const algorithm = /algorithm=(\w+)/.exec(sign)?.[1];
  if (algorithm && algorithm !== 'sha1' && !(algorithm === 'sha256' && version === '1.3')) {
    throw new SignatureError('unsupported algorithm');
  }
  return version;
}

/** Checks X-Ops-Timestamp against `now`. */
export function checkTimestamp(h: Headers, now: number): void {
  const ts = header(h, 'x-ops-timestamp');
  if (!ts) throw new SignatureError('X-Ops-Timestamp header missing');
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(ts)) {
    throw new SignatureError('X-Ops-Timestamp is not an RFC 3339 time');
  }
  const t = Date.parse(ts);
  if (Number.isNaN(t)) throw new SignatureError('X-Ops-Timestamp is not an RFC 3339 time');
  if (Math.abs(now - t) > MAX_SKEW_MS) throw new SignatureError('time difference');
}

/** The signature from X-Ops-Authorization-1..N, in order. */
function signatureOf(h: Headers): Buffer {
  const parts = new Map<number, string>();
  for (const name of Object.keys(h)) {
    const m = /^x-ops-authorization-(\d+)$/i.exec(name);
    if (m) parts.set(Number(m[1]), header(h, name));
  }
  if (parts.size === 0) throw new SignatureError('X-Ops-Authorization headers missing');
  const chunks: string[] = [];
  for (let i = 1; i <= parts.size; i++) {
    const part = parts.get(i);
    if (part === undefined) throw new SignatureError('invalid X-Ops-Authorization headers');
    chunks.push(part);
  }
  const joined = chunks.join('');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(joined)) throw new SignatureError('invalid X-Ops-Authorization headers');
  return Buffer.from(joined, 'base64');
}

/** Go's path.Clean of the request path (no query), as the client signed it. */
export function cleanPath(url: string): string {
  const raw = url.split('?')[0] ?? '';
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Kept as sent.
  }
  const clean = path.posix.normalize(decoded || '/');
  return clean.length > 1 && clean.endsWith('/') ? clean.slice(0, -1) : clean;
}

/** The text a client of protocol `version` signs. */
export function canonicalText(
  req: { method: string; path: string; headers: Headers },
  version: string,
): string {
  const h = req.headers;
  let user = header(h, 'x-ops-userid');
  if (version === '1.1' || version === '1.2') {
    user = crypto.createHash('sha1').update(user).digest('base64');
  }
  if (version === '1.3') {
    return [
      `Method:${req.method}`,
      `Path:${req.path}`,
      `X-Ops-Content-Hash:${header(h, 'x-ops-content-hash')}`,
      `X-Ops-Sign:version=${version}`,
      `X-Ops-Timestamp:${header(h, 'x-ops-timestamp')}`,
      `X-Ops-UserId:${user}`,
      `X-Ops-Server-API-Version:${header(h, 'x-ops-server-api-version')}`,
    ].join('\n');
  }
  return [
    `Method:${req.method}`,
    `Hashed Path:${crypto.createHash('sha1').update(req.path).digest('base64')}`,
    `X-Ops-Content-Hash:${header(h, 'x-ops-content-hash')}`,
    `X-Ops-Timestamp:${header(h, 'x-ops-timestamp')}`,
    `X-Ops-UserId:${user}`,
  ].join('\n');
}

/** Whether an old-style (1.0, 1.1) signature decrypts to `data`. */
function verifyEncrypted(signature: Buffer, data: Buffer, key: crypto.KeyObject): boolean {
  try {
    const out = crypto.publicDecrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, signature);
    return out.equals(data);
  } catch {
    return false;
  }
}

/**
 * Checks a signed request against the account's public key (PEM); throws SignatureError when
 * the request is not signed by its private key, its timestamp is off, or its headers are bad.
 */
export function verifySignedRequest(
  req: { method: string; url: string; headers: Headers },
  publicPem: string,
  now: number,
): void {
  let key: crypto.KeyObject;
  try {
    key = crypto.createPublicKey(publicPem);
  } catch {
    throw new SignatureError('the public key of the account cannot be read');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new SignatureError('the public key of the account is not RSA');
  checkTimestamp(req.headers, now);
  const version = signVersion(req.headers);
  const signature = signatureOf(req.headers);
  const data = Buffer.from(
    canonicalText({ method: req.method, path: cleanPath(req.url), headers: req.headers }, version),
  );
  let ok: boolean;
  if (version === '1.3' || version === '1.2') {
    try {
      ok = crypto.verify(version === '1.3' ? 'sha256' : 'sha1', data, key, signature);
    } catch {
      ok = false;
    }
  } else ok = verifyEncrypted(signature, data, key);
  if (!ok) throw new SignatureError('could not verify signature');
}
