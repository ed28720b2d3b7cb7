// HTTP routes of GPG keys (/user/gpg_keys, /user/gpg_key_token, /user/gpg_key_verify,
// /users/{username}/gpg_keys) and of the instance's signing key (/signing-key.gpg, /signing-key.ssh,
// /repos/{owner}/{repo}/signing-key.gpg: 404 when Anvil does not sign).
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import { notFound } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import { UserType } from '../users/tables.js';
import type { SigningService } from './service.js';
import { CreateGPGKeyOption, GPGKey, VerifyGPGKeyOption, toGpgKeyJson } from './schemas.js';

const IdParams = Type.Object({ id: Type.Integer({ description: 'id of the key' }) });
const TEXT = 'text/plain; charset=utf-8';

export interface SigningRoutesDeps {
  signing: SigningService;
  users: Pick<UserService, 'requireAccount' | 'canSee'>;
  orgs: Pick<OrgService, 'canSee'>;
  repos: Pick<RepoService, 'requireRepo'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function signingRoutes(app: Api, deps: SigningRoutesDeps): void {
  const { signing, users, orgs, repos, paging, rootUrl } = deps;
  const own: RouteAuth = { scope: 'user', require: 'signed' };
  const tags = ['user'];
  const activated = (uid: number) => signing.activated(uid);

  app.get(
    '/user/gpg_keys',
    {
      schema: {
        tags,
        summary: "List the authenticated user's GPG keys",
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(GPGKey) },
      },
      config: { auth: own },
    },
    async (request, reply) => {
      const me = signedIn(request).user;
      const page = pageOf(request.query, paging);
      const emails = await activated(me.id);
      return sendPage(request, reply, await signing.listKeys(me, page), page, rootUrl, (k) =>
        toGpgKeyJson(k, emails),
      );
    },
  );

  app.post(
    '/user/gpg_keys',
    {
      schema: {
        tags,
        summary: 'Create a GPG key',
        description:
          "One of the key's user IDs must be an activated address of the user (else 404), unless " +
          'armored_signature signs the token of /user/gpg_key_token with the key (the key is then verified). ' +
          '422 for a malformed key or one whose id is already registered.',
        body: CreateGPGKeyOption,
        response: { 201: GPGKey },
      },
      config: { auth: own },
    },
    async (request, reply) => {
      const me = signedIn(request).user;
      const key = await signing.addKey(me, request.body.armored_public_key, request.body.armored_signature);
      return reply.code(201).send(toGpgKeyJson(key, await activated(me.id)));
    },
  );

  app.get(
    '/user/gpg_keys/:id',
    {
      schema: { tags, summary: 'Get a GPG key', params: IdParams, response: { 200: GPGKey } },
      config: { auth: own },
    },
    async (request) => {
      const me = signedIn(request).user;
      return toGpgKeyJson(await signing.getKey(me, request.params.id), await activated(me.id));
    },
  );

  app.delete(
    '/user/gpg_keys/:id',
    {
      schema: {
        tags,
        summary: 'Remove a GPG key',
        description: "404 for a key that is not the user's own (site administrators may remove any).",
        params: IdParams,
        response: { 204: Type.Null() },
      },
      config: { auth: own },
    },
    async (request, reply) => {
      await signing.deleteKey(signedIn(request).user, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/user/gpg_key_token',
    {
      schema: {
        tags,
        summary: 'Get a Token to verify',
        description:
          'The text to sign (gpg --armor --detach-sign) for /user/gpg_key_verify; it changes every minute.',
        response: { 200: Type.String() },
      },
      config: { auth: own },
    },
    async (request, reply) => reply.type(TEXT).send(signing.tokens(signedIn(request).user)[0]),
  );

  app.post(
    '/user/gpg_key_verify',
    {
      schema: {
        tags,
        summary: 'Verify a GPG key',
        description:
          "Marks the user's key key_id verified when armored_signature signs the current token with it (else 422).",
        body: VerifyGPGKeyOption,
        response: { 201: GPGKey },
      },
      config: { auth: own },
    },
    async (request, reply) => {
      const me = signedIn(request).user;
      const key = await signing.verifyKey(me, request.body.key_id, request.body.armored_signature);
      return reply.code(201).send(toGpgKeyJson(key, await activated(me.id)));
    },
  );

  app.get(
    '/users/:username/gpg_keys',
    {
      schema: {
        tags,
        summary: "List the given user's GPG keys",
        params: Type.Object({ username: Type.String() }),
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(GPGKey) },
      },
      config: { auth: { scope: 'user' } },
    },
    async (request, reply) => {
      const name = request.params.username;
      const u = await users.requireAccount(name);
      const org = u.type === UserType.Organization;
      if (!(org ? await orgs.canSee(request.viewer, u) : users.canSee(request.viewer, u)))
        throw notFound(`user does not exist [name: ${name}]`);
      const page = pageOf(request.query, paging);
      // Organizations have no keys (Forgejo answers them an empty list).
      if (org) return sendPage(request, reply, [[], 0], page, rootUrl, (k: never) => k);
      const emails = await activated(u.id);
      return sendPage(request, reply, await signing.listKeys(u, page), page, rootUrl, (k) =>
        toGpgKeyJson(k, emails),
      );
    },
  );

  // The instance's signing key

  const gpgKey = async () => {
    const k = await signing.instance.publicGpg();
    if (!k) throw notFound('this instance does not sign with a GPG key');
    return k.armored;
  };

  app.get(
    '/signing-key.gpg',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Get default signing-key.gpg',
        description: '404 when the instance does not sign with a GPG key ([repository.signing]).',
        response: { 200: Type.String({ description: 'GPG armored public key' }) },
      },
    },
    async (_request, reply) => reply.type(TEXT).send(await gpgKey()),
  );

  app.get(
    '/signing-key.ssh',
    {
      schema: {
        tags: ['miscellaneous'],
        summary: 'Get default signing-key.ssh',
        description: '404 when the instance does not sign with an SSH key ([repository.signing] FORMAT ssh).',
        response: { 200: Type.String({ description: 'SSH public key in OpenSSH authorized key format' }) },
      },
    },
    async (_request, reply) => {
      const k = signing.instance.publicSsh();
      if (!k) throw notFound('this instance does not sign with an SSH key');
      return reply.type(TEXT).send(`${k.line}\n`);
    },
  );

  app.get(
    '/repos/:owner/:repo/signing-key.gpg',
    {
      schema: {
        tags: ['repository'],
        summary: 'Get signing-key.gpg for given repository',
        description:
          "The instance's key (Anvil signs every repository's merges with it); 404 when it signs none.",
        params: Type.Object({ owner: Type.String(), repo: Type.String() }),
        response: { 200: Type.String({ description: 'GPG armored public key' }) },
      },
      config: { auth: { scope: 'repository' } },
    },
    async (request, reply) => {
      await repos.requireRepo(request.params.owner, request.params.repo, request.viewer, 'read');
      return reply.type(TEXT).send(await gpgKey());
    },
  );
}
