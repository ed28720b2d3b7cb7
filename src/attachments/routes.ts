// HTTP for attachments: the upload scope the asset routes of releases, issues and comments live in
// (multipart bodies streamed part by part, raw bodies streamed as they come), the upload handler
// they share, and the download of an attachment's bytes at the server root, /attachments/{uuid}.
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import contentDisposition from 'content-disposition';
import rangeParser from 'range-parser';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { Type, type Static } from 'typebox';
import { viewerOf, type Authenticator } from '../auth/identity.js';
import type { Config } from '../config/config.js';
import { AppError, badRequest, forbidden, notFound } from '../errors.js';
import { signedIn, type RouteAuth } from '../http/auth.js';
import { validatorCompiler } from '../http/validation.js';
import type { Api } from '../http/types.js';
import { canWriteIssues, type IssueService, type RepoView } from '../issues/service.js';
import type { IssueRow } from '../issues/tables.js';
import { AccessMode } from '../orgs/tables.js';
import { declares } from '../quota/schemas.js';
import type { RepoService } from '../repos/service.js';
import { hasScope } from '../tokens/scopes.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import {
  Attachment,
  AttachmentForm,
  EditAttachmentOptions,
  UploadQuery,
  toAttachmentJson,
} from './schemas.js';
import type { AttachmentRow, AttachmentService, Holder, Staged } from './service.js';
import { readMultipart, readingClientStream } from './upload.js';

/** Types a browser may show inline; everything else is downloaded as a file. */
const INLINE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
};

/**
 * Registers the routes `declare` adds in a scope of their own that reads uploads as streams:
 * multipart/form-data through @fastify/multipart (limits from [attachment]), any other body as
 * the raw request stream. Bodies are never buffered, and only these routes parse them this way.
 */
export function uploadScope(
  app: Api,
  limits: Pick<Config['attachment'], 'maxSize' | 'maxFiles'>,
  declare: (scope: Api) => void,
): void {
  const { maxSize, maxFiles } = limits;
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    await scope.register(multipart, {
      // One byte over the limit is enough to know the file is too large (UploadGate answers 413).
      limits: {
        fileSize: maxSize + 1,
        files: maxFiles,
        fields: 20,
        parts: maxFiles + 20,
        fieldSize: 1 << 20,
      },
      throwFileSizeLimit: false,
    });
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    declare(scope as unknown as Api);
  });
}

const baseValidator = validatorCompiler();

/**
 * Route options for an upload: the body schema only describes the form for the API description;
 * the body itself is a stream read by the handler, so it is not validated here.
 */
export const streamedBody: Pick<RouteShorthandOptions, 'validatorCompiler'> = {
  validatorCompiler: (req) => (req.httpPart === 'body' ? () => true : baseValidator(req)),
};

/** The body schema of an upload, per content type, for the API description. */
export function uploadBody(form: object, raw: boolean) {
  return {
    content: {
      'multipart/form-data': { schema: form },
      ...(raw ? { 'application/octet-stream': { schema: Type.String({ format: 'binary' }) } } : {}),
    },
  };
}

export interface UploadOptions {
  /** Whether a non-multipart body is the file itself (release assets, named by `?name=`). */
  raw: boolean;
  /** Whether the form may give an `external_url` instead of a file (release assets). */
  external: boolean;
}

/**
 * Receives an upload for `holder` as Forgejo's asset endpoints take it: the multipart field
 * `attachment` (named by `?name=` or its file name) or, where allowed, a raw body or an
 * `external_url` form field. Quota and the enabled switch are checked before the body is read.
 */
