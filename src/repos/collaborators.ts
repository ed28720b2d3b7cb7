// Collaborators of a repository and the teams given access to it (organization repositories).
import type { Db } from '../db/database.js';
import { invalid } from '../errors.js';
import { AccessMode } from '../orgs/tables.js';
import type { TeamRow } from '../orgs/tables.js';
import { UserType, type UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { RepoRow } from './tables.js';

export interface CollaboratorsDeps {
  db: Db;
}

export class Collaborators {
  private readonly db: Db;

  constructor(deps: CollaboratorsDeps) {
    this.db = deps.db;
  }

  // Collaborators

  listCollaborators(repo: RepoRow, limit: number, offset: number) {
    return store.listCollaborators(this.db, repo.id, limit, offset);
  }

  async setCollaborator(
    repo: RepoRow,
    user: UserRow,
    permission: 'read' | 'write' | 'admin' = 'write',
  ): Promise<void> {
    if (user.type !== UserType.Individual) throw invalid('only individual users can be collaborators');
    if (user.id === repo.owner_id)
      throw invalid('the owner cannot be a collaborator of their own repository');
    await store.setCollaborator(this.db, repo.id, user.id, AccessMode[permission]);
  }

  /** Removes a collaboration; removing someone who is not a collaborator is a no-op, as in Forgejo. */
  async removeCollaborator(repo: RepoRow, user: UserRow): Promise<void> {
    await store.removeCollaborator(this.db, repo.id, user.id);
  }

  isCollaborator(repo: RepoRow, user: UserRow) {
    return store.collaboratorMode(this.db, repo.id, user.id).then((m) => m > 0);
  }

  // Teams

  addTeamRepo(team: TeamRow, repo: RepoRow) {
    if (repo.owner_id !== team.org_id)
      throw invalid("the repository does not belong to the team's organization");
    return store.addTeamRepo(this.db, team.org_id, team.id, repo.id);
  }

  removeTeamRepo(team: TeamRow, repo: RepoRow) {
    return store.removeTeamRepo(this.db, team.id, repo.id);
  }

  /** Adds every repository of the team's organization to the team. */
  addAllTeamRepos(team: TeamRow) {
    return store.addAllTeamRepos(this.db, team.org_id, team.id);
  }

  /** Removes every repository from the team; a team that includes all repositories keeps them. */
  async removeAllTeamRepos(team: TeamRow) {
    if (team.includes_all_repositories) {
      throw invalid(`team '${team.name}' includes all repositories of the organization`);
    }
    await store.removeAllTeamRepos(this.db, team.id);
  }

  /**
   * Gives a team access to its organization's repository or takes it away (Forgejo's AddTeam and
   * DeleteTeam of a repository): 422 when the team already has it, or has not; a team that
   * includes all repositories keeps every one of them.
   */
  async changeTeamAccess(team: TeamRow, repo: RepoRow, add: boolean): Promise<void> {
    const has = await this.teamHasRepo(team, repo);
    if (add) {
      if (has) throw invalid(`team '${team.name}' is already added to repo`);
      await this.addTeamRepo(team, repo);
      return;
    }
    if (!has) throw invalid(`team '${team.name}' was not added to repo`);
    if (team.includes_all_repositories) {
      throw invalid(`team '${team.name}' includes all repositories of the organization`);
    }
    await this.removeTeamRepo(team, repo);
  }

  async teamHasRepo(team: TeamRow, repo: RepoRow): Promise<boolean> {
    if (repo.owner_id !== team.org_id) return false;
    if (team.includes_all_repositories) return true;
    return store.teamHasRepo(this.db, team.id, repo.id);
  }
}
