// Stars, follows and the lists of watchers: who may star (readers of the repository), who may be
// followed (accounts the follower can see), and the counts kept in the same transaction as each
// change. A new repository is watched by its creator ([service] AUTO_WATCH_NEW_REPOS).
import type { AppContext } from '../app/context.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import type { Page } from '../http/pagination.js';
import type { RepoRow } from '../repos/store.js';
import type { UserRow } from '../users/store.js';
import * as store from './store.js';

export class SocialService {
  private readonly db: Db;

  constructor(private readonly ctx: AppContext) {
    this.db = ctx.db;
    if (ctx.config.service.autoWatchNewRepos) {
      ctx.events.on('repository.created', async (e) => {
        const [repo, doer] = await Promise.all([ctx.repos.getById(e.repoId), ctx.users.getById(e.doerId)]);
        if (repo && doer) await ctx.notifications.watch(repo, doer);
      });
    }
  }

  isStarred(user: UserRow, repo: RepoRow): Promise<boolean> {
    return store.isStarred(this.db, user.id, repo.id);
  }

  async star(user: UserRow, repo: RepoRow): Promise<void> {
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

  followers(user: UserRow, page: Page) {
    return store.follows(this.db, user.id, 'followers', page.limit, page.offset);
  }

  following(user: UserRow, page: Page) {
    return store.follows(this.db, user.id, 'following', page.limit, page.offset);
  }
}
