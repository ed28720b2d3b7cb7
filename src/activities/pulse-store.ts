// Counts for a repository's activity page (Forgejo's /{owner}/{repo}/activity): one aggregate query
// per kind over the period, each on the repository's rows. No HTTP here.
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export interface PulseCounts {
  mergedPulls: number;
  openedPulls: number;
  closedIssues: number;
  openedIssues: number;
  unresolvedConversations: number;
  releases: number;
}

const n = (v: unknown) => Number(v ?? 0);

export async function pulseCounts(db: Db, repoId: number, since: number): Promise<PulseCounts> {
  const [issues, merged, convo, releases] = await Promise.all([
    db
      .selectFrom('issue')
      .select([
        sql<number>`sum(case when is_pull = 1 and created_unix >= ${since} then 1 else 0 end)`.as(
          'opened_pulls',
        ),
        sql<number>`sum(case when is_pull = 0 and created_unix >= ${since} then 1 else 0 end)`.as(
          'opened_issues',
        ),
        sql<number>`sum(case when is_pull = 0 and is_closed = 1 and closed_unix >= ${since} then 1 else 0 end)`.as(
          'closed_issues',
        ),
      ])
      .where('repo_id', '=', repoId)
      .where((eb) => eb.or([eb('created_unix', '>=', since), eb('closed_unix', '>=', since)]))
      .executeTakeFirst(),
    db
      .selectFrom('pull_request')
      .select((eb) => eb.fn.countAll<number>().as('c'))
      .where('base_repo_id', '=', repoId)
      .where('has_merged', '=', 1)
      .where('merged_unix', '>=', since)
      .executeTakeFirst(),
    // Open issues and pull requests updated in the period (Forgejo's "unresolved conversations").
    db
      .selectFrom('issue')
      .select((eb) => eb.fn.countAll<number>().as('c'))
      .where('repo_id', '=', repoId)
      .where('is_closed', '=', 0)
      .where('updated_unix', '>=', since)
      .where('created_unix', '<', since)
      .executeTakeFirst(),
    db
      .selectFrom('release')
      .select((eb) => eb.fn.countAll<number>().as('c'))
      .where('repo_id', '=', repoId)
      .where('is_draft', '=', 0)
      .where('is_tag', '=', 0)
      .where('created_unix', '>=', since)
      .executeTakeFirst(),
  ]);
  return {
    mergedPulls: n(merged?.c),
    openedPulls: n(issues?.opened_pulls),
    closedIssues: n(issues?.closed_issues),
    openedIssues: n(issues?.opened_issues),
    unresolvedConversations: n(convo?.c),
    releases: n(releases?.c),
  };
}
