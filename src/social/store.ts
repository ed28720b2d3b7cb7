// Queries on stars and follows. Counts are recomputed from the rows in the writing transaction.
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { UserRow } from '../users/tables.js';

type Q = Db | Tx;

export async function isStarred(q: Q, uid: number, repoId: number): Promise<boolean> {
  const r = await q
    .selectFrom('star')
    .select('id')
    .where('uid', '=', uid)
    .where('repo_id', '=', repoId)
    .executeTakeFirst();
  return r !== undefined;
}

export async function addStar(q: Q, uid: number, repoId: number, now: number): Promise<void> {
  await q
    .insertInto('star')
    .values({ uid, repo_id: repoId, created_unix: now })
    .onConflict((oc) => oc.columns(['uid', 'repo_id']).doNothing())
    .execute();
}

export async function removeStar(q: Q, uid: number, repoId: number): Promise<void> {
  await q.deleteFrom('star').where('uid', '=', uid).where('repo_id', '=', repoId).execute();
}

/** Sets repository.num_stars and the user's num_stars from the star rows. */
export async function recountStars(q: Q, uid: number, repoId: number): Promise<void> {
  await q
    .updateTable('repository')
    .set({
      num_stars: (eb) =>
        eb.selectFrom('star').select(eb.fn.countAll<number>().as('n')).where('star.repo_id', '=', repoId),
    })
    .where('id', '=', repoId)
    .execute();
  await q
    .updateTable('user')
    .set({
      num_stars: (eb) =>
        eb.selectFrom('star').select(eb.fn.countAll<number>().as('n')).where('star.uid', '=', uid),
    })
    .where('id', '=', uid)
    .execute();
}

/** Users who starred a repository, newest first. */
export function stargazers(
  q: Q,
  repoId: number,
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  return paged(
    q
      .selectFrom('star')
      .innerJoin('user', 'user.id', 'star.uid')
      .selectAll('user')
      .where('star.repo_id', '=', repoId)
      .orderBy('star.created_unix', 'desc')
      .orderBy('star.id', 'desc'),
    limit,
    offset,
  ) as Promise<[UserRow[], number]>;
}

/** Users watching a repository. */
export function watchers(q: Q, repoId: number, limit: number, offset: number): Promise<[UserRow[], number]> {
  return paged(
    q
      .selectFrom('watch')
      .innerJoin('user', 'user.id', 'watch.user_id')
      .selectAll('user')
      .where('watch.repo_id', '=', repoId)
      .orderBy('watch.created_unix', 'desc')
      .orderBy('user.id'),
    limit,
    offset,
  ) as Promise<[UserRow[], number]>;
}

export async function isFollowing(q: Q, userId: number, followId: number): Promise<boolean> {
  const r = await q
    .selectFrom('follow')
    .select('id')
    .where('user_id', '=', userId)
    .where('follow_id', '=', followId)
    .executeTakeFirst();
  return r !== undefined;
}

export async function addFollow(q: Q, userId: number, followId: number, now: number): Promise<void> {
  await q
    .insertInto('follow')
    .values({ user_id: userId, follow_id: followId, created_unix: now })
    .onConflict((oc) => oc.columns(['user_id', 'follow_id']).doNothing())
    .execute();
}

export async function removeFollow(q: Q, userId: number, followId: number): Promise<void> {
  await q.deleteFrom('follow').where('user_id', '=', userId).where('follow_id', '=', followId).execute();
}

/** Sets num_following of the follower and num_followers of the followed from the follow rows. */
export async function recountFollows(q: Q, userId: number, followId: number): Promise<void> {
  await q
    .updateTable('user')
    .set({
      num_following: (eb) =>
        eb.selectFrom('follow').select(eb.fn.countAll<number>().as('n')).where('follow.user_id', '=', userId),
    })
    .where('id', '=', userId)
    .execute();
  await q
    .updateTable('user')
    .set({
      num_followers: (eb) =>
        eb
          .selectFrom('follow')
          .select(eb.fn.countAll<number>().as('n'))
          .where('follow.follow_id', '=', followId),
    })
    .where('id', '=', followId)
    .execute();
}

