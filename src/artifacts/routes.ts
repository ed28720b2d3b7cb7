// HTTP for artifacts:
//   - the v4 artifact service over Twirp at the server root, POST /twirp/{package}.ArtifactService/{Method},
//     for both vendor.actions.results.api.v1 and github.actions.results.api.v1, authorized by the
//     job's runtime token (Authorization: Bearer ...);
//   - the signed content URLs, /api/actions/artifacts/{id}/upload (plain PUT, Azure Blob style
//     `comp=block` and `comp=blocklist`) and /api/actions/artifacts/{id}/download, which answer like
//     Azure Blob storage (201 and x-ms-* headers; errors as XML with x-ms-error-code);
//   - the REST view under /api/v1/repos/{owner}/{repo}/actions/.
// With [actions] ENABLED = false every one of them answers 404 with a message.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import contentDisposition from 'content-disposition';
import rangeParser from 'range-parser';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { AppError, notFound, type ErrorKind } from '../errors.js';
import { statusOf } from '../http/errors.js';
import type { RouteAuth } from '../http/auth.js';
import { pageOf, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import type { Api } from '../http/types.js';
import { declares } from '../quota/schemas.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import {
  ArtifactService as ArtifactServiceDesc,
  CreateArtifactResponseSchema,
  DeleteArtifactResponseSchema,
  FinalizeArtifactResponseSchema,
  GetSignedArtifactURLResponseSchema,
  ListArtifactsResponse_MonolithArtifactSchema,
  ListArtifactsResponseSchema,
} from './gen/vendor/actions/results/api/v1/artifact_pb.js';
import { ActionArtifact, ActionArtifactsResponse, ArtifactListQuery, toArtifactJson } from './schemas.js';
import type { RuntimeTokenClaims } from '../actions/runtime-token.js';
import type { ArtifactContent } from './content.js';
import { ArtifactError } from './errors.js';
import type { ArtifactService } from './service.js';
import type { ArtifactRow } from './tables.js';
import { declaredLength } from '../http/bodies.js';
import {
  CONTENT_TYPE,
  PACKAGES,
  SERVICE,
  TwirpError,
  decode,
  encode,
  encodingOf,
  twirpErrorOf,
} from './twirp.js';
import { logFailure } from '../http/request-log.js';

/** Largest Twirp request body: the messages are a few strings and numbers. */
const MAX_TWIRP_BODY = 1024 * 1024;
/** The storage service version the signed URLs answer as (x-ms-version). */
const AZURE_VERSION = '2025-11-05';

// The REST view under /api/v1

const RepoParams = Type.Object({
  owner: Type.String({ description: 'owner of the repo' }),
  repo: Type.String({ description: 'name of the repo' }),
});
const ArtifactParams = Type.Object({
  ...RepoParams.properties,
  artifact_id: Type.Integer({ description: 'id of the artifact' }),
});
const RunParams = Type.Object({
  ...RepoParams.properties,
  run_id: Type.Integer({ description: 'id of the run' }),
});

/** Artifacts in the REST API under /api/v1: reading needs read access to the repository's actions, deleting write access. */
export interface ArtifactsRoutesDeps {
  artifacts: ArtifactService;
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById'>;
  paging: PagingSettings;
  rootUrl: string;
}

