// The pieces of the Actions pages (run-pages.tsx): status icons, the runs list with its filters
// and the workflows beside it (disable, enable, the "Run workflow" form), a run's jobs and
// artifacts, and a job's log folded per step.
import type { VNode } from 'preact';
import type { ArtifactRow } from '../artifacts/tables.js';
import { formatBytes, When } from '../web/components.js';
import { Icon, type IconName } from '../web/icons.js';
import { CsrfField, type PageContext } from '../web/layout.js';
import type { UserRow } from '../users/tables.js';
import { ansiToHtml, humanDuration, lineKind, type LogStep } from './log-view.js';
import type { WorkflowInfo } from './run-control.js';
import { isDone, type JobRow, type RunRow } from './tables.js';

export const STATUS_LABELS: Record<string, string> = {
  success: 'Success',
  failure: 'Failure',
  cancelled: 'Cancelled',
  skipped: 'Skipped',
  waiting: 'Waiting',
  running: 'Running',
  blocked: 'Blocked',
};

const ICONS: Record<string, IconName> = {
  success: 'run-success',
  failure: 'run-failure',
  cancelled: 'run-cancelled',
  skipped: 'run-skipped',
  waiting: 'run-waiting',
  running: 'run-running',
  blocked: 'run-cancelled',
};

export function StatusIcon(props: { status: string }): VNode {
  return <Icon name={ICONS[props.status] ?? 'run-waiting'} class={`run-status ${props.status}`} />;
}

/** The status as an icon and a word. */
export function Status(props: { status: string }): VNode {
  return (
    <span class={`run-state ${props.status}`} data-status={props.status}>
      <StatusIcon status={props.status} /> {STATUS_LABELS[props.status] ?? props.status}
    </span>
  );
}

const refName = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, '');
const encPath = (p: string) => p.split('/').map(encodeURIComponent).join('/');

/** Seconds a run or job has taken (so far). */
export function elapsed(row: { started_unix: number; stopped_unix: number }, now: number): number {
  if (!row.started_unix) return 0;
  return (row.stopped_unix || now) - row.started_unix;
}

export interface RunFilterValues {
  workflow: string;
  event: string;
  status: string;
  branch: string;
  actor: string;
}

