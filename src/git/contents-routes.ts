// The git data API's files: EditorConfig definitions, contents (read, and written as commits), a
// diff applied, raw files, LFS media and archives (streamed).
import { Type, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { LARGE_BODY_LIMIT } from '../http/limits.js';
import { sendArchive, sendEntry } from './serve.js';
import type { GitDataService } from './data-service.js';
import type { FileChangeInput, GitFileService } from './data-files.js';
import {
  Binary,
  Params,
  RefQuery,
  WildParams,
  base,
  opener,
  read,
  schema,
  wild,
  write,
} from './data-route-kit.js';
import {
  ApplyDiffPatchFileOptions,
  ChangeFilesOptions,
  FilesResponse,
  ContentsResponse,
  CreateFileOptions,
  DeleteFileOptions,
  FileDeleteResponse,
  FileResponse,
  UNVERIFIED,
  UpdateFileOptions,
  toContentsJson,
  toFileCommitJson,
} from './data-schemas.js';

export interface ContentsRoutesDeps {
  gitData: GitDataService;
  gitFiles: GitFileService;
}

export function contentsRoutes(app: Api, deps: ContentsRoutesDeps): void {
  const { gitData: svc, gitFiles: files } = deps;
  const open = opener(svc);

  // EditorConfig

  app.get(
    `${base}/editorconfig/*`,
    {
      schema: schema('Get the EditorConfig definitions of a file in a repository', {
        description:
          'What the root .editorconfig at the ref says about the path (charset, indent_style, ' +
          'indent_size, end_of_line); 404 when there is no .editorconfig.',
        params: WildParams('filepath of file to get'),
        querystring: RefQuery,
        response: { 200: Type.Record(Type.String(), Type.String()) },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      return svc.editorconfig(t, wild(request), request.query.ref);
    },
  );

  // Contents

  const contentsHandler = async (request: FastifyRequest) => {
    const t = await open(request);
    const result = await svc.contents(t, wild(request), (request.query as { ref?: string }).ref);
    const links = await svc.linksFor(t, []);
    return Array.isArray(result)
      ? result.map((e) => toContentsJson(e, links))
      : toContentsJson(result, links);
  };
  const contentsResponse = { 200: Type.Union([ContentsResponse, Type.Array(ContentsResponse)]) };

  app.get(
    `${base}/contents`,
    {
      schema: schema('Gets the metadata of all the entries of the root dir', {
        description: 'An empty repository has no entries.',
        params: Params,
        querystring: RefQuery,
        response: contentsResponse,
      }),
      config: { auth: read },
    },
    contentsHandler,
  );

  app.get(
    `${base}/contents/*`,
    {
      schema: schema(
        'Gets the metadata and contents (if a file) of an entry in a repository, or a list of entries if a dir',
        {
          params: WildParams('path of the dir, file, symlink or submodule'),
          querystring: RefQuery,
          response: contentsResponse,
        },
      ),
      config: { auth: read },
    },
    contentsHandler,
  );

  async function changeFile(
    request: FastifyRequest,
    reply: FastifyReply,
    input: FileChangeInput,
    status: number,
  ) {
    const t = await open(request, 'write');
    const result = await files.changeFile(t, signedIn(request).user, input);
    const links = await svc.linksFor(t, []);
    return reply.code(status).send({
      content: result.entry ? toContentsJson(result.entry, links) : null,
      commit: toFileCommitJson(result.commit, links),
      verification: UNVERIFIED,
    });
  }

  type FileBody = Omit<FileChangeInput, 'op' | 'path' | 'newBranch' | 'fromPath'> & {
    new_branch?: string;
    from_path?: string;
  };
  const fileInput = (request: FastifyRequest, op: FileChangeInput['op']): FileChangeInput => {
    const b = request.body as FileBody;
    return {
      op,
      path: wild(request),
      content: b.content,
      sha: b.sha,
      fromPath: b.from_path,
      message: b.message,
      branch: b.branch,
      newBranch: b.new_branch,
      author: b.author,
      committer: b.committer,
      dates: b.dates,
      signoff: b.signoff,
    };
  };
  const fileSchema = <B extends TSchema, R extends Record<number, TSchema>>(
    summary: string,
    description: string,
    body: B,
    response: R,
  ) => schema(summary, { description, params: WildParams('path of the file'), body, response });

  app.post(
    `${base}/contents/*`,
    {
      schema: fileSchema(
        'Create a file in a repository',
        'An empty repository gets its first commit. 422 when the file exists.',
        CreateFileOptions,
        { 201: FileResponse },
      ),
      config: { auth: write },
      // base64 file contents
      bodyLimit: LARGE_BODY_LIMIT,
    },
    (request, reply) => changeFile(request, reply, fileInput(request, 'create'), 201),
  );

  app.put(
    `${base}/contents/*`,
    {
      schema: fileSchema(
        'Update a file in a repository',
        '`sha` must be the blob being replaced (409 otherwise); `from_path` moves the file here.',
        UpdateFileOptions,
        { 200: FileResponse },
      ),
      config: { auth: write },
      // base64 file contents
      bodyLimit: LARGE_BODY_LIMIT,
    },
    (request, reply) => changeFile(request, reply, fileInput(request, 'update'), 200),
  );

  app.delete(
    `${base}/contents/*`,
    {
      schema: fileSchema(
        'Delete a file in a repository',
        '`sha` must be the blob being deleted (400 otherwise).',
        DeleteFileOptions,
        { 200: FileDeleteResponse },
      ),
      config: { auth: write },
    },
    (request, reply) => changeFile(request, reply, fileInput(request, 'delete'), 200),
  );

  app.post(
    `${base}/contents`,
    {
      schema: schema('Modify multiple files in a repository', {
        description:
          'All operations make one commit; each is checked like the single-file operations (404, 409, 422).',
        params: Params,
        body: ChangeFilesOptions,
        response: { 201: FilesResponse },
      }),
      config: { auth: write },
      // base64 file contents
      bodyLimit: LARGE_BODY_LIMIT,
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      const b = request.body;
      const result = await files.changeFiles(t, signedIn(request).user, {
        files: b.files.map((f) => ({
          op: f.operation,
          path: f.path,
          content: f.content,
          sha: f.sha,
          fromPath: f.from_path,
        })),
        message: b.message,
        branch: b.branch,
        newBranch: b.new_branch,
        author: b.author,
        committer: b.committer,
        dates: b.dates,
        signoff: b.signoff,
      });
      const links = await svc.linksFor(t, []);
      return reply.code(201).send({
        files: result.entries.map((e) => (e ? toContentsJson(e, links) : null)),
        commit: toFileCommitJson(result.commit, links),
        verification: UNVERIFIED,
      });
    },
  );

  app.post(
    `${base}/diffpatch`,
    {
      schema: schema('Apply diff patch to repository', {
        description:
          'Applies a unified diff (`content`, plain text) to `branch` as one commit; 422 when it does ' +
          'not apply. `content` of the answer is null.',
        params: Params,
        body: ApplyDiffPatchFileOptions,
        response: { 200: FileResponse },
      }),
      config: { auth: write },
      bodyLimit: LARGE_BODY_LIMIT,
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      const b = request.body;
      const commit = await files.applyDiffPatch(t, signedIn(request).user, {
        patch: b.content,
        message: b.message,
        branch: b.branch,
        newBranch: b.new_branch,
        author: b.author,
        committer: b.committer,
        dates: b.dates,
        signoff: b.signoff,
      });
      const links = await svc.linksFor(t, []);
      return reply.code(200).send({
        content: null,
        commit: toFileCommitJson(commit, links),
        verification: UNVERIFIED,
      });
    },
  );

  // Raw files and archives, streamed as they are (never compressed: clients count on the length)

  const serveRaw = (media: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const t = await open(request);
    const { entry, name } = await svc.rawEntry(t, wild(request), (request.query as { ref?: string }).ref);
    return sendEntry(svc, t, entry, name, media, request, reply);
  };
  const rawSchema = (summary: string) =>
    schema(summary, {
      description:
        'Without `ref`, the path may start with a branch, tag or commit id; else the default branch is read.',
      params: WildParams('path of the file to get'),
      querystring: RefQuery,
      response: { 200: Binary },
    });

  app.get(
    `${base}/raw/*`,
    { schema: rawSchema('Get a file from a repository'), config: { auth: read, compress: false } },
    serveRaw(false),
  );
  app.get(
    `${base}/media/*`,
    {
      schema: rawSchema("Get a file or it's LFS object from a repository"),
      config: { auth: read, compress: false },
    },
    serveRaw(true),
  );

  const serveArchive = async (request: FastifyRequest, reply: FastifyReply) =>
    sendArchive(svc, await open(request), wild(request), request, reply);

  app.get(
    `${base}/archive/*`,
    {
      schema: schema('Get an archive of a repository', {
        description: '`<ref>.zip` or `<ref>.tar.gz`, streamed from git archive.',
        params: WildParams('the git reference with the archive format (e.g. main.zip)'),
        response: { 200: Binary },
      }),
      config: { auth: read },
    },
    serveArchive,
  );
}
