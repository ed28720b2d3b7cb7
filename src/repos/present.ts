// Repositories as the API shows them, for any domain that lists repositories (repository lists,
// stars, watches, forks, pull requests, webhooks): owners, the viewer's permissions, parents of
// forks, open counts and pending transfers, each loaded in one query for the whole list.
import type { OrgService } from '../orgs/service.js';
import { toTeamJson } from '../orgs/schemas.js';
import type { UserService } from '../users/service.js';
import { toUserJson } from '../users/schemas.js';
import type { Viewer } from '../users/tables.js';
import type { RepoService } from './service.js';
import type { RepoRow } from './tables.js';
import { teamIdsOf } from './transfer-store.js';
import type { RepoTransfers } from './transfers.js';
import { toRepoJson, type RepoTransferJson, type RepositoryJson, type SshCloneAddress } from './schemas.js';

export type ParentJson = Omit<RepositoryJson, 'parent'>;

/** Open issues and pull requests per repository (the issues domain). */
export interface OpenCounts {
  openCounts(repoIds: number[]): Promise<Map<number, { issues: number; pulls: number }>>;
}

/** Topic names per repository (the topics domain). */
export interface TopicNames {
  namesOf(repoIds: number[]): Promise<Map<number, string[]>>;
}

/** The largest language of each repository's default branch (repometa). */
export interface PrimaryLanguages {
  primaryLanguages(rows: RepoRow[]): Promise<Map<number, string>>;
}

/** Published releases per repository (the releases domain). */
export interface ReleaseCounts {
  countsOf(repoIds: number[]): Promise<Map<number, number>>;
}

export interface RepoPresenterDeps {
  rootUrl: string;
  /** Where SSH clone URLs point ([server] SSH_USER, SSH_DOMAIN, SSH_PORT). */
  ssh: SshCloneAddress;
  users: Pick<UserService, 'getByIds'>;
  orgs: Pick<OrgService, 'teamViews' | 'getTeams'>;
  repos: Pick<RepoService, 'accessMany' | 'getByIds'>;
  transfers: Pick<RepoTransfers, 'pendingTransfers'>;
  issues: OpenCounts;
  topics: TopicNames;
  languages: PrimaryLanguages;
  releases: ReleaseCounts;
}

export class RepoPresenter {
  constructor(private readonly deps: RepoPresenterDeps) {}

  async repoJson(repo: RepoRow, viewer: Viewer | null): Promise<RepositoryJson> {
    return (await this.reposJson([repo], viewer))[0]!;
  }

  /** Repositories as Forgejo's Repository JSON, as every repository list shows them. */
  async reposJson(rows: RepoRow[], viewer: Viewer | null): Promise<RepositoryJson[]> {
    const { deps } = this;
    const { rootUrl, ssh } = deps;
    const owners = await deps.users.getByIds([...new Set(rows.map((r) => r.owner_id))]);
    const [parents, access, counts, topics, languages, transfers, releases] = await Promise.all([
      this.parentsJson(rows, viewer),
      deps.repos.accessMany(rows, viewer, owners),
      deps.issues.openCounts(rows.map((r) => r.id)),
      deps.topics.namesOf(rows.map((r) => r.id)),
      deps.languages.primaryLanguages(rows),
      this.transfersJson(
        rows.map((r) => r.id),
        viewer,
      ),
      deps.releases.countsOf(rows.map((r) => r.id)),
    ]);
    return rows.map((r) =>
      toRepoJson(
        r,
        owners.get(r.owner_id)!,
        access.get(r.id)!,
        {
          rootUrl,
          ssh,
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

  /**
   * The `parent` of each fork among `rows` that `viewer` may read, by fork id. Parents, their
   * owners and the viewer's access to them are fetched in a fixed number of queries.
   */
  async parentsJson(rows: RepoRow[], viewer: Viewer | null): Promise<Map<number, ParentJson>> {
    const { deps } = this;
    const out = new Map<number, ParentJson>();
    const forks = rows.filter((r) => r.is_fork && r.fork_id !== null);
    if (forks.length === 0) return out;
    const parents = await deps.repos.getByIds([...new Set(forks.map((r) => r.fork_id!))]);
    const owners = await deps.users.getByIds([...new Set([...parents.values()].map((p) => p.owner_id))]);
    const { rootUrl, ssh } = deps;
    const access = await deps.repos.accessMany([...parents.values()], viewer, owners);
    const json = new Map<number, ParentJson | null>();
    for (const p of parents.values()) {
      const a = access.get(p.id)!;
      if (a.mode < 1) {
        json.set(p.id, null);
        continue;
      }
      const { parent: _, ...fields } = toRepoJson(p, owners.get(p.owner_id)!, a, { rootUrl, ssh, viewer });
      json.set(p.id, fields);
    }
    for (const f of forks) {
      const p = json.get(f.fork_id!);
      if (p) out.set(f.id, p);
    }
    return out;
  }

  /** The pending transfers of `repoIds` as Forgejo's RepoTransfer (teams without their organization). */
  private async transfersJson(
    repoIds: number[],
    viewer: Viewer | null,
  ): Promise<Map<number, RepoTransferJson>> {
    const { deps } = this;
    const out = new Map<number, RepoTransferJson>();
    const pending = await deps.transfers.pendingTransfers(repoIds);
    if (pending.size === 0) return out;
    const rootUrl = deps.rootUrl;
    const rows = [...pending.values()];
    const users = await deps.users.getByIds([...new Set(rows.flatMap((t) => [t.doer_id, t.recipient_id]))]);
    const teamIds = [...new Set(rows.flatMap((t) => teamIdsOf(t)))];
    const views = await deps.orgs.teamViews(await deps.orgs.getTeams(teamIds));
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
}
