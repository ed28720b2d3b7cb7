import type { Generated } from 'kysely';

export interface QuotaRuleTable {
  name: string;
  /** Bytes; -1 means unlimited. */
  limit_size: number;
  /** JSON array of subject strings. */
  subjects: string;
}

export interface QuotaGroupTable {
  name: string;
}

export interface QuotaGroupRuleTable {
  id: Generated<number>;
  group_name: string;
  rule_name: string;
}

export interface QuotaGroupUserTable {
  id: Generated<number>;
  group_name: string;
  user_id: number;
}

/** Per-owner totals of each stored subject, kept current in the same transaction as each write. */
export interface QuotaUsageTable {
  owner_id: number;
  subject: string;
  size: number;
}

/** A day's sample of an owner's stored total of one subject (the storage overview's history). */
export interface QuotaUsageDailyTable {
  owner_id: number;
  subject: string;
  /** Days since 1970-01-01, UTC. */
  day: number;
  size: number;
}

export interface QuotaTables {
  quota_rule: QuotaRuleTable;
  quota_group: QuotaGroupTable;
  quota_group_rule: QuotaGroupRuleTable;
  quota_group_user: QuotaGroupUserTable;
  quota_usage: QuotaUsageTable;
  quota_usage_daily: QuotaUsageDailyTable;
}
