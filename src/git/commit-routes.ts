// The git data API's commits (a page of history, one commit, its diff or patch), the comparison of
// two revisions, and git notes.
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedIn } from '../http/auth.js';
import { PageFields, pageOf, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { MAX_COMMIT_PAGE, type GitDataService, type Target } from './data-service.js';
import type { GitRefService } from './data-refs.js';
import {
  CommitOptionsQuery,
  NoContent,
  Params,
  RepoParams,
  WildParams,
  base,
  opener,
  read,
  schema,
  wild,
  write,
} from './data-route-kit.js';
import { Commit, Compare, type CommitJson, Note, NoteOptions, toCommitJson } from './data-schemas.js';

export interface CommitRoutesDeps {
  gitData: GitDataService;
  gitRefs: GitRefService;
  paging: PagingSettings;
  rootUrl: string;
}

export function commitRoutes(app: Api, deps: CommitRoutesDeps): void {
  const { gitData: svc, gitRefs: refs, paging, rootUrl } = deps;
  const open = opener(svc);

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
      const page = pageOf(q, paging);
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
      setPageHeaders(request, reply, total, page, rootUrl);
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
      await refs.setNote(t, signedIn(request).user, request.params.sha, request.body?.message ?? '');
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
      await refs.removeNote(t, signedIn(request).user, request.params.sha);
      return reply.code(204).send(null);
    },
  );
}
