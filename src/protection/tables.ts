// Tables of the protection domain (see db/migrations/0005_protection.ts).
import type { Generated, Selectable } from 'kysely';

/** A branch protection rule. Flags are 0/1; status_check_contexts is a JSON array of strings. */
export interface ProtectedBranchTable {
  id: Generated<number>;
  repo_id: number;
  rule_name: string;
  enable_push: Generated<number>;
  enable_push_whitelist: Generated<number>;
  push_whitelist_deploy_keys: Generated<number>;
  enable_merge_whitelist: Generated<number>;
  enable_status_check: Generated<number>;
  status_check_contexts: Generated<string>;
  required_approvals: Generated<number>;
  enable_approvals_whitelist: Generated<number>;
  block_on_rejected_reviews: Generated<number>;
  block_on_official_review_requests: Generated<number>;
  block_on_outdated_branch: Generated<number>;
  dismiss_stale_approvals: Generated<number>;
  ignore_stale_approvals: Generated<number>;
  require_signed_commits: Generated<number>;
  protected_file_patterns: Generated<string>;
  unprotected_file_patterns: Generated<string>;
  apply_to_admins: Generated<number>;
  created_unix: number;
  updated_unix: number;
}

export type WhitelistKind = 'push' | 'merge' | 'approvals';

/** One allow-listed user or team (exactly one of the two ids is set) of a rule's list. */
export interface ProtectedBranchWhitelistTable {
  id: Generated<number>;
  rule_id: number;
  kind: WhitelistKind;
  user_id: number | null;
  team_id: number | null;
}

/** A tag protection rule (db/migrations/0028_tag_protection.ts). */
export interface ProtectedTagTable {
  id: Generated<number>;
  repo_id: number;
  /** A glob over tag names (`*` crosses '/'), or a regular expression written between slashes. */
  name_pattern: string;
  created_unix: number;
  updated_unix: number;
}

/** One allow-listed user or team (exactly one of the two ids is set) of a tag rule. */
export interface ProtectedTagWhitelistTable {
  id: Generated<number>;
  tag_rule_id: number;
  user_id: number | null;
  team_id: number | null;
}

export interface ProtectionTables {
  protected_branch: ProtectedBranchTable;
  protected_branch_whitelist: ProtectedBranchWhitelistTable;
  protected_tag: ProtectedTagTable;
  protected_tag_whitelist: ProtectedTagWhitelistTable;
}

export type RuleRow = Selectable<ProtectedBranchTable>;
export type TagRuleRow = Selectable<ProtectedTagTable>;
