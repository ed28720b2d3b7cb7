// Accounts: creation, editing, deletion (with purge), password sign-in and visibility.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import {
  MovedError,
  type AppError,
  forbidden,
  invalid,
  invalidField,
  notFound,
  badRequest,
} from '../errors.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import * as store from './store.js';
import * as orgStore from '../orgs/store.js';
import { checkOwnerName } from './names.js';
import { UserType, Visibility, type VisibilityName } from './tables.js';
import type { AfterCommit, OwnedResources } from './owned.js';
import type { Viewer } from './tables.js';
import type { UserRow } from './tables.js';
import type { Page } from '../http/pagination.js';
import type { EmailRow } from './tables.js';

export interface CreateUserInput {
  username: string;
  email: string;
  password?: string | undefined;
  fullName?: string | undefined;
  loginName?: string | undefined;
  sourceId?: number | undefined;
  mustChangePassword?: boolean | undefined;
  restricted?: boolean | undefined;
  visibility?: VisibilityName | undefined;
  isAdmin?: boolean | undefined;
  createdAt?: Date | undefined;
  /** false: an inactive account, until its e-mail address is confirmed ([service] REGISTER_EMAIL_CONFIRM). */
  active?: boolean | undefined;
  /** A sign-up: on a site with no account yet it becomes the administrator (as in Forgejo). */
  firstBecomesAdmin?: boolean | undefined;
}

export interface EditUserInput {
  email?: string | undefined;
  fullName?: string | undefined;
  loginName?: string | undefined;
  sourceId?: number | undefined;
  password?: string | undefined;
  mustChangePassword?: boolean | undefined;
  website?: string | undefined;
  location?: string | undefined;
  description?: string | undefined;
  pronouns?: string | undefined;
  active?: boolean | undefined;
  admin?: boolean | undefined;
  allowCreateOrganization?: boolean | undefined;
  maxRepoCreation?: number | undefined;
  prohibitLogin?: boolean | undefined;
  restricted?: boolean | undefined;
  visibility?: VisibilityName | undefined;
}

/** What /user/settings may change (undefined: unchanged). */
export interface SettingsInput {
  fullName?: string | undefined;
  description?: string | undefined;
  website?: string | undefined;
  location?: string | undefined;
  pronouns?: string | undefined;
  language?: string | undefined;
  theme?: string | undefined;
  diffViewStyle?: string | undefined;
  enableRepoUnitHints?: boolean | undefined;
  hideEmail?: boolean | undefined;
  hideActivity?: boolean | undefined;
  hidePronouns?: boolean | undefined;
  visibility?: VisibilityName | undefined;
  /** Which notification mail to get: enabled, onmention, disabled or andyourown (Forgejo's). */
  emailNotificationsPreference?: string | undefined;
}

export const EMAIL_NOTIFICATIONS = ['enabled', 'onmention', 'disabled', 'andyourown'] as const;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** A website must be an http(s) URL (Forgejo's ValidUrl). */
function checkWebsite(website: string): void {
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(website).protocol);
  } catch {
    ok = false;
  }
  if (!ok) throw invalidField('website', `invalid URL [website: ${website}]`);
}

export function checkEmail(email: string, field = 'email'): void {
  if (!EMAIL.test(email) || email.length > 255)
    throw invalidField(field, `e-mail address is invalid [email: ${email}]`);
}

/** Anvil has only its own accounts (login source 0): any other source does not exist. */
function checkLoginSource(id: number | undefined): void {
  if (id !== undefined && id !== 0)
    throw invalidField('source_id', `login source does not exist [id: ${id}]`);
}

const b = (v: boolean | undefined) => (v === undefined ? undefined : v ? 1 : 0);

/**
 * Told, inside the transaction that makes the change, that what signed a user in no longer does:
 * a new password (set by anyone), a suspension (`active` false) or a sign-in ban (`prohibit_login`).
 */
export type CredentialsChanged = (tx: Tx, userId: number) => Promise<void>;

