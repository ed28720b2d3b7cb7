// The pull requests whose review is requested from a user (the dashboard's "review requested" list
// and the API's issue search with review_requested=true) are found by the reviewer.
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema
    .createIndex('pull_review_reviewer_type')
    .on('pull_review')
    .columns(['reviewer_id', 'type'])
    .execute();
}
