// The Actions pages of a repository, at Forgejo's addresses: the runs (filtered by workflow, event,
// status, branch and actor) with the workflows beside them (disable, enable, "Run workflow" with
// the dispatch inputs), a run with its jobs and artifacts, a job's log folded per step (followed
// live by actions.js through the job's JSON), the log download, re-runs, cancelling, and the
// workflow's status badge. Readers of the repository's actions see them (a private repository is
// 404 to others); writers act. Everything goes through the services the API uses.
import type { FastifyRequest } from 'fastify';
import type { ArtifactService } from '../artifacts/service.js';
import { AppError, invalidField, notFound } from '../errors.js';
import { RepoHeader } from '../repos/code-pages.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import { Pager, pageNumber } from '../web/components.js';
import { Layout } from '../web/layout.js';
import { formText, type PageRoutes, type Web } from '../web/plugin.js';
import { badgeLabel, badgeSvg } from './badge.js';
import { ansiToHtml, humanDuration, lineKind, stepsOf, type LogStep } from './log-view.js';
import type { RunControl, Rerun, WorkflowInfo } from './run-control.js';
import {
  ArtifactList,
  elapsed,
  Filters,
  JobList,
  JobLog,
  RunHead,
  RunList,
  STATUS_LABELS,
  STEP_ROWS,
  Status,
  WorkflowControls,
  WorkflowSide,
  type LogLine,
  type RunFilterValues,
} from './run-views.js';
import type { ActionsService } from './service.js';
import { isDone, type JobRow, type RunRow } from './tables.js';

export interface RunPagesDeps {
  actions: Pick<ActionsService, 'assertEnabled' | 'listRuns' | 'dispatch' | 'jobLog'>;
  control: Pick<
    RunControl,
    | 'workflows'
    | 'setDisabled'
    | 'requireRunByNumber'
    | 'jobsOf'
    | 'latestRun'
    | 'cancel'
    | 'approve'
    | 'rerun'
    | 'taskOf'
    | 'logMarks'
    | 'logRows'
  >;
  repos: Pick<RepoService, 'requireRepo'>;
  users: Pick<UserService, 'getById' | 'getByIds' | 'getByName'>;
  artifacts: Pick<ArtifactService, 'listOfRepo' | 'downloadUrlFor'>;
  pageSize: number;
}

type Params = Record<string, string | undefined>;

/** A name no row can have (control characters, which some databases refuse outright, or too long). */
// eslint-disable-next-line no-control-regex -- control characters
const impossibleName = (v: string) => /[\x00-\x1f]/.test(v) || v.length > 255;

/** Forgejo's numbers for statuses in `?status=` (its filter's values). */
const STATUS_NUMBERS: Record<string, string> = {
  '1': 'success',
  '2': 'failure',
  '3': 'cancelled',
  '4': 'skipped',
  '5': 'waiting',
  '6': 'running',
  '7': 'blocked',
};

/** Most log rows of one step answered per JSON request. */
const JSON_ROWS = 1000;

interface Target {
  repo: RepoRow;
  owner: UserRow;
  base: string;
  canWrite: boolean;
}

