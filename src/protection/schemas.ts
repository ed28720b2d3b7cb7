// Forgejo's BranchProtection JSON and its create/edit options, and the rule-to-JSON conversion.
import { Type, type Static, type TSchema } from 'typebox';
import { isoTime } from '../http/format.js';
import type { ProtectionRule, TagProtectionRule } from './service.js';

/** An optional field that may also be null (null means "not given", as a nil pointer in Forgejo). */
const opt = <T extends TSchema>(t: T, description?: string) =>
  Type.Optional(Type.Union([t, Type.Null()], description ? { description } : {}));
const Names = Type.Array(Type.String());

const optionFields = {
  enable_push: opt(Type.Boolean(), 'allow pushing to matching branches (by users with write access)'),
  enable_push_whitelist: opt(Type.Boolean(), 'only the allow-listed users and teams may push'),
  push_whitelist_usernames: opt(Names),
  push_whitelist_teams: opt(Names, 'organization repositories only'),
  push_whitelist_deploy_keys: opt(Type.Boolean()),
  enable_merge_whitelist: opt(Type.Boolean()),
  merge_whitelist_usernames: opt(Names),
  merge_whitelist_teams: opt(Names, 'organization repositories only'),
  enable_status_check: opt(Type.Boolean()),
  status_check_contexts: opt(Names, 'on edit, replaced whenever present and not null'),
  required_approvals: opt(Type.Integer({ minimum: 0 })),
  enable_approvals_whitelist: opt(Type.Boolean()),
  approvals_whitelist_username: opt(Names),
  approvals_whitelist_teams: opt(Names, 'organization repositories only'),
  block_on_rejected_reviews: opt(Type.Boolean()),
  block_on_official_review_requests: opt(Type.Boolean()),
  block_on_outdated_branch: opt(Type.Boolean()),
  dismiss_stale_approvals: opt(Type.Boolean()),
  ignore_stale_approvals: opt(Type.Boolean()),
  require_signed_commits: opt(Type.Boolean()),
  protected_file_patterns: opt(Type.String(), "file globs separated by ';'"),
  unprotected_file_patterns: opt(Type.String(), "file globs separated by ';'"),
  apply_to_admins: opt(Type.Boolean()),
};

export const CreateBranchProtectionOption = Type.Object(
  {
    rule_name: opt(
      Type.String(),
      "a branch name, or a glob over branch names ('/' separates; ** crosses it)",
    ),
    branch_name: opt(Type.String(), 'deprecated: use rule_name'),
    ...optionFields,
  },
  { title: 'CreateBranchProtectionOption' },
);

export const EditBranchProtectionOption = Type.Object(optionFields, {
  title: 'EditBranchProtectionOption',
  description: 'Only the fields that are present and not null change.',
});

export const BranchProtection = Type.Object(
  {
    branch_name: Type.String({ description: 'deprecated: same as rule_name' }),
    rule_name: Type.String(),
    enable_push: Type.Boolean(),
    enable_push_whitelist: Type.Boolean(),
    push_whitelist_usernames: Names,
    push_whitelist_teams: Names,
    push_whitelist_deploy_keys: Type.Boolean(),
    enable_merge_whitelist: Type.Boolean(),
    merge_whitelist_usernames: Names,
    merge_whitelist_teams: Names,
    enable_status_check: Type.Boolean(),
    status_check_contexts: Names,
    required_approvals: Type.Integer(),
    enable_approvals_whitelist: Type.Boolean(),
    approvals_whitelist_username: Names,
    approvals_whitelist_teams: Names,
    block_on_rejected_reviews: Type.Boolean(),
    block_on_official_review_requests: Type.Boolean(),
    block_on_outdated_branch: Type.Boolean(),
    dismiss_stale_approvals: Type.Boolean(),
    ignore_stale_approvals: Type.Boolean(),
    require_signed_commits: Type.Boolean(),
    protected_file_patterns: Type.String(),
    unprotected_file_patterns: Type.String(),
    apply_to_admins: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'BranchProtection' },
);
export type BranchProtectionJson = Static<typeof BranchProtection>;

export function toBranchProtectionJson(r: ProtectionRule): BranchProtectionJson {
  return {
    branch_name: r.rule_name,
    rule_name: r.rule_name,
    enable_push: r.enable_push === 1,
    enable_push_whitelist: r.enable_push_whitelist === 1,
    push_whitelist_usernames: r.push.users,
    push_whitelist_teams: r.push.teams,
    push_whitelist_deploy_keys: r.push_whitelist_deploy_keys === 1,
    enable_merge_whitelist: r.enable_merge_whitelist === 1,
    merge_whitelist_usernames: r.merge.users,
    merge_whitelist_teams: r.merge.teams,
    enable_status_check: r.enable_status_check === 1,
    status_check_contexts: r.statusCheckContexts,
    required_approvals: r.required_approvals,
    enable_approvals_whitelist: r.enable_approvals_whitelist === 1,
    approvals_whitelist_username: r.approvals.users,
    approvals_whitelist_teams: r.approvals.teams,
    block_on_rejected_reviews: r.block_on_rejected_reviews === 1,
    block_on_official_review_requests: r.block_on_official_review_requests === 1,
    block_on_outdated_branch: r.block_on_outdated_branch === 1,
    dismiss_stale_approvals: r.dismiss_stale_approvals === 1,
    ignore_stale_approvals: r.ignore_stale_approvals === 1,
    require_signed_commits: r.require_signed_commits === 1,
    protected_file_patterns: r.protected_file_patterns,
    unprotected_file_patterns: r.unprotected_file_patterns,
    apply_to_admins: r.apply_to_admins === 1,
    created_at: isoTime(r.created_unix),
    updated_at: isoTime(r.updated_unix),
  };
}

// Tag protection

export const CreateTagProtectionOption = Type.Object(
  {
    name_pattern: Type.Optional(
      Type.String({
        description:
          "a glob over tag names ('*' also crosses '/'), or a regular expression between slashes (/^v\\d+$/)",
      }),
    ),
    whitelist_usernames: opt(Names, 'users allowed to create, move and delete the matching tags'),
    whitelist_teams: opt(Names, 'teams allowed to (organization repositories only)'),
  },
  { title: 'CreateTagProtectionOption' },
);

export const EditTagProtectionOption = Type.Object(
  {
    name_pattern: opt(Type.String(), 'a blank pattern leaves it unchanged'),
    whitelist_usernames: opt(Names, 'replaces the list when present and not null'),
    whitelist_teams: opt(Names, 'replaces the list when present and not null'),
  },
  { title: 'EditTagProtectionOption', description: 'Only the fields that are present and not null change.' },
);

export const TagProtection = Type.Object(
  {
    id: Type.Integer(),
    name_pattern: Type.String(),
    whitelist_usernames: Names,
    whitelist_teams: Names,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'TagProtection' },
);
export type TagProtectionJson = Static<typeof TagProtection>;

export function toTagProtectionJson(r: TagProtectionRule): TagProtectionJson {
  return {
    id: r.id,
    name_pattern: r.name_pattern,
    whitelist_usernames: r.users,
    whitelist_teams: r.teams,
    created_at: isoTime(r.created_unix),
    updated_at: isoTime(r.updated_unix),
  };
}
