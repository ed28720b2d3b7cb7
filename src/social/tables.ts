// Tables of the social domain (see db/migrations/0019_social.ts).
import type { Generated } from 'kysely';

export interface StarTable {
  id: Generated<number>;
  uid: number;
  repo_id: number;
  created_unix: number;
}

export interface FollowTable {
  id: Generated<number>;
  /** Who follows. */
  user_id: number;
  /** Whom. */
  follow_id: number;
  created_unix: number;
}

export interface SocialTables {
  star: StarTable;
  follow: FollowTable;
}