export interface UserServiceDeps {
  db: Db;
  /** What other domains report an account owns (checked before deletion, removed by a purge). */
  owned: readonly OwnedResources[];
  log: Logger;
}

export class UserService {
  private readonly credentialsListeners: CredentialsChanged[] = [];
  private readonly db: Db;
  private readonly owned: readonly OwnedResources[];
  private readonly log: Logger;

  constructor(deps: UserServiceDeps) {
    this.db = deps.db;
    this.owned = deps.owned;
    this.log = deps.log;
  }

  /** Listens to credential changes of every user, whatever path makes them (sessions end there). */
  onCredentialsChanged(listener: CredentialsChanged): void {
    this.credentialsListeners.push(listener);
  }

  private async credentialsChanged(tx: Tx, userId: number): Promise<void> {
    for (const listener of this.credentialsListeners) await listener(tx, userId);
  }

  getByName(name: string): Promise<UserRow | undefined> {
    return store.getByName(this.db, name);
  }

  getById(id: number): Promise<UserRow | undefined> {
    return store.getById(this.db, id);
  }

  /** Accounts by id, in one query. */
  getByIds(ids: number[]): Promise<Map<number, UserRow>> {
    return store.getByIds(this.db, ids);
  }

  /** The individual user `name`, or a 404 (a redirect when it is a former name). */
  async requireUser(name: string): Promise<UserRow> {
    const u = await store.getByName(this.db, name);
    if (!u) throw await this.missing(name, UserType.Individual);
    if (u.type !== UserType.Individual) throw notFound(`user does not exist [name: ${name}]`);
    return u;
  }

  /** Any account (user or organization) called `name`, or a 404 (a redirect when it is a former name). */
  async requireAccount(name: string): Promise<UserRow> {
    const u = await store.getByName(this.db, name);
    if (!u) throw await this.missing(name);
    return u;
  }

  /** The account a former name leads to, if any. */
  async renamedFrom(name: string): Promise<UserRow | undefined> {
    const id = await store.redirectOf(this.db, name);
    return id === undefined ? undefined : store.getById(this.db, id);
  }

  /** The error for a name no account has: a redirect to the account that had it, else a 404. */
  private async missing(name: string, type?: number): Promise<AppError> {
    const now = await this.renamedFrom(name);
    // Only public accounts: who may see a limited or private one is decided after the lookup.
    if (now && now.visibility === Visibility.public && (type === undefined || now.type === type)) {
      return new MovedError([name], [now.name]);
    }
    return notFound(`user does not exist [name: ${name}]`);
  }

  /**
   * Renames an account (a person or an organization). The former name keeps leading to it, as in
   * Forgejo, until another account takes it; repositories move with their owner (they are stored
   * by id). A change of case only is allowed; the same name changes nothing.
   */
  async rename(u: UserRow, newName: string, field = 'new_username'): Promise<void> {
    if (newName === u.name) return;
    checkOwnerName(newName, field);
    await transaction(this.db, async (tx) => {
      const other = await store.getByName(tx, newName);
      if (other && other.id !== u.id) throw invalidField(field, `user already exists [name: ${newName}]`);
      if (newName.toLowerCase() !== u.lower_name) {
        await store.deleteRedirect(tx, newName);
        await store.setRedirect(tx, u.name, u.id);
      }
      await store.rename(tx, u.id, newName);
    });
  }

  /** Of `names`, the lower-cased names of the accounts `viewer` may see, in one query. */
  async visibleNames(names: string[], viewer: Viewer | null): Promise<Set<string>> {
    const rows = await store.byLowerNames(
      this.db,
      [...new Set(names.map((n) => n.toLowerCase()))].slice(0, 500),
    );
    return new Set(rows.filter((u) => this.canSee(viewer, u)).map((u) => u.lower_name));
  }

  /** People in all, and those who signed in within the last month and half-year (/nodeinfo). */
  activity() {
    const now = nowUnix();
    return store.activity(this.db, now - 30 * 86400, now - 180 * 86400);
  }