export function artifactsRoutes(app: Api, deps: ArtifactsRoutesDeps): void {
  const { repos, artifacts, users, paging, rootUrl } = deps;
  const tags = ['repository'];
  const read: RouteAuth = { scope: 'repository' };
  const write: RouteAuth = { scope: 'repository', require: 'signed' };

  async function repoFor(
    request: FastifyRequest,
    p: { owner: string; repo: string },
    need: 'read' | 'write',
  ) {
    artifacts.assertEnabled();
    const { repo } = await repos.requireRepo(p.owner, p.repo, request.viewer, need, 'repo.actions');
    if (!repo.has_actions) throw notFound('actions are disabled for this repository');
    return repo;
  }

  async function json(request: FastifyRequest, repo: RepoRow, rows: ArtifactRow[]) {
    const [owner, runs] = await Promise.all([users.getById(repo.owner_id), artifacts.runsOf(rows)]);
    const links = {
      rootUrl,
      fullName: `${encodeURIComponent(owner!.name)}/${encodeURIComponent(repo.name)}`,
    };
    return rows.map((a) => toArtifactJson(a, links, runs.get(a.run_id)));
  }

  async function list(
    request: FastifyRequest,
    reply: FastifyReply,
    repo: RepoRow,
    q: { name?: string | undefined; page?: number | undefined; limit?: number | undefined },
    runId?: number,
  ) {
    const page = pageOf(q, paging);
    const [rows, total] = await artifacts.listOfRepo(repo, { name: q.name, runId }, page.limit, page.offset);
    setPageHeaders(request, reply, total, page, rootUrl);
    return { artifacts: await json(request, repo, rows), total_count: total };
  }

  app.get(
    '/repos/:owner/:repo/actions/artifacts',
    {
      schema: {
        tags,
        summary: "Lists a repository's artifacts",
        description: 'Finalized artifacts of every run, newest first; `name` keeps those of that name.',
        params: RepoParams,
        querystring: ArtifactListQuery,
        response: { 200: ActionArtifactsResponse, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request, reply) =>
      list(request, reply, await repoFor(request, request.params, 'read'), request.query),
  );

  app.get(
    '/repos/:owner/:repo/actions/runs/:run_id/artifacts',
    {
      schema: {
        tags,
        summary: 'Lists the artifacts of a run',
        params: RunParams,
        querystring: ArtifactListQuery,
        response: { 200: ActionArtifactsResponse, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request, reply) =>
      list(
        request,
        reply,
        await repoFor(request, request.params, 'read'),
        request.query,
        request.params.run_id,
      ),
  );

  app.get(
    '/repos/:owner/:repo/actions/artifacts/:artifact_id',
    {
      schema: {
        tags,
        summary: 'Gets an artifact',
        params: ArtifactParams,
        response: { 200: ActionArtifact, ...declares(404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const repo = await repoFor(request, request.params, 'read');
      const a = await artifacts.requireOfRepo(repo, request.params.artifact_id);
      return (await json(request, repo, [a]))[0]!;
    },
  );

  app.delete(
    '/repos/:owner/:repo/actions/artifacts/:artifact_id',
    {
      schema: {
        tags,
        summary: 'Deletes an artifact',
        description: "Its storage is freed and its size no longer counts toward the owner's quota.",
        params: ArtifactParams,
        response: { 204: Type.Null(), ...declares(403, 404) },
      },
      config: { auth: write },
    },
    async (request, reply) => {
      const repo = await repoFor(request, request.params, 'write');
      await artifacts.delete(await artifacts.requireOfRepo(repo, request.params.artifact_id));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/repos/:owner/:repo/actions/artifacts/:artifact_id/zip',
    {
      schema: {
        tags,
        summary: 'Downloads an artifact',
        description:
          'Redirects (302) to a signed download URL of the zip, valid for an hour; 410 when the artifact has expired.',
        params: ArtifactParams,
        response: { 302: Type.Null(), ...declares(404, 410) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const repo = await repoFor(request, request.params, 'read');
      const a = await artifacts.requireOfRepo(repo, request.params.artifact_id);
      if (a.expires_unix <= Math.floor(Date.now() / 1000)) {
        throw new AppError('gone', `artifact has expired [id: ${a.id}]`);
      }
      return reply.redirect(await artifacts.downloadUrlFor(a), 302);
    },
  );
}

// The artifact service and its signed URLs, at the server root

type Handler = (job: RuntimeTokenClaims, body: Buffer, enc: 'json' | 'protobuf') => Promise<Buffer | string>;

/** The v4 artifact service (Twirp at /twirp/...) and its signed upload/download URLs, in their own scope. */
export interface ArtifactServiceRoutesDeps {
  artifacts: ArtifactService;
  /** The content behind the signed URLs. */
  content: ArtifactContent;
}

export function artifactServiceRoutes(app: FastifyInstance, deps: ArtifactServiceRoutesDeps): void {
  const { artifacts: svc, content } = deps;
  // Bodies reach the handlers as streams: blocks are stored as they arrive, never buffered whole.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (request.url.startsWith('/twirp/')) return sendTwirpError(request, reply, err);
    return sendAzureError(request, reply, err);
  });

  // Twirp

  const methods = new Map<string, Handler>();
  const m = ArtifactServiceDesc.method;

  methods.set(m.createArtifact.name, async (job, body, enc) => {
    const req = decode(m.createArtifact.input, enc, body);
    svc.checkScope(job, req.workflowRunBackendId, req.workflowJobRunBackendId, true);
    const expiresAt = req.expiresAt ? Math.floor(timestampDate(req.expiresAt).getTime() / 1000) : undefined;
    const { uploadUrl } = await svc.create(job, { name: req.name, version: req.version, expiresAt });
    return encode(
      CreateArtifactResponseSchema,
      enc,
      create(CreateArtifactResponseSchema, { ok: true, signedUploadUrl: uploadUrl }),
    );
  });

  methods.set(m.finalizeArtifact.name, async (job, body, enc) => {
    const req = decode(m.finalizeArtifact.input, enc, body);
    svc.checkScope(job, req.workflowRunBackendId, req.workflowJobRunBackendId, true);
    const { ok, id } = await svc.finalize(job, { name: req.name, size: req.size, hash: req.hash });
    const out = create(FinalizeArtifactResponseSchema, { ok, artifactId: ok ? BigInt(id) : 0n });
    return encode(FinalizeArtifactResponseSchema, enc, out);
  });

  methods.set(m.listArtifacts.name, async (job, body, enc) => {
    const req = decode(m.listArtifacts.input, enc, body);
    svc.checkScope(job, req.workflowRunBackendId, req.workflowJobRunBackendId, false);
    const rows = await svc.listOfRun(job, { name: req.nameFilter, id: req.idFilter });
    const out = create(ListArtifactsResponseSchema, {
      artifacts: rows.map((a) =>
        create(ListArtifactsResponse_MonolithArtifactSchema, {
          workflowRunBackendId: String(a.run_id),
          workflowJobRunBackendId: String(a.job_id),
          databaseId: BigInt(a.id),
          name: a.name,
          size: BigInt(a.size),
          createdAt: timestampFromDate(new Date(a.created_unix * 1000)),
        }),
      ),
    });
    return encode(ListArtifactsResponseSchema, enc, out);
  });

  methods.set(m.getSignedArtifactURL.name, async (job, body, enc) => {
    const req = decode(m.getSignedArtifactURL.input, enc, body);
    svc.checkScope(job, req.workflowRunBackendId, req.workflowJobRunBackendId, false);
    const out = create(GetSignedArtifactURLResponseSchema, {
      signedUrl: await svc.downloadUrlOf(job, req.name),
    });
    return encode(GetSignedArtifactURLResponseSchema, enc, out);
  });

  methods.set(m.deleteArtifact.name, async (job, body, enc) => {
    const req = decode(m.deleteArtifact.input, enc, body);
    svc.checkScope(job, req.workflowRunBackendId, req.workflowJobRunBackendId, false);
    const id = await svc.deleteOfRun(job, req.name);
    return encode(
      DeleteArtifactResponseSchema,
      enc,
      create(DeleteArtifactResponseSchema, { ok: true, artifactId: BigInt(id) }),
    );
  });

  const services = new Set(PACKAGES.map((p) => `${p}.${SERVICE}`));
  // Not part of the /api/v1 description.
  const hidden = { schema: { hide: true } };

  app.post<{ Params: { service: string; method: string } }>(
    '/twirp/:service/:method',
    hidden,
    async (request, res) => {
      if (!svc.enabled)
        throw new TwirpError('not_found', 'Actions are disabled on this server ([actions] ENABLED = false)');
      const { service, method } = request.params;
      const handler = services.has(service) ? methods.get(method) : undefined;
      if (!handler) throw new TwirpError('bad_route', `no handler for path "${request.url.split('?')[0]}"`);
      const enc = encodingOf(request.headers['content-type']);
      if (!enc) {
        throw new TwirpError(
          'bad_route',
          `unexpected Content-Type: "${request.headers['content-type'] ?? ''}" (application/json or application/protobuf)`,
        );
      }
      const job = svc.authenticate(request.headers.authorization);
      const body = await readBody(request.body as Readable | undefined, MAX_TWIRP_BODY);
      const out = await handler(job, body, enc);
      return res.code(200).type(CONTENT_TYPE[enc]).send(out);
    },
  );

  // Anything else under /twirp/: Twirp's bad_route.
  app.all('/twirp/*', hidden, async (request) => {
    if (!svc.enabled)
      throw new TwirpError('not_found', 'Actions are disabled on this server ([actions] ENABLED = false)');
    throw new TwirpError(
      'bad_route',
      `no handler for ${request.method} "${request.url.split('?')[0]}" (Twirp takes POST)`,
    );
  });

  // Signed URLs

  app.all<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(
    '/api/actions/artifacts/:id/upload',
    hidden,
    async (request, res) => {
      svc.assertEnabled();
      if (request.method !== 'PUT') {
        throw new ArtifactError('bad_request', `${request.method} is not an upload: use PUT`, {
          azure: 'UnsupportedHttpVerb',
        });
      }
      const q = request.query;
      const comp = q['comp'];
      if (comp !== undefined && comp !== 'block' && comp !== 'blocklist') {
        throw new ArtifactError('bad_request', `comp=${comp} is not supported (block or blocklist)`, {
          azure: 'InvalidQueryParameterValue',
        });
      }
      if (comp === 'block' && !q['blockid']) {
        throw new ArtifactError('bad_request', 'comp=block needs a blockid', {
          azure: 'MissingRequiredQueryParameter',
        });
      }
      const a = await content.requireSigned('upload', request.params.id, q);
      const body = request.body as Readable | undefined;
      azureHeaders(request, res);
      if (comp === 'block') {
        await content.putBlock(a, q['blockid']!, body ?? emptyStream(), declaredLength(request));
        return res.code(201).send();
      }
      const stored =
        comp === 'blocklist'
          ? await content.commitBlocks(a, body ?? emptyStream())
          : await content.putContent(a, body ?? emptyStream(), declaredLength(request));
      res.header('ETag', `"0x${stored.sha256.slice(0, 16).toUpperCase()}"`);
      res.header('Last-Modified', new Date().toUTCString());
      return res.code(201).send();
    },
  );

  app.all<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(
    '/api/actions/artifacts/:id/download',
    hidden,
    async (request, res) => {
      svc.assertEnabled();
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        throw new ArtifactError('bad_request', `${request.method} is not a download: use GET`, {
          azure: 'UnsupportedHttpVerb',
        });
      }
      const a = await content.requireSigned('download', request.params.id, request.query);
      azureHeaders(request, res);
      const size = Number(a.size);
      res.header('Content-Type', 'application/zip');
      res.header('Content-Disposition', contentDisposition(`${a.name}.zip`));
      res.header('Accept-Ranges', 'bytes');
      res.header('ETag', `"${a.sha256}"`);
      res.header('Last-Modified', new Date(a.updated_unix * 1000).toUTCString());
      let range: { start: number; end: number } | undefined;
      const header = request.headers.range;
      if (header && size > 0) {
        const parsed = rangeParser(size, header, { combine: true });
        if (parsed === -1) {
          res.header('Content-Range', `bytes */${size}`);
          throw new ArtifactError('bad_request', 'the range is not satisfiable', { azure: 'InvalidRange' });
        }
        if (Array.isArray(parsed) && parsed.type === 'bytes' && parsed.length === 1) range = parsed[0]!;
      }
      if (range) {
        res.code(206);
        res.header('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
        res.header('Content-Length', String(range.end - range.start + 1));
      } else {
        res.header('Content-Length', String(size));
      }
      if (request.method === 'HEAD') return res.send();
      return res.send(await content.open(a, range));
    },
  );
}

function azureHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-ms-request-id', crypto.randomUUID());
  reply.header('x-ms-version', (request.headers['x-ms-version'] as string | undefined) ?? AZURE_VERSION);
  const clientId = request.headers['x-ms-client-request-id'];
  if (typeof clientId === 'string') reply.header('x-ms-client-request-id', clientId);
  reply.header('x-ms-request-server-encrypted', 'false');
}

function emptyStream(): Readable {
  return Readable.from([]);
}

async function readBody(body: Readable | undefined, max: number): Promise<Buffer> {
  if (!body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > max)
      throw new TwirpError('resource_exhausted', `the request body is larger than ${max} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** Whether a failure is the client going away mid-request (nothing to answer, nothing to log as an error). */
function isAborted(request: FastifyRequest, err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    request.raw.destroyed ||
    request.raw.aborted ||
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH'
  );
}

function sendTwirpError(request: FastifyRequest, reply: FastifyReply, err: FastifyError) {
  let twirp = twirpErrorOf(err);
  if (!twirp) {
    const status = err.statusCode ?? 500;
    if (isAborted(request, err)) twirp = new TwirpError('canceled', 'the request was cut short');
    else if (status >= 400 && status < 500) twirp = new TwirpError('malformed', err.message);
    else {
      logFailure(request, err, 'artifact service failure');
      twirp = new TwirpError('internal', 'internal error');
    }
  }
  return reply.code(twirp.status).type('application/json').send(JSON.stringify(twirp));
}

const AZURE_CODE: Record<ErrorKind, string> = {
  bad_request: 'InvalidInput',
  invalid: 'InvalidInput',
  unauthorized: 'AuthenticationFailed',
  forbidden: 'AuthenticationFailed',
  not_found: 'BlobNotFound',
  gone: 'BlobNotFound',
  moved: 'BlobNotFound',
  method_not_allowed: 'UnsupportedHttpVerb',
  conflict: 'BlobImmutable',
  precondition_failed: 'ConditionNotMet',
  payload_too_large: 'RequestBodyTooLarge',
  too_many_requests: 'ServerBusy',
  unavailable: 'ServerBusy',
  internal: 'InternalError',
};

const xmlText = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** An error of a signed URL as Azure Blob storage words it: XML {Code, Message} and x-ms-error-code. */
function sendAzureError(request: FastifyRequest, reply: FastifyReply, err: FastifyError) {
  let status: number;
  let code: string;
  let message: string;
  if (err instanceof AppError) {
    status = statusOf[err.kind];
    code = (err instanceof ArtifactError && err.codes.azure) || AZURE_CODE[err.kind];
    message = err.message;
  } else if (isAborted(request, err)) {
    status = 400;
    code = 'InvalidInput';
    message = 'the request was cut short';
  } else if ((err.statusCode ?? 500) < 500) {
    status = err.statusCode!;
    code = 'InvalidInput';
    message = err.message;
  } else {
    logFailure(request, err, 'artifact content failure');
    status = 500;
    code = 'InternalError';
    message = 'internal error';
  }
  reply.header('x-ms-error-code', code);
  reply.header('x-ms-request-id', crypto.randomUUID());
  return reply
    .code(status)
    .type('application/xml')
    .send(
      `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${xmlText(message)}</Message></Error>`,
    );
}