export async function receiveUpload(
  svc: Pick<AttachmentService, 'assertCanUpload' | 'stage' | 'discard' | 'commit' | 'addExternal'>,
  request: FastifyRequest,
  holder: Holder,
  uploader: UserRow,
  opts: UploadOptions,
): Promise<AttachmentRow> {
  const q = request.query as { name?: string; updated_at?: string };
  const when = q.updated_at ? Math.floor(Date.parse(q.updated_at) / 1000) : NaN;
  const created = Number.isFinite(when) && when > 0 ? when : undefined;
  await svc.assertCanUpload(holder);

  if (request.isMultipart()) {
    const up = await readMultipart(request, 'attachment', async (filename, stream) => {
      const name = q.name || filename;
      if (!name) throw badRequest("Missing 'name' parameter");
      return { name, staged: await svc.stage(holder, name, stream) };
    });
    const drop = async (s: { staged: Staged } | undefined) => {
      if (s) await svc.discard(s.staged);
    };
    if (up.error) {
      await drop(up.result);
      throw up.error;
    }
    const external = opts.external ? up.fields['external_url'] : undefined;
    if (up.result && external) {
      await drop(up.result);
      throw badRequest("'attachment' and 'external_url' are mutually exclusive");
    }
    if (up.result) return svc.commit(holder, uploader, up.result.name, up.result.staged, created);
    if (external) return svc.addExternal(holder, uploader, q.name ?? '', external);
    throw badRequest(
      opts.external
        ? "One of 'attachment' or 'external_url' is required"
        : "the form field 'attachment' is required",
    );
  }
  if (!opts.raw)
    throw badRequest("the upload must be multipart/form-data with the file in the field 'attachment'");
  if (!q.name) throw badRequest("Missing 'name' parameter");
  // Without a body (Content-Length: 0) Fastify hands over none: that is an empty file.
  const body = (request.body as Readable | undefined) ?? Readable.from([]);
  const staged = await readingClientStream(body, () => svc.stage(holder, q.name!, body));
  return svc.commit(holder, uploader, q.name, staged, created);
}

const RepoParams = {
  owner: Type.String({ description: 'owner of the repo' }),
  repo: Type.String({ description: 'name of the repo' }),
};
const IssueParams = Type.Object({
  ...RepoParams,
  index: Type.Integer({ description: 'index of the issue' }),
});
const IssueAssetParams = Type.Object({
  ...IssueParams.properties,
  attachment_id: Type.Integer({ description: 'id of the attachment' }),
});
const CommentParams = Type.Object({ ...RepoParams, id: Type.Integer({ description: 'id of the comment' }) });
const CommentAssetParams = Type.Object({
  ...CommentParams.properties,
  attachment_id: Type.Integer({ description: 'id of the attachment' }),
});

/**
 * Issue and comment assets: /repos/{owner}/{repo}/issues/{index}/assets and
 * /repos/{owner}/{repo}/issues/comments/{id}/assets. Reading follows read access to the issue (or
 * pull request); uploading, renaming and deleting are for those who may write issues (pull
 * requests), the author of the issue (comment) and repository administrators: 403 for other
 * readers, 404 for outsiders of a private repository.
 */
export interface AttachmentsRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  issues: Pick<IssueService, 'requireVisibleIssue' | 'requireComment'>;
  attachments: AttachmentService;
  /** [attachment] MAX_SIZE and MAX_FILES of an upload. */
  uploadLimits: Pick<Config['attachment'], 'maxSize' | 'maxFiles'>;
  rootUrl: string;
}