  /** People matching a keyword, as `viewer` may see them. */
  search(f: { keyword?: string | undefined; uid?: number | undefined; viewer: Viewer | null }, page: Page) {
    return store.list(this.db, { type: UserType.Individual, ...f }, page.limit, page.offset);
  }

  /** Accounts for administrators: no visibility filter. */
  list(f: Omit<store.ListFilter, 'viewer'>, page: Page) {
    return store.list(this.db, f, page.limit, page.offset);
  }

  /** Whether `viewer` (null: anonymous) may see the account at all. */
  canSee(viewer: Viewer | null, u: UserRow): boolean {
    if (u.visibility === Visibility.public) return true;
    // A public-only token sees public accounts only, whoever holds it (as the search does).
    if (!viewer || viewer.publicOnly) return false;
    if (viewer.isAdmin || viewer.id === u.id) return true;
    return u.visibility === Visibility.limited;
  }

  /** The user `name` if `viewer` may see it, else a 404 that does not reveal it exists. */
  async requireVisibleUser(name: string, viewer: Viewer | null): Promise<UserRow> {
    const u = await this.requireUser(name);
    if (!this.canSee(viewer, u)) throw notFound(`user does not exist [name: ${name}]`);
    return u;
  }

  async create(input: CreateUserInput, q: Db | Tx = this.db): Promise<UserRow> {
    checkOwnerName(input.username);
    checkEmail(input.email);
    checkLoginSource(input.sourceId);
    if (!input.password) throw invalidField('password', 'Required');
    const passwd = input.password ? await hashPassword(input.password) : '';
    const now = nowUnix();
    const created = input.createdAt ? Math.floor(input.createdAt.getTime() / 1000) : now;
    return transaction(q, async (tx) => {
      if (await store.getByName(tx, input.username)) {
        throw invalidField('username', `user already exists [name: ${input.username}]`);
      }
      // A former name of another account is free to take; it then leads here.
      await store.deleteRedirect(tx, input.username);
      if ((await store.getIndividualByEmail(tx, input.email)) || (await store.getEmail(tx, input.email))) {
        throw invalidField('email', `e-mail already in use [email: ${input.email}]`);
      }
      const id = await store.insert(tx, {
        name: input.username,
        lower_name: input.username.toLowerCase(),
        full_name: input.fullName ?? '',
        email: input.email,
        lower_email: input.email.toLowerCase(),
        passwd,
        must_change_password: input.mustChangePassword ? 1 : 0,
        login_name: input.loginName ?? input.username,
        login_source: input.sourceId ?? 0,
        type: UserType.Individual,
        visibility: Visibility[input.visibility ?? 'public'],
        is_admin: input.isAdmin ? 1 : 0,
        restricted: input.restricted ? 1 : 0,
        is_active: input.active === false ? 0 : 1,
        created_unix: created,
        updated_unix: now,
      });
      await store.insertEmail(tx, {
        uid: id,
        email: input.email,
        is_activated: input.active === false ? 0 : 1,
        is_primary: 1,
      });
      // The first account of an empty site administers it, active at once (as in Forgejo). Race-safe:
      // of two sign-ups at once, only the one whose claim row goes in is made admin (the other waits
      // for it, then not).
      if (input.firstBecomesAdmin && !input.isAdmin && (await store.countIndividuals(tx)) === 1) {
        if (await store.claimFirstAdmin(tx, id)) {
          await store.update(tx, id, { is_admin: 1, is_active: 1 });
          await store.activatePrimaryEmail(tx, id);
        }
      }
      return (await store.getById(tx, id))!;
    });
  }

