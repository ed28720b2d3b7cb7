// Branch protection: the rules of a repository (create, edit, delete, list), which rule governs a
// branch, and the check every push goes through (registered with the push registry, so the
// pre-receive hook refuses what a rule forbids). Rules go with their repository through the
// ON DELETE CASCADE of protected_branch.repo_id.
import type { RefUpdate } from '../events/bus.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import { AccessMode } from '../orgs/tables.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { forbidden, invalid, invalidField, notFound } from '../errors.js';
import { git, isAncestor } from '../git/git.js';
import type { PushRegistry } from '../git/pushes.js';
import type { Logger } from 'pino';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { Updateable } from 'kysely';
import type { ProtectedBranchTable, WhitelistKind } from './tables.js';
import * as store from './store.js';
import {
  compileTagPattern,
  filePatterns,
  inPriorityOrder,
  matchesAnyPattern,
  ruleForBranch,
  tagPatternMatches,
} from './match.js';
import type { RuleRow, TagRuleRow } from './tables.js';

/** A tag protection rule with the users and teams allowed to create, move and delete its tags. */
export type TagProtectionRule = TagRuleRow & {
  users: string[];
  userIds: number[];
  teams: string[];
  teamIds: number[];
};

/** Forgejo's CreateTagProtectionOption and EditTagProtectionOption (on edit, absent or null: unchanged). */
export interface TagProtectionOptions {
  name_pattern?: string | null;
  whitelist_usernames?: string[] | null;
  whitelist_teams?: string[] | null;
}

export interface Whitelist {
  userIds: number[];
  users: string[];
  teamIds: number[];
  teams: string[];
}

/** A rule with its decoded status check contexts and its three allow-lists. */
export type ProtectionRule = RuleRow & {
  statusCheckContexts: string[];
  push: Whitelist;
  merge: Whitelist;
  approvals: Whitelist;
};

/**
 * The fields of Forgejo's CreateBranchProtectionOption and EditBranchProtectionOption. On edit,
 * null or absent leaves a field unchanged.
 */
export interface ProtectionOptions {
  rule_name?: string | null;
  branch_name?: string | null;
  enable_push?: boolean | null;
  enable_push_whitelist?: boolean | null;
  push_whitelist_usernames?: string[] | null;
  push_whitelist_teams?: string[] | null;
  push_whitelist_deploy_keys?: boolean | null;
  enable_merge_whitelist?: boolean | null;
  merge_whitelist_usernames?: string[] | null;
  merge_whitelist_teams?: string[] | null;
  enable_status_check?: boolean | null;
  status_check_contexts?: string[] | null;
  required_approvals?: number | null;
  enable_approvals_whitelist?: boolean | null;
  approvals_whitelist_username?: string[] | null;
  approvals_whitelist_teams?: string[] | null;
  block_on_rejected_reviews?: boolean | null;
  block_on_official_review_requests?: boolean | null;
  block_on_outdated_branch?: boolean | null;
  dismiss_stale_approvals?: boolean | null;
  ignore_stale_approvals?: boolean | null;
  require_signed_commits?: boolean | null;
  protected_file_patterns?: string | null;
  unprotected_file_patterns?: string | null;
  apply_to_admins?: boolean | null;
}

/** The flags that are copied as they are (the push flags depend on each other; see below). */
const PLAIN_FLAGS = [
  'enable_merge_whitelist',
  'enable_status_check',
  'enable_approvals_whitelist',
  'block_on_rejected_reviews',
  'block_on_official_review_requests',
  'block_on_outdated_branch',
  'dismiss_stale_approvals',
  'ignore_stale_approvals',
  'require_signed_commits',
  'apply_to_admins',
] as const;

