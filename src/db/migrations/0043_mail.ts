// Mail: the durable outgoing queue (`mail_queue`: one row per message and recipient, sent by the
// worker of mail/queue.ts, claimed by moving next_attempt_unix past a lease), the single-use codes
// mailed for a password reset or an e-mail confirmation (`mail_code`: only their SHA-256 is kept),
// and each person's `email_notifications_preference` (Forgejo's column: enabled, onmention,
// disabled, andyourown).
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('mail_queue'), dialect)
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('body_text', 'text', (c) => c.notNull())
    .addColumn('body_html', 'text', (c) => c.notNull())
    // 0 pending, 1 sent, 2 given up.
    .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_unix', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('sent_unix', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // The worker's queue: pending rows by due time.
  await db.schema
    .createIndex('mail_queue_due')
    .on('mail_queue')
    .columns(['status', 'next_attempt_unix', 'id'])
    .execute();

  await withId(db.schema.createTable('mail_code'), dialect)
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('purpose', 'varchar(20)', (c) => c.notNull())
    .addColumn('code_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('expires_unix', 'bigint', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_code_user').on('mail_code').columns(['user_id', 'purpose']).execute();

  await db.schema
    .alterTable('user')
    .addColumn('email_notifications_preference', 'varchar(20)', (c) => c.notNull().defaultTo('enabled'))
    .execute();
}