export function runPages(deps: RunPagesDeps): PageRoutes {
  return (app, web: Web) => {
    const { actions, control, repos, users, artifacts } = deps;

    async function open(request: FastifyRequest, need: 'read' | 'write' = 'read'): Promise<Target> {
      const p = request.params as Params;
      if (need === 'write') web.requireUser(request);
      actions.assertEnabled();
      const { repo, access } = await repos.requireRepo(
        p['owner'] ?? '',
        p['repo'] ?? '',
        request.web.viewer,
        need,
        'repo.actions',
      );
      if (!repo.has_actions) throw notFound('actions are disabled for this repository');
      const owner = (await users.getById(repo.owner_id))!;
      const canWrite = (access.units.get('repo.actions') ?? 0) >= 2 && !repo.is_archived;
      return { repo, owner, base: `/${owner.name}/${repo.name}`, canWrite };
    }

    async function openRun(request: FastifyRequest, need: 'read' | 'write' = 'read') {
      const t = await open(request, need);
      const raw = (request.params as Params)['run'] ?? '';
      const run = await control.requireRunByNumber(t.repo, /^\d{1,15}$/.test(raw) ? Number(raw) : 0);
      return { ...t, run, jobs: await control.jobsOf(run) };
    }

    async function openJob(request: FastifyRequest, need: 'read' | 'write' = 'read') {
      const t = await openRun(request, need);
      const raw = (request.params as Params)['job'] ?? '';
      const index = /^\d{1,6}$/.test(raw) ? Number(raw) : -1;
      const job = t.jobs[index];
      if (!job) throw notFound(`job does not exist [index: ${raw}]`);
      return { ...t, job, index };
    }

    const actorName = async (run: RunRow) =>
      run.trigger_user_id === -2
        ? 'anvil-actions'
        : ((await users.getById(run.trigger_user_id))?.name ?? 'Ghost');

    // The runs

    async function listPage(
      request: FastifyRequest,
      t: Target,
      form?: { workflow: string; ref: string; inputs: Record<string, string>; error: string },
    ) {
      const q = request.query as Params;
      const f: RunFilterValues = {
        workflow: form?.workflow ?? formText(q['workflow']),
        event: formText(q['event']),
        status: formText(q['status']),
        branch: formText(q['branch']),
        actor: formText(q['actor']),
      };
      // A value no run can have matches nothing.
      const impossible = Object.values(f).some(impossibleName);
      const status = STATUS_NUMBERS[f.status] ?? f.status;
      let actorId: number | undefined;
      if (/^-?\d{1,15}$/.test(f.actor)) actorId = Number(f.actor);
      else if (f.actor && !impossible) actorId = (await users.getByName(f.actor))?.id ?? 0;
      const pageNo = pageNumber(q['page']);
      const size = deps.pageSize;
      const [[runs, total], workflows] = await Promise.all([
        impossible
          ? Promise.resolve([[], 0] as [RunRow[], number])
          : actions.listRuns(
              t.repo,
              {
                workflowId: f.workflow || undefined,
                events: f.event ? [f.event] : undefined,
                statuses: status ? [status] : undefined,
                ref: f.branch ? `refs/heads/${f.branch}` : undefined,
                triggerUserId: actorId,
              },
              size,
              (pageNo - 1) * size,
            ),
        control.workflows(t.repo),
      ]);
      const actors = await users.getByIds(
        [...new Set(runs.map((r) => r.trigger_user_id))].filter((id) => id > 0),
      );
      const current: WorkflowInfo | undefined = workflows.find((w) => w.id === f.workflow);
      const query = new URLSearchParams(
        Object.entries(f).filter(([, v]) => v !== '') as Array<[string, string]>,
      ).toString();
      const now = Math.floor(Date.now() / 1000);
      return (
        <Layout page={web.page(request)} title={`Actions · ${t.owner.name}/${t.repo.name}`}>
          <RepoHeader t={{ owner: t.owner, repo: t.repo }} active="actions" />
          <div class="act-layout">
            <WorkflowSide
              page={web.page(request)}
              base={t.base}
              workflows={workflows}
              current={f.workflow}
              canWrite={t.canWrite}
            />
            <div class="act-main">
              {current ? (
                <WorkflowControls
                  page={web.page(request)}
                  base={t.base}
                  workflow={current}
                  defaultRef={t.repo.default_branch}
                  canWrite={t.canWrite}
                  form={form}
                />
              ) : null}
              <Filters base={t.base} f={f} />
              <p class="muted">
                {total} workflow run{total === 1 ? '' : 's'}
              </p>
              <RunList base={t.base} runs={runs} actors={actors} now={now} />
              <Pager path={`${t.base}/actions`} page={pageNo} pageSize={size} total={total} query={query} />
            </div>
          </div>
        </Layout>
      );
    }

    app.get('/:owner/:repo/actions', async (request, reply) => {
      const t = await open(request);
      return web.send(reply, await listPage(request, t));
    });

    for (const verb of ['disable', 'enable'] as const) {
      app.post(`/:owner/:repo/actions/${verb}`, async (request, reply) => {
        const t = await open(request, 'write');
        const workflow = formText((request.query as Params)['workflow']);
        await control.setDisabled(t.repo, workflow, verb === 'disable');
        return web.redirect(reply, `${t.base}/actions?workflow=${encodeURIComponent(workflow)}`, {
          kind: 'info',
          text: verb === 'disable' ? `Workflow ${workflow} disabled.` : `Workflow ${workflow} enabled.`,
        });
      });
    }

    app.post('/:owner/:repo/actions/manual', async (request, reply) => {
      const t = await open(request, 'write');
      const user = web.requireUser(request);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const workflow = formText(body['workflow']);
      const ref = formText(body['ref']).trim();
      const wf = (await control.workflows(t.repo)).find((w) => w.id === workflow);
      if (!wf?.dispatch) throw notFound(`workflow does not exist or cannot be run [name: ${workflow}]`);
      const inputs: Record<string, string> = {};
      for (const [name, spec] of Object.entries(wf.dispatch)) {
        const key = `inputs[${name}]`;
        if (spec.type === 'boolean') {
          // The form shows every boolean input as a box: not sent means not ticked.
          const v = formText(body[key]);
          inputs[name] = v === 'true' || v === 'on' ? 'true' : 'false';
        } else if (key in body) {
          inputs[name] = formText(body[key]);
        }
      }
      try {
        if (!ref) throw invalidField('ref', 'a branch or tag is required');
        const { run } = await actions.dispatch(t.repo, user, workflow, ref, inputs);
        return web.redirect(reply, `${t.base}/actions/runs/${run.run_number}`, {
          kind: 'info',
          text: `Workflow ${workflow} was started.`,
        });
      } catch (err) {
        if (!(err instanceof AppError) || !['bad_request', 'invalid', 'not_found'].includes(err.kind))
          throw err;
        const page = await listPage(request, t, { workflow, ref, inputs, error: err.message });
        return web.send(reply, page, 422);
      }
    });

    // A run

    app.get('/:owner/:repo/actions/runs/:run', async (request, reply) => {
      const t = await openRun(request);
      const now = Math.floor(Date.now() / 1000);
      const [[arts], actor] = await Promise.all([
        artifacts.listOfRepo(t.repo, { runId: t.run.id }, 100, 0),
        actorName(t.run),
      ]);
      return web.send(
        reply,
        <Layout
          page={web.page(request)}
          title={`${t.run.title} #${t.run.run_number} · ${t.owner.name}/${t.repo.name}`}
        >
          <RepoHeader t={{ owner: t.owner, repo: t.repo }} active="actions" />
          <RunHead
            page={web.page(request)}
            base={t.base}
            run={t.run}
            actor={actor}
            canWrite={t.canWrite}
            hasFailed={t.jobs.some((j) => j.status === 'failure' || j.status === 'cancelled')}
            now={now}
          />
          <section aria-labelledby="jobs-heading">
            <h3 id="jobs-heading">Jobs</h3>
            <JobList base={t.base} run={t.run} jobs={t.jobs} now={now} />
          </section>
          <ArtifactList base={t.base} run={t.run} artifacts={arts} now={now} />
        </Layout>,
      );
    });

    const rerunRoute = (
      path: string,
      which: (jobs: JobRow[], request: FastifyRequest) => Rerun,
      to: string,
    ) => {
      app.post(path, async (request, reply) => {
        const t = await openRun(request, 'write');
        const runUrl = `${t.base}/actions/runs/${t.run.run_number}`;
        try {
          const n = await control.rerun(t.run, which(t.jobs, request));
          return web.redirect(
            reply,
            `${runUrl}${to === 'job' ? `/jobs/${(request.params as Params)['job']}` : ''}`,
            {
              kind: n ? 'info' : 'error',
              text: n ? `${n} job${n === 1 ? '' : 's'} started again.` : 'No job to run again.',
            },
          );
        } catch (err) {
          if (err instanceof AppError && err.kind === 'conflict') {
            return web.redirect(reply, runUrl, { kind: 'error', text: err.message });
          }
          throw err;
        }
      });
    };
    rerunRoute('/:owner/:repo/actions/runs/:run/rerun', () => ({ kind: 'all' }), 'run');
    rerunRoute('/:owner/:repo/actions/runs/:run/rerun-failed', () => ({ kind: 'failed' }), 'run');
    rerunRoute(
      '/:owner/:repo/actions/runs/:run/jobs/:job/rerun',
      (jobs, request) => {
        const raw = (request.params as Params)['job'] ?? '';
        const job = /^\d{1,6}$/.test(raw) ? jobs[Number(raw)] : undefined;
        if (!job) throw notFound(`job does not exist [index: ${raw}]`);
        return { kind: 'job', job };
      },
      'job',
    );

    app.post('/:owner/:repo/actions/runs/:run/cancel', async (request, reply) => {
      const t = await openRun(request, 'write');
      const runUrl = `${t.base}/actions/runs/${t.run.run_number}`;
      try {
        await control.cancel(t.run);
        return web.redirect(reply, runUrl, { kind: 'info', text: 'The run was cancelled.' });
      } catch (err) {
        if (err instanceof AppError && err.kind === 'conflict') {
          return web.redirect(reply, runUrl, { kind: 'error', text: err.message });
        }
        throw err;
      }
    });

    // Forgejo's approval of a fork's pull request run, by a writer.
    app.post('/:owner/:repo/actions/runs/:run/approve', async (request, reply) => {
      const t = await openRun(request, 'write');
      const runUrl = `${t.base}/actions/runs/${t.run.run_number}`;
      const user = web.requireUser(request);
      try {
        await control.approve(t.run, user.id);
        return web.redirect(reply, runUrl, { kind: 'info', text: 'The run was approved.' });
      } catch (err) {
        if (err instanceof AppError && err.kind === 'conflict') {
          return web.redirect(reply, runUrl, { kind: 'error', text: err.message });
        }
        throw err;
      }
    });

    app.get('/:owner/:repo/actions/runs/:run/artifacts/:name', async (request, reply) => {
      const t = await openRun(request);
      const name = (request.params as Params)['name'] ?? '';
      if (impossibleName(name)) throw notFound(`artifact does not exist [name: ${name.slice(0, 255)}]`);
      const [rows] = await artifacts.listOfRepo(t.repo, { runId: t.run.id, name }, 1, 0);
      const a = rows[0];
      if (!a) throw notFound(`artifact does not exist [name: ${name}]`);
      if (a.expires_unix <= Math.floor(Date.now() / 1000)) {
        return web.errorPage(request, reply, 410, `The artifact ${name} has expired.`);
      }
      return reply
        .code(302)
        .header('Location', await artifacts.downloadUrlFor(a))
        .send();
    });

    // A job

    async function stepsAndTask(job: JobRow) {
      const task = await control.taskOf(job);
      const marks = task ? await control.logMarks(task) : [];
      return { task, steps: stepsOf(marks, task, job, Date.now()) };
    }

    app.get('/:owner/:repo/actions/runs/:run/jobs/:job', async (request, reply) => {
      const t = await openJob(request);
      const now = Math.floor(Date.now() / 1000);
      const { task, steps } = await stepsAndTask(t.job);
      const rows = new Map<number, LogLine[]>();
      if (task) {
        await Promise.all(
          steps.map(async (s, i) =>
            rows.set(i, await control.logRows(task, s.start, Math.min(s.end - s.start, STEP_ROWS))),
          ),
        );
      }
      const actor = await actorName(t.run);
      const jobUrl = `${t.base}/actions/runs/${t.run.run_number}/jobs/${t.index}`;
      const done = isDone(t.job.status) && isDone(t.run.status);
      const page = web.page(request);
      return web.send(
        reply,
        <Layout page={page} title={`${t.job.name} · ${t.run.title} #${t.run.run_number}`} wide>
          <RepoHeader t={{ owner: t.owner, repo: t.repo }} active="actions" />
          <RunHead
            page={page}
            base={t.base}
            run={t.run}
            actor={actor}
            canWrite={t.canWrite}
            hasFailed={t.jobs.some((j) => j.status === 'failure' || j.status === 'cancelled')}
            now={now}
          />
          <div class="act-layout">
            <JobList base={t.base} run={t.run} jobs={t.jobs} current={t.index} now={now} />
            <div class="act-main">
              <div class="act-job-head">
                <h3>
                  {t.job.name} <Status status={t.job.status} />
                </h3>
                <div class="actions">
                  <a class="button" href={`${jobUrl}/logs`} download>
                    Download log
                  </a>
                  {t.canWrite && isDone(t.run.status) ? (
                    <form method="post" action={`${jobUrl}/rerun`} class="inline">
                      <input type="hidden" name="_csrf" value={page.csrf} />
                      <button type="submit">Re-run this job</button>
                    </form>
                  ) : null}
                </div>
              </div>
              {t.job.status === 'blocked' && t.job.concurrency_held ? (
                <p class="flash info" role="status">
                  Waiting for another job of the concurrency group <code>{t.job.concurrency_group}</code> to
                  finish.
                </p>
              ) : null}
              <JobLog steps={steps} rows={rows} jobUrl={jobUrl} jobDone={done} />
            </div>
          </div>
          {done ? null : <script src={page.asset('actions.js')} defer />}
        </Layout>,
      );
    });

    // The job's state and new log lines, for actions.js (as Forgejo's POST of the job's page).
    app.post('/:owner/:repo/actions/runs/:run/jobs/:job', async (request, reply) => {
      const t = await openJob(request);
      const body = request.body;
      const raw =
        body && typeof body === 'object' && !Array.isArray(body)
          ? (body as Record<string, unknown>)['logCursors']
          : undefined;
      const cursors: Array<{ step: number; cursor: number }> = [];
      if (raw !== undefined) {
        if (!Array.isArray(raw) || raw.length > 500)
          throw invalidField('logCursors', 'must be a list of cursors');
        for (const c of raw as unknown[]) {
          const o = (c && typeof c === 'object' ? c : {}) as Record<string, unknown>;
          const step = o['step'];
          const cursor = o['cursor'] ?? 0;
          if (
            !Number.isSafeInteger(step) ||
            !Number.isSafeInteger(cursor) ||
            (step as number) < 0 ||
            (cursor as number) < 0
          ) {
            throw invalidField('logCursors', 'each cursor has a step and a cursor, whole numbers from 0');
          }
          if (o['expanded'] === false) continue;
          cursors.push({ step: step as number, cursor: cursor as number });
        }
      }
      const { task, steps } = await stepsAndTask(t.job);
      const now = Math.floor(Date.now() / 1000);
      const stepsLog = [];
      for (const c of cursors) {
        const s: LogStep | undefined = steps[c.step];
        if (!s || !task) continue;
        const from = s.start + c.cursor;
        const rows = from < s.end ? await control.logRows(task, from, Math.min(s.end - from, JSON_ROWS)) : [];
        stepsLog.push({
          step: c.step,
          cursor: c.cursor + rows.length,
          started: Math.floor(s.startMs / 1000),
          lines: rows.map((r, i) => ({
            index: c.cursor + i + 1,
            message: r.content,
            // The line as the page shows it: escaped, ANSI colours as classes.
            html: ansiToHtml(r.content),
            kind: lineKind(r.content) ?? null,
            timestamp: r.time_ms / 1000,
          })),
        });
      }
      return reply
        .type('application/json; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .send({
          state: {
            run: {
              index: t.run.run_number,
              title: t.run.title,
              status: t.run.status,
              done: isDone(t.run.status),
              jobs: t.jobs.map((j, i) => ({
                index: i,
                name: j.name,
                status: j.status,
                duration: humanDuration(elapsed(j, now) * 1000),
              })),
            },
            currentJob: {
              title: t.job.name,
              status: t.job.status,
              detail: STATUS_LABELS[t.job.status] ?? t.job.status,
              done: isDone(t.job.status),
              steps: steps.map((s) => ({
                summary: s.name,
                duration: humanDuration(s.endMs - s.startMs),
                status: s.status,
                length: s.end - s.start,
              })),
            },
          },
          logs: { stepsLog },
        });
    });

    app.get('/:owner/:repo/actions/runs/:run/jobs/:job/logs', async (request, reply) => {
      const t = await openJob(request);
      const name = `${t.owner.name}-${t.repo.name}-${t.run.run_number}-${t.index}.log`.replace(
        /[^\w.-]/g,
        '_',
      );
      return reply
        .type('text/plain; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="${name}"`)
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-store')
        .send(await actions.jobLog(t.job));
    });

    // The badge

    app.get('/:owner/:repo/actions/workflows/:file/badge.svg', async (request, reply) => {
      const t = await open(request);
      const file = (request.params as Params)['file'] ?? '';
      const q = request.query as Params;
      const branch = formText(q['branch']) || t.repo.default_branch;
      const event = formText(q['event']);
      const run = [file, branch, event].some(impossibleName)
        ? undefined
        : await control.latestRun(t.repo, file, branch, event || undefined);
      return reply
        .type('image/svg+xml; charset=utf-8')
        .header('Cache-Control', `${t.repo.is_private ? 'private' : 'public'}, max-age=60, must-revalidate`)
        .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
        .header('X-Content-Type-Options', 'nosniff')
        .send(badgeSvg(badgeLabel(file), run?.status));
    });
  };
}
