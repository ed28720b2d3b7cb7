// Queries on topics and the repositories that carry them. No HTTP here.
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { TopicRow } from './tables.js';

type Q = Db | Tx;

/** The topic names of each repository, in one query. */
export async function namesOf(q: Q, repoIds: number[]): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  if (repoIds.length === 0) return out;
  const rows = await q
    .selectFrom('repo_topic')
    .innerJoin('topic', 'topic.id', 'repo_topic.topic_id')
    .select(['repo_topic.repo_id', 'topic.name'])
    .where('repo_topic.repo_id', 'in', repoIds)
    .orderBy('topic.name')
    .execute();
  for (const r of rows) {
    const list = out.get(r.repo_id) ?? [];
    list.push(r.name);
    out.set(r.repo_id, list);
  }
  return out;
}

/** Makes `names` exactly the repository's topics; topics' counts follow (unused ones go). */
export async function replace(q: Q, repoId: number, names: string[], now: number): Promise<void> {
  const before = await q.selectFrom('repo_topic').select('topic_id').where('repo_id', '=', repoId).execute();
  await q.deleteFrom('repo_topic').where('repo_id', '=', repoId).execute();
  const ids: number[] = [];
  for (const name of names) {
    await q
      .insertInto('topic')
      .values({ name, created_unix: now, updated_unix: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const t = await q.selectFrom('topic').select('id').where('name', '=', name).executeTakeFirstOrThrow();
    ids.push(t.id);
  }
  if (ids.length)
    await q
      .insertInto('repo_topic')
      .values(ids.map((topic_id) => ({ repo_id: repoId, topic_id })))
      .execute();
  const touched = [...new Set([...before.map((b) => b.topic_id), ...ids])];
  if (touched.length === 0) return;
  await q
    .updateTable('topic')
    .set({
      repo_count: (eb) =>
        eb
          .selectFrom('repo_topic')
          .select(eb.fn.countAll<number>().as('n'))
          .whereRef('repo_topic.topic_id', '=', 'topic.id'),
      updated_unix: now,
    })
    .where('id', 'in', touched)
    .execute();
  await q.deleteFrom('topic').where('id', 'in', touched).where('repo_count', '=', 0).execute();
}

/** Topics whose name contains `keyword` (all when empty), most used first. */
export function search(q: Q, keyword: string, limit: number, offset: number): Promise<[TopicRow[], number]> {
  let s = q.selectFrom('topic');
  if (keyword) s = s.where('name', 'like', `%${keyword.toLowerCase().replace(/\\/g, '')}%`);
  return paged(s.selectAll().orderBy('repo_count', 'desc').orderBy('name'), limit, offset);
}