/** Each allow-list: its users field, its teams field, and the access its users need. */
const LISTS: ReadonlyArray<{
  kind: WhitelistKind;
  users: 'push_whitelist_usernames' | 'merge_whitelist_usernames' | 'approvals_whitelist_username';
  teams: 'push_whitelist_teams' | 'merge_whitelist_teams' | 'approvals_whitelist_teams';
  need: number;
}> = [
  { kind: 'push', users: 'push_whitelist_usernames', teams: 'push_whitelist_teams', need: AccessMode.write },
  {
    kind: 'merge',
    users: 'merge_whitelist_usernames',
    teams: 'merge_whitelist_teams',
    need: AccessMode.write,
  },
  {
    kind: 'approvals',
    users: 'approvals_whitelist_username',
    teams: 'approvals_whitelist_teams',
    need: AccessMode.read,
  },
];

const flag = (v: boolean) => (v ? 1 : 0);
const isZero = (oid: string) => /^0+$/.test(oid);

export interface ProtectionServiceDeps {
  db: Db;
  log: Logger;
  /** Pushes are checked against the rules (a check registered here). */
  pushes: Pick<PushRegistry, 'addCheck'>;
  repos: Pick<RepoService, 'access' | 'addHooks' | 'pathOf'>;
  users: Pick<UserService, 'getById'>;
}

export class ProtectionService {
  private readonly db: Db;

  constructor(private readonly deps: ProtectionServiceDeps) {
    this.db = deps.db;
    deps.pushes.addCheck((push) => this.refusalFor(push.repo, push.pusher, push.updates, push.gitEnv));
    // Teams belong to the old owner: a transferred repository's lists keep only the new owner's.
    deps.repos.addHooks({
      onTransfer: async (tx, repo, newOwnerId) => {
        await store.dropForeignTeams(tx, repo.id, newOwnerId);
        await store.dropForeignTagTeams(tx, repo.id, newOwnerId);
      },
    });
  }

  // Reading

  /** The rules of a repository in priority order (plain names first, then by creation). */
  async list(repo: Pick<RepoRow, 'id'>): Promise<ProtectionRule[]> {
    return this.withLists(inPriorityOrder(await store.listRules(this.db, repo.id)));
  }

  async get(repo: RepoRow, ruleName: string): Promise<ProtectionRule> {
    const row = await store.getRule(this.db, repo.id, ruleName);
    if (!row) throw notFound(`branch protection does not exist [name: ${ruleName}]`);
    return (await this.withLists([row]))[0]!;
  }

  /** The rule that governs `branch` of `repo`, or null when the branch is not protected. */
  async ruleFor(repo: Pick<RepoRow, 'id'>, branch: string): Promise<ProtectionRule | null> {
    return ruleForBranch(await this.list(repo), branch) ?? null;
  }

  private async withLists(rows: RuleRow[]): Promise<ProtectionRule[]> {
    const entries = await store.whitelistsOf(
      this.db,
      rows.map((r) => r.id),
    );
    return rows.map((row) => {
      const empty = (): Whitelist => ({ userIds: [], users: [], teamIds: [], teams: [] });
      const lists: Record<WhitelistKind, Whitelist> = { push: empty(), merge: empty(), approvals: empty() };
      for (const e of entries) {
        if (e.rule_id !== row.id) continue;
        const l = lists[e.kind];
        if (e.user_id !== null) {
          l.userIds.push(e.user_id);
          l.users.push(e.name);
        } else if (e.team_id !== null) {
          l.teamIds.push(e.team_id);
          l.teams.push(e.name);
        }
      }
      return { ...row, statusCheckContexts: parseContexts(row.status_check_contexts), ...lists };
    });
  }

  // Writing