export function Filters(props: { base: string; f: RunFilterValues }): VNode {
  const { f } = props;
  return (
    <form method="get" action={`${props.base}/actions`} class="act-filters" aria-label="Filter runs">
      {f.workflow ? <input type="hidden" name="workflow" value={f.workflow} /> : null}
      <label>
        Event{' '}
        <select name="event">
          <option value="">All events</option>
          {['push', 'pull_request', 'workflow_dispatch'].map((e) => (
            <option value={e} selected={f.event === e}>
              {e}
            </option>
          ))}
        </select>
      </label>
      <label>
        Status{' '}
        <select name="status">
          <option value="">All statuses</option>
          {Object.entries(STATUS_LABELS).map(([k, v]) => (
            <option value={k} selected={f.status === k}>
              {v}
            </option>
          ))}
        </select>
      </label>
      <label>
        Branch <input type="text" name="branch" value={f.branch} size={12} />
      </label>
      <label>
        Actor <input type="text" name="actor" value={f.actor} size={12} />
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

export function RunList(props: {
  base: string;
  runs: RunRow[];
  actors: Map<number, UserRow>;
  now: number;
}): VNode {
  if (!props.runs.length) return <p class="empty">No workflow runs match.</p>;
  return (
    <ul class="list act-runs">
      {props.runs.map((r) => (
        <li>
          <StatusIcon status={r.status} />
          <div class="grow">
            <p>
              <a class="title" href={`${props.base}/actions/runs/${r.run_number}`}>
                {r.title || r.workflow_id}
              </a>
              <span class="sr-only"> ({STATUS_LABELS[r.status] ?? r.status})</span>
            </p>
            <p class="muted">
              <strong>{r.workflow_id}</strong> #{r.run_number}: {r.event}{' '}
              {r.trigger_user_id === -2
                ? 'by anvil-actions'
                : `by ${props.actors.get(r.trigger_user_id)?.name ?? 'Ghost'}`}{' '}
              · <When unix={r.created_unix} />
            </p>
          </div>
          <div class="act-run-meta muted">
            <span class="pill">{refName(r.ref)}</span>
            <span>{humanDuration(elapsed(r, props.now) * 1000)}</span>
          </div>
        </li>
      ))}
    </ul>
  );
}

/** The workflows beside the runs: each a filter link, with disable/enable for writers. */
export function WorkflowSide(props: {
  page: PageContext;
  base: string;
  workflows: WorkflowInfo[];
  current: string;
  canWrite: boolean;
}): VNode {
  const { base } = props;
  return (
    <nav class="act-workflows" aria-label="Workflows">
      <ul>
        <li>
          <a href={`${base}/actions`} aria-current={props.current === '' ? 'page' : undefined}>
            All workflows
          </a>
        </li>
        {props.workflows.map((w) => (
          <li>
            <a
              href={`${base}/actions?workflow=${encodeURIComponent(w.id)}`}
              aria-current={props.current === w.id ? 'page' : undefined}
              title={w.path}
            >
              {w.id}
            </a>
            {w.disabled ? <span class="pill">Disabled</span> : null}
            {w.error ? (
              <span class="pill" title={w.error}>
                Invalid
              </span>
            ) : null}
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** What the current workflow's header offers writers: disable/enable and the dispatch form. */
export function WorkflowControls(props: {
  page: PageContext;
  base: string;
  workflow: WorkflowInfo;
  defaultRef: string;
  canWrite: boolean;
  form?: { ref: string; inputs: Record<string, string>; error: string } | undefined;
}): VNode {
  const { base, workflow: w } = props;
  const q = `workflow=${encodeURIComponent(w.id)}`;
  return (
    <div class="act-workflow card">
      <h2>{w.name}</h2>
      <p class="muted">
        <code>{w.path}</code>
        {w.disabled ? ' · This workflow is disabled: nothing triggers it.' : null}
      </p>
      {w.error ? <p class="field-error">{w.error}</p> : null}
      <p class="muted">
        Badge:{' '}
        <img src={`${base}/actions/workflows/${encodeURIComponent(w.id)}/badge.svg`} alt={`${w.id} status`} />
      </p>
      {props.canWrite ? (
        <div class="actions">
          <form
            method="post"
            action={`${base}/actions/${w.disabled ? 'enable' : 'disable'}?${q}`}
            class="inline"
          >
            <CsrfField page={props.page} />
            <button type="submit">{w.disabled ? 'Enable workflow' : 'Disable workflow'}</button>
          </form>
        </div>
      ) : null}
      {props.canWrite && w.dispatch && !w.disabled ? (
        <DispatchForm
          page={props.page}
          base={base}
          workflow={w}
          defaultRef={props.defaultRef}
          form={props.form}
        />
      ) : null}
    </div>
  );
}

function DispatchForm(props: {
  page: PageContext;
  base: string;
  workflow: WorkflowInfo;
  defaultRef: string;
  form?: { ref: string; inputs: Record<string, string>; error: string } | undefined;
}): VNode {
  const f = props.form;
  const inputs = Object.entries(props.workflow.dispatch ?? {});
  return (
    <details class="act-dispatch" open={!!f}>
      <summary>Run workflow</summary>
      <form method="post" action={`${props.base}/actions/manual`}>
        <CsrfField page={props.page} />
        <input type="hidden" name="workflow" value={props.workflow.id} />
        {f?.error ? (
          <p class="field-error" role="alert">
            {f.error}
          </p>
        ) : null}
        <div class="field">
          <label for="dispatch-ref">Branch or tag</label>
          <input id="dispatch-ref" name="ref" type="text" required value={f?.ref ?? props.defaultRef} />
        </div>
        {inputs.map(([name, spec]) => {
          const id = `dispatch-input-${name}`;
          const field = `inputs[${name}]`;
          const value = f?.inputs[name] ?? spec.default ?? '';
          const label = spec.description || name;
          if (spec.type === 'boolean') {
            return (
              <div class="field check">
                <label for={id}>
                  <input id={id} type="checkbox" name={field} value="true" checked={value === 'true'} />{' '}
                  {label}
                </label>
              </div>
            );
          }
          if (spec.type === 'choice') {
            return (
              <div class="field">
                <label for={id}>{label}</label>
                <select id={id} name={field} required={spec.required}>
                  {spec.options.map((o) => (
                    <option value={o} selected={o === value}>
                      {o}
                    </option>
                  ))}
                </select>
              </div>
            );
          }
          return (
            <div class="field">
              <label for={id}>{label}</label>
              {spec.type === 'number' ? (
                <input id={id} name={field} type="number" step="any" value={value} required={spec.required} />
              ) : (
                <input id={id} name={field} type="text" value={value} required={spec.required} />
              )}
            </div>
          );
        })}
        <button type="submit" class="primary">
          Run workflow
        </button>
      </form>
    </details>
  );
}

/** A POST button (re-run, cancel). */
export function PostButton(props: { page: PageContext; action: string; label: string; primary?: boolean }) {
  return (
    <form method="post" action={props.action} class="inline">
      <CsrfField page={props.page} />
      <button type="submit" class={props.primary ? 'primary' : undefined}>
        {props.label}
      </button>
    </form>
  );
}

/** A run's heading: title, status, what triggered it, and (for writers) cancel and re-run. */
export function RunHead(props: {
  page: PageContext;
  base: string;
  run: RunRow;
  actor: string;
  canWrite: boolean;
  hasFailed: boolean;
  now: number;
}): VNode {
  const { run, base } = props;
  const runUrl = `${base}/actions/runs/${run.run_number}`;
  return (
    <div class="act-run-head">
      <h2>
        <StatusIcon status={run.status} /> {run.title || run.workflow_id}{' '}
        <span class="muted">#{run.run_number}</span>
      </h2>
      <p class="muted">
        <Status status={run.status} /> ·{' '}
        <a href={`${base}/actions?workflow=${encodeURIComponent(run.workflow_id)}`}>{run.workflow_id}</a> ·{' '}
        {run.event} by {props.actor} on{' '}
        <a
          href={`${base}/src/${run.ref.startsWith('refs/tags/') ? 'tag' : 'branch'}/${encPath(refName(run.ref))}`}
        >
          {refName(run.ref)}
        </a>{' '}
        at <a href={`${base}/commit/${run.commit_sha}`}>{run.commit_sha.slice(0, 10)}</a> ·{' '}
        <When unix={run.created_unix} /> · {humanDuration(elapsed(run, props.now) * 1000)}
      </p>
      {run.error ? (
        <p class="flash error" role="alert">
          Invalid workflow file <code>{run.workflow_path}</code>: {run.error}
        </p>
      ) : null}
      {run.need_approval ? (
        <p class="flash info" role="status">
          This run of a pull request from a fork waits for a maintainer's approval before its jobs start.
          {props.canWrite ? (
            <>
              {' '}
              <PostButton page={props.page} action={`${runUrl}/approve`} label="Approve and run" primary />
            </>
          ) : null}
        </p>
      ) : run.status === 'blocked' && run.concurrency_group ? (
        <p class="flash info" role="status">
          Waiting for another run of the concurrency group <code>{run.concurrency_group}</code> to finish.
        </p>
      ) : null}
      {props.canWrite ? (
        <div class="actions">
          {!isDone(run.status) ? (
            <PostButton page={props.page} action={`${runUrl}/cancel`} label="Cancel run" />
          ) : null}
          {isDone(run.status) ? (
            <PostButton page={props.page} action={`${runUrl}/rerun`} label="Re-run all jobs" />
          ) : null}
          {isDone(run.status) && props.hasFailed ? (
            <PostButton page={props.page} action={`${runUrl}/rerun-failed`} label="Re-run failed jobs" />
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/** The jobs of a run, each linking to its page. */
export function JobList(props: {
  base: string;
  run: RunRow;
  jobs: JobRow[];
  current?: number | undefined;
  now: number;
}): VNode {
  const runUrl = `${props.base}/actions/runs/${props.run.run_number}`;
  return (
    <nav class="act-jobs" aria-label="Jobs">
      <ul class="list">
        {props.jobs.map((j, i) => (
          <li>
            <StatusIcon status={j.status} />
            <a
              class="grow"
              href={`${runUrl}/jobs/${i}`}
              aria-current={props.current === i ? 'page' : undefined}
            >
              {j.name}
              <span class="sr-only"> ({STATUS_LABELS[j.status] ?? j.status})</span>
            </a>
            <span class="muted">{j.started_unix ? humanDuration(elapsed(j, props.now) * 1000) : ''}</span>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function ArtifactList(props: {
  base: string;
  run: RunRow;
  artifacts: ArtifactRow[];
  now: number;
}): VNode {
  const runUrl = `${props.base}/actions/runs/${props.run.run_number}`;
  return (
    <section class="act-artifacts" aria-labelledby="artifacts-heading">
      <h3 id="artifacts-heading">Artifacts</h3>
      {props.artifacts.length === 0 ? (
        <p class="empty">This run has no artifacts.</p>
      ) : (
        <ul class="list">
          {props.artifacts.map((a) => (
            <li>
              {a.expires_unix <= props.now ? (
                <span class="grow">
                  {a.name} <span class="pill">Expired</span>
                </span>
              ) : (
                <a class="grow" href={`${runUrl}/artifacts/${encodeURIComponent(a.name)}`}>
                  {a.name}
                </a>
              )}
              <span class="muted">{formatBytes(Number(a.size))}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export interface LogLine {
  idx: number;
  time_ms: number;
  content: string;
}

/** One log row: its number in the step (a link to itself), its time, and its text. */
export function LogLineView(props: { step: number; n: number; line: LogLine }): VNode {
  const id = `jobstep-${props.step}-${props.n}`;
  const kind = lineKind(props.line.content);
  const t = new Date(props.line.time_ms);
  return (
    <div class={kind ? `log-line log-${kind}` : 'log-line'} id={id}>
      <a class="log-num" href={`#${id}`}>
        {props.n}
      </a>
      <time class="log-time" dateTime={t.toISOString()}>
        {t.toISOString().slice(11, 19)}
      </time>
      <span class="log-msg" dangerouslySetInnerHTML={{ __html: ansiToHtml(props.line.content) }} />
    </div>
  );
}

/** Most rows of one step drawn into the page (the script or the download has the rest). */
export const STEP_ROWS = 2000;

/** The job's log, one fold per step; the last (or a failed) step open. */
export function JobLog(props: {
  steps: LogStep[];
  rows: Map<number, LogLine[]>;
  jobUrl: string;
  jobDone: boolean;
}): VNode {
  const open = props.steps.findIndex((s) => s.status === 'failure');
  const openIndex = open >= 0 ? open : props.steps.length - 1;
  return (
    <section
      class="act-log"
      id="job-log"
      aria-label="Log"
      data-url={props.jobUrl}
      data-done={props.jobDone ? '1' : '0'}
    >
      {props.steps.length === 0 ? (
        <p class="empty" id="log-empty">
          The job has not started yet.
        </p>
      ) : null}
      {props.jobDone ? null : (
        <template id="log-icons">
          {Object.keys(STATUS_LABELS).map((s) => (
            <span data-status={s}>
              <StatusIcon status={s} />
            </span>
          ))}
        </template>
      )}
      {props.steps.map((s, i) => {
        const rows = props.rows.get(i) ?? [];
        const total = s.end - s.start;
        return (
          <details
            class="log-step"
            open={i === openIndex}
            data-step={i}
            data-cursor={rows.length}
            data-length={total}
            data-status={s.status}
          >
            <summary>
              <StatusIcon status={s.status} /> <span class="log-step-name">{s.name}</span>
              <span class="log-step-time muted">{humanDuration(s.endMs - s.startMs)}</span>
            </summary>
            <div class="log-lines">
              {rows.map((line, n) => (
                <LogLineView step={i} n={n + 1} line={line} />
              ))}
            </div>
            {total > rows.length ? (
              <p class="muted log-more">
                {total - rows.length} more lines: <a href={`${props.jobUrl}/logs`}>download the log</a>.
              </p>
            ) : null}
          </details>
        );
      })}
    </section>
  );
}
