// Two-factor authentication with TOTP, as Forgejo does it: a user enrols by confirming a passcode
// of a new secret (shown as a QR code drawn here, and as text), and gets a single-use recovery
// ("scratch") code; from then on a password sign-in in the browser asks for a passcode (or the
// recovery code), and Basic authentication with a password needs one in X-Forgejo-OTP or
// X-Gitea-OTP (auth/identity.ts), while access tokens are unaffected. Passcodes are RFC 6238 TOTP
// (SHA-1, 6 digits, 30 s, one step either side accepted); a time step once accepted is never
// accepted again (nor any before it), and wrong codes are throttled like passwords
// (sessions/throttle.ts). The secret is kept encrypted with [security] SECRET_KEY (auth/secrets.ts),
// the recovery code as a salted PBKDF2 hash; a used recovery code is cleared.
//
// Between the password and the passcode the browser holds no session, only a short-lived pending
// sign-in signed with a key derived from SECRET_KEY (`pendingSignIn`), bound to the browser.
import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { nowUnix, type Db } from '../db/database.js';
import { AppError, conflict, notFound } from '../errors.js';
import { SecretBox } from '../auth/secrets.js';
import type { SignInThrottle } from '../sessions/throttle.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';

const PERIOD = 30;
const DIGITS = 6;
/** Steps either side of now that are accepted (clock drift, a code typed as it changes). */
const WINDOW = 1;
/** How long a started enrolment (the secret on the enrol page) stays valid, in seconds. */
const ENROL_LIFETIME = 30 * 60;
/** How long the step between password and passcode may take, in seconds. */
export const PENDING_LIFETIME = 5 * 60;
/** The recovery code's alphabet: base32 without the look-alikes 0, O, 1 and I (as Forgejo's). */
const SCRATCH_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export const PASSCODE_INVALID = 'The passcode is incorrect. Try again.';

/** The passcode as typed (spaces dropped), or null when it cannot be one. */
export function normalisePasscode(typed: string): string | null {
  const code = typed.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : null;
}

/** A secret offered for enrolment: its base32 text, the otpauth:// URI and the sealed form the enrol form carries. */
export interface EnrolOffer {
  secret: string;
  uri: string;
  state: string;
}

/** A password sign-in waiting for its second factor. */
export interface PendingSignIn {
  userId: number;
  /** Where the browser goes once signed in. */
  redirectTo: string;
}

export interface TwoFactorServiceDeps {
  db: Db;
  /** [security] SECRET_KEY: encrypts the secrets and signs pending sign-ins. */
  secretKey: string;
  /** The limiter of wrong passwords, which counts wrong codes too. */
  throttle: Pick<SignInThrottle, 'guard'>;
  /** The issuer authenticator apps show: the site's name and host ([server] ROOT_URL). */
  issuer: string;
}

export class TwoFactorService {
  private readonly db: Db;
  private readonly secretKey: string;
  private readonly throttle: TwoFactorServiceDeps['throttle'];
  private readonly issuer: string;
  private box?: SecretBox;
  private signKey?: Buffer;

  constructor(deps: TwoFactorServiceDeps) {
    this.db = deps.db;
    this.secretKey = deps.secretKey;
    this.throttle = deps.throttle;
    // Authenticator apps split the label at ':' (Forgejo drops it from the issuer too).
    this.issuer = deps.issuer.replaceAll(':', '');
  }

  private secrets(): SecretBox {
    return (this.box ??= new SecretBox(this.secretKey, 'two-factor'));
  }

  private pendingKey(): Buffer {
    return (this.signKey ??= Buffer.from(
      crypto.hkdfSync('sha256', this.secretKey, 'anvil-two-factor', 'anvil:two-factor-pending', 32),
    ));
  }

  private totp(secret: string, label = ''): TOTP {
    return new TOTP({
      issuer: this.issuer,
      label,
      algorithm: 'SHA1',
      digits: DIGITS,
      period: PERIOD,
      secret: Secret.fromBase32(secret),
    });
  }