  async create(repo: RepoRow, opts: ProtectionOptions): Promise<ProtectionRule> {
    const ruleName = opts.rule_name || opts.branch_name || '';
    if (!ruleName.trim()) throw invalidField('rule_name', 'both rule_name and branch_name are empty');
    if (ruleName.length > 255) throw invalidField('rule_name', 'must be at most 255 characters');
    checkCommon(opts);
    const lists = await this.resolveLists(repo, opts);
    const push = opts.enable_push === true;
    const pushWhitelist = push && opts.enable_push_whitelist === true;
    const now = nowUnix();
    await transaction(this.db, async (tx) => {
      if (await store.getRule(tx, repo.id, ruleName)) {
        throw invalidField('rule_name', `branch protection already exists [name: ${ruleName}]`);
      }
      const id = await store.insertRule(tx, {
        repo_id: repo.id,
        rule_name: ruleName,
        enable_push: flag(push),
        enable_push_whitelist: flag(pushWhitelist),
        push_whitelist_deploy_keys: flag(pushWhitelist && opts.push_whitelist_deploy_keys === true),
        ...Object.fromEntries(PLAIN_FLAGS.map((f) => [f, flag(opts[f] === true)])),
        status_check_contexts: JSON.stringify(opts.status_check_contexts ?? []),
        required_approvals: opts.required_approvals ?? 0,
        protected_file_patterns: opts.protected_file_patterns ?? '',
        unprotected_file_patterns: opts.unprotected_file_patterns ?? '',
        created_unix: now,
        updated_unix: now,
      });
      await this.writeLists(tx, id, lists);
    });
    return this.get(repo, ruleName);
  }

  /** Changes the fields that are present and not null (Forgejo's EditBranchProtection). */
  async edit(repo: RepoRow, ruleName: string, opts: ProtectionOptions): Promise<ProtectionRule> {
    const rule = await store.getRule(this.db, repo.id, ruleName);
    if (!rule) throw notFound(`branch protection does not exist [name: ${ruleName}]`);
    checkCommon(opts);
    const lists = await this.resolveLists(repo, opts);

    const patch: Updateable<ProtectedBranchTable> = {};
    // The push flags: turning pushing off turns its allow-list off; the allow-list only changes
    // together with enable_push=true, and the deploy-key flag only with the allow-list on.
    if (opts.enable_push === false) {
      Object.assign(patch, { enable_push: 0, enable_push_whitelist: 0, push_whitelist_deploy_keys: 0 });
    } else if (opts.enable_push === true) {
      patch.enable_push = 1;
      if (opts.enable_push_whitelist === false) {
        Object.assign(patch, { enable_push_whitelist: 0, push_whitelist_deploy_keys: 0 });
      } else if (opts.enable_push_whitelist === true) {
        patch.enable_push_whitelist = 1;
        if (typeof opts.push_whitelist_deploy_keys === 'boolean') {
          patch.push_whitelist_deploy_keys = flag(opts.push_whitelist_deploy_keys);
        }
      }
    }
    for (const f of PLAIN_FLAGS) {
      const v = opts[f];
      if (typeof v === 'boolean') patch[f] = flag(v);
    }
    // Replaced whenever present and not null, whatever enable_status_check says.
    if (opts.status_check_contexts != null) {
      patch.status_check_contexts = JSON.stringify(opts.status_check_contexts);
    }
    if (opts.required_approvals != null) patch.required_approvals = opts.required_approvals;
    if (opts.protected_file_patterns != null) patch.protected_file_patterns = opts.protected_file_patterns;
    if (opts.unprotected_file_patterns != null) {
      patch.unprotected_file_patterns = opts.unprotected_file_patterns;
    }
    await transaction(this.db, async (tx) => {
      await store.updateRule(tx, rule.id, { ...patch, updated_unix: nowUnix() });
      await this.writeLists(tx, rule.id, lists);
    });
    return this.get(repo, ruleName);
  }

  /**
   * Follows a branch rename (Forgejo's RenameBranch): a rule named after the branch is renamed
   * with it; true when one was. A glob rule that protects the branch is not, and the rename is
   * refused: 403.
   */
  async followRename(repo: RepoRow, from: string, to: string): Promise<boolean> {
    const rule = await store.getRule(this.db, repo.id, from);
    if (rule) {
      await store.updateRule(this.db, rule.id, { rule_name: to, updated_unix: nowUnix() });
      return true;
    }
    if (await this.ruleFor(repo, from))
      throw forbidden('Branch is protected by glob-based protection rules.');
    return false;
  }

  async delete(repo: RepoRow, ruleName: string): Promise<void> {
    const rule = await store.getRule(this.db, repo.id, ruleName);
    if (!rule) throw notFound(`branch protection does not exist [name: ${ruleName}]`);
    await store.deleteRule(this.db, rule.id);
  }

