// /repos/{owner}/{repo}/languages (code readers), /issue_templates, /issue_config and
// /issue_config/validate (readers), /flags[/{flag}] (site administrators; others 403 once the
// repository is found) and /hooks/git[/{id}] (repository administrators, then 403 while git
// hooks are disabled, as Forgejo's default).
import { Type } from 'typebox';
import type { Api } from '../http/types.js';
import { signedViewer } from '../http/auth.js';
import { forbidden, notFound } from '../errors.js';
import { RepoParams } from '../http/params.js';
import type { RepoService } from '../repos/service.js';
import type { RepoMetaService } from './service.js';

const IssueFormField = Type.Object(
  {
    type: Type.String(),
    id: Type.String(),
    attributes: Type.Record(Type.String(), Type.Unknown()),
    validations: Type.Record(Type.String(), Type.Unknown()),
    visible: Type.Array(Type.String()),
  },
  { title: 'IssueFormField' },
);
const IssueTemplate = Type.Object(
  {
    name: Type.String(),
    title: Type.String(),
    about: Type.String(),
    labels: Type.Array(Type.String()),
    ref: Type.String(),
    content: Type.String(),
    body: Type.Union([Type.Array(IssueFormField), Type.Null()]),
    file_name: Type.String(),
  },
  { title: 'IssueTemplate' },
);
const IssueConfig = Type.Object(
  {
    blank_issues_enabled: Type.Boolean(),
    contact_links: Type.Array(
      Type.Object(
        { name: Type.String(), url: Type.String(), about: Type.String() },
        { title: 'IssueConfigContactLink' },
      ),
    ),
  },
  { title: 'IssueConfig' },
);
const IssueConfigValidation = Type.Object(
  { valid: Type.Boolean(), message: Type.String() },
  { title: 'IssueConfigValidation' },
);
const ReplaceFlagsOption = Type.Object(
  { flags: Type.Optional(Type.Array(Type.String())) },
  { title: 'ReplaceFlagsOption' },
);
const GitHook = Type.Object(
  { name: Type.String(), is_active: Type.Boolean(), content: Type.String() },
  { title: 'GitHook' },
);
const EditGitHookOption = Type.Object(
  { content: Type.Optional(Type.String()) },
  { title: 'EditGitHookOption' },
);
const FlagParams = Type.Object({ owner: Type.String(), repo: Type.String(), flag: Type.String() });
const HookParams = Type.Object({ owner: Type.String(), repo: Type.String(), id: Type.String() });
const NoContent = { 204: Type.Null() };

export interface RepoMetaRoutesDeps {
  repos: Pick<RepoService, 'requireRepo'>;
  repoMeta: RepoMetaService;
}

