// Queries the git data API needs from the database: the accounts behind commit e-mail addresses.
import type { Db, Tx } from '../db/database.js';
import type { UserRow } from '../users/store.js';
import { UserType } from '../users/tables.js';

/** Individual users by (lower-cased) e-mail address, in one query on the lower_email index. */
export async function usersByEmails(q: Db | Tx, emails: string[]): Promise<Map<string, UserRow>> {
  const lower = [...new Set(emails.filter(Boolean).map((e) => e.toLowerCase()))];
  if (lower.length === 0) return new Map();
  const rows = await q
    .selectFrom('user')
    .selectAll()
    .where('type', '=', UserType.Individual)
    .where('lower_email', 'in', lower)
    .execute();
  return new Map(rows.map((r) => [r.lower_email, r]));
}