  /**
   * The allow-lists the options set, resolved to ids: every name must exist (422 otherwise), and,
   * as in Forgejo, users without the access a list needs and teams without access to the
   * repository are left out. Lists that are absent or null are not in the result.
   */
  private async resolveLists(repo: RepoRow, opts: ProtectionOptions) {
    const owner = await this.deps.users.getById(repo.owner_id);
    const out: Array<{ kind: WhitelistKind; who: 'user' | 'team'; ids: number[] }> = [];
    for (const list of LISTS) {
      const userNames = opts[list.users];
      if (userNames != null) {
        out.push({ kind: list.kind, who: 'user', ids: await this.resolveUsers(repo, userNames, list) });
      }
      const teamNames = opts[list.teams];
      if (teamNames != null) {
        if (teamNames.length && owner?.type !== UserType.Organization) {
          throw invalidField(list.teams, 'teams can only be allow-listed on repositories of organizations');
        }
        out.push({ kind: list.kind, who: 'team', ids: await this.resolveTeams(repo, teamNames, list.teams) });
      }
    }
    return out;
  }

  private async resolveUsers(
    repo: RepoRow,
    names: string[],
    list: (typeof LISTS)[number],
  ): Promise<number[]> {
    const rows = await store.individualsByNames(this.db, names);
    const byName = new Map(rows.map((u) => [u.lower_name, u]));
    const ids: number[] = [];
    for (const name of names) {
      const u = byName.get(name.toLowerCase());
      if (!u) throw invalidField(list.users, `user does not exist [name: ${name}]`);
      if (ids.includes(u.id)) continue;
      // Explicit access, as Forgejo asks: what a public repository grants everyone does not count.
      const explicit = { ...repo, is_private: 1 };
      const access = await this.deps.repos.access(explicit, { id: u.id, isAdmin: u.is_admin === 1 });
      if ((access.units.get('repo.code') ?? 0) >= list.need) ids.push(u.id);
    }
    return ids;
  }

  private async resolveTeams(repo: RepoRow, names: string[], field: string): Promise<number[]> {
    const rows = await store.teamsByNames(this.db, repo.owner_id, repo.id, names);
    const byName = new Map(rows.map((t) => [t.lower_name, t]));
    const ids: number[] = [];
    for (const name of names) {
      const t = byName.get(name.toLowerCase());
      if (!t) throw invalidField(field, `team does not exist [name: ${name}]`);
      if (t.has_repo && !ids.includes(t.id)) ids.push(t.id);
    }
    return ids;
  }

  private async writeLists(
    tx: Tx,
    ruleId: number,
    lists: Array<{ kind: WhitelistKind; who: 'user' | 'team'; ids: number[] }>,
  ): Promise<void> {
    for (const l of lists) await store.replaceWhitelist(tx, ruleId, l.kind, l.who, l.ids);
  }

  // Enforcement

  /**
   * Whether `user` may push to a branch governed by `rule` (Forgejo's CanUserPush): pushing must
   * be enabled, and then either anyone with write access may push, or only the allow-listed
   * users and members of allow-listed teams. Being an administrator does not bypass this.
   */
  async canPush(repo: RepoRow, rule: ProtectionRule, user: UserRow): Promise<boolean> {
    if (!rule.enable_push) return false;
    if (!rule.enable_push_whitelist) {
      const access = await this.deps.repos.access(repo, { id: user.id, isAdmin: user.is_admin === 1 });
      return (access.units.get('repo.code') ?? 0) >= AccessMode.write;
    }
    if (rule.push.userIds.includes(user.id)) return true;
    return store.inAnyTeam(this.db, user.id, rule.push.teamIds);
  }

  /** Whether `user` may merge into a branch governed by `rule` (Forgejo's IsUserMergeWhitelisted). */
  async isMergeWhitelisted(rule: ProtectionRule, user: UserRow, codeAccess: number): Promise<boolean> {
    if (!rule.enable_merge_whitelist) return codeAccess >= AccessMode.write;
    if (rule.merge.userIds.includes(user.id)) return true;
    return store.inAnyTeam(this.db, user.id, rule.merge.teamIds);
  }

