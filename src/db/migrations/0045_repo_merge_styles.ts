// The merge styles a repository allows and its pull request defaults (Forgejo keeps them in the
// pull requests unit's config): every style allowed, 'merge' by default, as a new Forgejo repository.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

const FLAGS: Array<[string, number]> = [
  ['allow_merge_commits', 1],
  ['allow_rebase', 1],
  ['allow_rebase_explicit', 1],
  ['allow_squash_merge', 1],
  ['allow_fast_forward_only_merge', 1],
  ['allow_rebase_update', 1],
  ['default_delete_branch_after_merge', 0],
  ['default_allow_maintainer_edit', 0],
];

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  // One column per statement: SQLite adds a single column per ALTER TABLE.
  for (const [name, value] of FLAGS) {
    await db.schema
      .alterTable('repository')
      .addColumn(name, 'integer', (c) => c.notNull().defaultTo(value))
      .execute();
  }
  await db.schema
    .alterTable('repository')
    .addColumn('default_merge_style', 'varchar(30)', (c) => c.notNull().defaultTo('merge'))
    .execute();
}
