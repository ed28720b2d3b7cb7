// Queries on the `user` table (people and organizations). No HTTP here.
import { sql, type Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import { preparedQuery } from '../db/prepared.js';
import { UserType, Visibility, type UserOrder, type UserStatusFilter, type UserTable } from './tables.js';
import type { UserRow, NewUserRow, EmailRow, Viewer } from './tables.js';

export type UserPatch = Updateable<UserTable>;
type Q = Db | Tx;

// Declared in tables.ts (routes and pages take it from there); kept importable from here for the
// domains that still do.

const byId = preparedQuery((q, id: number) => q.selectFrom('user').selectAll().where('id', '=', id));
const byLowerName = preparedQuery((q, lower: string) =>
  q.selectFrom('user').selectAll().where('lower_name', '=', lower),
);

export async function getById(q: Q, id: number): Promise<UserRow | undefined> {
  return (await byId(q, id))[0];
}

export async function getByName(q: Q, name: string): Promise<UserRow | undefined> {
  return (await byLowerName(q, name.toLowerCase()))[0];
}

export async function getByIds(q: Q, ids: number[]): Promise<Map<number, UserRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('user').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export function getIndividualByEmail(q: Q, email: string): Promise<UserRow | undefined> {
  return q
    .selectFrom('user')
    .selectAll()
    .where('lower_email', '=', email.toLowerCase())
    .where('type', '=', UserType.Individual)
    .executeTakeFirst();
}

export async function insert(q: Q, row: NewUserRow): Promise<number> {
  const r = await q.insertInto('user').values(row).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function update(q: Q, id: number, patch: UserPatch): Promise<void> {
  await q.updateTable('user').set(patch).where('id', '=', id).execute();
}

export async function remove(q: Q, id: number): Promise<void> {
  await q.deleteFrom('user').where('id', '=', id).execute();
}

export async function countAdmins(q: Q): Promise<number> {
  const r = await q
    .selectFrom('user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', UserType.Individual)
    .where('is_admin', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function countIndividuals(q: Q): Promise<number> {
  const r = await q
    .selectFrom('user')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('type', '=', UserType.Individual)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Claims the first administrator for `userId`: true when this transaction wrote the only claim
 * row. A concurrent claim waits for this one's commit (same key) and then finds the row taken.
 */
export async function claimFirstAdmin(q: Q, userId: number): Promise<boolean> {
  const r = await q
    .insertInto('first_admin_claim')
    .values({ id: 1, user_id: userId })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

export interface ListFilter {
  type: number;
  /** Case-insensitive substring of the name, full name or (for admins) e-mail. */
  keyword?: string | undefined;
  uid?: number | undefined;
  loginSource?: number | undefined;
  loginName?: string | undefined;
  /** Apply visibility for this viewer; null means anonymous; undefined means no filter (admin listings). */
  viewer?: Viewer | null | undefined;
  /** Restrict to these ids (for example an organization's members). */
  ids?: number[] | undefined;
  /** The order (indexed columns only: the id, the lower-cased name, the update time); oldest first by default. */
  orderBy?: UserOrder | undefined;
  /** The administration's status filters (Forgejo's status_filter[...]): true/false, or undefined for either. */
  status?: UserStatusFilter | undefined;
}

function filtered(q: Q, f: ListFilter) {
  let s = q.selectFrom('user').where('type', '=', f.type);
  if (f.uid !== undefined && f.uid > 0) s = s.where('id', '=', f.uid);
  if (f.loginSource !== undefined) s = s.where('login_source', '=', f.loginSource);
  if (f.loginName) s = s.where('login_name', '=', f.loginName);
  if (f.ids) s = s.where('id', 'in', f.ids.length ? f.ids : [-1]);
  const st = f.status;
  if (st) {
    const flag = (v: boolean) => (v ? 1 : 0);
    if (st.isActive !== undefined) s = s.where('is_active', '=', flag(st.isActive));
    if (st.isAdmin !== undefined) s = s.where('is_admin', '=', flag(st.isAdmin));
    if (st.isRestricted !== undefined) s = s.where('restricted', '=', flag(st.isRestricted));
    if (st.isProhibitLogin !== undefined) s = s.where('prohibit_login', '=', flag(st.isProhibitLogin));
    if (st.is2faEnabled !== undefined) {
      const enabled = st.is2faEnabled;
      s = s.where((eb) => {
        const has = eb.exists(
          eb.selectFrom('two_factor').select('two_factor.id').whereRef('two_factor.uid', '=', 'user.id'),
        );
        return enabled ? has : eb.not(has);
      });
    }
  }
  if (f.keyword) {
    // % and _ stay wildcards (a looser search, never an error); backslashes would be escapes in PostgreSQL.
    const like = `%${f.keyword.toLowerCase().replace(/\\/g, '')}%`;
    const admin = f.viewer === undefined || (f.viewer !== null && f.viewer.isAdmin);
    s = s.where((eb) =>
      eb.or([
        eb('lower_name', 'like', like),
        eb(eb.fn('lower', ['full_name']), 'like', like),
        ...(admin ? [eb('lower_email', 'like', like)] : []),
      ]),
    );
  }
  if (f.viewer !== undefined) {
    const v = f.viewer;
    if (v === null || v.publicOnly) {
      s = s.where('visibility', '=', Visibility.public);
    } else if (!v.isAdmin) {
      s = s.where((eb) =>
        eb.or([eb('visibility', 'in', [Visibility.public, Visibility.limited]), eb('id', '=', v.id)]),
      );
    }
  }
  return s;
}

export async function list(q: Q, f: ListFilter, limit: number, offset: number): Promise<[UserRow[], number]> {
  const s = filtered(q, f).selectAll();
  const ordered =
    f.orderBy === 'newest'
      ? s.orderBy('id', 'desc')
      : f.orderBy === 'alphabetically'
        ? s.orderBy('lower_name', 'asc')
        : f.orderBy === 'reversealphabetically'
          ? s.orderBy('lower_name', 'desc')
          : f.orderBy === 'recentupdate'
            ? s.orderBy('updated_unix', 'desc').orderBy('id', 'desc')
            : f.orderBy === 'leastupdate'
              ? s.orderBy('updated_unix', 'asc').orderBy('id', 'asc')
              : s.orderBy('id');
  if (!f.keyword) return paged(ordered, limit, offset);
  // A search reads every row once: the page and the number of matches come from that one pass.
  const rows = await ordered
    .select(sql<number | string>`count(*) over ()`.as('total_matching'))
    .limit(limit)
    .offset(offset)
    .execute();
  if (rows.length === 0) return offset === 0 ? [[], 0] : paged(ordered, limit, offset);
  const total = Number(rows[0]!.total_matching);
  return [rows.map(({ total_matching: _, ...row }) => row), total];
}

// E-mail addresses

/** The address `email` (any case), whoever it belongs to. */
export function getEmail(q: Q, email: string): Promise<EmailRow | undefined> {
  return q
    .selectFrom('email_address')
    .selectAll()
    .where('lower_email', '=', email.toLowerCase())
    .executeTakeFirst();
}

/** A person's addresses, the primary one first. */
export function emailsOf(q: Q, uid: number): Promise<EmailRow[]> {
  return q
    .selectFrom('email_address')
    .selectAll()
    .where('uid', '=', uid)
    .orderBy('is_primary', 'desc')
    .orderBy('id')
    .execute();
}

export async function insertEmail(
  q: Q,
  row: { uid: number; email: string; is_activated: number; is_primary: number },
): Promise<void> {
  await q
    .insertInto('email_address')
    .values({ ...row, lower_email: row.email.toLowerCase() })
    .execute();
}

export async function deleteEmails(q: Q, ids: number[]): Promise<void> {
  if (ids.length) await q.deleteFrom('email_address').where('id', 'in', ids).execute();
}

/** Marks an address activated or not. */
export async function setEmailActivated(q: Q, id: number, activated: boolean): Promise<void> {
  await q
    .updateTable('email_address')
    .set({ is_activated: activated ? 1 : 0 })
    .where('id', '=', id)
    .execute();
}

/** Makes `emailId` the user's only primary address. */
export async function setPrimaryEmail(q: Q, uid: number, emailId: number): Promise<void> {
  await q
    .updateTable('email_address')
    .set((eb) => ({ is_primary: eb.case().when('id', '=', emailId).then(1).else(0).end() }))
    .where('uid', '=', uid)
    .execute();
  await q.updateTable('email_address').set({ is_activated: 1 }).where('id', '=', emailId).execute();
}

/** Every address with its owner's name (administrators), optionally matching a keyword. */
export function searchEmails(
  q: Q,
  keyword: string | undefined,
  limit: number,
  offset: number,
): Promise<[Array<EmailRow & { name: string }>, number]> {
  let s = q.selectFrom('email_address').innerJoin('user', 'user.id', 'email_address.uid');
  if (keyword) {
    const like = `%${keyword.toLowerCase().replace(/\\/g, '')}%`;
    s = s.where((eb) =>
      eb.or([eb('email_address.lower_email', 'like', like), eb('user.lower_name', 'like', like)]),
    );
  }
  return paged(s.selectAll('email_address').select('user.name').orderBy('email_address.id'), limit, offset);
}

// Former names

/** The account a former name leads to. */
export async function redirectOf(q: Q, name: string): Promise<number | undefined> {
  const r = await q
    .selectFrom('user_redirect')
    .select('redirect_user_id')
    .where('lower_name', '=', name.toLowerCase())
    .executeTakeFirst();
  return r?.redirect_user_id;
}

/** Records that `oldName` now leads to `userId` (replacing whatever it led to). */
export async function setRedirect(q: Q, oldName: string, userId: number): Promise<void> {
  await deleteRedirect(q, oldName);
  await q
    .insertInto('user_redirect')
    .values({ lower_name: oldName.toLowerCase(), redirect_user_id: userId })
    .execute();
}

/** A name taken by an account leads nowhere else any more. */
export async function deleteRedirect(q: Q, name: string): Promise<void> {
  await q.deleteFrom('user_redirect').where('lower_name', '=', name.toLowerCase()).execute();
}

export async function rename(q: Q, id: number, name: string): Promise<void> {
  await q
    .updateTable('user')
    .set({ name, lower_name: name.toLowerCase(), updated_unix: Math.floor(Date.now() / 1000) })
    .where('id', '=', id)
    .execute();
}

/** The accounts among `lowerNames` (lower-cased), in one query. */
export function byLowerNames(q: Q, lowerNames: string[]): Promise<UserRow[]> {
  if (lowerNames.length === 0) return Promise.resolve([]);
  return q.selectFrom('user').selectAll().where('lower_name', 'in', lowerNames).execute();
}

/** Site-wide counts for /nodeinfo: people, and those active in the last month and half-year. */
export async function activity(q: Q, monthAgo: number, halfYearAgo: number) {
  const r = await q
    .selectFrom('user')
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('last_login_unix', '>', monthAgo).then(1).else(0).end()).as('month'),
      eb.fn.sum<number>(eb.case().when('last_login_unix', '>', halfYearAgo).then(1).else(0).end()).as('half'),
    ])
    .where('type', '=', UserType.Individual)
    .executeTakeFirstOrThrow();
  return { total: Number(r.total), month: Number(r.month ?? 0), halfYear: Number(r.half ?? 0) };
}

/** Marks the user's primary address activated (the first administrator needs no confirmation). */
export async function activatePrimaryEmail(q: Q, uid: number): Promise<void> {
  await q
    .updateTable('email_address')
    .set({ is_activated: 1 })
    .where('uid', '=', uid)
    .where('is_primary', '=', 1)
    .execute();
}