export function attachmentsRoutes(app: Api, deps: AttachmentsRoutesDeps): void {
  const { repos, issues, attachments, uploadLimits, rootUrl } = deps;
  const tags = ['issue'];
  const read: RouteAuth = { scope: 'issue' };
  const write: RouteAuth = { scope: 'issue', require: 'signed' };

  /** The repository as the caller sees it, for issues or pull requests (404 when neither is readable). */
  async function viewOf(request: FastifyRequest, p: { owner: string; repo: string }): Promise<RepoView> {
    try {
      return await repos.requireRepo(p.owner, p.repo, request.viewer, 'read', 'repo.issues');
    } catch (err) {
      if (!(err instanceof AppError) || err.kind !== 'forbidden') throw err;
      return repos.requireRepo(p.owner, p.repo, request.viewer, 'read', 'repo.pulls');
    }
  }

  /** Who may change the attachments of something `posterId` wrote (403 for anyone else). */
  function assertMayWrite(view: RepoView, issue: IssueRow, posterId: number | null, doer: UserRow): void {
    const allowed =
      canWriteIssues(view.access, issue.is_pull) ||
      (posterId !== null && posterId === doer.id) ||
      view.access.mode >= AccessMode.admin;
    if (!allowed) throw forbidden('user should have permission to write issue');
    if (view.repo.is_archived) throw forbidden('repo is archived');
  }

  /** The issue of an issue asset route as an attachment holder (checked for writing when asked). */
  async function issueHolder(
    request: FastifyRequest,
    p: { owner: string; repo: string; index: number },
    writing: boolean,
  ) {
    const view = await viewOf(request, p);
    const issue = await issues.requireVisibleIssue(view, p.index);
    const doer = writing ? signedIn(request).user : undefined;
    if (doer) assertMayWrite(view, issue, issue.poster_id, doer);
    const holder: Holder = { kind: 'issue', repo: view.repo, issueId: issue.id };
    return { holder, doer };
  }

  /** The comment of a comment asset route as an attachment holder. */
  async function commentHolder(
    request: FastifyRequest,
    p: { owner: string; repo: string; id: number },
    writing: boolean,
  ) {
    const view = await viewOf(request, p);
    const { comment, issue } = await issues.requireComment(view.repo, p.id);
    // The comment's issue must be readable too: its unit (issues or pull requests) decides.
    await issues.requireVisibleIssue(view, issue.index);
    const doer = writing ? signedIn(request).user : undefined;
    if (doer) assertMayWrite(view, issue, comment.poster_id, doer);
    const holder: Holder = { kind: 'comment', repo: view.repo, issueId: issue.id, commentId: comment.id };
    return { holder, doer };
  }

  const kinds = [
    {
      what: 'issue',
      base: '/repos/:owner/:repo/issues/:index/assets',
      params: IssueParams,
      assetParams: IssueAssetParams,
      holderOf: (r: FastifyRequest, writing: boolean) =>
        issueHolder(r, r.params as { owner: string; repo: string; index: number }, writing),
      list: "List issue's attachments",
      create: 'Create an issue attachment',
      get: 'Get an issue attachment',
      edit: 'Edit an issue attachment',
      remove: 'Delete an issue attachment',
    },
    {
      what: 'comment',
      base: '/repos/:owner/:repo/issues/comments/:id/assets',
      params: CommentParams,
      assetParams: CommentAssetParams,
      holderOf: (r: FastifyRequest, writing: boolean) =>
        commentHolder(r, r.params as { owner: string; repo: string; id: number }, writing),
      list: "List comment's attachments",
      create: 'Create a comment attachment',
      get: 'Get a comment attachment',
      edit: 'Edit a comment attachment',
      remove: 'Delete a comment attachment',
    },
  ];

  for (const k of kinds) {
    app.get(
      k.base,
      {
        schema: {
          tags,
          summary: k.list,
          params: k.params,
          response: { 200: Type.Array(Attachment), ...declares(404) },
        },
        config: { auth: read },
      },
      async (request) => {
        const { holder } = await k.holderOf(request, false);
        return (await attachments.list(holder)).map((a) => toAttachmentJson(a, rootUrl));
      },
    );

    uploadScope(app, uploadLimits, (scope) => {
      scope.post(
        k.base,
        {
          ...streamedBody,
          schema: {
            tags,
            summary: k.create,
            description:
              `The file in the multipart field \`attachment\`, named by \`name\` or else by its file name. ` +
              `For writers of issues, the ${k.what}'s author and repository administrators. 413 when the file ` +
              'is larger than [attachment] MAX_SIZE or the owner is over quota; 422 for a type [attachment] ' +
              'ALLOWED_TYPES does not allow.',
            consumes: ['multipart/form-data'],
            params: k.params,
            querystring: UploadQuery,
            body: uploadBody(AttachmentForm, false),
            response: { 201: Attachment, ...declares(400, 403, 404, 413, 422) },
          },
          config: { auth: write },
        },
        async (request, reply) => {
          const { holder, doer } = await k.holderOf(request, true);
          const a = await receiveUpload(attachments, request, holder, doer!, { raw: false, external: false });
          return reply.code(201).send(toAttachmentJson(a, rootUrl));
        },
      );
    });

    app.get(
      `${k.base}/:attachment_id`,
      {
        schema: {
          tags,
          summary: k.get,
          params: k.assetParams,
          response: { 200: Attachment, ...declares(404) },
        },
        config: { auth: read },
      },
      async (request) => {
        const { holder } = await k.holderOf(request, false);
        const id = (request.params as { attachment_id: number }).attachment_id;
        return toAttachmentJson(await attachments.require(holder, id), rootUrl);
      },
    );

    app.patch(
      `${k.base}/:attachment_id`,
      {
        schema: {
          tags,
          summary: k.edit,
          description: 'Answers 201, as Forgejo does.',
          params: k.assetParams,
          body: EditAttachmentOptions,
          response: { 201: Attachment, ...declares(403, 404, 422) },
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { holder } = await k.holderOf(request, true);
        const a = await attachments.require(
          holder,
          (request.params as { attachment_id: number }).attachment_id,
        );
        const body = request.body as Static<typeof EditAttachmentOptions>;
        const edited = await attachments.edit(holder, a, {
          name: body.name,
          downloadUrl: body.browser_download_url,
        });
        return reply.code(201).send(toAttachmentJson(edited, rootUrl));
      },
    );

    app.delete(
      `${k.base}/:attachment_id`,
      {
        schema: {
          tags,
          summary: k.remove,
          params: k.assetParams,
          response: { 204: Type.Null(), ...declares(403, 404) },
        },
        config: { auth: write },
      },
      async (request, reply) => {
        const { holder } = await k.holderOf(request, true);
        await attachments.delete(
          await attachments.require(holder, (request.params as { attachment_id: number }).attachment_id),
        );
        return reply.code(204).send(null);
      },
    );
  }
}

/**
 * GET /attachments/{uuid} at the server root: the bytes of an attachment (or a redirect to an
 * external one), for whoever may read the issues or releases of its repository (a draft
 * release's assets: who may write releases). Anyone else gets 404. Counts downloads.
 */
export interface AttachmentDownloadRoutesDeps {
  /** Downloads authenticate on their own (outside /api/v1). */
  auth: Pick<Authenticator, 'authenticate'>;
  users: Pick<UserService, 'assertMayAct'>;
  repos: Pick<RepoService, 'getById' | 'access'>;
  attachments: Pick<AttachmentService, 'byUuid' | 'readable' | 'countDownload' | 'directUrl' | 'open'>;
}

export function attachmentDownloadRoutes(app: FastifyInstance, deps: AttachmentDownloadRoutesDeps): void {
  const { auth, users, repos, attachments } = deps;
  // HEAD declared (src/http/head.ts): a HEAD is no download to count.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/attachments/:uuid',
    schema: { hide: true, params: Type.Object({ uuid: Type.String() }) },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const { uuid } = request.params as { uuid: string };
      const identity = await auth.authenticate({
        authorization: request.headers.authorization,
        remoteAddress: request.socket.remoteAddress,
      });
      if (identity) users.assertMayAct(identity.user);
      const missing = () => notFound(`attachment does not exist [uuid: ${uuid}]`);
      const a = await attachments.byUuid(uuid);
      if (!a) throw missing();
      const repo = await repos.getById(a.repo_id);
      if (!repo) throw missing();
      const access = await repos.access(repo, viewerOf(identity));
      if (!(await attachments.readable(a, access))) throw missing();
      const category = a.release_id === null ? 'issue' : 'repository';
      if (identity?.method === 'token' && !hasScope(identity.scopes, category, 'read')) {
        throw forbidden(`token does not have at least one of required scope(s): [read:${category}]`);
      }
      const head = request.method === 'HEAD';
      if (!head) await attachments.countDownload(a);
      if (a.external_url) return reply.redirect(a.external_url, 302);
      // [attachment] SERVE_DIRECT on S3: the client fetches the bytes from a presigned URL.
      const direct = await attachments.directUrl(a);
      if (direct) return reply.redirect(direct, 303);

      const etag = `"${a.uuid}"`;
      reply.header('ETag', etag).header('Cache-Control', 'private, max-age=300');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      const ext = a.name.slice(a.name.lastIndexOf('.')).toLowerCase();
      const inline = a.name.includes('.') ? INLINE_TYPES[ext] : undefined;
      reply
        .type(inline ?? 'application/octet-stream')
        .header('Content-Disposition', contentDisposition(a.name, { type: inline ? 'inline' : 'attachment' }))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Accept-Ranges', 'bytes');
      const size = Number(a.size);
      const range = request.headers.range;
      if (range) {
        const ranges = rangeParser(size, range, { combine: true });
        if (ranges === -1) {
          return reply.code(416).header('Content-Range', `bytes */${size}`).send();
        }
        // A malformed header or several ranges: the whole file, as RFC 9110 allows.
        if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1) {
          const { start, end } = ranges[0]!;
          reply
            .code(206)
            .header('Content-Range', `bytes ${start}-${end}/${size}`)
            .header('Content-Length', String(end - start + 1));
          return reply.send(head ? undefined : await attachments.open(a, { start, end }));
        }
      }
      reply.header('Content-Length', String(size));
      return reply.send(head ? undefined : await attachments.open(a));
    },
  });
}