  /**
   * Why `pusher` may not make these ref updates to `repo` (branch protection), or null when they
   * may. `gitEnv` lets git see objects still in a push's quarantine. Used by the pre-receive
   * check and by API operations that write to branches (the contents API, merges).
   *
   * For each updated branch that a rule governs, in Forgejo's order: deleting it is refused; a
   * force push (the old commit is not an ancestor of the new one) is refused; with
   * require_signed_commits, new commits are refused (Anvil has no signing keys to verify them
   * against yet, so none counts as verified); a change to a protected file is refused; then the
   * pusher must be allowed to push, unless every changed file matches the unprotected patterns.
   * The message names the branch; git shows it to the pusher as "remote: ...".
   *
   * Tags come first: creating, moving or deleting a tag that a tag rule matches needs the pusher
   * to be allowed by one of the matching rules (see tagRefusal).
   */
  async refusalFor(
    repo: RepoRow,
    pusher: UserRow,
    updates: RefUpdate[],
    gitEnv: NodeJS.ProcessEnv = {},
  ): Promise<string | null> {
    const tagRefusal = await this.tagRefusal(repo, pusher, updates);
    if (tagRefusal) return tagRefusal;
    const branchUpdates = updates.filter((u) => u.ref.startsWith('refs/heads/'));
    if (branchUpdates.length === 0) return null;
    const rules = await this.list(repo);
    if (rules.length === 0) return null;
    const dir = this.deps.repos.pathOf(repo);
    for (const u of branchUpdates) {
      const branch = u.ref.slice('refs/heads/'.length);
      const rule = ruleForBranch(rules, branch);
      if (!rule) continue;
      try {
        const refusal = await this.branchRefusal(repo, dir, rule, branch, u, pusher, gitEnv);
        if (refusal) return refusal;
      } catch (err) {
        this.deps.log.error({ err, repoId: repo.id, branch }, 'checking branch protection failed');
        return `could not check the protection of branch ${branch}`;
      }
    }
    return null;
  }

  private async branchRefusal(
    repo: RepoRow,
    dir: string,
    rule: ProtectionRule,
    branch: string,
    u: RefUpdate,
    pusher: UserRow,
    env: NodeJS.ProcessEnv,
  ): Promise<string | null> {
    if (isZero(u.newOid)) return `branch ${branch} is protected from deletion`;
    const created = isZero(u.oldOid);
    if (!created && !(await isAncestor(dir, u.oldOid, u.newOid, env))) {
      return `branch ${branch} is protected from force push`;
    }
    if (rule.require_signed_commits) {
      const range = created ? [u.newOid, '--not', '--all'] : [u.newOid, `^${u.oldOid}`];
      const first = (await git(['rev-list', '--max-count=1', ...range], { gitDir: dir, env })).stdout
        .toString()
        .trim();
      if (first) return `branch ${branch} is protected from unverified commit ${first}`;
    }
    const protectedPatterns = filePatterns(rule.protected_file_patterns);
    const unprotectedPatterns = filePatterns(rule.unprotected_file_patterns);
    let changed: string[] | undefined;
    const changedFiles = async () =>
      (changed ??= created ? [] : await changedBetween(dir, u.oldOid, u.newOid, env));
    let protectedFile: string | undefined;
    if (protectedPatterns.length) {
      protectedFile = (await changedFiles()).find((f) => matchesAnyPattern(protectedPatterns, f));
    }
    if (!protectedFile && (await this.canPush(repo, rule, pusher))) return null;
    if (protectedFile) return `branch ${branch} is protected from changing file ${protectedFile}`;
    if (unprotectedPatterns.length && !created) {
      const files = await changedFiles();
      if (files.every((f) => matchesAnyPattern(unprotectedPatterns, f))) return null;
    }
    return `Not allowed to push to protected branch ${branch}`;
  }

