// HTTP routes for accounts: /user, /users/*, and the administration of users under /admin/users.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { PagingSettings } from '../http/pagination.js';
import type { OrgService } from '../orgs/service.js';
import type { UserService } from './service.js';
import { signedIn, signedViewer } from '../http/auth.js';
import { PageFields, pageOf, sendPage } from '../http/pagination.js';
import { invalid, notFound } from '../errors.js';
import { UserType } from './tables.js';
import {
  CreateEmailOption,
  CreateUserOption,
  DeleteEmailOption,
  EditUserOption,
  Email,
  User,
  UserSearchResults,
  UserSettings,
  UserSettingsOptions,
  toEmailJson,
  toUserJson,
  toUserSettings,
} from './schemas.js';

const UsernameParams = Type.Object({ username: Type.String() });

export interface UserRoutesDeps {
  users: UserService;
  /** /users/{name} answers for a visible organization too. */
  orgs: Pick<OrgService, 'canSee'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function userRoutes(app: Api, deps: UserRoutesDeps): void {
  const { users, orgs, paging, rootUrl } = deps;
  const json =
    (viewer: Parameters<typeof toUserJson>[1]['viewer']) => (u: Parameters<typeof toUserJson>[0]) =>
      toUserJson(u, { rootUrl, viewer });

  app.get(
    '/user',
    {
      schema: { tags: ['user'], summary: 'Get the authenticated user', response: { 200: User } },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request) => toUserJson(signedIn(request).user, { rootUrl, viewer: signedViewer(request) }),
  );

  app.get(
    '/user/settings',
    {
      schema: {
        tags: ['user'],
        operationId: 'getUserSettings',
        summary: "Get the authenticated user's settings",
        response: { 200: UserSettings },
      },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request) => toUserSettings(signedIn(request).user),
  );

  app.patch(
    '/user/settings',
    {
      schema: {
        tags: ['user'],
        operationId: 'updateUserSettings',
        summary: "Update the authenticated user's settings",
        body: UserSettingsOptions,
        response: { 200: UserSettings },
      },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request) => {
      const b = request.body;
      const updated = await users.updateSettings(signedIn(request).user, {
        fullName: b.full_name,
        description: b.description,
        website: b.website,
        location: b.location,
        pronouns: b.pronouns,
        language: b.language,
        theme: b.theme,
        diffViewStyle: b.diff_view_style,
        enableRepoUnitHints: b.enable_repo_unit_hints,
        hideEmail: b.hide_email,
        hideActivity: b.hide_activity,
        hidePronouns: b.hide_pronouns,
      });
      return toUserSettings(updated);
    },
  );

  app.get(
    '/user/emails',
    {
      schema: {
        tags: ['user'],
        operationId: 'userListEmails',
        summary: "List the authenticated user's email addresses",
        response: { 200: Type.Array(Email) },
      },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request) => {
      const me = signedIn(request).user;
      return (await users.emails(me)).map((e) => toEmailJson(e, me.name));
    },
  );

  app.post(
    '/user/emails',
    {
      schema: {
        tags: ['user'],
        operationId: 'userAddEmail',
        summary: 'Add email addresses',
        description: 'Answers every address of the user, the new ones included.',
        body: CreateEmailOption,
        response: { 201: Type.Array(Email) },
      },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request, reply) => {
      const me = signedIn(request).user;
      const all = await users.addEmails(me, request.body.emails ?? []);
      return reply.code(201).send(all.map((e) => toEmailJson(e, me.name)));
    },
  );

  app.delete(
    '/user/emails',
    {
      schema: {
        tags: ['user'],
        operationId: 'userDeleteEmail',
        summary: 'Delete email addresses',
        body: DeleteEmailOption,
        response: { 204: Type.Null() },
      },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request, reply) => {
      await users.deleteEmails(signedIn(request).user, request.body.emails ?? []);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users/search',
    {
      schema: {
        tags: ['user'],
        summary: 'Search for users',
        querystring: Type.Object({
          ...PageFields,
          q: Type.Optional(Type.String()),
          uid: Type.Optional(Type.Integer()),
        }),
        response: { 200: UserSearchResults },
      },
      config: { auth: { scope: 'user' } },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const result = await users.search(
        { keyword: request.query.q?.trim(), uid: request.query.uid, viewer: request.viewer },
        page,
      );
      return { ok: true, data: sendPage(request, reply, result, page, rootUrl, json(request.viewer)) };
    },
  );

  app.get(
    '/users/:username',
    {
      schema: { tags: ['user'], summary: 'Get a user', params: UsernameParams, response: { 200: User } },
      config: { auth: { scope: 'user' } },
    },
    async (request) => {
      // As in Forgejo, an organization's name answers too (in the User shape), when visible.
      const name = request.params.username;
      const u = await users.requireAccount(name);
      const visible =
        u.type === UserType.Organization
          ? await orgs.canSee(request.viewer, u)
          : users.canSee(request.viewer, u);
      if (!visible) throw notFound(`user does not exist [name: ${name}]`);
      return toUserJson(u, { rootUrl, viewer: request.viewer });
    },
  );

  // Administration

  app.get(
    '/admin/users',
    {
      schema: {
        tags: ['admin'],
        summary: 'List all users',
        querystring: Type.Object({
          ...PageFields,
          source_id: Type.Optional(Type.Integer()),
          login_name: Type.Optional(Type.String()),
          q: Type.Optional(Type.String()),
        }),
        response: { 200: Type.Array(User) },
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const page = pageOf(request.query, paging);
      const result = await users.list(
        {
          type: UserType.Individual,
          loginSource: request.query.source_id,
          loginName: request.query.login_name,
          keyword: request.query.q?.trim(),
        },
        page,
      );
      return sendPage(request, reply, result, page, rootUrl, json(request.viewer));
    },
  );

  for (const [url, operationId, summary] of [
    ['/admin/emails', 'adminGetAllEmails', 'List all emails'],
    ['/admin/emails/search', 'adminSearchEmails', 'Search all emails'],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          tags: ['admin'],
          operationId,
          summary,
          querystring: Type.Object({
            ...PageFields,
            q: Type.Optional(Type.String({ description: 'keyword: part of an address or a user name' })),
          }),
          response: { 200: Type.Array(Email) },
        },
        config: { auth: { scope: 'admin', admin: true } },
      },
      async (request, reply) => {
        const page = pageOf(request.query, paging);
        const result = await users.searchEmails(request.query.q?.trim() || undefined, page);
        return sendPage(request, reply, result, page, rootUrl, (e) => toEmailJson(e, e.name));
      },
    );
  }

  app.post(
    '/admin/users',
    {
      schema: { tags: ['admin'], summary: 'Create a user', body: CreateUserOption, response: { 201: User } },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const b = request.body;
      const created = await users.create({
        username: b.username,
        email: b.email,
        password: b.password,
        fullName: b.full_name,
        loginName: b.login_name,
        sourceId: b.source_id,
        // As in Forgejo, a user created by an administrator must change the password unless told otherwise.
        mustChangePassword: b.must_change_password ?? true,
        restricted: b.restricted,
        visibility: b.visibility,
        createdAt: b.created_at === undefined ? undefined : new Date(b.created_at),
      });
      return reply.code(201).send(toUserJson(created, { rootUrl, viewer: request.viewer }));
    },
  );

  app.patch(
    '/admin/users/:username',
    {
      schema: {
        tags: ['admin'],
        summary: 'Edit an existing user',
        params: UsernameParams,
        body: EditUserOption,
        response: { 200: User },
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request) => {
      const u = await users.requireUser(request.params.username);
      const b = request.body;
      const edited = await users.edit(u, {
        email: b.email,
        fullName: b.full_name,
        loginName: b.login_name,
        sourceId: b.source_id,
        password: b.password,
        mustChangePassword: b.must_change_password,
        website: b.website,
        location: b.location,
        description: b.description,
        pronouns: b.pronouns,
        active: b.active,
        admin: b.admin,
        allowCreateOrganization: b.allow_create_organization,
        maxRepoCreation: b.max_repo_creation,
        prohibitLogin: b.prohibit_login,
        restricted: b.restricted,
        visibility: b.visibility,
      });
      return toUserJson(edited, { rootUrl, viewer: request.viewer });
    },
  );

  app.post(
    '/admin/users/:username/rename',
    {
      schema: {
        tags: ['admin'],
        operationId: 'adminRenameUser',
        summary: 'Rename a user',
        description: 'The former name keeps leading to the user and their repositories until taken.',
        params: UsernameParams,
        body: Type.Object(
          { new_username: Type.String({ description: 'New name of the user, not in use by any account' }) },
          { title: 'RenameUserOption' },
        ),
        response: { 204: Type.Null() },
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const u = await users.requireAccount(request.params.username);
      if (u.type !== UserType.Individual) throw invalid(`${u.name} is an organization not a user`);
      await users.rename(u, request.body.new_username);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/admin/users/:username',
    {
      schema: {
        tags: ['admin'],
        summary: 'Delete a user',
        description:
          'Without purge, a user who still owns repositories or packages or belongs to an organization is refused ' +
          'with 422. With purge, the user is disabled, then their repositories are deleted, they leave every ' +
          'organization, and organizations they were the last owner of are deleted with their repositories.',
        params: UsernameParams,
        querystring: Type.Object({ purge: Type.Optional(Type.Boolean()) }),
        response: { 204: Type.Null() },
      },
      config: { auth: { scope: 'admin', admin: true } },
    },
    async (request, reply) => {
      const u = await users.requireAccount(request.params.username);
      await users.delete(u, { purge: request.query.purge ?? false, doerId: signedIn(request).user.id });
      return reply.code(204).send(null);
    },
  );
}
