// The SSH keys API: a user's own keys (/user/keys), anyone's public keys (/users/{u}/keys),
// administrators adding and removing keys for a user, deploy keys of a repository
// (/repos/{o}/{r}/keys, repository administrators), and /{username}.keys in authorized_keys form.
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { declares } from '../quota/schemas.js';
import type { SshCloneAddress } from '../repos/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { SshKeyService } from './service.js';
import {
  CreateKeyOption,
  DeployKey,
  DeployKeyListQuery,
  KeyListQuery,
  PublicKey,
  toDeployKeyJson,
  toPublicKeyJson,
} from './schemas.js';

const IdParams = Type.Object({ id: Type.Integer({ description: 'id of the key' }) });
const UserParams = Type.Object({ username: Type.String() });
const UserIdParams = Type.Object({ username: Type.String(), id: Type.Integer() });
const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });
const RepoIdParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.Integer() });

export interface SshKeyRoutesDeps {
  sshKeys: SshKeyService;
  users: Pick<UserService, 'requireVisibleUser' | 'requireUser' | 'getById'>;
  repos: Pick<RepoService, 'requireRepo'>;
  paging: PagingSettings;
  rootUrl: string;
  /** Where SSH clone URLs point (the deploy keys' repositories). */
  ssh: SshCloneAddress;
}

