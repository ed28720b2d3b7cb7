import { sql, type SelectQueryBuilder } from 'kysely';

/**
 * One page of `query` (which carries its own ORDER BY) and the total number of matching rows,
 * fetched side by side. The count reuses the same joins and filters.
 */
export async function paged<D, T extends keyof D, O>(
  query: SelectQueryBuilder<D, T, O>,
  limit: number,
  offset: number,
): Promise<[O[], number]> {
  const [rows, total] = await Promise.all([
    query.limit(limit).offset(offset).execute(),
    query
      .clearSelect()
      .clearOrderBy()
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return [rows, Number((total as { n: number | string }).n)];
}