  async edit(u: UserRow, input: EditUserInput): Promise<UserRow> {
    // As in Forgejo: the sign-in name belongs to a login source, so the two change together.
    if ((input.sourceId === undefined) !== (input.loginName === undefined)) {
      throw invalid('source_id and login_name must be specified together');
    }
    checkLoginSource(input.sourceId);
    if (input.email !== undefined) checkEmail(input.email);
    const passwd = input.password ? await hashPassword(input.password) : undefined;
    return transaction(this.db, async (tx) => {
      if (input.email !== undefined && input.email.toLowerCase() !== u.lower_email) {
        const other = await store.getIndividualByEmail(tx, input.email);
        const address = await store.getEmail(tx, input.email);
        // Forgejo answers 400 here (EmailUsed), where creation answers 422.
        if ((other && other.id !== u.id) || (address && address.uid !== u.id)) {
          throw badRequest(`e-mail already in use [email: ${input.email}]`);
        }
        // As Forgejo: the old primary address stays as a secondary one, the new one is primary.
        if (!address) {
          await store.insertEmail(tx, { uid: u.id, email: input.email, is_activated: 1, is_primary: 0 });
        }
        await store.setPrimaryEmail(tx, u.id, (await store.getEmail(tx, input.email))!.id);
      }
      if (input.admin === false && u.is_admin && (await store.countAdmins(tx)) <= 1) {
        throw badRequest('cannot remove the last administrator: at least one administrator must remain');
      }
      await store.update(tx, u.id, {
        email: input.email,
        lower_email: input.email?.toLowerCase(),
        full_name: input.fullName,
        login_name: input.loginName,
        login_source: input.sourceId,
        passwd,
        must_change_password: b(input.mustChangePassword),
        website: input.website,
        location: input.location,
        description: input.description,
        pronouns: input.pronouns,
        is_active: b(input.active),
        is_admin: b(input.admin),
        allow_create_organization: b(input.allowCreateOrganization),
        max_repo_creation: input.maxRepoCreation,
        prohibit_login: b(input.prohibitLogin),
        restricted: b(input.restricted),
        visibility: input.visibility === undefined ? undefined : Visibility[input.visibility],
        updated_unix: nowUnix(),
      });
      if (passwd !== undefined || input.active === false || input.prohibitLogin === true) {
        await this.credentialsChanged(tx, u.id);
      }
      return (await store.getById(tx, u.id))!;
    });
  }

  /**
   * Deletes an individual account. Without `purge`, an account that still owns anything or belongs
   * to an organization is refused (422) and nothing changes. With `purge`, the account is first
   * disabled, then in one transaction its belongings go, it leaves every organization, and each
   * organization it was the last owner of is deleted with everything that organization owned.
   */
  async delete(u: UserRow, opts: { purge: boolean; doerId?: number }): Promise<void> {
    if (u.type !== UserType.Individual) throw invalid(`user is an organization [name: ${u.name}]`);
    if (opts.doerId === u.id) throw invalid('you cannot delete yourself');
    if (u.is_admin && (await store.countAdmins(this.db)) <= 1) {
      throw invalid('cannot delete the last administrator');
    }
    if (!opts.purge) {
      const after = await transaction(this.db, async (tx) => {
        for (const o of this.owned) {
          if ((await o.count(tx, u.id)) > 0) {
            throw invalid(
              `user still owns ${o.label} [name: ${u.name}]: delete or transfer them first, or purge`,
            );
          }
        }
        if ((await orgStore.orgIdsOfMember(tx, u.id)).length > 0) {
          throw invalid(
            `user is a member of at least one organization [name: ${u.name}]: remove them first, or purge`,
          );
        }
        await this.credentialsChanged(tx, u.id);
        await store.remove(tx, u.id);
        return [] as AfterCommit[];
      });
      await this.runAfterCommit(after);
      return;
    }

    await transaction(this.db, async (tx) => {
      await store.update(tx, u.id, { prohibit_login: 1, is_active: 0, updated_unix: nowUnix() });
      await this.credentialsChanged(tx, u.id);
    });
    const after = await transaction(this.db, async (tx) => {
      const cleanups: AfterCommit[] = [];
      const purgeOwner = async (ownerId: number) => {
        for (const o of this.owned) {
          const done = await o.purge(tx, ownerId);
          if (done) cleanups.push(done);
        }
      };
      await purgeOwner(u.id);
      for (const orgId of await orgStore.orgIdsOfMember(tx, u.id)) {
        const owners = await orgStore.ownerIds(tx, orgId);
        if (owners.length === 1 && owners[0] === u.id) {
          await purgeOwner(orgId);
          await store.remove(tx, orgId);
        } else {
          await orgStore.removeMember(tx, orgId, u.id);
        }
      }
      await store.remove(tx, u.id);
      return cleanups;
    });
    await this.runAfterCommit(after);
  }

