// The numbers operations read: a database ping, queue depths, and Forgejo's statistics counts.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Db, Tx } from '../db/database.js';
import type { DB } from '../db/schema.js';
import { PropertyRef } from '../packages/tables.js';
import { paged } from '../db/paged.js';

export async function ping(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/** Webhook deliveries not yet delivered, actions jobs waiting for a runner. */
export async function queueDepths(db: Db): Promise<{ webhook: number; actions: number }> {
  const [hooks, jobs] = await Promise.all([
    db
      .selectFrom('hook_task')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('is_delivered', '=', 0)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('action_run_job')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('status', '=', 'waiting')
      .executeTakeFirstOrThrow(),
  ]);
  return { webhook: Number(hooks.n), actions: Number(jobs.n) };
}

/** Forgejo's statistics (GetStatistic): rows of each kind, in one query. */
export async function counts(db: Db): Promise<Record<string, number>> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('user').select(eb.fn.countAll().as('n')).where('type', '=', 0).as('users'),
      eb.selectFrom('user').select(eb.fn.countAll().as('n')).where('type', '=', 1).as('organizations'),
      eb.selectFrom('repository').select(eb.fn.countAll().as('n')).as('repositories'),
      eb.selectFrom('issue').select(eb.fn.countAll().as('n')).as('issues'),
      eb.selectFrom('issue').select(eb.fn.countAll().as('n')).where('is_pull', '=', 1).as('pulls'),
      eb.selectFrom('package').select(eb.fn.countAll().as('n')).as('packages'),
      eb.selectFrom('release').select(eb.fn.countAll().as('n')).as('releases'),
      eb.selectFrom('webhook').select(eb.fn.countAll().as('n')).as('webhooks'),
    ])
    .executeTakeFirstOrThrow();
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
}

// System notices

export async function insertNotice(q: Db, type: number, description: string, now: number): Promise<void> {
  await q.insertInto('system_notice').values({ type, description, created_unix: now }).execute();
}

/** One page of the notices, newest first, and how many there are. */
export function listNotices(q: Db, limit: number, offset: number) {
  return paged(q.selectFrom('system_notice').selectAll().orderBy('id', 'desc'), limit, offset);
}

export async function deleteNotices(q: Db, ids: number[] | 'all'): Promise<void> {
  let d = q.deleteFrom('system_notice');
  if (ids !== 'all') {
    if (!ids.length) return;
    d = d.where('id', 'in', ids);
  }
  await d.execute();
}

