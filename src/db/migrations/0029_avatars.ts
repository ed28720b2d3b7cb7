// Uploaded avatars, as Forgejo records them: `avatar` on the account (people and organizations) and
// on the repository holds the content hash of the stored image ('' for none: an account then shows
// its generated identicon, a repository no avatar).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  for (const table of ['user', 'repository']) {
    await db.schema
      .alterTable(table)
      .addColumn('avatar', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  }
}