  private async runAfterCommit(cleanups: AfterCommit[]): Promise<void> {
    for (const c of cleanups) {
      try {
        await c();
      } catch (err) {
        this.log.error({ err }, 'cleanup after account deletion failed');
      }
    }
  }

  /**
   * Confirms `email` of an account made inactive at sign-up ([service] REGISTER_EMAIL_CONFIRM): the
   * address is activated and, when it is still the primary one, the account becomes active.
   */
  async activateEmail(u: UserRow, email: string): Promise<UserRow> {
    return transaction(this.db, async (tx) => {
      const address = await store.getEmail(tx, email);
      if (address && address.uid === u.id) await store.setEmailActivated(tx, address.id, true);
      if (u.lower_email === email.toLowerCase()) {
        await store.update(tx, u.id, { is_active: 1, updated_unix: nowUnix() });
      }
      return (await store.getById(tx, u.id))!;
    });
  }

  /** The person a sign-in name (a user name, or any activated e-mail address) names, if any. */
  async findByLogin(login: string): Promise<UserRow | undefined> {
    // Any activated address of the person signs in, as in Forgejo.
    const u = login.includes('@') ? await this.byEmail(login) : await store.getByName(this.db, login);
    return u && u.type === UserType.Individual ? u : undefined;
  }

  /**
   * `u` when `password` is its password; undefined otherwise (or when there is no `u`). Unthrottled:
   * the surfaces that take passwords go through sessions/throttle.ts, which calls it.
   */
  async checkPassword(u: UserRow | undefined, password: string): Promise<UserRow | undefined> {
    if (!u) {
      // Spend the same time as a real check so response times do not reveal which accounts exist.
      await verifyPassword(await dummyHash(), password);
      return undefined;
    }
    return (await verifyPassword(u.passwd, password)) ? u : undefined;
  }

  /**
   * Refuses accounts that may not act: disabled or prohibited from signing in. must_change_password
   * is recorded but does not block: Anvil has no web sign-in where the password could be changed.
   */
  assertMayAct(u: UserRow): void {
    if (!u.is_active || u.prohibit_login) {
      throw forbidden('This account is prohibited from signing in, please contact your site administrator.');
    }
  }

  /** The person an activated address (primary or not) belongs to. */
  private async byEmail(email: string): Promise<UserRow | undefined> {
    const address = await store.getEmail(this.db, email);
    if (address?.is_activated) return store.getById(this.db, address.uid);
    return store.getIndividualByEmail(this.db, email);
  }

  // Settings and e-mail addresses of the signed-in user (/user/settings, /user/emails)

  /** Whether the site has no account yet (its first sign-up becomes the administrator). */
  async noAccountsYet(): Promise<boolean> {
    return (await store.countIndividuals(this.db)) === 0;
  }

  async updateSettings(u: UserRow, input: SettingsInput): Promise<UserRow> {
    if (input.website) checkWebsite(input.website);
    const pref = input.emailNotificationsPreference;
    if (pref !== undefined && !(EMAIL_NOTIFICATIONS as readonly string[]).includes(pref)) {
      throw invalidField(
        'email_notifications_preference',
        `must be one of ${EMAIL_NOTIFICATIONS.join(', ')}`,
      );
    }
    await store.update(this.db, u.id, {
      email_notifications_preference: pref,
      full_name: input.fullName,
      description: input.description,
      website: input.website,
      location: input.location,
      pronouns: input.pronouns,
      language: input.language,
      theme: input.theme,
      diff_view_style: input.diffViewStyle,
      enable_repo_unit_hints: b(input.enableRepoUnitHints),
      keep_email_private: b(input.hideEmail),
      keep_activity_private: b(input.hideActivity),
      keep_pronouns_private: b(input.hidePronouns),
      visibility: input.visibility === undefined ? undefined : Visibility[input.visibility],
      updated_unix: nowUnix(),
    });
    return (await store.getById(this.db, u.id))!;
  }