/** The tables a dump holds: every table but the migrator's own, in a fixed order. */
export async function dataTables(db: Db): Promise<Array<{ name: string; columns: string[] }>> {
  const tables = await db.introspection.getTables();
  return tables
    .filter((t) => !t.isView && !t.name.startsWith('anvil_migration') && !t.name.startsWith('sqlite_'))
    .map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The names of the migrations applied, in order (a dump restores only into the same schema). */
export async function appliedMigrations(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`SELECT name FROM anvil_migration ORDER BY name`.execute(db);
  return rows.rows.map((r) => r.name);
}

/**
 * Every row of `table`, a page at a time, ordered by all its columns (stable within the
 * snapshot transaction `q` runs in).
 */
export async function* tableRows(
  q: Db,
  table: string,
  columns: string[],
  pageSize = 1000,
): AsyncIterable<Record<string, unknown>[]> {
  const order = sql.join(columns.map((c) => sql.ref(c)));
  for (let offset = 0; ; offset += pageSize) {
    const page = await sql<
      Record<string, unknown>
    >`SELECT * FROM ${sql.table(table)} ORDER BY ${order} LIMIT ${pageSize} OFFSET ${offset}`.execute(q);
    if (page.rows.length) yield page.rows;
    if (page.rows.length < pageSize) return;
  }
}

export async function insertRows(q: Db, table: string, rows: Record<string, unknown>[]): Promise<void> {
  if (!rows.length) return;
  // Kysely's table names are typed: a dump restores tables by their names as found.
  await (q as unknown as Db)
    .insertInto(table as 'user')
    .values(rows as never)
    .execute();
}

/** Whether the database holds any account (a restore goes only into an empty one). */
export async function hasAccounts(db: Db): Promise<boolean> {
  // (Migrations make the built-in accounts, such as the actions user, with ids below 1.)
  const row = await db.selectFrom('user').select('id').where('id', '>', 0).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** PostgreSQL: each table's id sequence moved past the restored ids (tables with a serial id only). */
export async function resetSequences(
  db: Db,
  tables: Array<{ name: string; columns: string[] }>,
): Promise<void> {
  for (const t of tables) {
    if (!t.columns.includes('id')) continue;
    const seq = await sql<{
      seq: string | null;
    }>`SELECT pg_get_serial_sequence(${`"${t.name}"`}, 'id') AS seq`.execute(db);
    const name = seq.rows[0]?.seq;
    if (!name) continue; // an id that is not a serial (a text id)
    await sql`SELECT setval(${name}, COALESCE((SELECT MAX(id) FROM ${sql.table(t.name)}), 0) + 1, false)`.execute(
      db,
    );
  }
}

// Rows `anvil doctor` looks for (ops/doctor.ts): each query reads either a page of rows by id or
// the rows of given ids (the same rows read again inside the transaction that removes them).

/** A page of rows with an id above `after` (in id order, `limit` of them), or the rows `ids`. */
export type Scope = { after: number; limit: number } | { ids: number[] };

type Q = Db | Tx;

/** Restricts a query to `scope` on its id column `col`. */
function within<QB extends SelectQueryBuilder<DB, never, object>>(q: QB, col: string, scope: Scope): QB {
  const ref = sql.ref(col);
  if ('ids' in scope) return q.where(ref, 'in', scope.ids.length ? scope.ids : [-1]) as QB;
  return q.where(ref, '>', scope.after).orderBy(ref).limit(scope.limit) as QB;
}

export interface AttachmentRef {
  id: number;
  uuid: string;
  size: number;
  release_id: number | null;
  owner_id: number;
}

/**
 * Attachments with their repository's owner: with `dangling`, those whose issue, comment or
 * release is gone (those columns have no foreign key); else those stored here (no external URL).
 */
export function attachments(q: Q, scope: Scope, which: 'dangling' | 'stored'): Promise<AttachmentRef[]> {
  let s = q
    .selectFrom('attachment')
    .innerJoin('repository', 'repository.id', 'attachment.repo_id')
    .select([
      'attachment.id',
      'attachment.uuid',
      'attachment.size',
      'attachment.release_id',
      'repository.owner_id',
    ]);
  s =
    which === 'stored'
      ? s.where('attachment.external_url', '=', '')
      : s.where((eb) =>
          eb.or(
            (
              [
                ['issue_id', 'issue'],
                ['comment_id', 'comment'],
                ['release_id', 'release'],
              ] as const
            ).map(([column, table]) =>
              eb.and([
                eb(`attachment.${column}`, 'is not', null),
                eb.not(
                  eb.exists(
                    eb
                      .selectFrom(table)
                      .select(`${table}.id`)
                      .whereRef(`${table}.id`, '=', `attachment.${column}`),
                  ),
                ),
              ]),
            ),
          ),
        );
  return within(s, 'attachment.id', scope).execute();
}

export async function deleteAttachments(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length) await tx.deleteFrom('attachment').where('id', 'in', ids).execute();
}

export interface LfsRef {
  id: number;
  oid: string;
  size: number;
  repository_id: number;
  owner_id: number;
}

/** LFS objects of repositories, with the repository's owner. */
export function lfsObjects(q: Q, scope: Scope): Promise<LfsRef[]> {
  const s = q
    .selectFrom('lfs_meta_object')
    .innerJoin('repository', 'repository.id', 'lfs_meta_object.repository_id')
    .select([
      'lfs_meta_object.id',
      'lfs_meta_object.oid',
      'lfs_meta_object.size',
      'lfs_meta_object.repository_id',
      'repository.owner_id',
    ]);
  return within(s, 'lfs_meta_object.id', scope).execute();
}

export async function deleteLfsObjects(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length) await tx.deleteFrom('lfs_meta_object').where('id', 'in', ids).execute();
}

