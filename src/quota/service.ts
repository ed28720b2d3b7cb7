// The quota engine: rules and groups, which groups apply to an owner, usage totals, evaluation and
// recalculation. It counts, stores limits and evaluates; it enforces nothing.
import { transaction, type Db } from '../db/database.js';
import { conflict, invalid, invalidField, notFound } from '../errors.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import {
  explain,
  refusal,
  withinQuota,
  type Group,
  type GroupState,
  type Rule,
  type RuleState,
  type Usage,
} from './evaluate.js';
import { LEAF_SUBJECTS, parseSubject, parseSubjects, type LeafSubject, type Subject } from './subjects.js';
import type { ItemSource, OwnerTotals, SizeCorrection, UsageSource } from './usage.js';
import type { QuotaUsedArtifactJson, QuotaUsedAttachmentJson, QuotaUsedPackageJson } from './schemas.js';
import { faultPoint } from '../faults.js';

export interface QuotaSettings {
  enabled: boolean;
  defaultGroups: string[];
}

export interface ItemSources {
  attachments?: ItemSource<QuotaUsedAttachmentJson>;
  artifacts?: ItemSource<QuotaUsedArtifactJson>;
  packages?: ItemSource<QuotaUsedPackageJson>;
}

/** The item type of one of the lists (attachments, artifacts, packages). */
type ItemOf<K extends keyof ItemSources> =
  NonNullable<ItemSources[K]> extends ItemSource<infer T> ? T : never;

export interface RuleInput {
  name: string;
  limit?: number | undefined;
  subjects?: string[] | undefined;
}

export interface Drift {
  ownerId: number;
  subject: LeafSubject;
  stored: number;
  actual: number;
}

/** What a recalculation found and fixed. */
export interface Recalculation {
  /** Rows whose recorded size disagreed with what was measured (repositories, blobs), corrected. */
  resized: SizeCorrection[];
  /** Per-owner totals that disagreed with the (corrected) rows, corrected. */
  drift: Drift[];
}

export interface QuotaServiceDeps {
  db: Db;
  /** [quota]: whether limits apply, and the groups of accounts in none. */
  settings: QuotaSettings;
  /** The sized things of each domain, for recalculation. */
  usageSources: readonly UsageSource[];
  /** The item lists of /user/quota/* (artifacts, attachments, packages). */
  quotaItems: ItemSources;
}

export class QuotaService {
  private readonly db: Db;
  readonly settings: QuotaSettings;
  private readonly sources: readonly UsageSource[];
  private readonly items: ItemSources;

  constructor(deps: QuotaServiceDeps) {
    this.db = deps.db;
    this.settings = deps.settings;
    this.sources = deps.usageSources;
    this.items = deps.quotaItems;
  }

  // Rules

  listRules(): Promise<Rule[]> {
    return store.listRules(this.db);
  }

  async requireRule(name: string): Promise<Rule> {
    const rule = await store.getRule(this.db, name);
    if (!rule) throw notFound(`quota rule does not exist [name: ${name}]`);
    return rule;
  }

  async createRule(input: RuleInput): Promise<Rule> {
    if (input.limit === undefined) throw invalidField('limit', 'Required');
    const rule: Rule = {
      name: checkName(input.name),
      limit: input.limit,
      subjects: parseSubjects(input.subjects ?? []),
    };
    if (!(await store.insertRule(this.db, rule))) {
      throw conflict(`quota rule already exists [name: ${rule.name}]`);
    }
    return rule;
  }

  async editRule(
    name: string,
    patch: { limit?: number | undefined; subjects?: string[] | undefined },
  ): Promise<Rule> {
    return transaction(this.db, async (tx) => {
      const rule = await store.getRule(tx, name);
      if (!rule) throw notFound(`quota rule does not exist [name: ${name}]`);
      // Every subject is validated before anything is written: a 422 leaves the rule as it was.
      const subjects = patch.subjects === undefined ? undefined : parseSubjects(patch.subjects);
      await store.updateRule(tx, name, { limit: patch.limit, subjects });
      return { ...rule, limit: patch.limit ?? rule.limit, subjects: subjects ?? rule.subjects };
    });
  }

  async deleteRule(name: string): Promise<void> {
    await this.requireRule(name);
    await store.deleteRule(this.db, name);
  }

  // Groups

  listGroups(): Promise<Group[]> {
    return store.groupsWithRules(this.db, 'all');
  }

  async requireGroup(name: string): Promise<Group> {
    const [group] = await store.groupsWithRules(this.db, [name]);
    if (!group) throw notFound(`quota group does not exist [name: ${name}]`);
    return group;
  }

