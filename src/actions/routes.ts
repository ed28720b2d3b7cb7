// HTTP routes of actions.
//
// Under /api/v1: secrets and variables of organizations, repositories and the signed-in user
// (available whether or not actions are enabled); runs, jobs, tasks, logs, dispatches, runners and
// their registration tokens (404 while [actions] ENABLED is false).
//
// At the server root, in a scope of their own: the runner-facing connect-rpc endpoints under
// /api/actions/ (runner-protocol.ts).
import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Api } from '../http/types.js';
import { signedIn, type RouteAuth } from '../http/auth.js';
import { PageFields, pageOf, sendPage, setPageHeaders, type PagingSettings } from '../http/pagination.js';
import { declares } from '../quota/schemas.js';
import { notFound } from '../errors.js';
import type { OrgService } from '../orgs/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import { toUserJson } from '../users/schemas.js';
import type { UserRow } from '../users/tables.js';
import type { RepoRow } from '../repos/tables.js';
import { nowUnix } from '../db/database.js';
import { ACTIONS_BOT_ID, botUserJson } from './bot.js';
import type { ActionsService } from './service.js';
import type { RunnerService } from './runners.js';
import { runnerProtocolRoutes, type RunnerProtocolDeps } from './runner-protocol.js';
import {
  ActionRunJob,
  ActionRunner,
  ActionRunnersResponse,
  ActionTaskResponse,
  ActionVariable,
  CreateOrUpdateSecretOption,
  CreateVariableOption,
  DispatchWorkflowOption,
  DispatchWorkflowRun,
  ListRepoActionRunResponse,
  RegistrationToken,
  RepoActionRun,
  Secret,
  UpdateVariableOption,
  toJobJson,
  toRunJson,
  toRunnerJson,
  toSecretJson,
  toTaskJson,
  toVariableJson,
  type RepoLinks,
} from './schemas.js';
import type { RunRow, Scope } from './tables.js';

const RepoParams = Type.Object({
  owner: Type.String({ description: 'owner of the repo' }),
  repo: Type.String({ description: 'name of the repo' }),
});
const OrgParams = Type.Object({ org: Type.String({ description: 'name of the organization' }) });
const SecretName = { secretname: Type.String({ description: 'name of the secret' }) };
const VariableName = { variablename: Type.String({ description: 'name of the variable' }) };
const RunnerId = { runner_id: Type.Integer({ description: 'id of the runner' }) };
const PageQuery = Type.Object(PageFields);
const NoContent = Type.Null();

type Level = 'org' | 'repo' | 'user';

export interface ActionsRoutesDeps {
  actions: ActionsService;
  runners: RunnerService;
  repos: Pick<RepoService, 'requireRepo' | 'getByIds'>;
  orgs: Pick<OrgService, 'requireVisibleOrg' | 'requireOwner'>;
  users: Pick<UserService, 'getById' | 'getByIds'>;
  paging: PagingSettings;
  rootUrl: string;
}

