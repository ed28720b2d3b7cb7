// The runtime token of an actions job (ACTIONS_RUNTIME_TOKEN): an HS256 JWT that the runner hands
// to the job's steps and that the artifact service (Twirp at /twirp/...) accepts as
// `Authorization: Bearer <token>`. Its `scp` claim is what the unmodified @actions/artifact client
// reads (without verifying) to learn its run and job ids: `Actions.Results:<runId>:<jobId>`.
//
// The signing key is derived by HKDF-SHA256 from [security] SECRET_KEY for this purpose alone, so
// neither the key nor a token is of use anywhere else. Verification accepts HS256 only (never
// "none" nor another algorithm named in the header), compares the signature in constant time and
// checks nbf/exp with a small allowance for clock skew.
import crypto from 'node:crypto';

/** What a runtime token says about its job. */
export interface RuntimeTokenClaims {
  repoId: number;
  runId: number;
  jobId: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

export interface MintRuntimeTokenOptions {
  /** [security] SECRET_KEY (ctx.config.security.secretKey). */
  secretKey: string;
  repoId: number;
  runId: number;
  jobId: number;
  /** How long the token is valid; a job's token should outlive the job. Default: 24 hours. */
  ttlSeconds?: number;
  /** The issue time, seconds since the epoch (tests); default: now. */
  now?: number;
}

const ISSUER = 'anvil';
const AUDIENCE = 'anvil:actions';
const DEFAULT_TTL = 24 * 3600;
/** Seconds of clock skew tolerated on nbf and exp. */
const LEEWAY = 60;
/** A token longer than this is not one of ours; it is refused before any work. */
const MAX_TOKEN_LENGTH = 8192;

const keys = new Map<string, Buffer>();

function keyOf(secretKey: string): Buffer {
  if (!secretKey) throw new Error('[security] SECRET_KEY is not set: runtime tokens cannot be signed');
  let key = keys.get(secretKey);
  if (!key) {
    key = Buffer.from(
      crypto.hkdfSync('sha256', secretKey, 'anvil-runtime-token', 'anvil:v1:actions-runtime-token', 32),
    );
    keys.set(secretKey, key);
  }
  return key;
}

const b64 = (data: Buffer | string) => Buffer.from(data).toString('base64url');
const HEADER = b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function sign(key: Buffer, signingInput: string): Buffer {
  return crypto.createHmac('sha256', key).update(signingInput).digest();
}

const isId = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n > 0;

/**
 * A job's runtime token. Its `scp` grants reading the run's artifacts and caches
 * (`Actions.GenericRead:<runId>`), uploading artifacts for this job
 * (`Actions.UploadArtifacts:<runId>:<jobId>`) and the results service for this job
 * (`Actions.Results:<runId>:<jobId>`); `ac` is the cache access list (the repository's default
 * scope, read and write). Synchronous: the caller may or may not await it.
 */
export function mintRuntimeToken(opts: MintRuntimeTokenOptions): string {
  const { repoId, runId, jobId } = opts;
  if (!isId(repoId) || !isId(runId) || !isId(jobId)) {
    throw new Error('runtime token: repoId, runId and jobId must be positive integers');
  }
  const iat = opts.now ?? Math.floor(Date.now() / 1000);
  const ttl = opts.ttlSeconds ?? DEFAULT_TTL;
  if (!Number.isFinite(ttl) || ttl <= 0) throw new Error('runtime token: ttlSeconds must be positive');
  const payload = {
    iss: ISSUER,
    aud: AUDIENCE,
    iat,
    nbf: iat,
    exp: iat + Math.ceil(ttl),
    scp: [
      `Actions.GenericRead:${runId}`,
      `Actions.UploadArtifacts:${runId}:${jobId}`,
      `Actions.Results:${runId}:${jobId}`,
    ].join(' '),
    ac: JSON.stringify([{ Scope: '', Permission: 3 }]),
    repo_id: repoId,
    run_id: runId,
    job_id: jobId,
  };
  const signingInput = `${HEADER}.${b64(JSON.stringify(payload))}`;
  return `${signingInput}.${b64(sign(keyOf(opts.secretKey), signingInput))}`;
}

export class RuntimeTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeTokenError';
  }
}

function decodeJson(part: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new RuntimeTokenError('malformed token');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new RuntimeTokenError('malformed token');
  return value as Record<string, unknown>;
}

/**
 * The claims of a valid runtime token; throws RuntimeTokenError (with a message fit for the
 * caller) when the token is malformed, not signed by this server's key, not yet valid or expired.
 */
export function verifyRuntimeToken(
  secretKey: string,
  token: string,
  now = Math.floor(Date.now() / 1000),
): RuntimeTokenClaims {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH)
    throw new RuntimeTokenError('malformed token');
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) {
    throw new RuntimeTokenError('malformed token');
  }
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = decodeJson(headerPart);
  if (header['alg'] !== 'HS256') throw new RuntimeTokenError('unsupported token algorithm');
  const expected = sign(keyOf(secretKey), `${headerPart}.${payloadPart}`);
  const given = Buffer.from(signaturePart, 'base64url');
  // timingSafeEqual needs equal lengths; a wrong length is a wrong signature, compared anyway.
  const same = given.length === expected.length && crypto.timingSafeEqual(given, expected);
  if (!same) throw new RuntimeTokenError('invalid token signature');
  const payload = decodeJson(payloadPart);
  const { exp, nbf, repo_id: repoId, run_id: runId, job_id: jobId } = payload;
  if (payload['iss'] !== ISSUER || payload['aud'] !== AUDIENCE)
    throw new RuntimeTokenError('token is not a runtime token');
  if (typeof exp !== 'number' || exp + LEEWAY <= now) throw new RuntimeTokenError('token has expired');
  if (typeof nbf === 'number' && nbf - LEEWAY > now) throw new RuntimeTokenError('token is not valid yet');
  if (!isId(repoId) || !isId(runId) || !isId(jobId))
    throw new RuntimeTokenError('token lacks its job claims');
  return { repoId, runId, jobId, exp };
}