export function repoMetaRoutes(app: Api, deps: RepoMetaRoutesDeps): void {
  const { repos, repoMeta } = deps;
  const tags = ['repository'];
  const read = { scope: 'repository' } as const;
  const signed = { scope: 'repository', require: 'signed' } as const;

  app.get(
    '/repos/:owner/:repo/languages',
    {
      schema: {
        tags,
        summary: 'Get languages and number of bytes of code written',
        params: RepoParams,
        response: { 200: Type.Record(Type.String(), Type.Integer()) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { owner, repo: name } = request.params;
      const { repo } = await repos.requireRepo(owner, name, request.viewer, 'read', 'repo.code');
      return repoMeta.languages(repo);
    },
  );

  app.get(
    '/repos/:owner/:repo/issue_templates',
    {
      schema: {
        tags,
        summary: 'Get available issue templates for a repository',
        params: RepoParams,
        response: { 200: Type.Array(IssueTemplate) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const { templates, errors } = await repoMeta.issueTemplates(repo);
      if (errors.size)
        reply.header('X-Gitea-Warning', `error occurs when parsing issue template: count=${errors.size}`);
      return templates;
    },
  );

  app.get(
    '/repos/:owner/:repo/issue_config',
    {
      schema: {
        tags,
        summary: 'Returns the issue config for a repo',
        params: RepoParams,
        response: { 200: IssueConfig },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      return (await repoMeta.issueConfig(repo)).config;
    },
  );

  app.get(
    '/repos/:owner/:repo/issue_config/validate',
    {
      schema: {
        tags,
        summary: 'Returns the validation information for a issue config',
        params: RepoParams,
        response: { 200: IssueConfigValidation },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo } = await repos.requireRepo(request.params.owner, request.params.repo, request.viewer);
      const { error } = await repoMeta.issueConfig(repo);
      return { valid: error === null, message: error ?? '' };
    },
  );

  // Flags: the repository is looked up first (404), then the caller must be a site administrator.
  async function flagged(owner: string, name: string, request: Parameters<typeof signedViewer>[0]) {
    const viewer = signedViewer(request);
    const { repo } = await repos.requireRepo(owner, name, viewer);
    if (!viewer.isAdmin) throw forbidden('user should be the site admin');
    return repo;
  }

  app.get(
    '/repos/:owner/:repo/flags',
    {
      schema: {
        tags,
        summary: "List a repository's flags",
        params: RepoParams,
        response: { 200: Type.Array(Type.String()) },
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const repo = await flagged(request.params.owner, request.params.repo, request);
      const flags = await repoMeta.listFlags(repo);
      reply.header('X-Total-Count', String(flags.length));
      return flags;
    },
  );

  app.put(
    '/repos/:owner/:repo/flags',
    {
      schema: {
        tags,
        summary: 'Replace all flags of a repository',
        params: RepoParams,
        body: ReplaceFlagsOption,
        response: NoContent,
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const repo = await flagged(request.params.owner, request.params.repo, request);
      await repoMeta.replaceFlags(repo, request.body.flags ?? []);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/repos/:owner/:repo/flags',
    {
      schema: {
        tags,
        summary: 'Remove all flags from a repository',
        params: RepoParams,
        response: NoContent,
      },
      config: { auth: signed },
    },
    async (request, reply) => {
      const repo = await flagged(request.params.owner, request.params.repo, request);
      await repoMeta.replaceFlags(repo, []);
      return reply.code(204).send(null);
    },
  );

  for (const [method, summary] of [
    ['GET', 'Check if a repository has a given flag'],
    ['PUT', 'Add a flag to a repository'],
    ['DELETE', 'Remove a flag from a repository'],
  ] as const) {
    app.route({
      method,
      url: '/repos/:owner/:repo/flags/:flag',
      schema: { tags, summary, params: FlagParams, response: NoContent },
      config: { auth: signed },
      handler: async (request, reply) => {
        const { owner, repo: name, flag } = request.params;
        const repo = await flagged(owner, name, request);
        if (method === 'GET') {
          if (!(await repoMeta.hasFlag(repo, flag))) throw notFound();
        } else if (method === 'PUT') await repoMeta.addFlag(repo, flag);
        else await repoMeta.deleteFlag(repo, flag);
        return reply.code(204).send(null);
      },
    });
  }

  // Git hooks: repository administrators only, then Forgejo's 403 while hooks are disabled.

  app.get(
    '/repos/:owner/:repo/hooks/git',
    {
      schema: {
        tags,
        summary: 'List the Git hooks in a repository',
        params: RepoParams,
        response: { 200: Type.Array(GitHook) },
      },
      config: { auth: signed },
    },
    async (request) => {
      await repos.requireRepo(request.params.owner, request.params.repo, signedViewer(request), 'admin');
      return repoMeta.gitHooks();
    },
  );

  app.get(
    '/repos/:owner/:repo/hooks/git/:id',
    {
      schema: { tags, summary: 'Get a Git hook', params: HookParams, response: { 200: GitHook } },
      config: { auth: signed },
    },
    async (request) => {
      await repos.requireRepo(request.params.owner, request.params.repo, signedViewer(request), 'admin');
      return repoMeta.gitHook(request.params.id);
    },
  );

  app.patch(
    '/repos/:owner/:repo/hooks/git/:id',
    {
      schema: {
        tags,
        summary: 'Edit a Git hook in a repository',
        params: HookParams,
        body: EditGitHookOption,
        response: { 200: GitHook },
      },
      config: { auth: signed },
    },
    async (request) => {
      await repos.requireRepo(request.params.owner, request.params.repo, signedViewer(request), 'admin');
      return repoMeta.changeGitHook();
    },
  );

  app.delete(
    '/repos/:owner/:repo/hooks/git/:id',
    {
      schema: { tags, summary: 'Delete a Git hook in a repository', params: HookParams, response: NoContent },
      config: { auth: signed },
    },
    async (request) => {
      await repos.requireRepo(request.params.owner, request.params.repo, signedViewer(request), 'admin');
      return repoMeta.changeGitHook();
    },
  );
}
