// Repository transfers (Forgejo's StartRepositoryTransfer, accept and reject): a move the doer may
// make alone happens at once; any other waits as a pending `repo_transfer` row (transfer-store.ts)
// until the recipient accepts or rejects it. The move itself (usage, hooks, owner, redirects) is
// RepoService.moveOwner, inside this file's transaction.
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { uniqueViolation } from '../db/retry.js';
import { conflict, forbidden, invalidField, notFound } from '../errors.js';
import type { EventBus } from '../events/bus.js';
import * as orgStore from '../orgs/store.js';
import { AccessMode } from '../orgs/tables.js';
import * as socialStore from '../social/store.js';
import * as userStore from '../users/store.js';
import type { Viewer } from '../users/tables.js';
import { UserType, type UserRow } from '../users/tables.js';
import type { RepoAccess } from './access.js';
import * as store from './store.js';
import type { RepoRow, RepoTransferRow } from './tables.js';
import * as transferStore from './transfer-store.js';

/** What transfers need of RepoService. */
export interface TransferRepos {
  access(repo: RepoRow, viewer: Viewer | null): Promise<RepoAccess>;
  canCreateIn(doer: UserRow, owner: UserRow): Promise<boolean>;
  moveOwner(tx: Tx, current: RepoRow, newOwnerId: number): Promise<void>;
}

export interface RepoTransfersDeps {
  db: Db;
  events: EventBus;
  repos: TransferRepos;
}

export class RepoTransfers {
  private readonly db: Db;
  private readonly events: EventBus;
  private readonly repos: TransferRepos;

  constructor(deps: RepoTransfersDeps) {
    this.db = deps.db;
    this.events = deps.events;
    this.repos = deps.repos;
  }

  /**
   * Forgejo's StartRepositoryTransfer: moves the repository at once when the doer is a site
   * administrator, the new owner themself, or may create repositories in the new owner (an
   * organization); otherwise records a pending transfer the recipient accepts or rejects (the
   * recipient gets read access meanwhile, and is notified). `pending` tells which happened.
   */
  async startTransfer(
    repo: RepoRow,
    doer: UserRow,
    newOwner: UserRow,
    teamIds: number[] = [],
  ): Promise<{ repo: RepoRow; pending: boolean }> {
    await this.checkTransfer(repo, newOwner, teamIds);
    if (await transferStore.getPending(this.db, repo.id)) {
      throw conflict('repository is already being transferred');
    }
    if (doer.is_admin || doer.id === newOwner.id) {
      return { repo: await this.transferNow(repo, newOwner, teamIds), pending: false };
    }
    if (await socialStore.isBlocked(this.db, newOwner.id, doer.id)) {
      throw forbidden('the new owner has blocked you');
    }
    if (newOwner.type === UserType.Organization && (await this.repos.canCreateIn(doer, newOwner))) {
      return { repo: await this.transferNow(repo, newOwner, teamIds), pending: false };
    }
    if (newOwner.type !== UserType.Individual && newOwner.type !== UserType.Organization) {
      throw forbidden(`${newOwner.name} cannot own repositories`);
    }
    const needsRead =
      newOwner.type === UserType.Individual &&
      (await this.repos.access(repo, { id: newOwner.id, isAdmin: newOwner.is_admin === 1 })).mode <
        AccessMode.read;
    const now = nowUnix();
    try {
      await transaction(this.db, async (tx) => {
        if (await transferStore.getPending(tx, repo.id)) {
          throw conflict('repository is already being transferred');
        }
        if (await store.getByOwnerAndName(tx, newOwner.name, repo.name)) {
          throw invalidField('new_owner', 'The repository with the same name already exists.');
        }
        // The recipient must be able to see what they are asked to accept.
        if (needsRead) await store.setCollaborator(tx, repo.id, newOwner.id, AccessMode.read);
        await transferStore.insert(tx, {
          doer_id: doer.id,
          recipient_id: newOwner.id,
          repo_id: repo.id,
          team_ids: JSON.stringify([...new Set(teamIds)]),
          created_unix: now,
          updated_unix: now,
        });
      });
    } catch (err) {
      if (uniqueViolation(err)) throw conflict('repository is already being transferred');
      throw err;
    }
    await this.events.emit('repository.transfer_pending', {
      repoId: repo.id,
      doerId: doer.id,
      recipientId: newOwner.id,
    });
    return { repo: (await store.getById(this.db, repo.id))!, pending: true };
  }

