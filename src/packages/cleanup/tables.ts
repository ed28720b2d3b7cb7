// Tables of package cleanup (see db/migrations/0021_package_cleanup_rules.ts).
import type { Generated, Selectable } from 'kysely';

export interface PackageCleanupRuleTable {
  id: Generated<number>;
  owner_id: number;
  type: string;
  enabled: number;
  /** The newest this many versions of each package are kept. */
  keep_count: number;
  /** Versions matching this (anchored, case-insensitive) are kept. */
  keep_pattern: string;
  /** Only versions older than this many days are removed (0: any age). */
  remove_days: number;
  /** Only versions matching this are removed (empty: all). */
  remove_pattern: string;
  /** Patterns match `name/version` instead of the version. */
  match_full_name: number;
  created_unix: number;
  updated_unix: number;
}

export interface PackageCleanupTables {
  package_cleanup_rule: PackageCleanupRuleTable;
}

export type RuleRow = Selectable<PackageCleanupRuleTable>;
