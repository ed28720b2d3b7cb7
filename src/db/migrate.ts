// Versioned migrations, applied in name order at start-up (one numbered below a migration already
// run is run too). A migration is never edited once it has landed; a change to the schema is a new
// file in ./migrations and a line in the list below, in numeric order.
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from './dialect.js';
import type { DB } from './schema.js';
import * as m0001 from './migrations/0001_foundation.js';
import * as m0002 from './migrations/0002_quota.js';
import * as m0003 from './migrations/0003_repos.js';
import * as m0004 from './migrations/0004_lfs.js';
import * as m0005 from './migrations/0005_protection.js';
import * as m0006 from './migrations/0006_mirrors.js';
import * as m0007 from './migrations/0007_issues.js';
import * as m0008 from './migrations/0008_attachments.js';
import * as m0009 from './migrations/0009_releases.js';
import * as m0010 from './migrations/0010_notifications.js';
import * as m0011 from './migrations/0011_webhooks.js';
import * as m0012 from './migrations/0012_actions.js';
import * as m0013 from './migrations/0013_artifacts.js';
import * as m0014 from './migrations/0014_pulls.js';
import * as m0015 from './migrations/0015_ref_intents.js';
import * as m0016 from './migrations/0016_packages.js';
import * as m0018 from './migrations/0018_web_sessions.js';
import * as m0019 from './migrations/0019_social.js';
import * as m0020 from './migrations/0020_activities.js';
import * as m0021 from './migrations/0021_package_cleanup_rules.js';
import * as m0022 from './migrations/0022_user_blocks.js';
import * as m0023 from './migrations/0023_emails_settings.js';
import * as m0024 from './migrations/0024_topics.js';
import * as m0025 from './migrations/0025_redirects.js';
import * as m0026 from './migrations/0026_review_comments.js';
import * as m0027 from './migrations/0027_dependencies_times.js';
import * as m0028 from './migrations/0028_tag_protection.js';
import * as m0029 from './migrations/0029_avatars.js';
import * as m0030 from './migrations/0030_oauth2_apps.js';
import * as m0031 from './migrations/0031_repo_flags.js';
import * as m0032 from './migrations/0032_repo_transfer.js';
import * as m0034 from './migrations/0034_auto_merge.js';
import * as m0037 from './migrations/0037_container_uploads.js';
import * as m0038 from './migrations/0038_ssh_keys.js';
import * as m0039 from './migrations/0039_gpg_keys.js';
import * as m0040 from './migrations/0040_cluster_leases.js';
import * as m0041 from './migrations/0041_ref_intent_node.js';
import * as m0042 from './migrations/0042_account_settings.js';
import * as m0043 from './migrations/0043_mail.js';
import * as m0044 from './migrations/0044_two_factor.js';
import * as m0045 from './migrations/0045_repo_merge_styles.js';
import * as m0046 from './migrations/0046_runner_description.js';
import * as m0048 from './migrations/0048_ssh_key_verified.js';
import * as m0049 from './migrations/0049_admin.js';
import * as m0050 from './migrations/0050_review_request_index.js';
import * as m0051 from './migrations/0051_quota_history.js';
import * as m0052 from './migrations/0052_oauth2_grants.js';
import * as m0053 from './migrations/0053_user_updated_index.js';
import * as m0056 from './migrations/0056_action_workflow_disabled.js';
import * as m0059 from './migrations/0059_debian_repository.js';
import * as m0064 from './migrations/0064_rpm_repository.js';
import * as m0062 from './migrations/0062_action_cache.js';
import * as m0063 from './migrations/0063_projects.js';
import * as m0071 from './migrations/0071_action_schedule_concurrency.js';
import * as m0072 from './migrations/0072_alpine_key.js';
import * as m0073 from './migrations/0073_alt_repository.js';
import * as m0074 from './migrations/0074_action_job_call.js';
import * as m0077 from './migrations/0077_package_chef_key.js';
import * as m0078 from './migrations/0078_action_job_concurrency.js';
import * as m0080 from './migrations/0080_deleted_branch.js';

