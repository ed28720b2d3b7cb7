// Queries on repository flags. No HTTP here.
import type { Db, Tx } from '../db/database.js';

type Q = Db | Tx;

/** The repository's flags, by name. */
export async function flags(q: Q, repoId: number): Promise<string[]> {
  const rows = await q
    .selectFrom('repo_flag')
    .select('name')
    .where('repo_id', '=', repoId)
    .orderBy('name')
    .execute();
  return rows.map((r) => r.name);
}

export async function hasFlag(q: Q, repoId: number, name: string): Promise<boolean> {
  const row = await q
    .selectFrom('repo_flag')
    .select('id')
    .where('repo_id', '=', repoId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row !== undefined;
}

/** Adds a flag; nothing when the repository has it already. */
export async function addFlag(q: Q, repoId: number, name: string): Promise<void> {
  await q
    .insertInto('repo_flag')
    .values({ repo_id: repoId, name })
    .onConflict((oc) => oc.columns(['repo_id', 'name']).doNothing())
    .execute();
}

export async function deleteFlag(q: Q, repoId: number, name: string): Promise<void> {
  await q.deleteFrom('repo_flag').where('repo_id', '=', repoId).where('name', '=', name).execute();
}

/** Makes `names` (distinct) exactly the repository's flags. */
export async function replaceFlags(q: Q, repoId: number, names: string[]): Promise<void> {
  await q.deleteFrom('repo_flag').where('repo_id', '=', repoId).execute();
  if (names.length) {
    await q
      .insertInto('repo_flag')
      .values(names.map((name) => ({ repo_id: repoId, name })))
      .execute();
  }
}
