// Stars, follows, blocks and the lists of watchers: who may star (readers of the repository), who
// may be followed (accounts the follower can see), and the counts kept in the same transaction as
// each change. (Watching a repository is the notifications domain's.)
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { Page } from '../http/pagination.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import { forbidden } from '../errors.js';

export interface SocialServiceDeps {
  db: Db;
}

export class SocialService {
  private readonly db: Db;

  constructor(deps: SocialServiceDeps) {
    this.db = deps.db;
  }

  isStarred(user: UserRow, repo: RepoRow): Promise<boolean> {
    return store.isStarred(this.db, user.id, repo.id);
  }

  async star(user: UserRow, repo: RepoRow): Promise<void> {
    await this.assertNotBlocked(repo.owner_id, user.id);
    await transaction(this.db, async (tx) => {
      await store.addStar(tx, user.id, repo.id, nowUnix());
      await store.recountStars(tx, user.id, repo.id);
    });
  }

  async unstar(user: UserRow, repo: RepoRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.removeStar(tx, user.id, repo.id);
      await store.recountStars(tx, user.id, repo.id);
    });
  }

  stargazers(repo: RepoRow, page: Page) {
    return store.stargazers(this.db, repo.id, page.limit, page.offset);
  }

  watchers(repo: RepoRow, page: Page) {
    return store.watchers(this.db, repo.id, page.limit, page.offset);
  }

  isFollowing(user: UserRow, target: UserRow): Promise<boolean> {
    return store.isFollowing(this.db, user.id, target.id);
  }

  /** Follows `target` (following oneself does nothing, as in Forgejo). */
  async follow(user: UserRow, target: UserRow): Promise<void> {
    if (user.id === target.id) return;
    await this.assertNotBlocked(target.id, user.id);
    await transaction(this.db, async (tx) => {
      await store.addFollow(tx, user.id, target.id, nowUnix());
      await store.recountFollows(tx, user.id, target.id);
    });
  }

  async unfollow(user: UserRow, target: UserRow): Promise<void> {
    await transaction(this.db, async (tx) => {
      await store.removeFollow(tx, user.id, target.id);
      await store.recountFollows(tx, user.id, target.id);
    });
  }

  // Blocks

  /** Whether `owner` (a person or an organization) blocks the user `doerId`. */
  isBlocked(ownerId: number, doerId: number): Promise<boolean> {
    return ownerId === doerId ? Promise.resolve(false) : store.isBlocked(this.db, ownerId, doerId);
  }

  /**
   * Refuses (403) what a user blocked by `ownerId` tries in its repositories or on its account:
   * starring, watching, following, opening issues and pull requests, commenting, reacting.
   */
  async assertNotBlocked(ownerId: number, doerId: number): Promise<void> {
    if (await this.isBlocked(ownerId, doerId)) {
      throw forbidden('You have been blocked by the owner of this resource.');
    }
  }

  /**
   * `blocker` blocks `user`, as Forgejo does: neither follows the other any more, and the blocked
   * user's stars, watches and collaborations in the blocker's repositories go. Blocking oneself, or
   * someone already blocked, changes nothing.
   */
  async block(blocker: UserRow, user: UserRow): Promise<void> {
    if (blocker.id === user.id) return;
    await transaction(this.db, async (tx) => {
      if (await store.isBlocked(tx, blocker.id, user.id)) return;
      await store.addBlock(tx, blocker.id, user.id, nowUnix());
      for (const [a, b] of [
        [blocker.id, user.id],
        [user.id, blocker.id],
      ] as const) {
        await store.removeFollow(tx, a, b);
        await store.recountFollows(tx, a, b);
      }
      await store.dropTiesToRepos(tx, blocker.id, user.id);
    });
  }

  async unblock(blocker: UserRow, user: UserRow): Promise<void> {
    await store.removeBlock(this.db, blocker.id, user.id);
  }

  blocked(blocker: UserRow, page: Page) {
    return store.blocked(this.db, blocker.id, page.limit, page.offset);
  }

  followers(user: UserRow, page: Page) {
    return store.follows(this.db, user.id, 'followers', page.limit, page.offset);
  }

  following(user: UserRow, page: Page) {
    return store.follows(this.db, user.id, 'following', page.limit, page.offset);
  }
}