/** Actions API under /api/v1 (secrets, variables, runs, jobs, tasks, dispatch, runners). */
export function actionsRoutes(app: Api, deps: ActionsRoutesDeps): void {
  const { actions, runners, repos, orgs, users, paging, rootUrl } = deps;
  const auth: Record<Level, RouteAuth> = {
    org: { scope: 'organization', require: 'signed' },
    repo: { scope: 'repository', require: 'signed' },
    user: { scope: 'user', require: 'signed' },
  };
  const admin: RouteAuth = { scope: 'admin', admin: true };
  const tagOf: Record<Level, string[]> = { org: ['organization'], repo: ['repository'], user: ['user'] };

  /** The repository when the caller administers it (404 when they cannot see it, 403 otherwise). */
  async function adminRepo(request: FastifyRequest, p: { owner: string; repo: string }): Promise<RepoRow> {
    return (await repos.requireRepo(p.owner, p.repo, request.viewer, 'admin')).repo;
  }

  /** The organization when the caller owns it (or is a site administrator). */
  async function ownedOrg(request: FastifyRequest, name: string): Promise<UserRow> {
    const org = await orgs.requireVisibleOrg(name, request.viewer);
    await orgs.requireOwner(org, request.viewer!);
    return org;
  }

  /** The scope of a request at `level`, after checking the caller may manage it. */
  async function scopeOf(request: FastifyRequest, level: Level): Promise<Scope> {
    const p = request.params as { org?: string; owner?: string; repo?: string };
    if (level === 'repo') return { ownerId: null, repoId: (await adminRepo(request, p as never)).id };
    if (level === 'org') return { ownerId: (await ownedOrg(request, p.org!)).id, repoId: null };
    return { ownerId: signedIn(request).user.id, repoId: null };
  }

  const prefix: Record<Level, string> = {
    org: '/orgs/:org/actions',
    repo: '/repos/:owner/:repo/actions',
    user: '/user/actions',
  };
  const paramsOf: Record<Level, typeof OrgParams | typeof RepoParams | undefined> = {
    org: OrgParams,
    repo: RepoParams,
    user: undefined,
  };
  const withParams = (
    level: Level,
    extra: Record<string, ReturnType<typeof Type.String | typeof Type.Integer>>,
  ) => Type.Object({ ...(paramsOf[level]?.properties ?? {}), ...extra });
  const whose: Record<Level, string> = {
    org: 'an organization',
    repo: 'a repository',
    user: 'the signed-in user',
  };

  for (const level of ['org', 'repo', 'user'] as const) {
    const tags = tagOf[level];
    const config = { auth: auth[level] };

    // Secrets

    app.get(
      `${prefix[level]}/secrets`,
      {
        schema: {
          tags,
          summary: `List the secrets of ${whose[level]}`,
          description: 'Names and creation times only: a value is never shown.',
          ...(paramsOf[level] ? { params: paramsOf[level] } : {}),
          querystring: PageQuery,
          response: { 200: Type.Array(Secret), ...declares(403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        const page = pageOf(request.query as { page?: number; limit?: number }, paging);
        const result = await actions.listSecrets(scope, page.limit, page.offset);
        return sendPage(request, reply, result, page, rootUrl, toSecretJson);
      },
    );

    app.put(
      `${prefix[level]}/secrets/:secretname`,
      {
        schema: {
          tags,
          summary: `Create or update a secret of ${whose[level]}`,
          description:
            'Names are letters, digits and `_` (stored upper case), not starting with a digit, ' +
            '`GITHUB_`, `GITEA_` or `FORGEJO_` (400 otherwise). The value is encrypted at rest.',
          params: withParams(level, SecretName),
          body: CreateOrUpdateSecretOption,
          response: { 201: NoContent, 204: NoContent, ...declares(400, 403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        const { secretname } = request.params as { secretname: string };
        const done = await actions.putSecret(scope, secretname, (request.body as { data: string }).data);
        // An empty body for both, as Forgejo answers.
        return reply.code(done === 'created' ? 201 : 204).send(undefined as unknown as null);
      },
    );

    app.delete(
      `${prefix[level]}/secrets/:secretname`,
      {
        schema: {
          tags,
          summary: `Delete a secret of ${whose[level]}`,
          params: withParams(level, SecretName),
          response: { 204: NoContent, ...declares(400, 403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        await actions.deleteSecret(scope, (request.params as { secretname: string }).secretname);
        return reply.code(204).send(null);
      },
    );

    // Variables

    app.get(
      `${prefix[level]}/variables`,
      {
        schema: {
          tags,
          summary: `List the variables of ${whose[level]}`,
          ...(paramsOf[level] ? { params: paramsOf[level] } : {}),
          querystring: PageQuery,
          response: { 200: Type.Array(ActionVariable), ...declares(403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        const page = pageOf(request.query as { page?: number; limit?: number }, paging);
        const result = await actions.listVariables(scope, page.limit, page.offset);
        return sendPage(request, reply, result, page, rootUrl, toVariableJson);
      },
    );

    app.get(
      `${prefix[level]}/variables/:variablename`,
      {
        schema: {
          tags,
          summary: `Get a variable of ${whose[level]}`,
          params: withParams(level, VariableName),
          response: { 200: ActionVariable, ...declares(400, 403, 404) },
        },
        config,
      },
      async (request) => {
        const scope = await scopeOf(request, level);
        return toVariableJson(
          await actions.getVariable(scope, (request.params as { variablename: string }).variablename),
        );
      },
    );

    app.post(
      `${prefix[level]}/variables/:variablename`,
      {
        schema: {
          tags,
          summary: `Create a variable of ${whose[level]}`,
          description: 'Names follow the rules of secret names; 409 when the name is taken.',
          params: withParams(level, VariableName),
          body: CreateVariableOption,
          response: { 201: NoContent, ...declares(400, 403, 404, 409) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        const { variablename } = request.params as { variablename: string };
        await actions.createVariable(scope, variablename, (request.body as { value: string }).value);
        return reply.code(201).send(undefined as unknown as null);
      },
    );

    app.put(
      `${prefix[level]}/variables/:variablename`,
      {
        schema: {
          tags,
          summary: `Update a variable of ${whose[level]}`,
          description: 'A non-empty `name` renames it (409 when that name is taken).',
          params: withParams(level, VariableName),
          body: UpdateVariableOption,
          response: { 204: NoContent, ...declares(400, 403, 404, 409) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        const { variablename } = request.params as { variablename: string };
        await actions.updateVariable(scope, variablename, request.body as { name?: string; value: string });
        return reply.code(204).send(null);
      },
    );

    app.delete(
      `${prefix[level]}/variables/:variablename`,
      {
        schema: {
          tags,
          summary: `Delete a variable of ${whose[level]}`,
          params: withParams(level, VariableName),
          response: { 204: NoContent, ...declares(400, 403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await scopeOf(request, level);
        await actions.deleteVariable(scope, (request.params as { variablename: string }).variablename);
        return reply.code(204).send(null);
      },
    );
  }

  // Runners and registration tokens (actions enabled only)

  const runnerLevels: Array<{
    level: Level | 'admin';
    tokenPath: string;
    listPath: string;
    jobsPath: string;
  }> = [
    {
      level: 'repo',
      tokenPath: '/repos/:owner/:repo/actions/runners/registration-token',
      listPath: '/repos/:owner/:repo/actions/runners',
      jobsPath: '/repos/:owner/:repo/actions/runners/jobs',
    },
    {
      level: 'org',
      tokenPath: '/orgs/:org/actions/runners/registration-token',
      listPath: '/orgs/:org/actions/runners',
      jobsPath: '/orgs/:org/actions/runners/jobs',
    },
    {
      level: 'user',
      tokenPath: '/user/actions/runners/registration-token',
      listPath: '/user/actions/runners',
      jobsPath: '/user/actions/runners/jobs',
    },
    {
      level: 'admin',
      tokenPath: '/admin/runners/registration-token',
      listPath: '/admin/actions/runners',
      jobsPath: '/admin/runners/jobs',
    },
  ];

  for (const { level, tokenPath, listPath, jobsPath } of runnerLevels) {
    const tags = level === 'admin' ? ['admin'] : tagOf[level];
    const config = { auth: level === 'admin' ? admin : auth[level] };
    const params = level === 'admin' ? undefined : paramsOf[level];
    const runnerScope = async (request: FastifyRequest): Promise<Scope> => {
      actions.assertEnabled();
      return level === 'admin' ? { ownerId: null, repoId: null } : scopeOf(request, level);
    };
    const where =
      level === 'admin' ? 'the instance' : level === 'user' ? 'the signed-in user' : `${whose[level]}`;

    const tokenHandler = async (request: FastifyRequest) => ({
      token: await runners.registrationToken(await runnerScope(request)),
    });
    for (const method of ['GET', 'POST'] as const) {
      app.route({
        method,
        url: tokenPath,
        schema: {
          tags,
          summary: `Get the runner registration token of ${where}`,
          description:
            'The same token until it is replaced; runners registered with it run jobs of ' +
            `${where}. 404 when actions are disabled.`,
          ...(params ? { params } : {}),
          response: { 200: RegistrationToken, ...declares(403, 404) },
        },
        config,
        handler: tokenHandler,
      });
    }

    app.get(
      listPath,
      {
        schema: {
          tags,
          summary: `List the runners of ${where}`,
          ...(params ? { params } : {}),
          querystring: PageQuery,
          response: { 200: ActionRunnersResponse, ...declares(403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await runnerScope(request);
        const page = pageOf(request.query as { page?: number; limit?: number }, paging);
        const [rows, total, busy] = await runners.list(scope, page.limit, page.offset);
        setPageHeaders(request, reply, total, page, rootUrl);
        const now = nowUnix();
        return { runners: rows.map((r) => toRunnerJson(r, busy.has(r.id), now)), total_count: total };
      },
    );

    app.get(
      `${listPath}/:runner_id`,
      {
        schema: {
          tags,
          summary: `Get a runner of ${where}`,
          params: Type.Object({ ...(params?.properties ?? {}), ...RunnerId }),
          response: { 200: ActionRunner, ...declares(403, 404) },
        },
        config,
      },
      async (request) => {
        const scope = await runnerScope(request);
        const { runner, busy } = await runners.require(
          scope,
          (request.params as { runner_id: number }).runner_id,
        );
        return toRunnerJson(runner, busy, nowUnix());
      },
    );

    app.delete(
      `${listPath}/:runner_id`,
      {
        schema: {
          tags,
          summary: `Delete a runner of ${where}`,
          description: 'Its token stops working; a task it runs is given up when it next reports.',
          params: Type.Object({ ...(params?.properties ?? {}), ...RunnerId }),
          response: { 204: NoContent, ...declares(403, 404) },
        },
        config,
      },
      async (request, reply) => {
        const scope = await runnerScope(request);
        await runners.delete(scope, (request.params as { runner_id: number }).runner_id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      jobsPath,
      {
        schema: {
          tags,
          summary: `Search the waiting jobs of ${where}`,
          description:
            'Jobs waiting for a runner whose runs-on labels are all among `labels` (comma-separated).',
          ...(params ? { params } : {}),
          querystring: Type.Object({ labels: Type.Optional(Type.String()) }),
          response: { 200: Type.Array(ActionRunJob), ...declares(403, 404) },
        },
        config,
      },
      async (request) => {
        const scope = await runnerScope(request);
        const labels = ((request.query as { labels?: string }).labels ?? '').split(',');
        const jobs = await runners.waitingJobs(scope, labels, paging.maxResponseItems);
        const owners = await repos.getByIds([...new Set(jobs.map((j) => j.repo_id))]);
        return jobs.map((j) => toJobJson(j, owners.get(j.repo_id)?.owner_id ?? 0));
      },
    );
  }

  // Runs, jobs, tasks and dispatches (actions enabled only)

  const RunParams = Type.Object({
    ...RepoParams.properties,
    run_id: Type.Integer({ description: 'id of the run' }),
  });
  const JobParams = Type.Object({
    ...RepoParams.properties,
    job_id: Type.Integer({ description: 'id of the job' }),
  });
  const read: RouteAuth = { scope: 'repository' };
  const tags = ['repository'];

  /** The repository when actions are enabled and the caller may read (or write) its actions. */
  async function actionsRepo(
    request: FastifyRequest,
    p: { owner: string; repo: string },
    need: 'read' | 'write' = 'read',
  ): Promise<{ repo: RepoRow; links: RepoLinks }> {
    actions.assertEnabled();
    const { repo } = await repos.requireRepo(p.owner, p.repo, request.viewer, need, 'repo.actions');
    if (!repo.has_actions) throw notFound('actions are disabled for this repository');
    const owner = await users.getById(repo.owner_id);
    const fullName = `${encodeURIComponent(owner?.name ?? '')}/${encodeURIComponent(repo.name)}`;
    return { repo, links: { rootUrl, fullName, ownerId: repo.owner_id } };
  }

  async function runsJson(request: FastifyRequest, runs: RunRow[], links: RepoLinks) {
    const triggers = await users.getByIds(
      [...new Set(runs.map((r) => r.trigger_user_id))].filter((id) => id > 0),
    );
    return runs.map((r) => {
      const u = triggers.get(r.trigger_user_id);
      const actor =
        r.trigger_user_id === ACTIONS_BOT_ID
          ? botUserJson(rootUrl)
          : u
            ? toUserJson(u, { rootUrl, viewer: request.viewer })
            : null;
      return toRunJson(r, links, actor);
    });
  }

  app.get(
    '/repos/:owner/:repo/actions/runs',
    {
      schema: {
        tags,
        summary: "List a repository's workflow runs",
        description: 'Newest first. 404 when actions are disabled.',
        params: RepoParams,
        querystring: Type.Object({
          ...PageFields,
          event: Type.Optional(Type.Array(Type.String(), { description: 'workflow event name' })),
          status: Type.Optional(Type.Array(Type.String(), { description: 'workflow status' })),
          run_number: Type.Optional(Type.Integer({ description: 'run number' })),
          head_sha: Type.Optional(Type.String({ description: 'commit SHA' })),
        }),
        response: { 200: ListRepoActionRunResponse, ...declares(400, 403, 404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo, links } = await actionsRepo(request, request.params);
      const q = request.query;
      const page = pageOf(q, paging);
      const [runs, total] = await actions.listRuns(
        repo,
        { events: q.event, statuses: q.status, runNumber: q.run_number, headSha: q.head_sha },
        page.limit,
        page.offset,
      );
      setPageHeaders(request, reply, total, page, rootUrl);
      return { total_count: total, workflow_runs: await runsJson(request, runs, links) };
    },
  );

  app.get(
    '/repos/:owner/:repo/actions/runs/:run_id',
    {
      schema: {
        tags,
        summary: 'Get a workflow run',
        params: RunParams,
        response: { 200: RepoActionRun, ...declares(400, 403, 404) },
      },
      config: { auth: read },
    },
    async (request) => {
      const { repo, links } = await actionsRepo(request, request.params);
      const run = await actions.requireRun(repo, request.params.run_id);
      return (await runsJson(request, [run], links))[0]!;
    },
  );

  app.get(
    '/repos/:owner/:repo/actions/runs/:run_id/jobs',
    {
      schema: {
        tags,
        summary: 'List the jobs of a workflow run',
        params: RunParams,
        querystring: PageQuery,
        response: { 200: Type.Array(ActionRunJob), ...declares(403, 404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo, links } = await actionsRepo(request, request.params);
      const run = await actions.requireRun(repo, request.params.run_id);
      const page = pageOf(request.query, paging);
      return sendPage(
        request,
        reply,
        await actions.listJobs(run, page.limit, page.offset),
        page,
        rootUrl,
        (j) => toJobJson(j, links.ownerId),
      );
    },
  );

  app.get(
    '/repos/:owner/:repo/actions/jobs/:job_id/logs',
    {
      schema: {
        tags,
        summary: 'Get the log of a job',
        description: 'The log of its latest task, a timestamp and a line per row (secret values are masked).',
        params: JobParams,
        response: { 200: Type.String(), ...declares(403, 404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo } = await actionsRepo(request, request.params);
      const job = await actions.requireJob(repo, request.params.job_id);
      return reply.type('text/plain; charset=utf-8').send(await actions.jobLog(job));
    },
  );

  app.get(
    '/repos/:owner/:repo/actions/tasks',
    {
      schema: {
        tags,
        summary: "List a repository's action tasks",
        params: RepoParams,
        querystring: PageQuery,
        response: { 200: ActionTaskResponse, ...declares(400, 403, 404) },
      },
      config: { auth: read },
    },
    async (request, reply) => {
      const { repo, links } = await actionsRepo(request, request.params);
      const page = pageOf(request.query, paging);
      const [tasks, total] = await actions.listTasks(repo, page.limit, page.offset);
      setPageHeaders(request, reply, total, page, rootUrl);
      return { total_count: total, workflow_runs: tasks.map((t) => toTaskJson(t, links)) };
    },
  );

  app.post(
    '/repos/:owner/:repo/actions/workflows/:workflowname/dispatches',
    {
      schema: {
        tags,
        summary: 'Dispatches a workflow',
        description:
          'Runs the workflow file `workflowname` (for example `ci.yml`) of the branch or tag `ref` ' +
          'when it has a workflow_dispatch trigger (400 otherwise, and for a missing required input). ' +
          '204, or 201 with the run when `return_run_info` is set.',
        params: Type.Object({
          ...RepoParams.properties,
          workflowname: Type.String({ description: 'name of the workflow' }),
        }),
        body: DispatchWorkflowOption,
        response: { 201: DispatchWorkflowRun, 204: NoContent, ...declares(400, 403, 404) },
      },
      config: { auth: auth.repo },
    },
    async (request, reply) => {
      const { repo } = await actionsRepo(request, request.params, 'write');
      const b = request.body;
      const { run, jobs } = await actions.dispatch(
        repo,
        signedIn(request).user,
        request.params.workflowname,
        b.ref,
        b.inputs ?? {},
      );
      if (b.return_run_info) {
        return reply
          .code(201)
          .send({ id: run.id, run_number: run.run_number, jobs: jobs.map((j) => j.name) });
      }
      return reply.code(204).send(null);
    },
  );
}

/** Runner-facing endpoints outside /api/v1 (under /api/actions/), in their own scope. */
export function actionsRunnerRoutes(app: FastifyInstance, deps: RunnerProtocolDeps): void {
  runnerProtocolRoutes(app, deps);
}