  emails(u: UserRow): Promise<EmailRow[]> {
    return store.emailsOf(this.db, u.id);
  }

  /**
   * Adds secondary addresses (activated: Anvil sends no confirmation mail). All or nothing: an
   * invalid address, or one any account already has, refuses the whole list with 422.
   */
  async addEmails(u: UserRow, emails: string[]): Promise<EmailRow[]> {
    if (emails.length === 0) throw invalidField('emails', 'Email list empty');
    for (const e of emails) {
      if (!EMAIL.test(e) || e.length > 254) throw invalidField('emails', `Email address "${e}" invalid`);
    }
    return transaction(this.db, async (tx) => {
      const seen = new Set<string>();
      for (const e of emails) {
        const lower = e.toLowerCase();
        if (seen.has(lower) || (await store.getEmail(tx, e)) || (await store.getIndividualByEmail(tx, e))) {
          throw invalidField('emails', `Email address has been used: ${e}`);
        }
        seen.add(lower);
        await store.insertEmail(tx, { uid: u.id, email: e, is_activated: 1, is_primary: 0 });
      }
      return store.emailsOf(tx, u.id);
    });
  }

  /** Removes secondary addresses: all or nothing, 404 for one the user does not have. */
  async deleteEmails(u: UserRow, emails: string[]): Promise<void> {
    await transaction(this.db, async (tx) => {
      const ids: number[] = [];
      for (const e of emails) {
        const address = await store.getEmail(tx, e);
        if (!address || address.uid !== u.id) throw notFound(`email address does not exist [email: ${e}]`);
        if (address.is_primary)
          throw invalidField('emails', `the primary email address cannot be deleted [email: ${e}]`);
        ids.push(address.id);
      }
      await store.deleteEmails(tx, ids);
    });
  }

  /** Makes one of the user's activated addresses the primary one (404 for another's). */
  async setPrimaryEmail(u: UserRow, email: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      const address = await store.getEmail(tx, email);
      if (!address || address.uid !== u.id) throw notFound(`email address does not exist [email: ${email}]`);
      if (!address.is_activated) {
        throw invalidField('email', `the address is not activated yet [email: ${email}]`);
      }
      if (address.is_primary) return;
      await store.setPrimaryEmail(tx, u.id, address.id);
      await store.update(tx, u.id, {
        email: address.email,
        lower_email: address.email.toLowerCase(),
        updated_unix: nowUnix(),
      });
    });
  }

  /** Every address with its owner (administrators), matching `keyword` in the address or the name. */
  searchEmails(keyword: string | undefined, page: Page) {
    return store.searchEmails(this.db, keyword, page.limit, page.offset);
  }

  /**
   * Activates or deactivates one of `uid`'s addresses (administrators). As in Forgejo, the primary
   * address carries the account's activation with it (a deactivated account's sessions end).
   */
  async setEmailActivation(uid: number, email: string, activate: boolean): Promise<void> {
    const address = await store.getEmail(this.db, email);
    const u = await store.getById(this.db, uid);
    if (!address || !u || address.uid !== uid)
      throw notFound(`e-mail address does not exist [email: ${email}]`);
    await store.setEmailActivated(this.db, address.id, activate);
    if (address.is_primary && (u.is_active === 1) !== activate) await this.edit(u, { active: activate });
  }

  async touchLastLogin(u: UserRow): Promise<void> {
    const now = nowUnix();
    if (now - u.last_login_unix > 60) await store.update(this.db, u.id, { last_login_unix: now });
  }
}

let dummy: Promise<string> | undefined;
/** A real hash of a random password, so a check against a missing account costs what a real one does. */
const dummyHash = () => (dummy ??= hashPassword(crypto.randomUUID()));