  /** The repository's pending transfer; 404 when there is none. */
  async requirePendingTransfer(repo: RepoRow): Promise<RepoTransferRow> {
    const t = await transferStore.getPending(this.db, repo.id);
    if (!t) throw notFound('no pending repository transfer');
    return t;
  }

  /** The pending transfers of `repoIds`, by repository id. */
  pendingTransfers(repoIds: number[]) {
    return transferStore.pendingOf(this.db, repoIds);
  }

  /**
   * Forgejo's CanUserAcceptOrRejectTransfer: the recipient themself, or for an organization
   * whoever may create repositories in it.
   */
  private async assertCanAnswer(t: RepoTransferRow, user: UserRow): Promise<UserRow> {
    const recipient = await userStore.getById(this.db, t.recipient_id);
    const allowed =
      recipient !== undefined &&
      (recipient.type === UserType.Organization
        ? await this.repos.canCreateIn(user, recipient)
        : recipient.id === user.id);
    if (!allowed) throw forbidden('you cannot accept or reject this repository transfer');
    return recipient;
  }

  /** The recipient accepts the pending transfer: the repository moves (as asked by its doer). */
  async acceptTransfer(repo: RepoRow, user: UserRow): Promise<RepoRow> {
    const t = await this.requirePendingTransfer(repo);
    const recipient = await this.assertCanAnswer(t, user);
    const teamIds = transferStore.teamIdsOf(t).filter(Boolean);
    // Teams deleted since the transfer was asked are left out.
    const teams = [];
    for (const id of teamIds) if (await orgStore.getTeam(this.db, id)) teams.push(id);
    return this.transferNow(repo, recipient, teams, t.id);
  }

  /** The recipient rejects the pending transfer: it is forgotten, the repository stays. */
  async rejectTransfer(repo: RepoRow, user: UserRow): Promise<RepoRow> {
    const t = await this.requirePendingTransfer(repo);
    await this.assertCanAnswer(t, user);
    if (!(await transferStore.remove(this.db, repo.id))) throw notFound('no pending repository transfer');
    return (await store.getById(this.db, repo.id))!;
  }

  /** The checks every transfer passes first: the teams (as Forgejo, before anything), the owner. */
  private async checkTransfer(repo: RepoRow, newOwner: UserRow, teamIds: number[]): Promise<void> {
    // The teams first, as Forgejo: only organizations have teams, and only their own.
    if (teamIds.length && newOwner.type !== UserType.Organization) {
      throw invalidField('team_ids', 'teams can only be added to organization-owned repositories');
    }
    for (const teamId of new Set(teamIds)) {
      const team = await orgStore.getTeam(this.db, teamId);
      if (!team) throw invalidField('team_ids', `team does not exist [id: ${teamId}]`);
      if (team.org_id !== newOwner.id) throw forbidden(`team ${teamId} does not belong to ${newOwner.name}`);
    }
    if (newOwner.id === repo.owner_id)
      throw invalidField('new_owner', 'the repository already belongs to this owner');
  }

  /**
   * Moves a repository to another owner; its usage moves with it. `pendingId`: the pending
   * transfer being accepted, which must still be there (and goes in the same transaction).
   */
  private async transferNow(
    repo: RepoRow,
    newOwner: UserRow,
    teamIds: number[],
    pendingId?: number,
  ): Promise<RepoRow> {
    return transaction(this.db, async (tx) => {
      if (pendingId !== undefined) {
        const t = await transferStore.getPending(tx, repo.id);
        if (!t || t.id !== pendingId) throw notFound('no pending repository transfer');
      }
      if (await store.getByOwnerAndName(tx, newOwner.name, repo.name)) {
        throw invalidField('new_owner', 'The repository with the same name already exists.');
      }
      await transferStore.remove(tx, repo.id);
      // The row as it is now: a push may have changed the size since the request began.
      const current = (await store.getById(tx, repo.id))!;
      if (current.owner_id === newOwner.id)
        throw invalidField('new_owner', 'the repository already belongs to this owner');
      await this.repos.moveOwner(tx, current, newOwner.id);
      // The new owner needs no collaboration on its own repository.
      await tx
        .deleteFrom('collaboration')
        .where('repo_id', '=', repo.id)
        .where('user_id', '=', newOwner.id)
        .execute();
      await tx.deleteFrom('team_repo').where('repo_id', '=', repo.id).execute();
      for (const teamId of new Set(teamIds)) await store.addTeamRepo(tx, newOwner.id, teamId, repo.id);
      return (await store.getById(tx, repo.id))!;
    });
  }
}
