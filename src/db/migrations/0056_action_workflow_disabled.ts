// Workflows a repository's writers disabled (Forgejo's actions unit `DisabledWorkflows`): a disabled
// workflow is not triggered by pushes, pull requests or dispatches until enabled again.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('action_workflow_disabled')
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('workflow_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('action_workflow_disabled_pk', ['repo_id', 'workflow_id'])
    .execute();
}
