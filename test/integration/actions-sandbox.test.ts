// `anvil runner` runs jobs in a bubblewrap sandbox (when bwrap is installed), masks secrets in
// every form they reach the log in, streams a running step's log, and kills all of a cancelled
// job's processes. Two runner daemons (the bundled CLI) for the whole file: one sandboxed
// (labels self-hosted) and one whose .runner file says `"sandbox": "none"` (label host), and one
// pushed workflow of three jobs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';
import { startRunner, type TestRunner } from '../helpers/runner.js';
import { WebClient } from '../helpers/web.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(ROOT, 'dist', 'bundle', 'cli.js');
const HAVE_BWRAP = (process.env['PATH'] ?? '')
  .split(path.delimiter)
  .some((d) => d && fs.existsSync(path.join(d, 'bwrap')));

const B64_SECRET = 'correct-horse-battery-staple';
const ML_SECRET = 'first-secret-line\nsecond-secret-line';
/** The argument of the cancelled job's sleeping children, to find them in /proc. */
const SLEEP_MARK = '1013.5';

interface Run {
  id: number;
  run_number: number;
  status: string;
}
interface Job {
  id: number;
  name: string;
  status: string;
}

const workflow = (runnerFile: string, otherWorkspace: string) => `on: push
jobs:
  sandboxed:
    runs-on: self-hosted
    env:
      B64: \${{ secrets.B64 }}
      ML: \${{ secrets.ML }}
    steps:
      - name: escape
        run: |
          if cat ${runnerFile}; then echo "LEAKED runner file"; else echo "cannot read the runner file"; fi
          if cat ${otherWorkspace}/marker.txt; then echo "LEAKED workspace"; else echo "cannot read the other workspace"; fi
          echo "tmp holds: $(ls /tmp | tr '\\n' ' ')"
          echo "pid 1 is $(cat /proc/1/comm)"
      - name: secrets
        run: |
          printf '%s' "$B64" | base64 -w0; echo
          printf 'x%s' "$B64" | base64 -w0; echo
          printf 'xy%s' "$B64" | base64 -w0; echo
          echo "$ML"
      - name: stream
        run: |
          echo "streaming in $GITHUB_WORKSPACE"
          for i in $(seq 600); do [ -f release ] && break; sleep 0.1; done
          echo "released after the wait"
  host:
    runs-on: host
    steps:
      - run: |
          if cat ${otherWorkspace}/marker.txt; then echo "host mode reads the host"; fi
  sleeper:
    runs-on: self-hosted
    needs: [sandboxed]
    steps:
      - run: |
          sleep ${SLEEP_MARK} &
          (sleep ${SLEEP_MARK} &)
          echo "children started"
          sleep ${SLEEP_MARK}
`;

/** Processes on this host whose command line is `sleep <SLEEP_MARK>`. */
function sleepers(): number[] {
  const found: number[] = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('sleep') && argv[1] === SLEEP_MARK) found.push(Number(pid));
    } catch {
      // gone
    }
  }
  return found;
}

