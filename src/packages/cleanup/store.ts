// Queries of package cleanup: the rules, the versions a rule looks at, and what interrupted work
// left (blobs no file names, packages with no version).
import type { Insertable, Updateable } from 'kysely';
import type { Db, Tx } from '../../db/database.js';
import { notInternal } from '../store.js';
import type { VersionWithPackage } from '../tables.js';
import type { PackageCleanupRuleTable } from './tables.js';
import type { RuleRow } from './tables.js';

type Q = Db | Tx;

export function rulesOf(q: Q, ownerId: number): Promise<RuleRow[]> {
  return q
    .selectFrom('package_cleanup_rule')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .orderBy('type')
    .execute();
}

export function enabledRules(q: Q): Promise<RuleRow[]> {
  return q.selectFrom('package_cleanup_rule').selectAll().where('enabled', '=', 1).orderBy('id').execute();
}

export function getRule(q: Q, ownerId: number, id: number): Promise<RuleRow | undefined> {
  return q
    .selectFrom('package_cleanup_rule')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export function ruleOfType(q: Q, ownerId: number, type: string): Promise<RuleRow | undefined> {
  return q
    .selectFrom('package_cleanup_rule')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('type', '=', type)
    .executeTakeFirst();
}

export async function insertRule(q: Q, row: Insertable<PackageCleanupRuleTable>): Promise<number> {
  const r = await q.insertInto('package_cleanup_rule').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(r.id);
}

export async function updateRule(
  q: Q,
  id: number,
  patch: Updateable<PackageCleanupRuleTable>,
): Promise<void> {
  await q.updateTable('package_cleanup_rule').set(patch).where('id', '=', id).execute();
}

export async function deleteRule(q: Q, id: number): Promise<void> {
  await q.deleteFrom('package_cleanup_rule').where('id', '=', id).execute();
}

/** Every version of the owner's packages of `type`: by package, newest first. */
export function versionsOfType(q: Q, ownerId: number, type: string): Promise<VersionWithPackage[]> {
  return q
    .selectFrom('package_version')
    .innerJoin('package', 'package.id', 'package_version.package_id')
    .selectAll('package_version')
    .select(['package.owner_id', 'package.repo_id', 'package.type', 'package.name'])
    .where('package.owner_id', '=', ownerId)
    .where('package.type', '=', type)
    .where(notInternal)
    .orderBy('package.id')
    .orderBy('package_version.created_unix', 'desc')
    .orderBy('package_version.id', 'desc')
    .execute() as Promise<VersionWithPackage[]>;
}

/** Blobs created before `before` that no file names (left by an interrupted deletion or upload). */
export function unreferencedBlobs(q: Q, before: number, limit: number) {
  return q
    .selectFrom('package_blob')
    .select(['id', 'hash_sha256'])
    .where('created_unix', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('package_file').select('id').whereRef('blob_id', '=', 'package_blob.id')),
      ),
    )
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Packages created before `before` with no version. */
export function emptyPackages(q: Q, before: number) {
  return q
    .selectFrom('package')
    .select('id')
    .where('created_unix', '<', before)
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('package_version').select('id').whereRef('package_id', '=', 'package.id')),
      ),
    )
    .execute();
}
