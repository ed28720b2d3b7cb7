// SSH public keys of users (Forgejo's public_key) and deploy keys of repositories (deploy_key):
// the authorized_keys form of the key ("type base64"), its SHA256 fingerprint and, for a deploy
// key, whether it may push. A user key is unique by fingerprint; a deploy key once per repository.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';
import { withId } from './helpers.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('public_key'), dialect)
    .addColumn('owner_id', 'bigint', (c) => c.notNull().references('user.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull().unique())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idx_public_key_owner').on('public_key').column('owner_id').execute();
  await withId(db.schema.createTable('deploy_key'), dialect)
    .addColumn('repo_id', 'bigint', (c) => c.notNull().references('repository.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_unix', 'bigint', (c) => c.notNull())
    .addColumn('updated_unix', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('uq_deploy_key_repo_fingerprint', ['repo_id', 'fingerprint'])
    .execute();
  await db.schema.createIndex('idx_deploy_key_fingerprint').on('deploy_key').column('fingerprint').execute();
}
