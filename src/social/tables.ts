// Tables of the social domain (see db/migrations/0019_social.ts and 0022_user_blocks.ts).
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

/** `user_id` (a person or an organization) blocks `block_id`. */
export interface BlockedUserTable {
  id: Generated<number>;
  block_id: number;
  user_id: number;
  created_unix: number;
}

export interface SocialTables {
  star: StarTable;
  follow: FollowTable;
  forgejo_blocked_user: BlockedUserTable;
}
