// Repositories as the API shows them, for any domain that lists repositories (repository lists,
// stars, watches): owners, the viewer's permissions, parents of forks, open counts and pending
// transfers, each loaded in one query for the whole list.
import type { AppContext } from '../app/context.js';
import type { Viewer } from '../users/store.js';
import { toUserJson } from '../users/schemas.js';
import { toTeamJson } from '../orgs/schemas.js';
import type { RepoRow } from './tables.js';
import { teamIdsOf } from './transfer-store.js';
import { toRepoJson, type RepoTransferJson, type RepositoryJson } from './schemas.js';

export async function reposJsonOf(
  ctx: AppContext,
  rows: RepoRow[],
  viewer: Viewer | null,
): Promise<RepositoryJson[]> {
  const rootUrl = ctx.config.server.rootUrl;
  const owners = await ctx.users.getByIds([...new Set(rows.map((r) => r.owner_id))]);
  const [parents, access, counts, topics, languages, transfers, releases] = await Promise.all([
    ctx.forks.parentsJson(rows, viewer),
    ctx.repos.accessMany(rows, viewer, owners),
    ctx.issues.openCounts(rows.map((r) => r.id)),
    ctx.topics.namesOf(rows.map((r) => r.id)),
    ctx.repoMeta.primaryLanguages(rows),
    transfersJsonOf(
      ctx,
      rows.map((r) => r.id),
      viewer,
    ),
    ctx.releases.countsOf(rows.map((r) => r.id)),
  ]);
  return rows.map((r) =>
    toRepoJson(
      r,
      owners.get(r.owner_id)!,
      access.get(r.id)!,
      {
        rootUrl,
        viewer,
        counts: counts.get(r.id),
        releases: releases.get(r.id) ?? 0,
        topics: topics.get(r.id),
        language: languages.get(r.id),
        transfer: transfers.get(r.id),
      },
      parents.get(r.id) ?? null,
    ),
  );
}

/** The pending transfers of `repoIds` as Forgejo's RepoTransfer (teams without their organization). */
async function transfersJsonOf(
  ctx: AppContext,
  repoIds: number[],
  viewer: Viewer | null,
): Promise<Map<number, RepoTransferJson>> {
  const out = new Map<number, RepoTransferJson>();
  const pending = await ctx.repos.pendingTransfers(repoIds);
  if (pending.size === 0) return out;
  const rootUrl = ctx.config.server.rootUrl;
  const rows = [...pending.values()];
  const users = await ctx.users.getByIds([...new Set(rows.flatMap((t) => [t.doer_id, t.recipient_id]))]);
  const teamIds = [...new Set(rows.flatMap((t) => teamIdsOf(t)))];
  const views = await ctx.orgs.teamViews(await ctx.orgs.getTeams(teamIds));
  const teams = new Map(views.map((v) => [v.team.id, toTeamJson(v, null)]));
  for (const t of rows) {
    const doer = users.get(t.doer_id);
    const recipient = users.get(t.recipient_id);
    if (!doer || !recipient) continue;
    out.set(t.repo_id, {
      doer: toUserJson(doer, { rootUrl, viewer }),
      recipient: toUserJson(recipient, { rootUrl, viewer }),
      teams: teamIdsOf(t).flatMap((id) => teams.get(id) ?? []),
    });
  }
  return out;
}