  /**
   * Creates a group and its rules, all or nothing: an existing rule of an entry's name is used
   * unchanged; a missing one is created from the entry (absent limit: 0). Any failure leaves no
   * group and no new rule behind.
   */
  async createGroup(name: string, rules: readonly RuleInput[] = []): Promise<Group> {
    const groupName = checkName(name);
    const entries = rules.map((entry) => ({ ...entry, name: checkName(entry.name, 'rules') }));
    // New rules are added in name order, so that concurrent creations sharing new rule names take
    // their locks in the same order and cannot deadlock.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return transaction(this.db, async (tx) => {
      if (!(await store.insertGroup(tx, groupName))) {
        throw conflict(`quota group already exists [name: ${groupName}]`);
      }
      faultPoint('quota:group-inserted');
      for (const entry of entries) {
        if (!(await store.getRule(tx, entry.name))) {
          // A rule added meanwhile by someone else is then used unchanged, like any existing one.
          await store.insertRule(tx, {
            name: entry.name,
            limit: entry.limit ?? 0,
            subjects: parseSubjects(entry.subjects ?? []),
          });
        }
        await store.addRuleToGroup(tx, groupName, entry.name);
      }
      return (await store.groupsWithRules(tx, [groupName]))[0]!;
    });
  }

  async deleteGroup(name: string): Promise<void> {
    await this.requireGroup(name);
    await store.deleteGroup(this.db, name);
  }

  async addRuleToGroup(groupName: string, ruleName: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      if (!(await store.groupExists(tx, groupName)))
        throw notFound(`quota group does not exist [name: ${groupName}]`);
      if (!(await store.getRule(tx, ruleName)))
        throw invalid(`quota rule does not exist [name: ${ruleName}]`);
      if (!(await store.addRuleToGroup(tx, groupName, ruleName))) {
        throw conflict(`quota rule is already in the group [group: ${groupName}, rule: ${ruleName}]`);
      }
    });
  }

  async removeRuleFromGroup(groupName: string, ruleName: string): Promise<void> {
    await transaction(this.db, async (tx) => {
      if (!(await store.groupExists(tx, groupName)))
        throw notFound(`quota group does not exist [name: ${groupName}]`);
      if (!(await store.groupHasRule(tx, groupName, ruleName))) {
        throw notFound(`quota rule is not in the group [group: ${groupName}, rule: ${ruleName}]`);
      }
      await store.removeRuleFromGroup(tx, groupName, ruleName);
    });
  }

  async usersOfGroup(groupName: string, limit: number, offset: number) {
    await this.requireGroup(groupName);
    return store.usersOfGroup(this.db, groupName, limit, offset);
  }

  async addUserToGroup(groupName: string, user: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.lockOwner(tx, user.id);
      if (!(await store.groupExists(tx, groupName)))
        throw notFound(`quota group does not exist [name: ${groupName}]`);
      if (!(await store.addUserToGroup(tx, groupName, user.id))) {
        throw conflict(`user is already in the quota group [group: ${groupName}, user: ${user.name}]`);
      }
    });
  }

  async removeUserFromGroup(groupName: string, user: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.lockOwner(tx, user.id);
      if (!(await store.groupExists(tx, groupName)))
        throw notFound(`quota group does not exist [name: ${groupName}]`);
      if (!(await store.userInGroup(tx, groupName, user.id))) {
        throw notFound(`user is not in the quota group [group: ${groupName}, user: ${user.name}]`);
      }
      await store.removeUserFromGroup(tx, groupName, user.id);
    });
  }

  /** Replaces the user's whole list of groups; a missing group is a 422 and nothing changes. */
  async setUserGroups(user: UserRow, groups: readonly string[]): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.lockOwner(tx, user.id);
      const unique = [...new Set(groups)];
      for (const g of unique) {
        if (!(await store.groupExists(tx, g))) throw invalid(`quota group does not exist [name: ${g}]`);
      }
      await store.removeUserFromAllGroups(tx, user.id);
      for (const g of unique) await store.addUserToGroup(tx, g, user.id);
    });
  }

  // Evaluation

  /** The groups that apply to an owner: its own, or else the configured default groups. */
  async groupsFor(ownerId: number): Promise<Group[]> {
    const own = await store.groupNamesOfUser(this.db, ownerId);
    return store.groupsWithRules(this.db, own.length ? own : this.settings.defaultGroups);
  }

  async usage(ownerId: number): Promise<Usage> {
    const stored = await store.usageOf(this.db, ownerId);
    const usage: Usage = {};
    for (const leaf of LEAF_SUBJECTS) usage[leaf] = stored.get(leaf) ?? 0;
    return usage;
  }

  /** Whether the owner is within quota for `subject`. Always true when quota is disabled. */
  async check(ownerId: number, subject: string): Promise<boolean> {
    const s: Subject = parseSubject(subject, 'subject');
    if (!this.settings.enabled) return true;
    const [groups, usage] = await Promise.all([this.groupsFor(ownerId), this.usage(ownerId)]);
    return withinQuota(groups, usage, s);
  }

  async info(ownerId: number): Promise<{ groups: Group[]; usage: Usage }> {
    const [groups, usage] = await Promise.all([this.groupsFor(ownerId), this.usage(ownerId)]);
    return { groups, usage };
  }

  /**
   * What the storage overview shows of an owner: its usage, each group that applies with each
   * rule's usage against its limit, and for each kind of upload whether more would be accepted or
   * which group's rules refuse it.
   */
  async overview(ownerId: number): Promise<QuotaOverview> {
    const { groups, usage } = await this.info(ownerId);
    return {
      enabled: this.settings.enabled,
      usage,
      groups: explain(groups, usage),
      uploads: UPLOAD_SUBJECTS.map(({ subject, label }) => ({
        subject,
        label,
        refusedBy: this.settings.enabled ? refusal(groups, usage, subject) : null,
      })),
    };
  }

  /** An owner's daily samples over the last `days` days (the day numbers are days since 1970). */
  history(ownerId: number, days: number, now = Date.now()) {
    return store.history(this.db, ownerId, dayOf(now) - days + 1);
  }

  /** Takes today's sample of every owner's totals (the quota_usage_sample task); rows written. */
  sampleUsage(now = Date.now()): Promise<number> {
    return transaction(this.db, (tx) => store.sampleUsage(tx, dayOf(now)));
  }

  /** The owners storing the most, largest first. */
  topConsumers(limit: number) {
    return store.topConsumers(this.db, limit);
  }

  listItems<K extends keyof ItemSources>(
    kind: K,
    ownerId: number,
    limit: number,
    offset: number,
    bySize = false,
  ): Promise<[ItemOf<K>[], number]> {
    const source = this.items[kind] as ItemSource<ItemOf<K>> | undefined;
    if (!source) return Promise.resolve([[], 0]);
    return source.list(this.db, ownerId, limit, offset, bySize);
  }

  // Recalculation

  /**
   * Measures what the resources really take (each repository on disk, each blob in storage) and
   * corrects the rows whose recorded size disagrees, then recomputes the usage totals from the
   * rows (for one owner or all) and stores them; everything it corrected.
   */
  async reconcile(ownerId?: number): Promise<Recalculation> {
    const resized: SizeCorrection[] = [];
    for (const source of this.sources) {
      if (source.measure) resized.push(...(await source.measure(this.db, ownerId)));
    }
    return { resized, drift: await this.recalculateTotals(ownerId) };
  }

  /** `reconcile`, answering only the drift of the usage totals. */
  async recalculate(ownerId?: number): Promise<Drift[]> {
    return (await this.reconcile(ownerId)).drift;
  }

  /**
   * Read-only: every difference between the stored usage totals and what the resource rows add
   * up to (for one owner or all), changing nothing (`anvil doctor` without --fix).
   */
  drift(ownerId?: number): Promise<Drift[]> {
    return this.recalculateTotals(ownerId, false);
  }

  /**
   * Recomputes usage from the resource tables (for one owner or all), stores the result (unless
   * `write` is false) and returns every difference found between what was stored and what the
   * rows add up to.
   */
  private recalculateTotals(ownerId?: number, write = true): Promise<Drift[]> {
    return transaction(this.db, async (tx) => {
      const actual: OwnerTotals = new Map();
      for (const source of this.sources) {
        for (const [owner, totals] of await source.totals(tx, ownerId)) {
          const into = actual.get(owner) ?? {};
          for (const [subject, size] of Object.entries(totals) as [LeafSubject, number][]) {
            into[subject] = (into[subject] ?? 0) + size;
          }
          actual.set(owner, into);
        }
      }
      const storedAll = await store.usageOfOwners(tx, ownerId);
      const owners = new Set<number>([...storedAll.keys(), ...actual.keys()]);
      if (ownerId !== undefined) owners.add(ownerId);
      const drift: Drift[] = [];
      for (const owner of [...owners].sort((a, b) => a - b)) {
        const stored = storedAll.get(owner) ?? new Map<string, number>();
        const real = actual.get(owner) ?? {};
        for (const subject of LEAF_SUBJECTS) {
          const was = stored.get(subject) ?? 0;
          const is = real[subject] ?? 0;
          if (was !== is) {
            drift.push({ ownerId: owner, subject, stored: was, actual: is });
            if (write) await store.setUsage(tx, owner, subject, is);
          }
        }
      }
      return drift;
    });
  }
}

/** Days since 1970-01-01 (UTC) of a time in milliseconds. */
export const dayOf = (ms: number) => Math.floor(ms / 86_400_000);

/** The kinds of upload the storage overview says would be accepted or refused, and by what. */
export const UPLOAD_SUBJECTS: ReadonlyArray<{ subject: Subject; label: string }> = [
  { subject: 'size:repos:all', label: 'Pushing to a repository' },
  { subject: 'size:git:lfs', label: 'Uploading LFS objects' },
  { subject: 'size:assets:attachments:all', label: 'Attaching files' },
  { subject: 'size:assets:artifacts', label: 'Storing actions artifacts' },
  { subject: 'size:assets:packages:all', label: 'Publishing packages' },
];

export interface QuotaOverview {
  enabled: boolean;
  usage: Usage;
  groups: GroupState[];
  uploads: Array<{
    subject: Subject;
    label: string;
    refusedBy: Array<{ group: string; rules: RuleState[] }> | null;
  }>;
}

function checkName(name: string, field = 'name'): string {
  const trimmed = name.trim();
  if (!trimmed) throw invalidField(field, 'Required');
  if (trimmed.includes('/')) throw invalidField(field, `must not contain "/" [name: ${trimmed}]`);
  return trimmed;
}