export interface PackageBlobRef {
  id: number;
  hash_sha256: string;
  size: number;
}

export function packageBlobs(q: Q, scope: Scope): Promise<PackageBlobRef[]> {
  return within(q.selectFrom('package_blob').select(['id', 'hash_sha256', 'size']), 'id', scope).execute();
}

/**
 * Removes package blobs' rows with the files stored in them (and the files' properties), raising
 * their packages' revisions (cached renderings follow it); the files removed, for the usage.
 */
export async function deletePackageBlobs(
  tx: Tx,
  blobIds: number[],
): Promise<Array<{ size: number; owner_id: number }>> {
  if (!blobIds.length) return [];
  const files = await tx
    .selectFrom('package_file')
    .innerJoin('package_blob', 'package_blob.id', 'package_file.blob_id')
    .innerJoin('package_version', 'package_version.id', 'package_file.version_id')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .select(['package_file.id', 'package_blob.size', 'package.owner_id', 'package.id as package_id'])
    .where('package_file.blob_id', 'in', blobIds)
    .execute();
  if (files.length) {
    const fileIds = files.map((f) => f.id);
    await tx
      .deleteFrom('package_property')
      .where('ref_type', '=', PropertyRef.file)
      .where('ref_id', 'in', fileIds)
      .execute();
    await tx.deleteFrom('package_file').where('id', 'in', fileIds).execute();
    await tx
      .updateTable('package')
      .set((eb) => ({ revision: eb('revision', '+', 1) }))
      .where('id', 'in', [...new Set(files.map((f) => f.package_id))])
      .execute();
  }
  await tx.deleteFrom('package_blob').where('id', 'in', blobIds).execute();
  return files;
}

export interface NamedRef {
  id: number;
  what: string;
}

/** Reactions to comments that are gone (reaction.comment_id has no foreign key). */
export function danglingReactions(q: Q, scope: Scope): Promise<NamedRef[]> {
  const s = q
    .selectFrom('reaction')
    .select(['reaction.id', 'reaction.type as what'])
    .where('reaction.comment_id', '!=', 0)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb.selectFrom('comment').select('comment.id').whereRef('comment.id', '=', 'reaction.comment_id'),
        ),
      ),
    );
  return within(s, 'reaction.id', scope).execute();
}

export async function deleteReactions(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length) await tx.deleteFrom('reaction').where('id', 'in', ids).execute();
}

/** Package properties of a package, version or file that is gone (ref_id has no foreign key). */
export function danglingPackageProperties(q: Q, scope: Scope): Promise<NamedRef[]> {
  const s = q
    .selectFrom('package_property as p')
    .select(['p.id', 'p.name as what'])
    .where((eb) =>
      eb.or(
        (
          [
            [PropertyRef.package, 'package'],
            [PropertyRef.version, 'package_version'],
            [PropertyRef.file, 'package_file'],
          ] as const
        ).map(([ref, table]) =>
          eb.and([
            eb('p.ref_type', '=', ref),
            eb.not(
              eb.exists(eb.selectFrom(table).select(`${table}.id`).whereRef(`${table}.id`, '=', 'p.ref_id')),
            ),
          ]),
        ),
      ),
    );
  return within(s, 'p.id', scope).execute();
}

export async function deletePackageProperties(tx: Tx, ids: number[]): Promise<void> {
  if (ids.length) await tx.deleteFrom('package_property').where('id', 'in', ids).execute();
}
