// HTTP routes for releases and their assets under /repos/{owner}/{repo}/releases. Reading follows
// read access to the repository's releases (drafts only for those who may write them); creating,
// editing, deleting and uploading need write access to releases.
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { pageOf, sendPage, type PagingSettings } from '../http/pagination.js';
import type { Config } from '../config/config.js';
import { declares } from '../quota/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import {
  Attachment,
  EditAttachmentOptions,
  ReleaseAttachmentForm,
  UploadQuery,
  toAttachmentJson,
} from '../attachments/schemas.js';
import { receiveUpload, streamedBody, uploadBody, uploadScope } from '../attachments/routes.js';
import type { AttachmentService, Holder } from '../attachments/service.js';
import type { ReleaseService } from './service.js';
import type { ReleaseRow } from './tables.js';
import {
  CreateReleaseOption,
  EditReleaseOption,
  Release,
  ReleaseListQuery,
  toReleaseJson,
} from './schemas.js';

const RepoParams = Type.Object({
  owner: Type.String({ description: 'owner of the repo' }),
  repo: Type.String({ description: 'name of the repo' }),
});
const IdParams = Type.Object({
  ...RepoParams.properties,
  id: Type.Integer({ description: 'id of the release' }),
});
const TagParams = Type.Object({
  ...RepoParams.properties,
  '*': Type.String({ description: "tag name of the release ('/' as is or as %2F)" }),
});
const AssetParams = Type.Object({
  ...IdParams.properties,
  attachment_id: Type.Integer({ description: 'id of the attachment' }),
});

