// Workflow triggers and what holds runs back, with real git pushes (runs-on labels no runner has,
// so runs stay where the rules put them): `on.schedule` recorded from the default branch and
// fired once per time however many schedulers tick at once (each tick a process of a cluster),
// `[skip ci]`, `concurrency` groups (a run held while another of its group runs, a newer pending
// one replacing it, cancel-in-progress; the same for job-level groups), and pull requests from forks waiting for a writer's
// approval (refused to others).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';
import { WebClient } from '../helpers/web.js';

interface Run {
  id: number;
  event: string;
  status: string;
  run_number: number;
  head_sha: string;
}

/** Polls until `check` gives a value (10 s at most). */
async function poll<T>(check: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + 10_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('gave up waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const wf = (on: string, extra = '') => `on:
${on}
${extra}
jobs:
  j:
    runs-on: nowhere
    steps: [{ run: 'true' }]
`;

describe('actions triggers', () => {
  let s: TestServer;
  const git = new GitClient();
  let owner: { name: string; password: string; token: string; id: number };
  let wt: string;
  let remote: string;

  const runs = async (repo = 'triggers', query = '') => {
    const r = await s.api<{ workflow_runs: Run[] }>(
      'GET',
      `/repos/${owner.name}/${repo}/actions/runs?limit=50${query}`,
      { token: owner.token },
    );
    assert.equal(r.status, 200, r.text);
    return r.body.workflow_runs;
  };
  const row = async (id: number) =>
    (await s.ctx.db.selectFrom('action_run').selectAll().where('id', '=', id).executeTakeFirstOrThrow())!;
  const push = async (file: string, content: string, message?: string, branch = 'main') => {
    const sha = await git.commit(wt, file, content, message);
    await git.git(['push', '--quiet', remote, `HEAD:refs/heads/${branch}`], wt);
    return sha;
  };

  before(async () => {
    s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true' });
    owner = await s.createUser('trig-owner');
    assert.equal(
      (await s.api('POST', '/user/repos', { token: owner.token, body: { name: 'triggers' } })).status,
      201,
    );
    wt = await git.workTree('main');
    remote = repoUrl(s.url, owner.name, 'triggers', [owner.name, owner.token]);
    await push('README.md', '# triggers\n');
  });
  after(async () => {
    await s?.close();
    git.cleanup();
  });

  it('records the schedules of the default branch and fires each time once, however many tick', async () => {
    await push(
      '.forgejo/workflows/nightly.yml',
      wf("  schedule:\n    - cron: '*/5 * * * *'\n    - cron: '0 3 * * 1'"),
    );
    // Only the default branch schedules; a bad spec makes the file ignored, not a half schedule.
    await push('.forgejo/workflows/other.yml', wf("  schedule:\n    - cron: '* * * * *'"), 'other', 'side');
    await git.git(['reset', '--quiet', '--hard', 'HEAD~1'], wt);
    await push('.forgejo/workflows/bad.yml', wf("  schedule:\n    - cron: '61 * * * *'"));
    const schedules = await poll(async () => {
      const rows = await s.ctx.db.selectFrom('action_schedule').selectAll().orderBy('spec').execute();
      return rows.length === 2 ? rows : undefined;
    });
    assert.deepEqual(
      schedules.map((r) => [r.workflow_id, r.spec]),
      [
        ['nightly.yml', '*/5 * * * *'],
        ['nightly.yml', '0 3 * * 1'],
      ],
    );
    const five = schedules[0]!;
    assert.equal(five.next_unix % 300, 0, 'the next multiple of five minutes');
    assert.equal(five.trigger_user_id, owner.id);
    // Not yet due: nothing starts.
    assert.equal(await s.ctx.workflowSchedules.tick(five.next_unix - 1), 0);
    assert.equal((await runs('triggers', '&event=schedule')).length, 0);
    // Due: three schedulers at once (three processes of a cluster), one run.
    const started = await Promise.all([1, 2, 3].map(() => s.ctx.workflowSchedules.tick(five.next_unix + 5)));
    assert.equal(
      started.reduce((a, b) => a + b, 0),
      1,
    );
    const scheduled = await runs('triggers', '&event=schedule');
    assert.equal(scheduled.length, 1);
    assert.equal(scheduled[0]!.event, 'schedule');
    const payload = JSON.parse((await row(scheduled[0]!.id)).event_payload) as { schedule: string };
    assert.equal(payload.schedule, '*/5 * * * *');
    const moved = await s.ctx.db
      .selectFrom('action_schedule')
      .select('next_unix')
      .where('id', '=', five.id)
      .executeTakeFirstOrThrow();
    assert.equal(moved.next_unix, five.next_unix + 300, 'the next time is five minutes on');
    // Removed from the file: the schedules go with the next push.
    await git.git(['rm', '--quiet', '.forgejo/workflows/bad.yml'], wt);
    await push('.forgejo/workflows/nightly.yml', wf('  workflow_dispatch:'));
    assert.ok(
      await waitFor(
        async () => (await s.ctx.db.selectFrom('action_schedule').selectAll().execute()).length === 0,
      ),
    );
    // The administrators' cron list has the task, and running it now is accepted.
    const cron = await s.api<Array<{ name: string }>>('GET', '/admin/cron', { token: s.admin.token });
    assert.ok(cron.body.some((t) => t.name === 'start_schedule_tasks'));
  });

  it('[skip ci] in the head commit starts nothing', async () => {
    await push('.forgejo/workflows/push.yml', wf('  push:\n    branches: [skip-test]'), 'add push workflow');
    const before = (await runs()).length;
    await push('a.txt', 'a', 'quiet change [skip ci]', 'skip-test');
    await push('b.txt', 'b', 'loud change', 'skip-test');
    await poll(async () => ((await runs()).length > before ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await runs()).length, before + 1, 'only the commit without [skip ci] ran');
  });

  it('concurrency: one run of a group at a time, a newer pending one replaces the older', async () => {
    await push(
      '.forgejo/workflows/group.yml',
      wf('  push:\n    branches: [grp]', 'concurrency:\n  group: deploy-${{ github.ref }}'),
    );
    const known = new Set((await runs()).map((r) => r.id));
    const fresh = async (n: number) =>
      poll(async () => {
        const list = (await runs()).filter((r) => !known.has(r.id));
        return list.length >= n ? list.sort((a, b) => a.id - b.id) : undefined;
      });
    await push('g.txt', '1', 'first', 'grp');
    const [first] = (await fresh(1))!;
    assert.equal(first!.status, 'waiting');
    assert.equal((await row(first!.id)).concurrency_group, 'deploy-refs/heads/grp');
    await push('g.txt', '2', 'second', 'grp');
    const [, second] = (await fresh(2))!;
    assert.equal(second!.status, 'blocked', 'held while the first is under way');
    await push('g.txt', '3', 'third', 'grp');
    const [, second2, third] = (await fresh(3))!;
    assert.equal(second2!.status, 'cancelled', 'the older pending run is replaced');
    assert.equal(third!.status, 'blocked');
    // The first ends (cancelled here): the held one starts.
    await s.ctx.runControl.cancel(await row(first!.id));
    assert.equal((await row(third!.id)).status, 'waiting');
    await s.ctx.runControl.cancel(await row(third!.id));
  });

  it('concurrency with cancel-in-progress cancels the group runs under way', async () => {
    await push(
      '.forgejo/workflows/cip.yml',
      wf('  push:\n    branches: [cip]', 'concurrency:\n  group: cip\n  cancel-in-progress: true'),
    );
    const known = new Set((await runs()).map((r) => r.id));
    const fresh = async (n: number) =>
      poll(async () => {
        const list = (await runs()).filter((r) => !known.has(r.id));
        return list.length >= n ? list.sort((a, b) => a.id - b.id) : undefined;
      });
    await push('c.txt', '1', 'one', 'cip');
    await fresh(1);
    await push('c.txt', '2', 'two', 'cip');
    const [one, two] = (await fresh(2))!;
    assert.equal(one!.status, 'cancelled');
    assert.equal(two!.status, 'waiting');
    await s.ctx.runControl.cancel(await row(two!.id));
  });

  it('job-level concurrency: one job of a group at a time across runs, a newer one replaces the held one', async () => {
    // Two jobs: `free` has no group; `deploy` joins `jc-<branch>`.
    await push(
      '.forgejo/workflows/jobgroup.yml',
      `on:\n  push:\n    branches: [jc]\njobs:\n  free:\n    runs-on: nowhere\n    steps: [{ run: 'true' }]\n` +
        `  deploy:\n    runs-on: nowhere\n    concurrency: jc-\${{ github.ref_name }}\n    steps: [{ run: 'true' }]\n`,
    );
    const known = new Set((await runs()).map((r) => r.id));
    const fresh = async (n: number) =>
      poll(async () => {
        const list = (await runs()).filter((r) => !known.has(r.id));
        return list.length >= n ? list.sort((a, b) => a.id - b.id) : undefined;
      });
    const jobs = (runId: number) =>
      s.ctx.db
        .selectFrom('action_run_job')
        .select(['job_id', 'status', 'concurrency_group', 'concurrency_held'])
        .where('run_id', '=', runId)
        .orderBy('id')
        .execute();
    const deploy = async (runId: number) => (await jobs(runId)).find((j) => j.job_id === 'deploy')!;
    await push('jc.txt', '1', 'first', 'jc');
    const [first] = await fresh(1);
    assert.deepEqual(await deploy(first!.id), {
      job_id: 'deploy',
      status: 'waiting',
      concurrency_group: 'jc-jc',
      concurrency_held: 0,
    });
    await push('jc.txt', '2', 'second', 'jc');
    const [, second] = await fresh(2);
    assert.equal((await deploy(second!.id)).status, 'blocked', 'held while the first one waits');
    assert.equal((await jobs(second!.id)).find((j) => j.job_id === 'free')!.status, 'waiting');
    assert.equal(second!.status, 'waiting', 'the run goes on with its other job');
    // Its page says why it does not start.
    const page = await fetch(`${s.url}/${owner.name}/triggers/actions/runs/${second!.run_number}/jobs/1`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Waiting for another job of the concurrency group <code>jc-jc<\/code>/);
    await push('jc.txt', '3', 'third', 'jc');
    const [, , third] = await fresh(3);
    assert.equal((await deploy(second!.id)).status, 'cancelled', 'the older held job is replaced');
    assert.equal((await deploy(third!.id)).status, 'blocked');
    // The first run ends (cancelled here): the held job becomes runnable.
    await s.ctx.runControl.cancel(await row(first!.id));
    assert.deepEqual(
      { ...(await deploy(third!.id)), job_id: undefined },
      { job_id: undefined, status: 'waiting', concurrency_group: 'jc-jc', concurrency_held: 0 },
    );
    // A replaced job makes its run cancelled (Forgejo's aggregation), its other job still waiting.
    assert.equal((await row(second!.id)).status, 'cancelled');
    await s.ctx.runControl.cancel(await row(third!.id));
  });

  it('job-level concurrency with matrix groups and cancel-in-progress cancels the earlier jobs', async () => {
    await push(
      '.forgejo/workflows/jobcip.yml',
      `on:\n  push:\n    branches: [jcip]\njobs:\n  l:\n    runs-on: nowhere\n    strategy:\n      matrix:\n        n: [1, 2]\n` +
        `    concurrency:\n      group: leg-\${{ matrix.n }}\n      cancel-in-progress: true\n    steps: [{ run: 'true' }]\n`,
    );
    const known = new Set((await runs()).map((r) => r.id));
    const fresh = async (n: number) =>
      poll(async () => {
        const list = (await runs()).filter((r) => !known.has(r.id));
        return list.length >= n ? list.sort((a, b) => a.id - b.id) : undefined;
      });
    const jobs = (runId: number) =>
      s.ctx.db
        .selectFrom('action_run_job')
        .select(['status', 'concurrency_group', 'concurrency_cancel'])
        .where('run_id', '=', runId)
        .orderBy('id')
        .execute();
    await push('jcip.txt', '1', 'one', 'jcip');
    const [one] = await fresh(1);
    assert.deepEqual(await jobs(one!.id), [
      { status: 'waiting', concurrency_group: 'leg-1', concurrency_cancel: 1 },
      { status: 'waiting', concurrency_group: 'leg-2', concurrency_cancel: 1 },
    ]);
    await push('jcip.txt', '2', 'two', 'jcip');
    const [one2, two] = await fresh(2);
    assert.deepEqual(
      (await jobs(one2!.id)).map((j) => j.status),
      ['cancelled', 'cancelled'],
    );
    assert.equal(one2!.status, 'cancelled');
    assert.deepEqual(
      (await jobs(two!.id)).map((j) => j.status),
      ['waiting', 'waiting'],
    );
    await s.ctx.runControl.cancel(await row(two!.id));
  });

  it('job-level concurrency with a runner: a job ending releases the held one, cancel-in-progress stops a running one', async () => {
    const on = (branch: string, conc: string) =>
      `on:\n  push:\n    branches: [${branch}]\njobs:\n  d:\n    runs-on: jc-lane\n    concurrency: ${conc}\n    steps: [{ run: 'true' }]\n`;
    await push('.forgejo/workflows/lane.yml', on('lane', 'lane'));
    await push(
      '.forgejo/workflows/lane-cip.yml',
      on('lane-cip', '{ group: lane, cancel-in-progress: true }'),
    );
    const regToken = await s.api<{ token: string }>(
      'GET',
      `/repos/${owner.name}/triggers/actions/runners/registration-token`,
      { token: owner.token },
    );
    const reg = await s.api<{ runner: { uuid: string; token: string } }>(
      'POST',
      '/api/actions/runner.v1.RunnerService/Register',
      { body: { name: 'lane-runner', token: regToken.body.token, labels: ['jc-lane'], version: 'test' } },
    );
    assert.equal(reg.status, 200, reg.text);
    const headers = { 'x-runner-uuid': reg.body.runner.uuid, 'x-runner-token': reg.body.runner.token };
    const fetchTask = async () => {
      const r = await s.api<{ task?: { id: string } }>(
        'POST',
        '/api/actions/runner.v1.RunnerService/FetchTask',
        {
          body: { tasksVersion: '0' },
          headers,
        },
      );
      assert.equal(r.status, 200, r.text);
      return r.body.task?.id;
    };
    const report = async (id: string) => {
      const r = await s.api<{ state: { result: string } }>(
        'POST',
        '/api/actions/runner.v1.RunnerService/UpdateTask',
        {
          body: { state: { id, result: 'RESULT_SUCCESS' } },
          headers,
        },
      );
      assert.equal(r.status, 200, r.text);
      return r.body.state.result;
    };
    const known = new Set((await runs()).map((r) => r.id));
    const fresh = async (n: number) =>
      poll(async () => {
        const list = (await runs()).filter((r) => !known.has(r.id));
        return list.length >= n ? list.sort((a, b) => a.id - b.id) : undefined;
      });
    const status = async (runId: number) =>
      (
        await s.ctx.db
          .selectFrom('action_run_job')
          .select('status')
          .where('run_id', '=', runId)
          .executeTakeFirstOrThrow()
      ).status;
    await push('lane.txt', '1', 'a', 'lane');
    const [a] = await fresh(1);
    const taskA = await fetchTask();
    assert.ok(taskA);
    assert.equal(await status(a!.id), 'running');
    await push('lane.txt', '2', 'b', 'lane');
    const [, b] = await fresh(2);
    assert.equal(await status(b!.id), 'blocked');
    assert.equal(await fetchTask(), undefined, 'a held job is not handed out');
    // The running job ends: the held one becomes waiting and goes to the runner.
    await report(taskA);
    assert.equal(await status(b!.id), 'waiting');
    const taskB = await fetchTask();
    assert.ok(taskB);
    // A job with cancel-in-progress cancels the running one of the group and waits for a runner.
    await push('lane.txt', '3', 'c', 'lane-cip');
    const [, , c] = await fresh(3);
    assert.equal(
      await poll(async () => ((await status(b!.id)) === 'cancelled' ? 'cancelled' : undefined)),
      'cancelled',
    );
    assert.equal(await report(taskB), 'RESULT_CANCELLED', 'the runner hears its task was cancelled');
    assert.equal(await status(c!.id), 'waiting');
    const taskC = await fetchTask();
    assert.ok(taskC);
    await report(taskC);
    assert.equal((await row(c!.id)).status, 'success');
  });

  it('a job-level concurrency that is not a group name is refused with the reason', async () => {
    const known = new Set((await runs()).map((r) => r.id));
    await push(
      '.forgejo/workflows/badgroup.yml',
      `on:\n  push:\n    branches: [badgroup]\njobs:\n  j:\n    runs-on: nowhere\n    concurrency: [1]\n    steps: [{ run: 'true' }]\n`,
    );
    await push('bg.txt', '1', 'bad group', 'badgroup');
    const [bad] = await poll(async () => {
      const list = (await runs()).filter((r) => !known.has(r.id));
      return list.length ? list : undefined;
    });
    assert.equal(bad!.status, 'failure');
    assert.match((await row(bad!.id)).error, /jobs\.j\.concurrency must be a group name/);
  });

  it('strategy.max-parallel: only that many legs of a matrix wait for runners at first', async () => {
    await push(
      '.forgejo/workflows/legs.yml',
      `on:\n  push:\n    branches: [legs]\njobs:\n  l:\n    runs-on: nowhere\n    strategy:\n      max-parallel: 2\n      matrix:\n        n: [1, 2, 3]\n    steps: [{ run: 'true' }]\n`,
    );
    const known = new Set((await runs()).map((r) => r.id));
    await push('l.txt', 'l', 'legs', 'legs');
    const [run] = await poll(async () => {
      const list = (await runs()).filter((r) => !known.has(r.id));
      return list.length ? list : undefined;
    });
    const jobs = await s.ctx.db
      .selectFrom('action_run_job')
      .select(['status', 'max_parallel'])
      .where('run_id', '=', run!.id)
      .orderBy('id')
      .execute();
    assert.deepEqual(
      jobs.map((j) => j.status),
      ['waiting', 'waiting', 'blocked'],
    );
    assert.equal(run!.status, 'waiting');
    await s.ctx.runControl.cancel(await row(run!.id));
  });

  it('a pushed workflow file that is not valid gets a failed run saying why, once', async () => {
    const known = new Set((await runs()).map((r) => r.id));
    const fresh = async (n: number) =>
      poll(async () => {
        const list = (await runs()).filter((r) => !known.has(r.id));
        return list.length >= n ? list.sort((a, b) => a.id - b.id) : undefined;
      });
    await push(
      '.forgejo/workflows/typo.yml',
      wf('  push:\n    branches: [main]').replace('runs-on', 'run-on'),
    );
    const [typo] = await fresh(1);
    assert.equal(typo!.status, 'failure');
    const stored = await row(typo!.id);
    assert.match(stored.error, /jobs\.j: unknown key "run-on"/);
    await push(
      '.forgejo/workflows/cycle.yml',
      'on: push\njobs:\n  a: { needs: b, runs-on: x, steps: [] }\n  b: { needs: a, runs-on: x, steps: [] }\n',
    );
    await push('.forgejo/workflows/yaml.yml', 'on: [push\njobs: {');
    const list = await fresh(3);
    const errors = await Promise.all(list.map(async (r) => (await row(r.id)).error));
    assert.match(errors[1]!, /cycle: (a → b → a|b → a → b)/);
    assert.match(errors[2]!, /not valid YAML/);
    // The run page says why.
    const web = new WebClient(s.url);
    await web.signIn(owner.name, owner.password);
    const page = await web.get(`/${owner.name}/triggers/actions/runs/${typo!.run_number}`);
    assert.equal(page.status, 200);
    assert.match(
      page.text,
      /Invalid workflow file <code>\.forgejo\/workflows\/typo\.yml<\/code>: .*unknown key/,
    );
    // A push that leaves them as they are starts no more failed runs for them.
    await push('unrelated.txt', 'x');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await runs()).filter((r) => !known.has(r.id)).length, 3);
    for (const f of ['typo', 'cycle', 'yaml']) await git.git(['rm', '-q', `.forgejo/workflows/${f}.yml`], wt);
    await push('unrelated.txt', 'y');
  });

  it('a pull request from a fork waits for a writer to approve it; the forker cannot', async () => {
    // Its own runner label: the other tests' runs wait for `nowhere`.
    await push(
      '.forgejo/workflows/pr.yml',
      wf('  pull_request:\n    branches: [main]').replace('nowhere', 'fork-lane'),
      'pr workflow',
    );
    const outsider = await s.createUser('trig-forker');
    const fork = await s.api('POST', `/repos/${owner.name}/triggers/forks`, {
      token: outsider.token,
      body: {},
    });
    assert.equal(fork.status, 202, fork.text);
    const fwt = await git.workTree('main');
    const forkRemote = repoUrl(s.url, outsider.name, 'triggers', [outsider.name, outsider.token]);
    await git.git(['fetch', '--quiet', forkRemote, 'main'], fwt);
    await git.git(['reset', '--quiet', '--hard', 'FETCH_HEAD'], fwt);
    await git.commit(fwt, 'fork.txt', 'from the fork', 'fork work');
    await git.git(['push', '--quiet', forkRemote, 'HEAD:refs/heads/feature'], fwt);
    const known = new Set((await runs()).map((r) => r.id));
    const pr = await s.api('POST', `/repos/${owner.name}/triggers/pulls`, {
      token: outsider.token,
      body: { title: 'from a fork', head: `${outsider.name}:feature`, base: 'main' },
    });
    assert.equal(pr.status, 201, pr.text);
    const [run] = (await poll(async () => {
      const list = (await runs()).filter((r) => !known.has(r.id) && r.event === 'pull_request');
      return list.length ? list : undefined;
    }))!;
    const stored = await row(run!.id);
    assert.equal(stored.is_fork_pull_request, 1);
    assert.equal(stored.need_approval, 1);
    assert.equal(run!.status, 'blocked');

    const page = `/${owner.name}/triggers/actions/runs/${run!.run_number}`;
    // The forker may read the run but not approve it.
    const forker = new WebClient(s.url);
    await forker.signIn(outsider.name, outsider.password);
    const seen = await forker.get(page);
    assert.equal(seen.status, 200);
    assert.match(seen.text, /waits for a maintainer&#39;s approval|waits for a maintainer's approval/);
    assert.doesNotMatch(seen.text, /Approve and run/);
    const refused = await forker.post(`${page}/approve`, {});
    assert.ok([403, 404].includes(refused.status), `refused: ${refused.status}`);
    // Without the form's CSRF token, even the owner is refused.
    const web = new WebClient(s.url);
    await web.signIn(owner.name, owner.password);
    assert.match((await web.get(page)).text, /Approve and run/);
    assert.equal((await web.post(`${page}/approve`, { _csrf: 'forged' })).status, 403);
    assert.equal((await row(run!.id)).need_approval, 1);
    const approved = await web.post(`${page}/approve`, {});
    assert.equal(approved.status, 303, approved.text);
    const after = await row(run!.id);
    assert.equal(after.need_approval, 0);
    assert.equal(after.approved_by, owner.id);
    assert.equal(after.status, 'waiting');
    // Approving twice says so.
    const again = await web.post(`${page}/approve`, {});
    assert.equal(again.status, 303);

    // Approved, the run's job goes to a runner without the repository's secrets, with a job token
    // that reads but does not write.
    const auth = { token: owner.token };
    assert.equal(
      (
        await s.api('PUT', `/repos/${owner.name}/triggers/actions/secrets/DEPLOY_KEY`, {
          ...auth,
          body: { data: 'hush' },
        })
      ).status,
      201,
    );
    const regToken = await s.api<{ token: string }>(
      'GET',
      `/repos/${owner.name}/triggers/actions/runners/registration-token`,
      auth,
    );
    const reg = await s.api<{ runner: { uuid: string; token: string } }>(
      'POST',
      '/api/actions/runner.v1.RunnerService/Register',
      { body: { name: 'fork-runner', token: regToken.body.token, labels: ['fork-lane'], version: 'test' } },
    );
    assert.equal(reg.status, 200, reg.text);
    const fetched = await s.api<{
      task?: { secrets: Record<string, string>; context: Record<string, unknown> };
    }>('POST', '/api/actions/runner.v1.RunnerService/FetchTask', {
      body: { tasksVersion: '0' },
      headers: { 'x-runner-uuid': reg.body.runner.uuid, 'x-runner-token': reg.body.runner.token },
    });
    assert.equal(fetched.status, 200, fetched.text);
    const task = fetched.body.task;
    assert.ok(task, 'the approved job is handed out');
    assert.equal(task.context['event_name'], 'pull_request');
    assert.equal(task.secrets['DEPLOY_KEY'], undefined, 'no secrets for a fork');
    const jobToken = task.secrets['GITEA_TOKEN']!;
    assert.match(jobToken, /^[0-9a-f]{40}$/);
    const read = await s.api('GET', `/repos/${owner.name}/triggers/contents/README.md`, { token: jobToken });
    assert.equal(read.status, 200, read.text);
    const write = await s.api('POST', `/repos/${owner.name}/triggers/labels`, {
      token: jobToken,
      body: { name: 'from-fork', color: '#000000' },
    });
    assert.equal(write.status, 403, write.text);
    await s.ctx.runControl.cancel(await row(run!.id));
  });
});
