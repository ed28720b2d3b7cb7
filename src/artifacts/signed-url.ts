// Signed URLs for artifact content (the spec's Authentication item 6): the upload URL returned by
// CreateArtifact and the download URL returned by GetSignedArtifactURL (and the REST /zip
// redirect) live at the server root, /api/actions/artifacts/{id}/upload|download, outside /api/v1
// and its credentials. They carry `expires` (seconds since the epoch) and `sig`, an HMAC-SHA256
// over the HTTP method, the artifact id and the expiry, keyed by HKDF-SHA256 of [security]
// SECRET_KEY for this purpose alone. So a URL works for one method, one artifact and a limited
// time, and cannot be changed without the key.
//
// Refusals: a missing, malformed or wrong signature (a tampered URL, or a URL of another artifact)
// is 401; a correctly signed URL past its expiry is 403 (the signature is checked first, so an
// altered expiry is a 401). Signatures are compared in constant time.
import crypto from 'node:crypto';

export type UrlPurpose = 'upload' | 'download';

/** The HTTP method each kind of URL is signed for (a download URL also answers HEAD). */
const METHOD: Record<UrlPurpose, string> = { upload: 'PUT', download: 'GET' };

export type UrlCheck = 'ok' | 'invalid' | 'expired';

export class UrlSigner {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    if (!secretKey) throw new Error('[security] SECRET_KEY is not set: artifact URLs cannot be signed');
    this.key = Buffer.from(
      crypto.hkdfSync('sha256', secretKey, 'anvil-artifact-url', 'anvil:v1:artifact-signed-url', 32),
    );
  }

  private mac(purpose: UrlPurpose, artifactId: number, expires: number): Buffer {
    return crypto
      .createHmac('sha256', this.key)
      .update(`${METHOD[purpose]}\n${artifactId}\n${expires}`)
      .digest();
  }

  /** The path and query of a URL for `purpose` on `artifactId`, valid until `expires`. */
  path(purpose: UrlPurpose, artifactId: number, expires: number): string {
    const sig = this.mac(purpose, artifactId, expires).toString('base64url');
    return `api/actions/artifacts/${artifactId}/${purpose}?expires=${expires}&sig=${sig}`;
  }

  /** Whether `sig` signs (`purpose`, `artifactId`, `expires`), and whether it is still valid at `now`. */
  check(purpose: UrlPurpose, artifactId: number, expires: unknown, sig: unknown, now: number): UrlCheck {
    if (typeof expires !== 'string' || !/^\d{1,15}$/.test(expires)) return 'invalid';
    if (typeof sig !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return 'invalid';
    const expected = this.mac(purpose, artifactId, Number(expires));
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return 'invalid';
    return Number(expires) <= now ? 'expired' : 'ok';
  }
}
