// Queries on the `user` table (people and organizations). No HTTP here.
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import { preparedQuery } from '../db/prepared.js';
import { UserType, Visibility, type UserTable } from './tables.js';

export type UserRow = Selectable<UserTable>;
export type NewUserRow = Insertable<UserTable>;
export type UserPatch = Updateable<UserTable>;
type Q = Db | Tx;

/** Who is looking: decides which limited and private accounts are visible. */
export interface Viewer {
  id: number;
  isAdmin: boolean;
  /** A public-only token sees only public accounts. */
  publicOnly?: boolean;
  /** An actions job token: write access to this one repository, public read elsewhere. */
  repoId?: number;
}

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
}

function filtered(q: Q, f: ListFilter) {
  let s = q.selectFrom('user').where('type', '=', f.type);
  if (f.uid !== undefined && f.uid > 0) s = s.where('id', '=', f.uid);
  if (f.loginSource !== undefined) s = s.where('login_source', '=', f.loginSource);
  if (f.loginName) s = s.where('login_name', '=', f.loginName);
  if (f.ids) s = s.where('id', 'in', f.ids.length ? f.ids : [-1]);
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
  return paged(filtered(q, f).selectAll().orderBy('id'), limit, offset);
}