  // Tag protection

  /** The tag rules of a repository, in creation order, with their allow-lists. */
  async listTagRules(repo: RepoRow): Promise<TagProtectionRule[]> {
    return this.withTagLists(await store.listTagRules(this.db, repo.id));
  }

  async getTagRule(repo: RepoRow, id: number): Promise<TagProtectionRule> {
    const row = Number.isSafeInteger(id) ? await store.getTagRule(this.db, repo.id, id) : undefined;
    if (!row) throw notFound(`tag protection does not exist [id: ${id}]`);
    return (await this.withTagLists([row]))[0]!;
  }

  private async withTagLists(rows: TagRuleRow[]): Promise<TagProtectionRule[]> {
    const entries = await store.tagWhitelistsOf(
      this.db,
      rows.map((r) => r.id),
    );
    return rows.map((row) => {
      const rule: TagProtectionRule = { ...row, users: [], userIds: [], teams: [], teamIds: [] };
      for (const e of entries) {
        if (e.tag_rule_id !== row.id) continue;
        if (e.user_id !== null) {
          rule.userIds.push(e.user_id);
          rule.users.push(e.name);
        } else if (e.team_id !== null) {
          rule.teamIds.push(e.team_id);
          rule.teams.push(e.name);
        }
      }
      return rule;
    });
  }

  /**
   * A new tag rule (Forgejo's CreateTagProtection): the pattern must be given and readable, not
   * already a rule of the repository, and at least one user or team must be allowed; every name
   * must exist (422 otherwise). Teams are for repositories of organizations only.
   */
  async createTagRule(repo: RepoRow, opts: TagProtectionOptions): Promise<TagProtectionRule> {
    const pattern = checkTagPattern(opts.name_pattern ?? '');
    if (!opts.whitelist_usernames?.length && !opts.whitelist_teams?.length) {
      throw invalidField('whitelist_usernames', 'both whitelist_usernames and whitelist_teams are empty');
    }
    const users = await this.resolveTagUsers(opts.whitelist_usernames ?? []);
    const teams = await this.resolveTagTeams(repo, opts.whitelist_teams ?? []);
    const now = nowUnix();
    const id = await transaction(this.db, async (tx) => {
      if (await store.getTagRuleByPattern(tx, repo.id, pattern)) {
        throw invalidField('name_pattern', `tag protection already exists [name_pattern: ${pattern}]`);
      }
      const id = await store.insertTagRule(tx, {
        repo_id: repo.id,
        name_pattern: pattern,
        created_unix: now,
        updated_unix: now,
      });
      await store.replaceTagWhitelist(tx, id, 'user', users);
      await store.replaceTagWhitelist(tx, id, 'team', teams);
      return id;
    });
    return this.getTagRule(repo, id);
  }

  /** Changes what is present and not null (Forgejo's EditTagProtection); a blank pattern is kept. */
  async editTagRule(repo: RepoRow, id: number, opts: TagProtectionOptions): Promise<TagProtectionRule> {
    const rule = await this.getTagRule(repo, id);
    const pattern = opts.name_pattern?.trim() ? checkTagPattern(opts.name_pattern) : undefined;
    const users =
      opts.whitelist_usernames != null ? await this.resolveTagUsers(opts.whitelist_usernames) : null;
    const teams =
      opts.whitelist_teams != null ? await this.resolveTagTeams(repo, opts.whitelist_teams) : null;
    await transaction(this.db, async (tx) => {
      if (pattern !== undefined && pattern !== rule.name_pattern) {
        if (await store.getTagRuleByPattern(tx, repo.id, pattern)) {
          throw invalidField('name_pattern', `tag protection already exists [name_pattern: ${pattern}]`);
        }
      }
      await store.updateTagRule(tx, rule.id, {
        ...(pattern !== undefined ? { name_pattern: pattern } : {}),
        updated_unix: nowUnix(),
      });
      if (users) await store.replaceTagWhitelist(tx, rule.id, 'user', users);
      if (teams) await store.replaceTagWhitelist(tx, rule.id, 'team', teams);
    });
    return this.getTagRule(repo, rule.id);
  }

