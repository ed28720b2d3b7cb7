import type { Generated, Insertable, Selectable } from 'kysely';

/** Kind of account in the `user` table: people and organizations share it, as in Forgejo. */
export const UserType = { Individual: 0, Organization: 1 } as const;
export type UserTypeValue = (typeof UserType)[keyof typeof UserType];

export const Visibility = { public: 0, limited: 1, private: 2 } as const;
export type VisibilityName = keyof typeof Visibility;
export const visibilityName = (v: number): VisibilityName =>
  v === Visibility.private ? 'private' : v === Visibility.limited ? 'limited' : 'public';

/** Orders of account lists (the site administration's `sort`). */
export const USER_ORDERS = [
  'oldest',
  'newest',
  'alphabetically',
  'reversealphabetically',
  'recentupdate',
  'leastupdate',
] as const;
export type UserOrder = (typeof USER_ORDERS)[number];

/** The administration's status filters of the user list (Forgejo's status_filter[...]); undefined is either. */
export interface UserStatusFilter {
  isActive?: boolean | undefined;
  isAdmin?: boolean | undefined;
  isRestricted?: boolean | undefined;
  is2faEnabled?: boolean | undefined;
  isProhibitLogin?: boolean | undefined;
}

/** Who is looking: decides which limited and private accounts are visible. */
export interface Viewer {
  id: number;
  isAdmin: boolean;
  /** A public-only token sees only public accounts. */
  publicOnly?: boolean;
  /** An actions job token: write access to this one repository, public read elsewhere. */
  repoId?: number;
}

/** Columns with a database default are Generated: optional when inserting. */
export interface UserTable {
  id: Generated<number>;
  name: string;
  lower_name: string;
  full_name: Generated<string>;
  email: string;
  lower_email: string;
  keep_email_private: Generated<number>;
  passwd: Generated<string>;
  must_change_password: Generated<number>;
  login_name: Generated<string>;
  login_source: Generated<number>;
  type: Generated<number>;
  visibility: Generated<number>;
  is_admin: Generated<number>;
  is_active: Generated<number>;
  prohibit_login: Generated<number>;
  restricted: Generated<number>;
  allow_create_organization: Generated<number>;
  max_repo_creation: Generated<number>;
  description: Generated<string>;
  website: Generated<string>;
  location: Generated<string>;
  pronouns: Generated<string>;
  language: Generated<string>;
  repo_admin_change_team_access: Generated<number>;
  num_followers: Generated<number>;
  num_following: Generated<number>;
  num_stars: Generated<number>;
  created_unix: number;
  updated_unix: number;
  last_login_unix: Generated<number>;
  keep_activity_private: Generated<number>;
  keep_pronouns_private: Generated<number>;
  theme: Generated<string>;
  diff_view_style: Generated<string>;
  enable_repo_unit_hints: Generated<number>;
  /** Content hash of the uploaded avatar (db/migrations/0029_avatars.ts); '' for the identicon. */
  avatar: Generated<string>;
  /** Which notification mail the person gets: enabled, onmention, disabled, andyourown (db/migrations/0043_mail.ts). */
  email_notifications_preference: Generated<string>;
}

/** A person's e-mail addresses; the primary one is also user.email. */
export interface EmailAddressTable {
  id: Generated<number>;
  uid: number;
  email: string;
  lower_email: string;
  is_activated: Generated<number>;
  is_primary: Generated<number>;
}

/** A former account name and the account it now leads to. */
export interface UserRedirectTable {
  id: Generated<number>;
  lower_name: string;
  redirect_user_id: number;
}

/** At most one row (id 1): the account that became administrator as the site's first sign-up. */
export interface FirstAdminClaimTable {
  id: number;
  user_id: number;
}

export interface UserTables {
  user: UserTable;
  first_admin_claim: FirstAdminClaimTable;
  email_address: EmailAddressTable;
  user_redirect: UserRedirectTable;
}

export type UserRow = Selectable<UserTable>;
export type NewUserRow = Insertable<UserTable>;
export type EmailRow = Selectable<EmailAddressTable>;
