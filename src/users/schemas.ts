// Forgejo's User JSON and the user option objects, as TypeBox schemas (validation, serialization
// and the OpenAPI document come from these), and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import { isoTime } from '../http/format.js';
import { visibilityName } from './tables.js';
import type { Viewer } from './tables.js';
import type { EmailRow, UserRow } from './tables.js';
import { avatarPath } from './avatars.js';

export const VisibilityOption = Type.Union(
  [Type.Literal('public'), Type.Literal('limited'), Type.Literal('private')],
  {
    description: 'public, limited or private',
  },
);

export const User = Type.Object(
  {
    id: Type.Integer({ description: "the user's id" }),
    login: Type.String({ description: "the user's username" }),
    login_name: Type.String({ description: "the user's authentication sign-in name" }),
    source_id: Type.Integer(),
    full_name: Type.String(),
    email: Type.String(),
    avatar_url: Type.String(),
    html_url: Type.String(),
    language: Type.String(),
    is_admin: Type.Boolean(),
    last_login: Type.String({ format: 'date-time' }),
    created: Type.String({ format: 'date-time' }),
    restricted: Type.Boolean(),
    active: Type.Boolean(),
    prohibit_login: Type.Boolean(),
    location: Type.String(),
    pronouns: Type.String(),
    website: Type.String(),
    description: Type.String(),
    visibility: Type.String(),
    followers_count: Type.Integer(),
    following_count: Type.Integer(),
    starred_repos_count: Type.Integer(),
    username: Type.String({ description: 'same as login' }),
  },
  { title: 'User', description: 'User represents a user' },
);
export type UserJson = Static<typeof User>;

export const CreateUserOption = Type.Object(
  {
    username: Type.String(),
    email: Type.String({ format: 'email', maxLength: 254 }),
    password: Type.Optional(Type.String({ maxLength: 255 })),
    full_name: Type.Optional(Type.String({ maxLength: 100 })),
    login_name: Type.Optional(Type.String()),
    source_id: Type.Optional(Type.Integer()),
    must_change_password: Type.Optional(Type.Boolean()),
    restricted: Type.Optional(Type.Boolean()),
    send_notify: Type.Optional(Type.Boolean()),
    visibility: Type.Optional(VisibilityOption),
    created_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'explicit creation time, for users migrated from elsewhere',
      }),
    ),
  },
  { title: 'CreateUserOption' },
);

export const EditUserOption = Type.Object(
  {
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    full_name: Type.Optional(Type.String({ maxLength: 100 })),
    login_name: Type.Optional(Type.String()),
    source_id: Type.Optional(Type.Integer()),
    password: Type.Optional(Type.String({ maxLength: 255 })),
    must_change_password: Type.Optional(Type.Boolean()),
    website: Type.Optional(Type.String({ maxLength: 255 })),
    location: Type.Optional(Type.String({ maxLength: 50 })),
    description: Type.Optional(Type.String({ maxLength: 255 })),
    pronouns: Type.Optional(Type.String({ maxLength: 50 })),
    active: Type.Optional(Type.Boolean()),
    admin: Type.Optional(Type.Boolean()),
    allow_git_hook: Type.Optional(Type.Boolean()),
    allow_import_local: Type.Optional(Type.Boolean()),
    allow_create_organization: Type.Optional(Type.Boolean()),
    max_repo_creation: Type.Optional(Type.Integer({ minimum: -1 })),
    prohibit_login: Type.Optional(Type.Boolean()),
    restricted: Type.Optional(Type.Boolean()),
    visibility: Type.Optional(VisibilityOption),
  },
  { title: 'EditUserOption' },
);

export const UserSearchResults = Type.Object({ ok: Type.Boolean(), data: Type.Array(User) });

export interface UserJsonContext {
  rootUrl: string;
  viewer: Viewer | null;
}

const hosts = new Map<string, string>();
const hostOf = (rootUrl: string) => {
  let h = hosts.get(rootUrl);
  if (h === undefined) hosts.set(rootUrl, (h = new URL(rootUrl).hostname));
  return h;
};

/**
 * Row to JSON as Forgejo shows it: the e-mail only to signed-in callers (or a no-reply placeholder),
 * administrative fields only to the user and site administrators.
 */