  /** When the user enrolled, or null when two-factor authentication is off for them. */
  async status(userId: number): Promise<{ since: number; hasScratch: boolean } | null> {
    const row = await store.byUser(this.db, userId);
    return row ? { since: Number(row.created_unix), hasScratch: row.scratch_hash !== '' } : null;
  }

  async isEnrolled(userId: number): Promise<boolean> {
    return (await store.byUser(this.db, userId)) !== undefined;
  }

  /**
   * A new secret for `user` to enrol with: the text, the otpauth:// URI for the QR code, and
   * `state`, the secret sealed for this user for a while (what the enrol form posts back).
   */
  offer(user: UserRow): EnrolOffer {
    const secret = new Secret({ size: 20 }).base32;
    const uri = this.totp(secret, user.name).toString();
    const state = this.secrets().encrypt(
      JSON.stringify({ u: user.id, e: nowUnix() + ENROL_LIFETIME, s: secret }),
    );
    return { secret, uri, state };
  }

  /** The offer a form posted back, or null when it is not this user's, was altered or has expired. */
  reopen(user: UserRow, state: string): EnrolOffer | null {
    try {
      const v = JSON.parse(this.secrets().decrypt(state)) as { u?: unknown; e?: unknown; s?: unknown };
      if (v.u !== user.id || typeof v.e !== 'number' || v.e < nowUnix() || typeof v.s !== 'string')
        return null;
      return { secret: v.s, uri: this.totp(v.s, user.name).toString(), state };
    } catch {
      return null;
    }
  }

  /** The QR code of an otpauth:// URI as SVG markup (paths only, drawn here). */
  async qrSvg(uri: string): Promise<string> {
    // Loaded with the first enrolment, not at start-up.
    const { default: QRCode } = await import('qrcode');
    return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  }

  /** The time step a passcode of `secret` belongs to within the window around now, or null. */
  private stepOf(secret: string, passcode: string): number | null {
    const now = Date.now();
    const totp = this.totp(secret);
    const delta = totp.validate({ token: passcode, timestamp: now, window: WINDOW });
    return delta === null ? null : totp.counter({ timestamp: now }) + delta;
  }

  /**
   * Enrols `user` with the offered secret once `passcode` proves their app has it; returns the
   * recovery code (shown once). Throws `invalid` for a wrong passcode, `conflict` when enrolled.
   */
  async enrol(user: UserRow, offer: EnrolOffer, passcode: string): Promise<string> {
    const code = normalisePasscode(passcode);
    if (!code || this.stepOf(offer.secret, code) === null) throw new AppError('invalid', PASSCODE_INVALID);
    const scratch = newScratch();
    const now = nowUnix();
    try {
      // As in Forgejo the enrolment's code is not recorded as used: the first sign-in may use it.
      await store.insert(this.db, {
        uid: user.id,
        secret: this.secrets().encrypt(offer.secret),
        scratch_salt: scratch.salt,
        scratch_hash: scratch.hash,
        last_used_passcode: null,
        last_used_step: null,
        created_unix: now,
        updated_unix: now,
      });
    } catch (err) {
      if (await this.isEnrolled(user.id)) throw conflict('Two-factor authentication is already enabled.');
      throw err;
    }
    return scratch.code;
  }

  /** A new recovery code for an enrolled user (the old one stops working); `not_found` when not enrolled. */
  async regenerateScratch(user: UserRow): Promise<string> {
    const scratch = newScratch();
    if (!(await store.setScratch(this.db, user.id, scratch.salt, scratch.hash, nowUnix()))) {
      throw notFound('Two-factor authentication is not enabled.');
    }
    return scratch.code;
  }

  /** Turns two-factor authentication off; `not_found` when it was not on. */
  async disable(user: UserRow): Promise<void> {
    if (!(await store.remove(this.db, user.id))) throw notFound('Two-factor authentication is not enabled.');
  }

