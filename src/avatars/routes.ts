// Avatar uploads (/user/avatar, /orgs/{org}/avatar, /repos/{owner}/{repo}/avatar: POST sets,
// DELETE goes back to the default) and the images themselves, outside /api/v1: /avatars/{hash} and
// /repo-avatars/{hash} (uploaded, immutable) and /avatars/{id} (an account's identicon).
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config.js';
import type { Api } from '../http/types.js';
import { signedIn, signedViewer } from '../http/auth.js';
import { RepoParams } from '../http/params.js';
import { BODY_LIMIT } from '../http/limits.js';
import { notFound } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import { identicon } from '../users/avatars.js';
import { AVATAR_HASH, type AvatarService } from './service.js';

const UpdateUserAvatarOption = Type.Object(
  { image: Type.String({ description: 'image must be base64 encoded' }) },
  { title: 'UpdateUserAvatarOption' },
);
const UpdateRepoAvatarOption = Type.Object(
  { image: Type.String({ description: 'image must be base64 encoded' }) },
  { title: 'UpdateRepoAvatarOption' },
);
const OrgParams = Type.Object({ org: Type.String() });
const NoContent = { 204: Type.Null() };

export interface AvatarsRoutesDeps {
  avatars: AvatarService;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
  repos: Pick<RepoService, 'requireRepo'>;
  picture: Config['picture'];
}

export function avatarsRoutes(app: Api, deps: AvatarsRoutesDeps): void {
  const { avatars, orgs, repos } = deps;
  // Room for the base64 of the largest image accepted, so a larger one gets the 413 naming `image`.
  const bodyLimit = Math.max(BODY_LIMIT, Math.ceil(deps.picture.avatarMaxFileSize / 3) * 4 + 64 * 1024);

  app.post(
    '/user/avatar',
    {
      bodyLimit,
      schema: {
        tags: ['user'],
        summary: "Update the authenticated user's avatar",
        body: UpdateUserAvatarOption,
        response: NoContent,
      },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request, reply) => {
      await avatars.setUser(signedIn(request).user, request.body.image);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/user/avatar',
    {
      schema: { tags: ['user'], summary: "Delete the authenticated user's avatar", response: NoContent },
      config: { auth: { scope: 'user', require: 'signed' } },
    },
    async (request, reply) => {
      await avatars.deleteUser(signedIn(request).user);
      return reply.code(204).send(null);
    },
  );

  const orgAuth = { scope: 'organization', require: 'signed' } as const;
  app.post(
    '/orgs/:org/avatar',
    {
      bodyLimit,
      schema: {
        tags: ['organization'],
        summary: "Update an organization's avatar",
        params: OrgParams,
        body: UpdateUserAvatarOption,
        response: NoContent,
      },
      config: { auth: orgAuth },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      await avatars.setUser(org, request.body.image);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/orgs/:org/avatar',
    {
      schema: {
        tags: ['organization'],
        summary: "Delete an organization's avatar",
        params: OrgParams,
        response: NoContent,
      },
      config: { auth: orgAuth },
    },
    async (request, reply) => {
      const viewer = signedViewer(request);
      const org = await orgs.requireVisibleOrg(request.params.org, viewer);
      await orgs.requireOwner(org, viewer);
      await avatars.deleteUser(org);
      return reply.code(204).send(null);
    },
  );

  const repoAuth = { scope: 'repository', require: 'signed' } as const;
  app.post(
    '/repos/:owner/:repo/avatar',
    {
      bodyLimit,
      schema: {
        tags: ['repository'],
        summary: "Update a repository's avatar",
        params: RepoParams,
        body: UpdateRepoAvatarOption,
        response: NoContent,
      },
      config: { auth: repoAuth },
    },
    async (request, reply) => {
      const { owner, repo: name } = request.params;
      const { repo } = await repos.requireRepo(owner, name, signedViewer(request), 'admin');
      await avatars.setRepo(repo, request.body.image);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/avatar',
    {
      schema: {
        tags: ['repository'],
        summary: "Delete a repository's avatar",
        params: RepoParams,
        response: NoContent,
      },
      config: { auth: repoAuth },
    },
    async (request, reply) => {
      const { owner, repo: name } = request.params;
      const { repo } = await repos.requireRepo(owner, name, signedViewer(request), 'admin');
      await avatars.deleteRepo(repo);
      return reply.code(204).send(null);
    },
  );
}

/** The images: uploaded ones by content hash (immutable), identicons by account id. */
export function avatarFileRoutes(app: FastifyInstance, deps: { avatars: Pick<AvatarService, 'open'> }): void {
  for (const prefix of ['/avatars', '/repo-avatars']) {
    app.get<{ Params: { id: string } }>(
      `${prefix}/:id`,
      { schema: { hide: true } },
      async (request, reply) => {
        const id = request.params.id;
        reply.header('X-Content-Type-Options', 'nosniff');
        if (prefix === '/avatars' && /^\d{1,16}$/.test(id)) {
          return reply
            .type('image/svg+xml')
            .header('Cache-Control', 'public, max-age=86400')
            .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
            .send(identicon(id));
        }
        if (!AVATAR_HASH.test(id)) throw notFound('no such avatar');
        const image = await deps.avatars.open(id);
        return reply
          .type(image.info.mime)
          .header('Cache-Control', 'public, max-age=31536000, immutable')
          .header('Content-Security-Policy', "default-src 'none'")
          .send(image.data);
      },
    );
  }
}