  async deleteTagRule(repo: RepoRow, id: number): Promise<void> {
    const rule = await this.getTagRule(repo, id);
    await store.deleteTagRule(this.db, rule.id);
  }

  private async resolveTagUsers(names: string[]): Promise<number[]> {
    const rows = await store.individualsByNames(this.db, names);
    const byName = new Map(rows.map((u) => [u.lower_name, u.id]));
    const ids: number[] = [];
    for (const name of names) {
      const id = byName.get(name.toLowerCase());
      if (id === undefined) throw invalidField('whitelist_usernames', `user does not exist [name: ${name}]`);
      if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  private async resolveTagTeams(repo: RepoRow, names: string[]): Promise<number[]> {
    if (names.length === 0) return [];
    const owner = await this.deps.users.getById(repo.owner_id);
    if (owner?.type !== UserType.Organization) {
      throw invalidField(
        'whitelist_teams',
        'teams can only be allow-listed on repositories of organizations',
      );
    }
    const rows = await store.teamsByNames(this.db, repo.owner_id, repo.id, names);
    const byName = new Map(rows.map((t) => [t.lower_name, t.id]));
    const ids: number[] = [];
    for (const name of names) {
      const id = byName.get(name.toLowerCase());
      if (id === undefined) throw invalidField('whitelist_teams', `team does not exist [name: ${name}]`);
      if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  /**
   * Whether `user` may create, move or delete tag `tag` (Forgejo's IsUserAllowedToControlTag):
   * yes when no rule matches it; otherwise when one of the matching rules allow-lists the user,
   * by name or through one of its teams. Being an administrator does not bypass this.
   */
  async mayControlTag(rules: TagProtectionRule[], tag: string, user: UserRow): Promise<boolean> {
    let allowed = true;
    for (const rule of rules) {
      if (!tagPatternMatches(rule.name_pattern, tag)) continue;
      if (rule.userIds.includes(user.id)) return true;
      if (await store.inAnyTeam(this.db, user.id, rule.teamIds)) return true;
      allowed = false;
    }
    return allowed;
  }

  /** Why `pusher` may not make the tag updates among `updates`, or null when they may. */
  private async tagRefusal(repo: RepoRow, pusher: UserRow, updates: RefUpdate[]): Promise<string | null> {
    const tagUpdates = updates.filter((u) => u.ref.startsWith('refs/tags/'));
    if (tagUpdates.length === 0) return null;
    const rules = await this.listTagRules(repo);
    if (rules.length === 0) return null;
    for (const u of tagUpdates) {
      const tag = u.ref.slice('refs/tags/'.length);
      if (!(await this.mayControlTag(rules, tag, pusher))) return `Tag ${tag} is protected`;
    }
    return null;
  }
}

/** A tag pattern, trimmed: given, at most 255 characters, and readable (422 naming name_pattern). */
function checkTagPattern(raw: string): string {
  const pattern = raw.trim();
  if (!pattern) throw invalidField('name_pattern', 'name_pattern is empty');
  if (pattern.length > 255) throw invalidField('name_pattern', 'must be at most 255 characters');
  try {
    compileTagPattern(pattern);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw invalidField('name_pattern', `the pattern cannot be read: ${reason}`);
  }
  return pattern;
}

/** Paths changed between two commits (both sides of renames). */
async function changedBetween(dir: string, from: string, to: string, env: NodeJS.ProcessEnv) {
  const out = await git(['diff', '--name-only', '-z', '--no-renames', from, to, '--'], { gitDir: dir, env });
  return out.stdout.toString('utf8').split('\0').filter(Boolean);
}

function parseContexts(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function checkCommon(opts: ProtectionOptions): void {
  if (opts.required_approvals != null && opts.required_approvals < 0) {
    throw invalidField('required_approvals', 'must not be negative');
  }
  if (opts.status_check_contexts?.some((c) => !c.trim())) {
    throw invalid('[StatusCheckContexts]: a status check context must not be empty');
  }
}