/** The followers (`side` = 'followers') or the followed (`'following'`) of a user, newest first. */
export function follows(
  q: Q,
  userId: number,
  side: 'followers' | 'following',
  limit: number,
  offset: number,
): Promise<[UserRow[], number]> {
  const [mine, theirs] =
    side === 'followers' ? (['follow_id', 'user_id'] as const) : (['user_id', 'follow_id'] as const);
  return paged(
    q
      .selectFrom('follow')
      .innerJoin('user', 'user.id', `follow.${theirs}`)
      .selectAll('user')
      .where(`follow.${mine}`, '=', userId)
      .orderBy('follow.created_unix', 'desc')
      .orderBy('follow.id', 'desc'),
    limit,
    offset,
  ) as Promise<[UserRow[], number]>;
}

// Blocks

export async function isBlocked(q: Q, userId: number, blockId: number): Promise<boolean> {
  const r = await q
    .selectFrom('forgejo_blocked_user')
    .select('id')
    .where('user_id', '=', userId)
    .where('block_id', '=', blockId)
    .executeTakeFirst();
  return r !== undefined;
}

export async function addBlock(q: Q, userId: number, blockId: number, now: number): Promise<void> {
  await q
    .insertInto('forgejo_blocked_user')
    .values({ user_id: userId, block_id: blockId, created_unix: now })
    .onConflict((oc) => oc.columns(['user_id', 'block_id']).doNothing())
    .execute();
}

export async function removeBlock(q: Q, userId: number, blockId: number): Promise<void> {
  await q
    .deleteFrom('forgejo_blocked_user')
    .where('user_id', '=', userId)
    .where('block_id', '=', blockId)
    .execute();
}

export function blocked(
  q: Q,
  userId: number,
  limit: number,
  offset: number,
): Promise<[Array<{ block_id: number; created_unix: number }>, number]> {
  return paged(
    q
      .selectFrom('forgejo_blocked_user')
      .select(['block_id', 'created_unix'])
      .where('user_id', '=', userId)
      .orderBy('id', 'desc'),
    limit,
    offset,
  );
}

/**
 * What a block undoes in `ownerId`'s repositories: the blocked user's stars, watches and
 * collaborations there (counts recomputed for the repositories touched).
 */
export async function dropTiesToRepos(q: Q, ownerId: number, blockedId: number): Promise<void> {
  const repoIds = (
    await q.selectFrom('repository').select('id').where('owner_id', '=', ownerId).execute()
  ).map((r) => r.id);
  if (repoIds.length === 0) return;
  const starred = (
    await q
      .selectFrom('star')
      .select('repo_id')
      .where('uid', '=', blockedId)
      .where('repo_id', 'in', repoIds)
      .execute()
  ).map((r) => r.repo_id);
  const watched = (
    await q
      .selectFrom('watch')
      .select('repo_id')
      .where('user_id', '=', blockedId)
      .where('repo_id', 'in', repoIds)
      .execute()
  ).map((r) => r.repo_id);
  if (starred.length) {
    await q.deleteFrom('star').where('uid', '=', blockedId).where('repo_id', 'in', starred).execute();
    for (const repoId of starred) await recountStars(q, blockedId, repoId);
  }
  if (watched.length) {
    await q.deleteFrom('watch').where('user_id', '=', blockedId).where('repo_id', 'in', watched).execute();
    for (const repoId of watched) {
      await q
        .updateTable('repository')
        .set({
          num_watches: (eb) =>
            eb
              .selectFrom('watch')
              .select(eb.fn.countAll<number>().as('n'))
              .where('watch.repo_id', '=', repoId),
        })
        .where('id', '=', repoId)
        .execute();
    }
  }
  await q
    .deleteFrom('collaboration')
    .where('user_id', '=', blockedId)
    .where('repo_id', 'in', repoIds)
    .execute();
}
