// Webhooks (of a repository, of a user or organization, or site-wide: system and default hooks)
// and hook_task, their durable delivery queue and history. Repository and owner hooks go with
// their repository or account (ON DELETE CASCADE), deliveries with their hook.
import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('webhook'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.references('repository.id').onDelete('cascade'))
    .addColumn('owner_id', 'bigint', (c) => c.references('user.id').onDelete('cascade'))
    .addColumn('is_system_webhook', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('http_method', 'text', (c) => c.notNull().defaultTo('POST'))
    .addColumn('content_type', 'text', (c) => c.notNull().defaultTo('json'))
    .addColumn('secret', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('branch_filter', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('meta', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('header_authorization', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  // The hooks that fire for a repository: its own, its owner's and the system's (one OR query).
  await db.schema.createIndex('webhook_repo').on('webhook').column('repo_id').execute();
  await db.schema.createIndex('webhook_owner').on('webhook').column('owner_id').execute();
  await db.schema.createIndex('webhook_system').on('webhook').column('is_system_webhook').execute();

  await withId(db.schema.createTable('hook_task'), dialect)
    .addColumn('hook_id', 'bigint', (c) => c.notNull().references('webhook.id').onDelete('cascade'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('is_delivered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_succeed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_unix', 'bigint', (c) => c.notNull())
    .addColumn('delivered_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('status_code', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('request_content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('response_content', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  // A hook's delivery history, newest first.
  await db.schema.createIndex('hook_task_hook').on('hook_task').columns(['hook_id', 'id']).execute();
  // The worker's queue: only pending rows, by due time.
  await db.schema
    .createIndex('hook_task_pending')
    .on('hook_task')
    .columns(['next_attempt_unix', 'id'])
    .where(sql<boolean>`is_delivered = 0`)
    .execute();
}