  /**
   * Whether `passcode` is a current passcode of the user's that was not used before (and, when
   * it is, it is used up). Throttled: throws `too_many_requests` after too many wrong codes.
   * False when the user is not enrolled.
   */
  async verifyPasscode(userId: number, passcode: string, address?: string): Promise<boolean> {
    const ok = await this.throttle.guard(`twofa:${userId}`, address, async () => {
      const row = await store.byUser(this.db, userId);
      const code = normalisePasscode(passcode);
      if (!row || !code) return undefined;
      const step = this.stepOf(this.secrets().decrypt(row.secret), code);
      if (step === null) return undefined;
      return (await store.consumeStep(this.db, userId, step, code, nowUnix())) || undefined;
    });
    return ok === true;
  }

  /** Whether `code` is the user's recovery code; when it is, it is used up. Throttled as passcodes are. */
  async verifyScratch(userId: number, code: string, address?: string): Promise<boolean> {
    const ok = await this.throttle.guard(`twofa:${userId}`, address, async () => {
      const row = await store.byUser(this.db, userId);
      const typed = code.trim().toUpperCase();
      if (!row || !row.scratch_hash || !typed) return undefined;
      const hash = hashScratch(typed, row.scratch_salt);
      const given = Buffer.from(hash);
      const expected = Buffer.from(row.scratch_hash);
      if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined;
      return (await store.useScratch(this.db, userId, row.scratch_hash, nowUnix())) || undefined;
    });
    return ok === true;
  }

  /**
   * The second factor of a Basic password sign-in (auth/identity.ts): 'none' when the user has
   * not enrolled, else whether `otp` is a fresh passcode (used up when it is).
   */
  async checkOtp(userId: number, otp: string | undefined): Promise<'none' | 'valid' | 'invalid'> {
    if (!(await this.isEnrolled(userId))) return 'none';
    return otp && (await this.verifyPasscode(userId, otp)) ? 'valid' : 'invalid';
  }

  /** The signed value that carries a pending sign-in of `browserId` (the browser's CSRF cookie). */
  pendingSignIn(pending: PendingSignIn, browserId: string): string {
    const payload = Buffer.from(
      JSON.stringify({ u: pending.userId, r: pending.redirectTo, e: nowUnix() + PENDING_LIFETIME }),
    ).toString('base64url');
    return `${payload}.${this.signPending(payload, browserId)}`;
  }

  /** The pending sign-in a value carries, or null when it is not this browser's, was altered or has expired. */
  readPendingSignIn(value: string | undefined, browserId: string): PendingSignIn | null {
    if (!value || value.length > 2000 || !browserId) return null;
    const [payload, mac] = value.split('.');
    if (!payload || !mac) return null;
    const given = Buffer.from(mac);
    const expected = Buffer.from(this.signPending(payload, browserId));
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
    try {
      const v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        u?: unknown;
        r?: unknown;
        e?: unknown;
      };
      if (typeof v.u !== 'number' || typeof v.r !== 'string' || typeof v.e !== 'number') return null;
      if (v.e < nowUnix()) return null;
      return { userId: v.u, redirectTo: v.r };
    } catch {
      return null;
    }
  }

  private signPending(payload: string, browserId: string): string {
    return crypto
      .createHmac('sha256', this.pendingKey())
      .update(`${browserId}:${payload}`)
      .digest('base64url');
  }
}

/** A new recovery code (10 characters of 6 random bytes, as Forgejo's) with its salt and hash. */
function newScratch(): { code: string; salt: string; hash: string } {
  const bytes = crypto.randomBytes(6);
  let bits = 0;
  let value = 0;
  let code = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      code += SCRATCH_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) code += SCRATCH_ALPHABET[(value << (5 - bits)) & 31];
  const salt = crypto.randomBytes(8).toString('base64url');
  return { code, salt, hash: hashScratch(code, salt) };
}

function hashScratch(code: string, salt: string): string {
  return crypto.pbkdf2Sync(code, salt, 10000, 50, 'sha256').toString('hex');
}