describe(
  'actions runner sandbox, masks, live logs and cancelling',
  { skip: !HAVE_BWRAP && 'bwrap is not installed' },
  () => {
    let s: TestServer;
    let g: GitClient;
    let alice: { name: string; password: string; token: string };
    let runnerDir: string;
    let otherWorkspace: string;
    const runners: TestRunner[] = [];
    /** What the two runner daemons printed on stderr. */
    const daemonErr = () => runners.map((r) => r.stderr).join('');
    let run: Run;
    const jobs = new Map<string, Job>();

    const api = <T>(method: string, p: string, body?: unknown) =>
      s.api<T>(method, p, { token: alice.token, ...(body ? { body } : {}) });
    const jobLog = async (name: string) =>
      (await api<string>('GET', `/repos/alice/app/actions/jobs/${jobs.get(name)!.id}/logs`)).text;
    const jobStatus = async (name: string) =>
      (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body.find(
        (j) => j.name === name,
      )!.status;

    before(async () => {
      s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true' });
      g = new GitClient();
      alice = await s.createUser('alice');
      assert.equal((await api('POST', '/user/repos', { name: 'app' })).status, 201);
      for (const [name, data] of [
        ['B64', B64_SECRET],
        ['ML', ML_SECRET],
      ]) {
        const r = await api('PUT', `/repos/alice/app/actions/secrets/${name}`, { data });
        assert.ok(r.status === 201 || r.status === 204, r.text);
      }
      runnerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-sandbox-runner-'));
      // What another job's workspace looks like on the host (runner-job.ts makes them in the temp dir).
      otherWorkspace = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-runner-999999-')), 'workspace');
      fs.mkdirSync(otherWorkspace);
      fs.writeFileSync(path.join(otherWorkspace, 'marker.txt'), 'other-job-private-data\n');

      const token = async () =>
        (await api<{ token: string }>('GET', '/repos/alice/app/actions/runners/registration-token')).body
          .token;
      const boxed = path.join(runnerDir, 'boxed');
      const host = path.join(runnerDir, 'host');
      fs.mkdirSync(boxed);
      fs.mkdirSync(host);
      runners.push(
        await startRunner({ cli: CLI, instance: s.url, token: await token(), name: 'boxed', dir: boxed }),
      );
      runners.push(
        await startRunner({
          cli: CLI,
          instance: s.url,
          token: await token(),
          name: 'plain',
          dir: host,
          registerArgs: ['--labels', 'host'],
          // Sandbox off by configuration: the host runner's .runner file says so.
          configure: (file) =>
            fs.writeFileSync(
              file,
              JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), sandbox: 'none' }),
            ),
        }),
      );

      const wt = await g.workTree('main');
      fs.mkdirSync(path.join(wt, '.forgejo', 'workflows'), { recursive: true });
      fs.writeFileSync(
        path.join(wt, '.forgejo', 'workflows', 'ci.yml'),
        workflow(path.join(boxed, '.runner'), otherWorkspace),
      );
      await g.git(['add', '.'], wt);
      await g.git(['commit', '-q', '-m', 'ci'], wt);
      await g.git(['push', '-q', repoUrl(s.url, 'alice', 'app', [alice.name, alice.password]), 'main'], wt);
      assert.ok(
        await waitFor(
          async () => {
            const r = await api<{ workflow_runs: Run[] }>('GET', '/repos/alice/app/actions/runs');
            const first = r.body.workflow_runs[0];
            if (!first) return false;
            run = first;
            const list = (await api<Job[]>('GET', `/repos/alice/app/actions/runs/${run.id}/jobs`)).body;
            for (const j of list) jobs.set(j.name, j);
            return jobs.size === 3;
          },
          30_000,
          200,
        ),
        'the push made a run of three jobs',
      );
    });

    after(async () => {
      for (const r of runners) await r.stop();
      for (const pid of sleepers()) process.kill(pid, 'SIGKILL');
      await s?.close();
      g?.cleanup();
      if (runnerDir) fs.rmSync(runnerDir, { recursive: true, force: true });
      if (otherWorkspace) fs.rmSync(path.dirname(otherWorkspace), { recursive: true, force: true });
    });

    it('shows a running step its log lines before the step ends', async () => {
      let log = '';
      assert.ok(
        await waitFor(
          async () => {
            log = await jobLog('sandboxed');
            return log.includes('streaming in ');
          },
          60_000,
          200,
        ),
        `the running step's first line reached the server (runner said: ${daemonErr()})`,
      );
      assert.ok(!log.includes('released after the wait'), log);
      assert.equal(await jobStatus('sandboxed'), 'running');
      const workspace = /streaming in (\S+)/.exec(log)![1]!;
      // The sandbox's workspace is the host's directory (bind-mounted at the same path).
      fs.writeFileSync(path.join(workspace, 'release'), '');
      assert.ok(
        await waitFor(async () => (await jobStatus('sandboxed')) === 'success', 30_000, 200),
        `the job finished (runner said: ${daemonErr()})`,
      );
      assert.match(await jobLog('sandboxed'), /released after the wait/);
    });

    it("hides the runner's files and other jobs' workspaces from the sandbox", async () => {
      const log = await jobLog('sandboxed');
      assert.match(log, /cannot read the runner file/);
      assert.match(log, /cannot read the other workspace/);
      assert.match(log, /No such file or directory/);
      assert.ok(!log.includes('LEAKED') && !log.includes('other-job-private-data'), log);
      // A private /tmp: its own job's directory (and the empty mount points of the runner's cache).
      assert.match(log, /tmp holds: .*anvil-runner-\d+-\w+ /);
      assert.doesNotMatch(log, /tmp holds: .*anvil-runner-999999/);
      assert.match(log, /pid 1 is bwrap/, 'its own PID namespace');
      assert.match(daemonErr(), /jobs run in a sandbox/);
    });

    it('masks base64 forms and each line of multi-line secrets in the stored log', async () => {
      const log = await jobLog('sandboxed');
      const b64 = (v: string) => Buffer.from(v).toString('base64');
      for (const leak of [
        B64_SECRET,
        b64(B64_SECRET),
        b64(`x${B64_SECRET}`).slice(4, 32),
        b64(`xy${B64_SECRET}`).slice(4, 32),
        'first-secret-line',
        'second-secret-line',
      ]) {
        assert.ok(!log.includes(leak), `${leak} is masked in:\n${log}`);
      }
      assert.ok((log.match(/\*\*\*/g) ?? []).length >= 5, log);
    });

    it('runs on the host when the runner is configured with sandbox none', async () => {
      assert.ok(
        await waitFor(async () => (await jobStatus('host')) === 'success', 60_000, 200),
        `the host job finished (runner said: ${daemonErr()})`,
      );
      const log = await jobLog('host');
      assert.match(log, /other-job-private-data/);
      assert.match(log, /host mode reads the host/);
      assert.match(daemonErr(), /sandbox off \(sandbox: none\)/);
    });

    it('kills every process of a cancelled job', async () => {
      assert.ok(
        await waitFor(async () => (await jobLog('sleeper')).includes('children started'), 60_000, 200),
        `the sleeper job started (runner said: ${daemonErr()})`,
      );
      assert.ok(
        await waitFor(async () => sleepers().length === 3, 10_000, 100),
        `three sleeping processes: ${sleepers().join(', ')}`,
      );
      const web = new WebClient(s.url);
      await web.signIn(alice.name, alice.password);
      await web.get(`/alice/app/actions/runs/${run.run_number}`);
      const r = await web.post(`/alice/app/actions/runs/${run.run_number}/cancel`, {});
      assert.equal(r.status, 303, r.text);
      assert.ok(
        await waitFor(async () => sleepers().length === 0, 30_000, 200),
        `every process of the job is gone: ${sleepers().join(', ')}`,
      );
      assert.ok(await waitFor(async () => (await jobStatus('sleeper')) === 'cancelled', 30_000, 200));
    });
  },
);
