// Project boards (Forgejo's project, project_board and project_issue): a project of a repository
// (repo_id) or of a user or organization (owner_id; repo_id null), its columns in order (one of them
// the default for new cards), and its cards with their column and their order within the column: an
// issue or pull request (issue_id), or a note (issue_id null, the text in note).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('project'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('cascade'))
    .addColumn('owner_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('creator_id', 'bigint', (c) => c.notNull())
    .addColumn('is_closed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('template_type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('closed_date_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_repo').on('project').columns(['repo_id', 'is_closed']).execute();
  await db.schema.createIndex('project_owner').on('project').columns(['owner_id', 'is_closed']).execute();
  await withId(db.schema.createTable('project_board'), dialect)
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('project.id').onDelete('cascade'))
    .addColumn('title', 'varchar(255)', (c) => c.notNull())
    .addColumn('color', 'varchar(7)', (c) => c.notNull().defaultTo(''))
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sorting', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('project_board_project').on('project_board').column('project_id').execute();
  await withId(db.schema.createTable('project_issue'), dialect)
    .addColumn('project_id', 'bigint', (c) => c.notNull().references('project.id').onDelete('cascade'))
    .addColumn('issue_id', 'bigint', (c) => c.references('issue.id').onDelete('cascade'))
    .addColumn('project_board_id', 'bigint', (c) =>
      c.notNull().references('project_board.id').onDelete('cascade'),
    )
    .addColumn('sorting', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('note', 'text')
    .addColumn('creator_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint('project_issue_project_issue', ['project_id', 'issue_id'])
    .execute();
  await db.schema.createIndex('project_issue_board').on('project_issue').column('project_board_id').execute();
}
