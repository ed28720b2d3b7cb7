// The Activity and UserHeatmapData shapes, as Forgejo sends them.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { User, type UserJson } from '../users/schemas.js';
import { Repository, type RepositoryJson } from '../repos/schemas.js';
import { Comment, type CommentJson } from '../issues/schemas.js';
import type { ActionRow } from './tables.js';

export const Activity = Type.Object({
  id: Type.Integer(),
  user_id: Type.Integer(),
  op_type: Type.String(),
  act_user_id: Type.Integer(),
  act_user: Type.Union([User, Type.Null()]),
  repo_id: Type.Integer(),
  repo: Type.Union([Repository, Type.Null()]),
  comment_id: Type.Integer({ description: 'the id of `comment` (0 without it)' }),
  comment: Type.Union([Comment, Type.Null()], {
    description: 'the comment of a comment entry, when it still exists and the viewer may read it',
  }),
  ref_name: Type.String(),
  is_private: Type.Boolean(),
  content: Type.String(),
  created: Type.String({ format: 'date-time' }),
});
export type ActivityJson = Static<typeof Activity>;

export const HeatmapEntry = Type.Object({ timestamp: Type.Integer(), contributions: Type.Integer() });

export const FeedQuery = Type.Object({
  date: Type.Optional(Type.String({ format: 'date', description: 'the date of the activities to be found' })),
  page: Type.Optional(Type.Integer({ maximum: 2147483647 })),
  limit: Type.Optional(Type.Integer({ maximum: 2147483647 })),
});

export function toActivityJson(
  row: ActionRow,
  /** The feed's user (Forgejo's receiver): the requested user, else the actor. */
  feedUserId: number,
  actor: UserJson | null,
  repo: RepositoryJson | null,
  /** The comment the row names, as the viewer may see it (Forgejo sends comment_id only with it). */
  comment: CommentJson | null = null,
): ActivityJson {
  return {
    id: row.id,
    user_id: feedUserId,
    op_type: row.op_type,
    act_user_id: row.act_user_id,
    act_user: actor,
    repo_id: row.repo_id,
    repo,
    comment_id: comment ? comment.id : 0,
    comment,
    ref_name: row.ref_name,
    is_private: row.is_private === 1,
    content: row.content,
    created: isoTime(row.created_unix),
  };
}
