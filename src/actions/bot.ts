// The actions bot: the account jobs act as with their job token. Its row (id -2, type 2) is made
// by migration 0012; its name is reserved (users/names.ts), so no one can create or take it.
// Events it causes (pushes, comments, dispatches) never trigger workflows.
import { ACTIONS_BOT_NAME } from '../users/names.js';
import type { UserRow } from '../users/tables.js';
import type { UserJson } from '../users/schemas.js';
import { isoTime } from '../http/format.js';

/** The bot's fixed id, negative as Forgejo's actions user (-2): never an ordinary account's. */
export const ACTIONS_BOT_ID = -2;
/** Its account type: neither a person (0) nor an organization (1). */
export const ACTIONS_BOT_TYPE = 2;

export { ACTIONS_BOT_NAME };

export const isActionsBot = (userId: number | null | undefined): boolean => userId === ACTIONS_BOT_ID;

/** The bot's row as the migration writes it, for when it cannot be read (it always can). */
export function botRow(): UserRow {
  return {
    id: ACTIONS_BOT_ID,
    name: ACTIONS_BOT_NAME,
    lower_name: ACTIONS_BOT_NAME,
    full_name: 'Anvil Actions',
    email: `${ACTIONS_BOT_NAME}@noreply.localhost`,
    lower_email: `${ACTIONS_BOT_NAME}@noreply.localhost`,
    keep_email_private: 1,
    passwd: '',
    must_change_password: 0,
    login_name: '',
    login_source: 0,
    type: ACTIONS_BOT_TYPE,
    visibility: 0,
    is_admin: 0,
    is_active: 1,
    prohibit_login: 0,
    restricted: 0,
    allow_create_organization: 0,
    max_repo_creation: 0,
    description: '',
    website: '',
    location: '',
    pronouns: '',
    language: '',
    repo_admin_change_team_access: 0,
    created_unix: 0,
    updated_unix: 0,
    last_login_unix: 0,
    num_followers: 0,
    num_following: 0,
    num_stars: 0,
    keep_activity_private: 0,
    keep_pronouns_private: 0,
    theme: '',
    diff_view_style: '',
    enable_repo_unit_hints: 1,
    avatar: '',
    email_notifications_preference: 'disabled',
  };
}

/** The bot as a User in JSON (what Forgejo shows for its actions user). */
export function botUserJson(rootUrl: string): UserJson {
  const host = new URL(rootUrl).hostname;
  return {
    id: ACTIONS_BOT_ID,
    login: ACTIONS_BOT_NAME,
    username: ACTIONS_BOT_NAME,
    login_name: '',
    source_id: 0,
    full_name: 'Anvil Actions',
    email: `${ACTIONS_BOT_NAME}@noreply.${host}`,
    avatar_url: `${rootUrl}avatars/${ACTIONS_BOT_ID}`,
    html_url: `${rootUrl}${ACTIONS_BOT_NAME}`,
    language: '',
    is_admin: false,
    last_login: isoTime(0),
    created: isoTime(0),
    restricted: false,
    active: false,
    prohibit_login: false,
    location: '',
    pronouns: '',
    website: '',
    description: '',
    visibility: 'public',
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
  };
}