export function sshKeyRoutes(app: Api, deps: SshKeyRoutesDeps): void {
  const { sshKeys, users, repos, paging, rootUrl, ssh } = deps;
  const userAuth = { auth: { scope: 'user', require: 'signed' } } as const;
  const repoAuth = { auth: { scope: 'repository', require: 'signed' } } as const;
  const adminAuth = { auth: { scope: 'admin', admin: true } } as const;

  app.get(
    '/user/keys',
    {
      schema: {
        tags: ['user'],
        summary: "List the authenticated user's public keys",
        querystring: KeyListQuery,
        response: { 200: Type.Array(PublicKey), ...declares(401, 403) },
      },
      config: userAuth,
    },
    async (request, reply) => {
      const me = signedIn(request).user;
      const page = pageOf(request.query, paging);
      const result = await sshKeys.listUserKeys(me, page, request.query.fingerprint);
      return sendPage(request, reply, result, page, rootUrl, (k) =>
        toPublicKeyJson(k, me, { rootUrl, viewer: request.viewer }),
      );
    },
  );

  app.post(
    '/user/keys',
    {
      schema: {
        tags: ['user'],
        summary: 'Create a public key',
        description:
          'ed25519, ECDSA and RSA keys are accepted, at least [ssh.minimum_key_sizes] bits (RSA 3071 by ' +
          'default). 422 for a malformed or too small key, or one already added.',
        body: CreateKeyOption,
        response: { 201: PublicKey, ...declares(401, 403, 422) },
      },
      config: userAuth,
    },
    async (request, reply) => {
      const me = signedIn(request).user;
      const key = await sshKeys.addUserKey(me, request.body.title, request.body.key);
      return reply.code(201).send(toPublicKeyJson(key, me, { rootUrl, viewer: request.viewer }));
    },
  );

  app.get(
    '/user/keys/:id',
    {
      schema: {
        tags: ['user'],
        summary: 'Get a public key',
        params: IdParams,
        response: { 200: PublicKey, ...declares(401, 403, 404) },
      },
      config: userAuth,
    },
    async (request) => {
      const me = signedIn(request).user;
      const key = await sshKeys.requireUserKey(me, request.params.id);
      return toPublicKeyJson(key, me, { rootUrl, viewer: request.viewer });
    },
  );

  app.delete(
    '/user/keys/:id',
    {
      schema: {
        tags: ['user'],
        summary: 'Delete a public key',
        params: IdParams,
        response: { 204: Type.Null(), ...declares(401, 403, 404) },
      },
      config: userAuth,
    },
    async (request, reply) => {
      await sshKeys.deleteUserKey(signedIn(request).user, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users/:username/keys',
    {
      schema: {
        tags: ['user'],
        summary: "List the given user's public keys",
        params: UserParams,
        querystring: KeyListQuery,
        response: { 200: Type.Array(PublicKey), ...declares(404) },
      },
      config: { auth: { scope: 'user' } },
    },
    async (request, reply) => {
      const u = await users.requireVisibleUser(request.params.username, request.viewer);
      const page = pageOf(request.query, paging);
      const result = await sshKeys.listUserKeys(u, page, request.query.fingerprint);
      return sendPage(request, reply, result, page, rootUrl, (k) =>
        toPublicKeyJson(k, u, { rootUrl, viewer: request.viewer }),
      );
    },
  );

  app.post(
    '/admin/users/:username/keys',
    {
      schema: {
        tags: ['admin'],
        summary: 'Add a public key on behalf of a user',
        params: UserParams,
        body: CreateKeyOption,
        response: { 201: PublicKey, ...declares(403, 404, 422) },
      },
      config: adminAuth,
    },
    async (request, reply) => {
      const u = await users.requireUser(request.params.username);
      const key = await sshKeys.addUserKey(u, request.body.title, request.body.key);
      return reply.code(201).send(toPublicKeyJson(key, u, { rootUrl, viewer: request.viewer }));
    },
  );

  app.delete(
    '/admin/users/:username/keys/:id',
    {
      schema: {
        tags: ['admin'],
        summary: "Delete a user's public key",
        params: UserIdParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: adminAuth,
    },
    async (request, reply) => {
      const u = await users.requireUser(request.params.username);
      await sshKeys.deleteUserKey(u, request.params.id);
      return reply.code(204).send(null);
    },
  );

  // Deploy keys: repository administrators only (404 when the caller cannot see the repository).
  const repoAdmin = async (request: { params: { owner: string; repo: string }; viewer: never }) =>
    repos.requireRepo(request.params.owner, request.params.repo, request.viewer, 'admin');

  app.get(
    '/repos/:owner/:repo/keys',
    {
      schema: {
        tags: ['repository'],
        summary: "List a repository's deploy keys",
        params: RepoParams,
        querystring: DeployKeyListQuery,
        response: { 200: Type.Array(DeployKey), ...declares(403, 404) },
      },
      config: repoAuth,
    },
    async (request, reply) => {
      const { repo, access } = await repoAdmin(request as never);
      const owner = (await users.getById(repo.owner_id))!;
      const page = pageOf(request.query, paging);
      const result = await sshKeys.listDeployKeys(repo, page, {
        id: request.query.key_id,
        fingerprint: request.query.fingerprint,
      });
      return sendPage(request, reply, result, page, rootUrl, (k) =>
        toDeployKeyJson(k, repo, owner, access, { rootUrl, ssh, viewer: request.viewer }),
      );
    },
  );

  app.post(
    '/repos/:owner/:repo/keys',
    {
      schema: {
        tags: ['repository'],
        summary: 'Add a key to a repository',
        description:
          'A deploy key fetches from this repository (and, with read_only false, pushes to it) and ' +
          'nothing else. read_only defaults to false, as in Forgejo. 422 as for user keys.',
        params: RepoParams,
        body: CreateKeyOption,
        response: { 201: DeployKey, ...declares(403, 404, 422) },
      },
      config: repoAuth,
    },
    async (request, reply) => {
      const { repo, access } = await repoAdmin(request as never);
      const owner = (await users.getById(repo.owner_id))!;
      const b = request.body;
      const key = await sshKeys.addDeployKey(repo, b.title, b.key, b.read_only ?? false);
      return reply
        .code(201)
        .send(toDeployKeyJson(key, repo, owner, access, { rootUrl, ssh, viewer: request.viewer }));
    },
  );

  app.get(
    '/repos/:owner/:repo/keys/:id',
    {
      schema: {
        tags: ['repository'],
        summary: "Get a repository's key by id",
        params: RepoIdParams,
        response: { 200: DeployKey, ...declares(403, 404) },
      },
      config: repoAuth,
    },
    async (request) => {
      const { repo, access } = await repoAdmin(request as never);
      const owner = (await users.getById(repo.owner_id))!;
      const key = await sshKeys.requireDeployKey(repo, request.params.id);
      return toDeployKeyJson(key, repo, owner, access, { rootUrl, ssh, viewer: request.viewer });
    },
  );

  app.delete(
    '/repos/:owner/:repo/keys/:id',
    {
      schema: {
        tags: ['repository'],
        summary: 'Delete a key from a repository',
        params: RepoIdParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: repoAuth,
    },
    async (request, reply) => {
      const { repo } = await repoAdmin(request as never);
      await sshKeys.deleteDeployKey(repo, request.params.id);
      return reply.code(204).send(null);
    },
  );
}

/** `/{username}.keys`: the user's public keys, one authorized_keys line each, as plain text. */
export interface AuthorizedKeysRouteDeps {
  sshKeys: Pick<SshKeyService, 'allUserKeys'>;
  users: Pick<UserService, 'requireVisibleUser'>;
}

export function authorizedKeysRoute(app: FastifyInstance, deps: AuthorizedKeysRouteDeps): void {
  app.get<{ Params: { username: string } }>(
    '/:username.keys',
    { schema: { hide: true } },
    async (request, reply) => {
      // As Forgejo: keys of users anyone may see; other names are 404.
      const u = await deps.users.requireVisibleUser(request.params.username, null).catch(() => undefined);
      if (!u || u.type !== 0) {
        return reply.code(404).type('text/plain; charset=utf-8').send('Not found.\n');
      }
      const keys = await deps.sshKeys.allUserKeys(u);
      return reply.type('text/plain; charset=utf-8').send(keys.map((k) => `${k.content}\n`).join(''));
    },
  );
}
