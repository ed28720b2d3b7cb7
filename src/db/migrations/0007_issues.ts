// Issues (and, later, pull requests: they share the `issue` table and its per-repository numbers),
// comments and timeline events, reactions, subscriptions, mentions and assignees; labels
// (repository or organization) and milestones. Everything hangs off its repository (or, for
// organization labels, its organization) with ON DELETE CASCADE; a deleted user leaves their
// issues and comments in place without a poster (shown as the Ghost user).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

/** 9999-12-31T23:59:59Z: Forgejo's "no due date" for milestones. */
const NO_DEADLINE = 253402300799;

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Milestones come first: issues reference them.
  await withId(db.schema.createTable('milestone'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_closed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('num_issues', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('num_closed_issues', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('completeness', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deadline_unix', 'bigint', (c) => c.notNull().defaultTo(NO_DEADLINE))
    .addColumn('closed_date_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  // Lists by state (ordered by due date) and look-ups by name.
  await db.schema
    .createIndex('milestone_repo_closed_deadline')
    .on('milestone')
    .columns(['repo_id', 'is_closed', 'deadline_unix'])
    .execute();
  await db.schema.createIndex('milestone_repo_name').on('milestone').columns(['repo_id', 'name']).execute();

  // The last number handed out per repository: one atomic upsert per new issue or pull request.
  await withId(db.schema.createTable('issue_index'), dialect)
    .addColumn('repo_id', 'bigint', (c) =>
      c.notNull().unique().references('repository.id').onDelete('cascade'),
    )
    .addColumn('max_index', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  await withId(db.schema.createTable('issue'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('index', 'bigint', (c) => c.notNull())
    .addColumn('poster_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('original_author', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('original_author_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('milestone_id', 'bigint', (c) => c.references('milestone.id').onDelete('set null'))
    .addColumn('is_closed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_pull', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_locked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ref', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('num_comments', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pin_order', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deadline_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addColumn('closed_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    // Who closed it (for webhooks) and the commit that closed it ('' when closed by hand).
    .addColumn('closed_by_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('closed_by_commit', 'text', (c) => c.notNull().defaultTo(''))
    .addUniqueConstraint('issue_repo_index', ['repo_id', 'index'])
    .execute();
  // Lists: by state, newest first (the default order), or by last update (since/before, sorts).
  await db.schema
    .createIndex('issue_repo_closed_created')
    .on('issue')
    .columns(['repo_id', 'is_closed', 'created_unix', 'id'])
    .execute();
  await db.schema
    .createIndex('issue_repo_updated')
    .on('issue')
    .columns(['repo_id', 'updated_unix'])
    .execute();
  await db.schema
    .createIndex('issue_repo_pull_pin')
    .on('issue')
    .columns(['repo_id', 'is_pull', 'pin_order'])
    .execute();
  await db.schema.createIndex('issue_poster').on('issue').column('poster_id').execute();
  // Milestone filters and the open/closed counts of a milestone.
  await db.schema
    .createIndex('issue_milestone_closed')
    .on('issue')
    .columns(['milestone_id', 'is_closed'])
    .execute();
  await db.schema.createIndex('issue_closed_by').on('issue').column('closed_by_id').execute();

  await withId(db.schema.createTable('issue_assignees'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('assignee_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addUniqueConstraint('issue_assignees_issue_assignee', ['issue_id', 'assignee_id'])
    .execute();
  await db.schema
    .createIndex('issue_assignees_assignee')
    .on('issue_assignees')
    .columns(['assignee_id', 'issue_id'])
    .execute();

  // Users mentioned (@name) in an issue's body or comments.
  await withId(db.schema.createTable('issue_mention'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addUniqueConstraint('issue_mention_issue_user', ['issue_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('issue_mention_user')
    .on('issue_mention')
    .columns(['user_id', 'issue_id'])
    .execute();

  // Explicit subscriptions (is_watching 1) and unsubscriptions (0) of users to issues.
  await withId(db.schema.createTable('issue_watch'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('is_watching', 'integer', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('issue_watch_issue_user', ['issue_id', 'user_id'])
    .execute();
  await db.schema.createIndex('issue_watch_user').on('issue_watch').column('user_id').execute();

  // Labels belong to a repository or to an organization (exactly one of repo_id, org_id).
  await withId(db.schema.createTable('label'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('cascade'))
    .addColumn('org_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('exclusive', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    // '#' and six hexadecimal digits.
    .addColumn('color', 'text', (c) => c.notNull())
    .addColumn('archived_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('label_repo_name').on('label').columns(['repo_id', 'name']).execute();
  await db.schema.createIndex('label_org_name').on('label').columns(['org_id', 'name']).execute();

  // The repository, kind, state and creation time are copied here (kept in step by the
  // issues service) so that "the open issues of a repository with label X, newest first" and its
  // count are one range of one index, however many issues the repository has.
  await withId(db.schema.createTable('issue_label'), dialect)
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('label_id', 'bigint', (c) => c.notNull().references('label.id').onDelete('cascade'))
    .addColumn('repo_id', 'bigint', (c) => c.notNull())
    .addColumn('is_pull', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_closed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('issue_label_issue_label', ['issue_id', 'label_id'])
    .execute();
  // The label filter of issue lists: by label, repository and state, newest first.
  await db.schema
    .createIndex('issue_label_list')
    .on('issue_label')
    .columns(['label_id', 'repo_id', 'is_closed', 'created_unix', 'issue_id', 'is_pull'])
    .execute();

  // Comments and timeline events (type 0 is a plain comment; see issues/tables.ts).
  await withId(db.schema.createTable('comment'), dialect)
    .addColumn('type', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('poster_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('original_author', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('original_author_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('content', 'text', (c) => c.notNull().defaultTo(''))
    // Event details: the label added or removed, the milestones, the assignee, titles, refs, commit.
    .addColumn('label_id', 'bigint', (c) => c.references('label.id').onDelete('cascade'))
    .addColumn('old_milestone_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('milestone_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('assignee_id', 'bigint', (c) => c.references('user.id').onDelete('set null'))
    .addColumn('removed_assignee', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('old_title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('new_title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('old_ref', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('new_ref', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('commit_sha', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  // The comments of an issue (and its timeline) in order; the comments of a repository in order.
  await db.schema
    .createIndex('comment_issue_type_created')
    .on('comment')
    .columns(['issue_id', 'type', 'created_unix', 'id'])
    .execute();
  await db.schema
    .createIndex('comment_repo_type_created')
    .on('comment')
    .columns(['repo_id', 'type', 'created_unix', 'id'])
    .execute();
  await db.schema.createIndex('comment_poster').on('comment').column('poster_id').execute();
  await db.schema.createIndex('comment_label').on('comment').column('label_id').execute();
  await db.schema.createIndex('comment_assignee').on('comment').column('assignee_id').execute();

  // Reactions to an issue (comment_id 0) or to one of its comments.
  await withId(db.schema.createTable('reaction'), dialect)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('issue_id', 'bigint', (c) => c.notNull().references('issue.id').onDelete('cascade'))
    .addColumn('comment_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('original_author', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('original_author_id', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('reaction_issue_comment_user_type', ['issue_id', 'comment_id', 'user_id', 'type'])
    .execute();
  await db.schema.createIndex('reaction_user').on('reaction').column('user_id').execute();
}