export interface ReleasesRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  releases: ReleaseService;
  attachments: AttachmentService;
  /** [attachment] MAX_SIZE and MAX_FILES of an upload. */
  uploadLimits: Pick<Config['attachment'], 'maxSize' | 'maxFiles'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function releasesRoutes(app: Api, deps: ReleasesRoutesDeps): void {
  const { repos, releases, attachments, users, uploadLimits, paging, rootUrl } = deps;
  const tags = ['repository'];
  const read: RouteAuth = { scope: 'repository' };
  const write: RouteAuth = { scope: 'repository', require: 'signed' };

  /** The repository for reading releases, and whether the caller sees drafts. */
  async function forRead(request: FastifyRequest, p: { owner: string; repo: string }) {
    const { repo, access } = await repos.requireRepo(
      p.owner,
      p.repo,
      request.viewer,
      'read',
      'repo.releases',
    );
    releases.assertEnabled(repo);
    return { repo, seeDrafts: releases.canWrite(access, request.identity) };
  }

  /** The repository for changing releases (403 for readers, 404 for outsiders). */
  async function forWrite(request: FastifyRequest, p: { owner: string; repo: string }) {
    const { repo } = await repos.requireRepo(p.owner, p.repo, request.viewer, 'write', 'repo.releases');
    releases.assertEnabled(repo);
    return { repo, doer: signedIn(request).user, seeDrafts: true };
  }

  /** Releases as JSON: publishers and assets of the whole list fetched in two queries. */
  async function releasesJson(request: FastifyRequest, repo: RepoRow, rows: ReleaseRow[]) {
    const ids = [...new Set(rows.map((r) => r.publisher_id))];
    const [owner, publishers, assets] = await Promise.all([
      users.getById(repo.owner_id),
      users.getByIds(ids),
      attachments.ofReleases(rows.map((r) => r.id)),
    ]);
    const links = {
      rootUrl,
      fullName: `${encodeURIComponent(owner!.name)}/${encodeURIComponent(repo.name)}`,
      viewer: request.viewer,
    };
    return rows.map((r) => toReleaseJson(r, publishers.get(r.publisher_id), assets.get(r.id) ?? [], links));
  }

  const one = async (request: FastifyRequest, repo: RepoRow, row: ReleaseRow) =>
    (await releasesJson(request, repo, [row]))[0]!;

  app.get(
    '/repos/:owner/:repo/releases',
    {
      schema: {
        tags,
        summary: "List a repo's releases",
        description: 'Newest first. Drafts are listed only for those who may write releases.',
        params: RepoParams,
        querystring: ReleaseListQuery,
        response: { 200: Type.Array(Release), ...declares(404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo, seeDrafts } = await forRead(request, request.params);
      const q = request.query;
      const page = pageOf({ page: q.page, limit: q.limit ?? q.per_page }, paging);
      const [rows, total] = await releases.list(
        repo,
        seeDrafts,
        { draft: q.draft, prerelease: q['pre-release'], keyword: q.q?.trim() },
        page,
      );
      return sendPage(
        request,
        reply,
        [await releasesJson(request, repo, rows), total],
        page,
        rootUrl,
        (j) => j,
      );
    },
  );

  app.post(
    '/repos/:owner/:repo/releases',
    {
      schema: {
        tags,
        summary: 'Create a release',
        description:
          'Unless it is a draft, a tag that does not exist is created at target_commitish (the default branch when empty; 404 when it names no commit). 409 when the tag already has a release, 422 for an empty repository.',
        params: RepoParams,
        body: CreateReleaseOption,
        response: { 201: Release, ...declares(403, 404, 409, 422) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo, doer } = await forWrite(request, request.params);
      const b = request.body;
      const row = await releases.create(repo, doer, {
        tagName: b.tag_name,
        target: b.target_commitish,
        title: b.name,
        note: b.body,
        isDraft: b.draft,
        isPrerelease: b.prerelease,
        hideArchiveLinks: b.hide_archive_links,
      });
      return reply.code(201).send(await one(request, repo, row));
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/latest',
    {
      schema: {
        tags,
        summary:
          'Gets the most recent non-prerelease, non-draft release of a repository, sorted by created_at',
        params: RepoParams,
        response: { 200: Release, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await forRead(request, request.params);
      return one(request, repo, await releases.latest(repo));
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/tags/*',
    {
      schema: {
        tags,
        summary: 'Get a release by tag name',
        params: TagParams,
        response: { 200: Release, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo, seeDrafts } = await forRead(request, request.params);
      return one(request, repo, await releases.getByTag(repo, request.params['*'], seeDrafts));
    },
  );

  app.delete(
    '/repos/:owner/:repo/releases/tags/*',
    {
      schema: {
        tags,
        summary: 'Delete a release by tag name',
        description: 'The tag itself stays.',
        params: TagParams,
        response: { 204: Type.Null(), ...declares(403, 404, 422) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo, doer } = await forWrite(request, request.params);
      await releases.delete(repo, await releases.getByTag(repo, request.params['*'], true), doer);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/releases/:id',
    {
      schema: {
        tags,
        summary: 'Get a release',
        params: IdParams,
        response: { 200: Release, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo, seeDrafts } = await forRead(request, request.params);
      return one(request, repo, await releases.get(repo, request.params.id, seeDrafts));
    },
  );

  app.patch(
    '/repos/:owner/:repo/releases/:id',
    {
      schema: {
        tags,
        summary: 'Update a release',
        description: 'Empty strings leave fields unchanged. Publishing a draft creates its tag when missing.',
        params: IdParams,
        body: EditReleaseOption,
        response: { 200: Release, ...declares(403, 404, 409, 422) },
      },
      config: { auth: write },
    },
    async (request) => {
      const { repo, doer } = await forWrite(request, request.params);
      const release = await releases.get(repo, request.params.id, true);
      const b = request.body;
      const row = await releases.edit(repo, doer, release, {
        tagName: b.tag_name,
        target: b.target_commitish,
        title: b.name,
        note: b.body,
        isDraft: b.draft,
        isPrerelease: b.prerelease,
        hideArchiveLinks: b.hide_archive_links,
      });
      return one(request, repo, row);
    },
  );

  app.delete(
    '/repos/:owner/:repo/releases/:id',
    {
      schema: {
        tags,
        summary: 'Delete a release',
        description: 'Its assets are deleted; the tag stays.',
        params: IdParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { repo, doer } = await forWrite(request, request.params);
      await releases.delete(repo, await releases.get(repo, request.params.id, true), doer);
      return reply.code(204).send(null);
    },
  );

  // Assets

  /** The release of an asset route as an attachment holder. */
  async function holderOf(
    request: FastifyRequest,
    p: { owner: string; repo: string; id: number },
    need: 'read' | 'write',
  ): Promise<{ holder: Holder; doer: UserRow | undefined }> {
    const { repo, seeDrafts } = need === 'write' ? await forWrite(request, p) : await forRead(request, p);
    if (need === 'write') releases.assertWritable(repo);
    const release = await releases.get(repo, p.id, seeDrafts);
    return {
      holder: { kind: 'release', repo, releaseId: release.id },
      doer: need === 'write' ? signedIn(request).user : undefined,
    };
  }

  app.get(
    '/repos/:owner/:repo/releases/:id/assets',
    {
      schema: {
        tags,
        summary: "List release's attachments",
        params: IdParams,
        response: { 200: Type.Array(Attachment), ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { holder } = await holderOf(request, request.params, 'read');
      return (await attachments.list(holder)).map((a) => toAttachmentJson(a, rootUrl));
    },
  );

  uploadScope(app, uploadLimits, (scope) => {
    scope.post(
      '/repos/:owner/:repo/releases/:id/assets',
      {
        ...streamedBody,
        schema: {
          tags,
          summary: 'Create a release attachment',
          description:
            'The file in the multipart field `attachment` (named by `name`, else by its file name), or the raw ' +
            'body (`name` required), or a link in the form field `external_url`. 413 when the file is larger ' +
            'than [attachment] MAX_SIZE or the owner is over quota.',
          consumes: ['multipart/form-data', 'application/octet-stream'],
          params: IdParams,
          querystring: UploadQuery,
          body: uploadBody(ReleaseAttachmentForm, true),
          response: { 201: Attachment, ...declares(400, 403, 404, 413) },
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { holder, doer } = await holderOf(request, request.params, 'write');
        const a = await receiveUpload(attachments, request, holder, doer!, { raw: true, external: true });
        return reply.code(201).send(toAttachmentJson(a, rootUrl));
      },
    );
  });

  app.get(
    '/repos/:owner/:repo/releases/:id/assets/:attachment_id',
    {
      schema: {
        tags,
        summary: 'Get a release attachment',
        params: AssetParams,
        response: { 200: Attachment, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { holder } = await holderOf(request, request.params, 'read');
      return toAttachmentJson(await attachments.require(holder, request.params.attachment_id), rootUrl);
    },
  );

  app.patch(
    '/repos/:owner/:repo/releases/:id/assets/:attachment_id',
    {
      schema: {
        tags,
        summary: 'Edit a release attachment',
        description: 'Answers 201, as Forgejo does.',
        params: AssetParams,
        body: EditAttachmentOptions,
        response: { 201: Attachment, ...declares(400, 403, 404, 422) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { holder } = await holderOf(request, request.params, 'write');
      const a = await attachments.require(holder, request.params.attachment_id);
      const edited = await attachments.edit(holder, a, {
        name: request.body.name,
        downloadUrl: request.body.browser_download_url,
      });
      return reply.code(201).send(toAttachmentJson(edited, rootUrl));
    },
  );

  app.delete(
    '/repos/:owner/:repo/releases/:id/assets/:attachment_id',
    {
      schema: {
        tags,
        summary: 'Delete a release attachment',
        params: AssetParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const { holder } = await holderOf(request, request.params, 'write');
      await attachments.delete(await attachments.require(holder, request.params.attachment_id));
      return reply.code(204).send(null);
    },
  );
}