export interface AnvilMigration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

const migrations: Record<string, AnvilMigration> = {
  '0001_foundation': m0001,
  '0002_quota': m0002,
  '0003_repos': m0003,
  '0004_lfs': m0004,
  '0005_protection': m0005,
  '0006_mirrors': m0006,
  '0007_issues': m0007,
  '0008_attachments': m0008,
  '0009_releases': m0009,
  '0010_notifications': m0010,
  '0011_webhooks': m0011,
  '0012_actions': m0012,
  '0013_artifacts': m0013,
  '0014_pulls': m0014,
  '0015_ref_intents': m0015,
  '0016_packages': m0016,
  '0018_web_sessions': m0018,
  '0019_social': m0019,
  '0020_activities': m0020,
  '0021_package_cleanup_rules': m0021,
  '0022_user_blocks': m0022,
  '0023_emails_settings': m0023,
  '0024_topics': m0024,
  '0025_redirects': m0025,
  '0026_review_comments': m0026,
  '0027_dependencies_times': m0027,
  '0028_tag_protection': m0028,
  '0029_avatars': m0029,
  '0030_oauth2_apps': m0030,
  '0031_repo_flags': m0031,
  '0032_repo_transfer': m0032,
  '0034_auto_merge': m0034,
  '0037_container_uploads': m0037,
  '0038_ssh_keys': m0038,
  '0039_gpg_keys': m0039,
  '0040_cluster_leases': m0040,
  '0041_ref_intent_node': m0041,
  '0042_account_settings': m0042,
  '0043_mail': m0043,
  '0044_two_factor': m0044,
  '0045_repo_merge_styles': m0045,
  '0046_runner_description': m0046,
  '0048_ssh_key_verified': m0048,
  '0049_admin': m0049,
  '0050_review_request_index': m0050,
  '0051_quota_history': m0051,
  '0052_oauth2_grants': m0052,
  '0053_user_updated_index': m0053,
  '0056_action_workflow_disabled': m0056,
  '0059_debian_repository': m0059,
  '0062_action_cache': m0062,
  '0063_projects': m0063,
  '0064_rpm_repository': m0064,
  '0071_action_schedule_concurrency': m0071,
  '0072_alpine_key': m0072,
  '0073_alt_repository': m0073,
  '0074_action_job_call': m0074,
  '0077_package_chef_key': m0077,
  '0078_action_job_concurrency': m0078,
  '0080_deleted_branch': m0080,
};

/**
 * Whether the database has run exactly the migrations this code knows (the usual start-up): one
 * query, where Kysely's migrator would take its lock and sort every name with localeCompare, whose
 * Intl collator alone maps some 2 MB of ICU data into every server.
 */
async function upToDate(db: Kysely<DB>): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from anvil_migration`.execute(db);
    const done = new Set(rows.map((r) => r.name));
    return done.size === Object.keys(migrations).length && Object.keys(migrations).every((n) => done.has(n));
  } catch {
    return false; // a new database: no table yet
  }
}

export async function migrateToLatest(db: Kysely<DB>, dialect: Dialect): Promise<void> {
  if (await upToDate(db)) return;
  const provided: Record<string, Migration> = {};
  for (const [name, m] of Object.entries(migrations)) {
    provided[name] = { up: (k) => m.up(k as Kysely<unknown>, dialect) };
  }
  const migrator = new Migrator({
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations work below the typed schema
    db: db as unknown as Kysely<any>,
    provider: { getMigrations: async () => provided },
    migrationTableName: 'anvil_migration',
    migrationLockTableName: 'anvil_migration_lock',
    // A migration numbered below one already run is still run: numbers are handed out ahead (work
    // made side by side takes free numbers in a gap), and no migration depends on a later one.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const cause = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${cause}`);
  }
}
