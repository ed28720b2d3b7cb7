// Repositories as the API shows them, for any domain that lists repositories (repository lists,
// stars, watches): owners, the viewer's permissions, parents of forks and open counts, each loaded
// in one query for the whole list.
import type { AppContext } from '../app/context.js';
import type { Viewer } from '../users/store.js';
import type { RepoRow } from './store.js';
import { toRepoJson, type RepositoryJson } from './schemas.js';

export async function reposJsonOf(
  ctx: AppContext,
  rows: RepoRow[],
  viewer: Viewer | null,
): Promise<RepositoryJson[]> {
  const rootUrl = ctx.config.server.rootUrl;
  const owners = await ctx.users.getByIds([...new Set(rows.map((r) => r.owner_id))]);
  const [parents, access, counts, topics, languages] = await Promise.all([
    ctx.forks.parentsJson(rows, viewer),
    ctx.repos.accessMany(rows, viewer, owners),
    ctx.issues.openCounts(rows.map((r) => r.id)),
    ctx.topics.namesOf(rows.map((r) => r.id)),
    ctx.repoMeta.primaryLanguages(rows),
  ]);
  return rows.map((r) =>
    toRepoJson(
      r,
      owners.get(r.owner_id)!,
      access.get(r.id)!,
      { rootUrl, viewer, counts: counts.get(r.id), topics: topics.get(r.id), language: languages.get(r.id) },
      parents.get(r.id) ?? null,
    ),
  );
}
