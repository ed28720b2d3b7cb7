// The git data API under /api/v1/repos/{owner}/{repo}: branches, tags, commits, contents, raw
// files and archives (streamed), refs, trees, blobs and annotated tags. HTTP only: the rules are in
// data-service.ts, git in data.ts.
import { Type, type TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app/context.js';
import type { Api } from '../http/types.js';
import type { RouteAuth } from '../http/auth.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, sendPage, setPageHeaders } from '../http/pagination.js';
import { sendArchive, sendEntry } from './serve.js';
import { GitDataService, MAX_COMMIT_PAGE, type FileChangeInput, type Target } from './data-service.js';
import { LARGE_BODY_LIMIT } from '../http/limits.js';
import {
  AnnotatedTag,
  ApplyDiffPatchFileOptions,
  Branch,
  ChangeFilesOptions,
  FilesResponse,
  Commit,
  Compare,
  type CommitJson,
  ContentsResponse,
  CreateBranchRepoOption,
  CreateFileOptions,
  CreateTagOption,
  DeleteFileOptions,
  FileDeleteResponse,
  FileResponse,
  GitBlobResponse,
  GitTreeResponse,
  Note,
  NoteOptions,
  Reference,
  Tag,
  UNVERIFIED,
  UpdateBranchRepoOption,
  UpdateFileOptions,
  toAnnotatedTagJson,
  toBranchJson,
  toCommitJson,
  toContentsJson,
  toFileCommitJson,
  toGitEntryJson,
  toReferenceJson,
  toTagJson,
} from './data-schemas.js';

const RepoParams = { owner: Type.String(), repo: Type.String() };
const Params = Type.Object(RepoParams);
const WildParams = (description: string) => Type.Object({ ...RepoParams, '*': Type.String({ description }) });
const ShaParams = Type.Object({ ...RepoParams, sha: Type.String() });
const RefQuery = Type.Object({
  ref: Type.Optional(
    Type.String({
      description: "The name of the commit/branch/tag. Default the repository's default branch",
    }),
  ),
});
const CommitOptionsQuery = {
  stat: Type.Optional(Type.Boolean({ description: "include diff stats for every commit (default 'true')" })),
  verification: Type.Optional(
    Type.Boolean({ description: "include verification for every commit (default 'true')" }),
  ),
  files: Type.Optional(
    Type.Boolean({ description: "include a list of affected files for every commit (default 'true')" }),
  ),
};
const Binary = Type.String({ format: 'binary' });
const NoContent = Type.Null();

export function gitDataRoutes(app: Api, ctx: AppContext): void {
  const svc = new GitDataService(ctx);
  const read: RouteAuth = { scope: 'repository' };
  const write: RouteAuth = { scope: 'repository', require: 'signed' };
  const tags = ['repository'];
  const base = '/repos/:owner/:repo';

  const open = (request: FastifyRequest, need: 'read' | 'write' = 'read') => {
    const p = request.params as { owner: string; repo: string };
    return svc.open(p.owner, p.repo, request.viewer, need);
  };
  const schema = <S extends object>(summary: string, s: S) => ({ tags, summary, ...s });
  const wild = (request: FastifyRequest) => (request.params as Record<string, string>)['*'] ?? '';

  // Branches

  app.get(
    `${base}/branches`,
    {
      schema: schema("List a repository's branches", {
        params: Params,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(Branch) },
      }),
      config: { auth: read },
    },
    async (request, reply) => {
      const t = await open(request);
      const page = pageOf(request.query, ctx.paging);
      const [rows, total] = await svc.listBranches(t, page);
      const links = await svc.linksFor(
        t,
        rows.flatMap((b) => [b.commit.author.email, b.commit.committer.email]),
        rows.map((b) => b.commit.oid),
      );
      const canPush = svc.canPush(t);
      return sendPage(request, reply, [rows, total], page, ctx.config.server.rootUrl, (b) =>
        toBranchJson(b.ref.slice(11), b.commit, links, canPush),
      );
    },
  );

  app.get(
    `${base}/branches/*`,
    {
      schema: schema('Retrieve a specific branch from a repository', {
        params: WildParams('branch to get (may contain slashes)'),
        response: { 200: Branch },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      const b = await svc.getBranch(t, wild(request));
      const links = await svc.linksFor(t, [b.commit.author.email, b.commit.committer.email], [b.commit.oid]);
      return toBranchJson(b.ref.slice(11), b.commit, links, svc.canPush(t));
    },
  );

  app.post(
    `${base}/branches`,
    {
      schema: schema('Create a branch', {
        description:
          'From old_ref_name (a branch, tag or commit), else old_branch_name, else the default branch. ' +
          '404 when that does not exist (or the repository is empty), 409 when the branch exists.',
        params: Params,
        body: CreateBranchRepoOption,
        response: { 201: Branch },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      const b = await svc.createBranch(t, signedIn(request).user, {
        name: request.body.new_branch_name,
        oldBranch: request.body.old_branch_name,
        oldRef: request.body.old_ref_name,
      });
      const links = await svc.linksFor(t, [b.commit.author.email, b.commit.committer.email]);
      return reply.code(201).send(toBranchJson(b.ref.slice(11), b.commit, links, svc.canPush(t)));
    },
  );

  app.patch(
    `${base}/branches/*`,
    {
      schema: schema('Update a branch', {
        description:
          'Renames the branch; the default branch, a protection rule named after it and open pull ' +
          'requests follow. 422 when the new name is taken, 403 when a glob protection rule covers it.',
        params: WildParams('name of the branch (may contain slashes)'),
        body: UpdateBranchRepoOption,
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await svc.renameBranch(t, signedIn(request).user, wild(request), request.body.name);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    `${base}/branches/*`,
    {
      schema: schema('Delete a specific branch from a repository', {
        description: 'The default branch cannot be deleted (403).',
        params: WildParams('branch to delete (may contain slashes)'),
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await svc.deleteBranch(t, signedIn(request).user, wild(request));
      return reply.code(204).send(null);
    },
  );

  // Tags

  app.get(
    `${base}/tags`,
    {
      schema: schema("List a repository's tags", {
        params: Params,
        querystring: Type.Object(PageFields),
        response: { 200: Type.Array(Tag) },
      }),
      config: { auth: read },
    },
    async (request, reply) => {
      const t = await open(request);
      const page = pageOf(request.query, ctx.paging);
      const links = await svc.linksFor(t, []);
      return sendPage(request, reply, await svc.listTags(t, page), page, ctx.config.server.rootUrl, (tag) =>
        toTagJson(tag, links),
      );
    },
  );

  app.get(
    `${base}/tags/*`,
    {
      schema: schema('Get the tag of a repository by tag name', {
        params: WildParams('name of the tag'),
        response: { 200: Tag },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      return toTagJson(await svc.getTag(t, wild(request)), await svc.linksFor(t, []));
    },
  );

  app.post(
    `${base}/tags`,
    {
      schema: schema('Create a new git tag in a repository', {
        description:
          'Annotated when a message is given, lightweight otherwise; on the default branch without a target.',
        params: Params,
        body: CreateTagOption,
        response: { 201: Tag },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      const tag = await svc.createTag(t, signedIn(request).user, {
        name: request.body.tag_name,
        target: request.body.target,
        message: request.body.message,
      });
      return reply.code(201).send(toTagJson(tag, await svc.linksFor(t, [])));
    },
  );

  app.delete(
    `${base}/tags/*`,
    {
      schema: schema("Delete a repository's tag by name", {
        params: WildParams('name of the tag to delete'),
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await svc.deleteTag(t, signedIn(request).user, wild(request));
      return reply.code(204).send(null);
    },
  );

  // Commits

  app.get(
    `${base}/commits`,
    {
      schema: schema('Get a list of all commits from a repository', {
        description:
          'Each commit carries the files it changed and its line counts against its first parent. ' +
          '409 when the repository is empty.',
        params: Params,
        querystring: Type.Object({
          sha: Type.Optional(Type.String({ description: 'SHA or branch to start listing commits from' })),
          path: Type.Optional(Type.String({ description: 'filepath of a file/dir' })),
          ...CommitOptionsQuery,
          not: Type.Optional(
            Type.String({ description: 'commits that match the given specifier will not be listed' }),
          ),
          ...PageFields,
        }),
        response: { 200: Type.Array(Commit) },
      }),
      config: { auth: read },
    },
    async (request, reply) => {
      const q = request.query;
      const t = await open(request);
      const page = pageOf(q, ctx.paging);
      if (page.limit > MAX_COMMIT_PAGE) {
        page.limit = MAX_COMMIT_PAGE;
        page.offset = (page.page - 1) * page.limit;
      }
      const opts = { stat: q.stat ?? true, files: q.files ?? true, verification: q.verification ?? true };
      const [commits, total] = await svc.listCommits(t, {
        sha: q.sha,
        path: q.path,
        not: q.not,
        diff: opts.stat || opts.files,
        page,
      });
      const links = await svc.linksFor(
        t,
        commits.flatMap((c) => [c.author.email, c.committer.email]),
        opts.verification ? commits.map((c) => c.oid) : [],
      );
      const pageCount = Math.ceil(total / page.limit);
      setPageHeaders(request, reply, total, page, ctx.config.server.rootUrl);
      reply
        .header('X-Page', String(page.page))
        .header('X-PerPage', String(page.limit))
        .header('X-Total', String(total))
        .header('X-PageCount', String(pageCount))
        .header('X-HasMore', String(page.page < pageCount))
        .header(
          'Access-Control-Expose-Headers',
          'X-Total-Count, Link, X-Page, X-PerPage, X-Total, X-PageCount, X-HasMore',
        );
      return commits.map((c) => toCommitJson(c, links, opts));
    },
  );

  // One route for /git/commits/{sha} and /git/commits/{sha}.{diff|patch}: find-my-way cannot tell
  // them apart, so the suffix is split off here.
  app.get(
    `${base}/git/commits/:sha`,
    {
      schema: schema('Get a single commit, or its diff ({sha}.diff) or patch ({sha}.patch)', {
        description:
          'With a .diff or .patch suffix the answer is text/plain: the diff against the first parent, ' +
          'or the commit as git format-patch writes it.',
        params: Type.Object({
          ...RepoParams,
          sha: Type.String({ description: 'a commit id or ref, or one followed by .diff or .patch' }),
        }),
        querystring: Type.Object(CommitOptionsQuery),
        response: { 200: Commit },
      }),
      config: { auth: read },
    },
    async (request, reply) => {
      const q = request.query;
      const t = await open(request);
      const m = /^(.+)\.(diff|patch)$/.exec(request.params.sha);
      if (m) {
        const c = await svc.getCommit(t, m[1]!, false);
        const text = await svc.diffText(t, c.oid, m[2] === 'patch');
        // A string sent as text/plain skips the JSON serializer (and so the Commit schema).
        return reply.type('text/plain; charset=utf-8').send(text as unknown as CommitJson);
      }
      const opts = { stat: q.stat ?? true, files: q.files ?? true, verification: q.verification ?? true };
      const c = await svc.getCommit(t, request.params.sha, opts.stat || opts.files);
      const verify = opts.verification ? [c.oid] : [];
      return toCommitJson(c, await svc.linksFor(t, [c.author.email, c.committer.email], verify), opts);
    },
  );

  app.get(
    `${base}/compare/*`,
    {
      schema: schema('Get commit comparison information', {
        description:
          '{basehead} is base...head or base..head (each a branch, tag, commit id or revision git reads, ' +
          'such as main~1), or only head (compared with the default branch). The commits of head that ' +
          'base lacks, newest first, each with its files and line counts; files lists the files of every ' +
          'commit in turn. 404 for a ref that names nothing, 422 for one that starts with -.',
        params: WildParams('base...head'),
        response: { 200: Compare },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      const { commits } = await svc.compareSpec(t, wild(request));
      const links = await svc.linksFor(
        t,
        commits.flatMap((c) => [c.author.email, c.committer.email]),
        commits.map((c) => c.oid),
      );
      const json = commits.map((c) =>
        toCommitJson(c, links, { stat: true, files: true, verification: true }),
      );
      return { total_commits: json.length, commits: json, files: json.flatMap((c) => c.files ?? []) };
    },
  );

  // Notes

  const NoteParams = Type.Object({
    ...RepoParams,
    sha: Type.String({ description: 'a git ref or commit sha' }),
  });
  const noteJson = async (
    t: Target,
    sha: string,
    opts: { stat: boolean; files: boolean; verification: boolean },
  ) => {
    const note = await svc.getNote(t, sha, opts.stat || opts.files);
    const c = note.commit;
    return {
      message: note.message,
      commit: toCommitJson(
        c,
        await svc.linksFor(t, [c.author.email, c.committer.email], opts.verification ? [c.oid] : []),
        opts,
      ),
    };
  };

  app.get(
    `${base}/git/notes/:sha`,
    {
      schema: schema('Get a note corresponding to a single commit from a repository', {
        description: "The note's commit is the commit of refs/notes/commits that last wrote it.",
        params: NoteParams,
        querystring: Type.Object({
          verification: CommitOptionsQuery.verification,
          files: CommitOptionsQuery.files,
        }),
        response: { 200: Note },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      const q = request.query;
      return noteJson(t, request.params.sha, {
        stat: true,
        files: q.files ?? true,
        verification: q.verification ?? true,
      });
    },
  );

  app.post(
    `${base}/git/notes/:sha`,
    {
      schema: schema('Set a note corresponding to a single commit from a repository', {
        description: 'Replaces any note the commit has; git removes it when the message is empty.',
        params: NoteParams,
        body: NoteOptions,
        response: { 200: Note },
      }),
      config: { auth: write },
    },
    async (request) => {
      const t = await open(request, 'write');
      await svc.setNote(t, signedIn(request).user, request.params.sha, request.body?.message ?? '');
      return noteJson(t, request.params.sha, { stat: true, files: true, verification: true });
    },
  );

  app.delete(
    `${base}/git/notes/:sha`,
    {
      schema: schema('Removes a note corresponding to a single commit from a repository', {
        params: NoteParams,
        response: { 204: NoContent },
      }),
      config: { auth: write },
    },
    async (request, reply) => {
      const t = await open(request, 'write');
      await svc.removeNote(t, signedIn(request).user, request.params.sha);
      return reply.code(204).send(null);
    },
  );

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
    const result = await svc.changeFile(t, signedIn(request).user, input);
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
      const result = await svc.changeFiles(t, signedIn(request).user, {
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
      const commit = await svc.applyDiffPatch(t, signedIn(request).user, {
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

  // Raw files and archives, streamed

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
    { schema: rawSchema('Get a file from a repository'), config: { auth: read } },
    serveRaw(false),
  );
  app.get(
    `${base}/media/*`,
    { schema: rawSchema("Get a file or it's LFS object from a repository"), config: { auth: read } },
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

  // Refs, trees, blobs, annotated tags

  const refsHandler = async (request: FastifyRequest) => {
    const t = await open(request);
    const filter = (request.params as Record<string, string>)['*'];
    const { refs, exact } = await svc.refs(t, filter || undefined);
    const links = await svc.linksFor(t, []);
    const json = refs.map((r) => toReferenceJson(r, links));
    return exact ? json[0] : json;
  };
  const refsResponse = { 200: Type.Union([Reference, Type.Array(Reference)]) };

  app.get(
    `${base}/git/refs`,
    {
      schema: schema('Get specified ref or filtered repository refs', {
        params: Params,
        response: refsResponse,
      }),
      config: { auth: read },
    },
    refsHandler,
  );

  app.get(
    `${base}/git/refs/*`,
    {
      schema: schema('Get specified ref or filtered repository refs', {
        description:
          'Refs whose name starts with refs/{ref}; a single object when one ref has exactly that name.',
        params: WildParams('part or full name of the ref'),
        response: refsResponse,
      }),
      config: { auth: read },
    },
    refsHandler,
  );

  app.get(
    `${base}/git/trees/:sha`,
    {
      schema: schema('Gets the tree of a repository.', {
        params: ShaParams,
        querystring: Type.Object({
          recursive: Type.Optional(Type.Boolean({ description: 'show all directories and files' })),
          page: Type.Optional(Type.Integer({ description: 'page number; the first page is 1' })),
          per_page: Type.Optional(Type.Integer({ description: 'number of items per page (at most 1000)' })),
        }),
        response: { 200: GitTreeResponse },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t: Target = await open(request);
      const q = request.query;
      const tree = await svc.tree(t, request.params.sha, {
        recursive: q.recursive ?? false,
        page: q.page ?? 1,
        perPage: q.per_page ?? 0,
      });
      const links = await svc.linksFor(t, []);
      return {
        sha: tree.sha,
        url: `${links.api}/git/trees/${tree.sha}`,
        tree: tree.entries.map((e) => toGitEntryJson(e, links)),
        truncated: tree.truncated,
        page: tree.page,
        total_count: tree.total,
      };
    },
  );

  app.get(
    `${base}/git/blobs/:sha`,
    {
      schema: schema('Gets the blob of a repository.', {
        params: ShaParams,
        response: { 200: GitBlobResponse },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      const b = await svc.blob(t, request.params.sha);
      return {
        content: b.content ? b.content.toString('base64') : null,
        encoding: 'base64',
        url: `${t.links.api}/git/blobs/${b.oid}`,
        sha: b.oid,
        size: b.size,
      };
    },
  );

  app.get(
    `${base}/git/tags/:sha`,
    {
      schema: schema('Gets the tag object of an annotated tag (not lightweight tags)', {
        params: ShaParams,
        response: { 200: AnnotatedTag },
      }),
      config: { auth: read },
    },
    async (request) => {
      const t = await open(request);
      return toAnnotatedTagJson(await svc.annotatedTag(t, request.params.sha), await svc.linksFor(t, []));
    },
  );
}