export function toUserJson(u: UserRow, ctx: UserJsonContext): UserJson {
  const self = ctx.viewer !== null && (ctx.viewer.isAdmin || ctx.viewer.id === u.id);
  const showEmail = ctx.viewer !== null && (!u.keep_email_private || self);
  return {
    id: u.id,
    login: u.name,
    username: u.name,
    login_name: self ? u.login_name : '',
    source_id: self ? u.login_source : 0,
    full_name: u.full_name,
    email: showEmail ? u.email : `${u.lower_name}@noreply.${hostOf(ctx.rootUrl)}`,
    avatar_url: `${ctx.rootUrl}${avatarPath(u)}`,
    html_url: `${ctx.rootUrl}${encodeURIComponent(u.name)}`,
    language: self ? u.language : '',
    is_admin: self ? u.is_admin === 1 : false,
    last_login: isoTime(self ? u.last_login_unix : 0),
    created: isoTime(u.created_unix),
    restricted: u.restricted === 1,
    active: self ? u.is_active === 1 : false,
    prohibit_login: self ? u.prohibit_login === 1 : false,
    location: u.location,
    // Pronouns kept private are shown to signed-in callers only.
    pronouns: u.keep_pronouns_private && ctx.viewer === null ? '' : u.pronouns,
    website: u.website,
    description: u.description,
    visibility: visibilityName(u.visibility),
    followers_count: u.num_followers,
    following_count: u.num_following,
    starred_repos_count: u.num_stars,
  };
}

// Settings and e-mail addresses

export const UserSettings = Type.Object(
  {
    full_name: Type.String(),
    website: Type.String(),
    description: Type.String(),
    location: Type.String(),
    pronouns: Type.String(),
    language: Type.String(),
    theme: Type.String(),
    diff_view_style: Type.String(),
    enable_repo_unit_hints: Type.Boolean(),
    hide_email: Type.Boolean(),
    hide_activity: Type.Boolean(),
    hide_pronouns: Type.Boolean(),
  },
  { title: 'UserSettings', description: 'UserSettings represents user settings' },
);

export const UserSettingsOptions = Type.Object(
  {
    full_name: Type.Optional(Type.String({ maxLength: 100 })),
    website: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 255 })),
    location: Type.Optional(Type.String({ maxLength: 50 })),
    pronouns: Type.Optional(Type.String({ maxLength: 50 })),
    language: Type.Optional(Type.String({ maxLength: 5 })),
    theme: Type.Optional(Type.String({ maxLength: 30 })),
    diff_view_style: Type.Optional(
      Type.Union([Type.Literal(''), Type.Literal('unified'), Type.Literal('split')], {
        description: 'unified or split',
      }),
    ),
    enable_repo_unit_hints: Type.Optional(Type.Boolean()),
    hide_email: Type.Optional(Type.Boolean()),
    hide_activity: Type.Optional(Type.Boolean()),
    hide_pronouns: Type.Optional(Type.Boolean()),
  },
  { title: 'UserSettingsOptions' },
);

export function toUserSettings(u: UserRow): Static<typeof UserSettings> {
  return {
    full_name: u.full_name,
    website: u.website,
    description: u.description,
    location: u.location,
    pronouns: u.pronouns,
    language: u.language,
    // Forgejo's default theme when none was chosen.
    theme: u.theme || 'forgejo-auto',
    diff_view_style: u.diff_view_style,
    enable_repo_unit_hints: u.enable_repo_unit_hints === 1,
    hide_email: u.keep_email_private === 1,
    hide_activity: u.keep_activity_private === 1,
    hide_pronouns: u.keep_pronouns_private === 1,
  };
}

export const Email = Type.Object(
  {
    email: Type.String({ format: 'email' }),
    verified: Type.Boolean(),
    primary: Type.Boolean(),
    user_id: Type.Integer(),
    username: Type.String(),
  },
  { title: 'Email', description: 'Email an email address belonging to a user' },
);

export const CreateEmailOption = Type.Object(
  {
    emails: Type.Optional(Type.Array(Type.String(), { description: 'email addresses to add', maxItems: 50 })),
  },
  { title: 'CreateEmailOption' },
);

export const DeleteEmailOption = Type.Object(
  {
    emails: Type.Optional(
      Type.Array(Type.String(), { description: 'email addresses to delete', maxItems: 50 }),
    ),
  },
  { title: 'DeleteEmailOption' },
);

export function toEmailJson(e: EmailRow, username: string): Static<typeof Email> {
  return {
    email: e.email,
    verified: e.is_activated === 1,
    primary: e.is_primary === 1,
    user_id: e.uid,
    username,
  };
}
