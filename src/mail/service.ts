// Account mail: the forgotten password (a reset code mailed, then a new password set with it) and
// the confirmation of a new account's address ([service] REGISTER_EMAIL_CONFIRM). A code is 32
// random bytes and an HMAC of them under [security] SECRET_KEY: a forged or mistyped code is
// refused before the database is asked; only the code's SHA-256 is stored (mail_code), compared in
// constant time, valid for [service] *_CODE_LIVE_MINUTES and used once (its row is deleted by the
// one request that uses it). The mail is queued in the transaction that stores the code.
import crypto from 'node:crypto';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError } from '../errors.js';
import type { UserService } from '../users/service.js';
import { UserType, type UserRow } from '../users/tables.js';
import { activationMail, resetPasswordMail } from './compose.js';
import { MailQueue } from './queue.js';
import * as store from './store.js';
import type { MailCodePurpose } from './tables.js';

/** A person is mailed a new code of one kind at most this often (Forgejo's MailResendLimit). */
const RESEND_SECONDS = 180;
/** Requests per address (IP) in the window before the forms answer 429. */
const MAX_PER_ADDRESS = 10;
const WINDOW_MS = 15 * 60_000;

export interface AccountMailDeps {
  db: Db;
  queue: Pick<MailQueue, 'enabled' | 'wake'>;
  users: Pick<UserService, 'findByLogin' | 'getById' | 'edit' | 'activateEmail'>;
  secretKey: string;
  /** [server] ROOT_URL (ends in /). */
  rootUrl: string;
  siteName: string;
  activeCodeLiveMinutes: number;
  resetPasswdCodeLiveMinutes: number;
}

export class AccountMail {
  private readonly key: Buffer;
  private readonly hits = new Map<string, number[]>();

  constructor(private readonly deps: AccountMailDeps) {
    this.key = Buffer.from(
      crypto.hkdfSync(
        'sha256',
        deps.secretKey || crypto.randomBytes(32),
        'anvil-mail',
        'anvil:mail-code',
        32,
      ),
    );
  }

  get enabled(): boolean {
    return this.deps.queue.enabled;
  }

  /** Counts a request of `address` (IP); a 429 past the limit. */
  throttle(address: string): void {
    const now = Date.now();
    const recent = (this.hits.get(address) ?? []).filter((t) => now - t < WINDOW_MS);
    if (recent.length >= MAX_PER_ADDRESS) {
      throw new AppError('too_many_requests', 'Too many requests from your address. Try again later.');
    }
    recent.push(now);
    this.hits.set(address, recent);
    if (this.hits.size > 10_000) {
      for (const [k, v] of this.hits) if (v.every((t) => now - t >= WINDOW_MS)) this.hits.delete(k);
    }
  }

  /**
   * Mails a reset link to the account `email` names, if there is one that may sign in; says nothing
   * either way (the caller answers the same).
   */
  async requestPasswordReset(email: string): Promise<void> {
    if (!this.enabled || !email.includes('@')) return;
    const user = await this.deps.users.findByLogin(email);
    if (!user || user.type !== UserType.Individual || user.prohibit_login) return;
    const minutes = this.deps.resetPasswdCodeLiveMinutes;
    await this.mailCode(user, 'reset_password', minutes, (code) =>
      resetPasswordMail({
        to: user.email,
        name: user.name,
        link: `${this.deps.rootUrl}user/recover_account?code=${code}`,
        minutes,
        site: this.deps.siteName,
      }),
    );
  }

  /** Mails the confirmation link to a new (inactive) account. */
  async sendActivation(user: UserRow): Promise<void> {
    if (!this.enabled || user.is_active) return;
    const minutes = this.deps.activeCodeLiveMinutes;
    await this.mailCode(user, 'activate', minutes, (code) =>
      activationMail({
        to: user.email,
        name: user.name,
        link: `${this.deps.rootUrl}user/activate?code=${code}`,
        minutes,
        site: this.deps.siteName,
      }),
    );
  }

  /** Mails the confirmation link again to the inactive account of `email`, if any (silently). */
  async resendActivation(email: string): Promise<void> {
    const user = email.includes('@') ? await this.deps.users.findByLogin(email) : undefined;
    if (user && !user.is_active && !user.prohibit_login && user.lower_email === email.toLowerCase()) {
      await this.sendActivation(user);
    }
  }

  /** The account of a valid reset code (not used up), or undefined. */
  async resetCodeUser(code: string): Promise<UserRow | undefined> {
    return (await this.find(code, 'reset_password'))?.user;
  }

  /**
   * Sets the password of the reset code's account and uses the code up; every session of the
   * account ends (users.edit). Undefined when the code is not (or no longer) valid.
   */
  async resetPassword(code: string, password: string): Promise<UserRow | undefined> {
    const found = await this.find(code, 'reset_password');
    if (!found || !(await store.deleteCode(this.deps.db, found.id))) return undefined;
    await store.deleteCodesOf(this.deps.db, found.user.id, 'reset_password');
    // Following the link proves the address, as in Forgejo: an inactive account becomes active.
    let user = found.user;
    if (!user.is_active) user = await this.deps.users.activateEmail(user, found.email);
    return this.deps.users.edit(user, { password, mustChangePassword: false });
  }

  /** Activates the account of a confirmation code (used up); undefined when not valid. */
  async activate(code: string): Promise<UserRow | undefined> {
    const found = await this.find(code, 'activate');
    if (!found || !(await store.deleteCode(this.deps.db, found.id))) return undefined;
    await store.deleteCodesOf(this.deps.db, found.user.id, 'activate');
    return this.deps.users.activateEmail(found.user, found.email);
  }

  private async mailCode(
    user: UserRow,
    purpose: MailCodePurpose,
    minutes: number,
    compose: (code: string) => ReturnType<typeof resetPasswordMail>,
  ): Promise<void> {
    const now = nowUnix();
    const last = await store.latestCode(this.deps.db, user.id, purpose);
    if (last && now - last.created_unix < RESEND_SECONDS && last.expires_unix > now) return;
    const code = this.newCode();
    await transaction(this.deps.db, async (tx) => {
      await store.insertCode(tx, {
        user_id: user.id,
        purpose,
        code_hash: sha256(code),
        email: user.email,
        expires_unix: now + minutes * 60,
        created_unix: now,
      });
      await store.insertMails(tx, MailQueue.rows([compose(code)], now));
    });
    this.deps.queue.wake();
  }

  private newCode(): string {
    const random = crypto.randomBytes(24).toString('base64url');
    return `${random}.${this.sign(random)}`;
  }

  private sign(random: string): string {
    return crypto.createHmac('sha256', this.key).update(random).digest('base64url').slice(0, 32);
  }

  private async find(
    code: string,
    purpose: MailCodePurpose,
  ): Promise<{ id: number; email: string; user: UserRow } | undefined> {
    if (typeof code !== 'string' || code.length > 200) return undefined;
    const [random, signature] = code.split('.');
    if (!random || !signature) return undefined;
    const expected = Buffer.from(this.sign(random));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined;
    const hash = sha256(code);
    const row = await store.codeByHash(this.deps.db, hash);
    if (!row || row.purpose !== purpose || row.expires_unix < nowUnix()) return undefined;
    if (!crypto.timingSafeEqual(Buffer.from(row.code_hash), Buffer.from(hash))) return undefined;
    const user = await this.deps.users.getById(row.user_id);
    if (!user || user.prohibit_login) return undefined;
    return { id: row.id, email: row.email, user };
  }
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
