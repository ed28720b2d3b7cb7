// Queries the git data API needs from the database: the accounts behind commit e-mail addresses.
import type { Db, Tx } from '../db/database.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';

/**
 * Individual users by (lower-cased) e-mail address, any activated address of theirs (primary or
 * not, as Forgejo matches commit authors), in one query on the email_address index.
 */
export async function usersByEmails(q: Db | Tx, emails: string[]): Promise<Map<string, UserRow>> {
  const lower = [...new Set(emails.filter(Boolean).map((e) => e.toLowerCase()))];
  if (lower.length === 0) return new Map();
  const rows = await q
    .selectFrom('email_address')
    .innerJoin('user', 'user.id', 'email_address.uid')
    .selectAll('user')
    .select('email_address.lower_email as address')
    .where('user.type', '=', UserType.Individual)
    .where('email_address.is_activated', '=', 1)
    .where('email_address.lower_email', 'in', lower)
    .execute();
  return new Map(rows.map(({ address, ...user }) => [address, user]));
}
