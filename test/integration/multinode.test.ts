// Two real `anvil web` processes on one PostgreSQL database, one repository root and one data
// directory, as behind a load balancer: requests alternate between them. A push to A has its
// webhook delivered exactly once; a runner long-polling B takes the job a push to A created at
// once (the cluster channel wakes it, not a poll interval); a token revoked or a user suspended on
// A is refused by B at once, as is a web session after a password set on A, and failed sign-ins on
// A count on B; the node making a delivery is killed with SIGKILL while the receiver
// hangs, and the other completes it after the claim's lease, nothing lost and nothing doubled.
// A scheduled workflow fires once though both nodes' schedulers check it at its time.
// Once with PostgreSQL's LISTEN/NOTIFY as the channel, once with Redis ([queue] TYPE = redis).
// Multi-node requires PostgreSQL: on SQLite the suite is skipped.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { createAdminWithToken, freePort, freshPostgresDatabase } from '../helpers/server.js';
import { GitClient } from '../helpers/git.js';
import { WebClient } from '../helpers/web.js';

const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));
const exec = promisify(execFile);

const suiteConfig = loadConfig({ env: process.env, cwd: os.tmpdir() });
const onPostgres = suiteConfig.database.type === 'postgres';

async function redisUp(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(6379, '127.0.0.1');
    s.setTimeout(1000);
    s.once('connect', () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}
const haveRedis = onPostgres && (await redisUp());

interface Node {
  name: string;
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
}

interface Received {
  path: string;
  delivery: string;
  event: string;
  at: number;
  /** The process that sent it (by its socket), when `ss` could tell. */
  pid: number | undefined;
}

const WORKFLOW = `name: hello
on:
  push:
    branches: [main]
jobs:
  hello:
    runs-on: self-hosted
    steps:
      - run: echo "hello from the runner"
`;

for (const channel of ['postgres', 'redis'] as const) {
  const skip = !onPostgres
    ? 'multi-node requires PostgreSQL: run with ANVIL__DATABASE__DB_TYPE=postgres (SQLite has one process)'
    : channel === 'redis' && !haveRedis
      ? 'no Redis on 127.0.0.1:6379'
      : false;

  describe(`several nodes on one database (channel: ${channel})`, { skip }, () => {
    const git = new GitClient();
    let dataDir: string;
    let runnerDir: string;
    let env: NodeJS.ProcessEnv;
    let token: string;
    let dropDb: (() => Promise<void>) | undefined;
    const nodes: Record<'a' | 'b', Node | undefined> = { a: undefined, b: undefined };
    let receiver: http.Server;
    let hookBase: string;
    const received: Received[] = [];
    /** Responses held open (the hanging receiver), ended at the end. */
    const held: http.ServerResponse[] = [];
    let hangNext = false;
    let wt: string;

    const node = (n: 'a' | 'b'): Node => nodes[n] ?? assert.fail(`node ${n} is not running`);

    async function cli(...args: string[]): Promise<string> {
      const r = await exec(process.execPath, [CLI, ...args], { env, cwd: dataDir });
      return r.stdout;
    }

    async function start(name: 'a' | 'b', port: number): Promise<Node> {
      const child = spawn(process.execPath, [CLI, 'web'], {
        cwd: dataDir,
        env: { ...env, ANVIL__SERVER__HTTP_PORT: String(port), ANVIL__CLUSTER__NODE_NAME: `node-${name}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 30_000;
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`anvil web (${name}) exited before serving:\n${out}`);
        if (Date.now() > deadline) throw new Error(`anvil web (${name}) did not answer in time:\n${out}`);
        try {
          const res = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
          await res.arrayBuffer();
          if (res.status === 200) break;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      const n = { name, url, port, child, output: () => out };
      nodes[name] = n;
      return n;
    }

    async function stopAll(): Promise<void> {
      await Promise.all(
        Object.values(nodes).map(async (n) => {
          if (!n || n.child.exitCode !== null || n.child.signalCode !== null) return;
          const exited = new Promise((r) => n.child.once('exit', r));
          n.child.kill('SIGTERM');
          const timer = setTimeout(() => n.child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(timer);
        }),
      );
    }

    async function api<T = Record<string, unknown>>(
      on: 'a' | 'b',
      method: string,
      p: string,
      body?: unknown,
      auth = `token ${token}`,
    ): Promise<{ status: number; body: T }> {
      const res = await fetch(`${node(on).url}/api/v1${p}`, {
        method,
        headers: {
          authorization: auth,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
    }

    async function waitFor(
      what: string,
      check: () => boolean | Promise<boolean>,
      ms = 20_000,
    ): Promise<void> {
      const deadline = Date.now() + ms;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    /** The process on the other end of a connection to the receiver (`ss` names it). */
    async function senderOf(remotePort: number): Promise<number | undefined> {
      try {
        const r = await exec('ss', ['-Htnp', 'src', `127.0.0.1:${remotePort}`]);
        const m = /pid=(\d+)/.exec(r.stdout);
        return m ? Number(m[1]) : undefined;
      } catch {
        return undefined;
      }
    }

    const remote = (on: 'a' | 'b', repo: string) =>
      `${node(on).url.replace('://', '://root:root-password-1@')}/root/${repo}.git`;

    before(async () => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-multinode-'));
      runnerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-multinode-runner-'));
      receiver = http.createServer((req, res) => {
        let text = '';
        req.setEncoding('utf8');
        req.on('data', (d: string) => (text += d));
        req.on('end', () => {
          const entry: Received = {
            path: req.url ?? '',
            delivery: String(req.headers['x-gitea-delivery'] ?? ''),
            event: String(req.headers['x-gitea-event'] ?? ''),
            at: Date.now(),
            pid: undefined,
          };
          received.push(entry);
          void senderOf(req.socket.remotePort ?? 0).then((pid) => (entry.pid = pid));
          if (req.url === '/hang' && hangNext) {
            // The first attempt never gets an answer: its sender is killed meanwhile.
            hangNext = false;
            held.push(res);
            return;
          }
          res.end('ok');
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      hookBase = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
      const [portA, portB] = [await freePort(), await freePort()];
      env = {};
      for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ANVIL')) env[k] = v;
      Object.assign(env, {
        ANVIL__SERVER__APP_DATA_PATH: dataDir,
        ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
        // The site's address (the load balancer's): node A's here.
        ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${portA}/`,
        ANVIL__SECURITY__SECRET_KEY: 'multinode-test-secret-key',
        ANVIL__LOG__LEVEL: 'warn',
        ANVIL__SERVER__START_SSH_SERVER: 'false',
        ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
        ANVIL__WEBHOOK__DELIVER_TIMEOUT: '5',
        ANVIL__WEBHOOK__RETRY_DELAY: '1s',
        ANVIL__ACTIONS__ENABLED: 'true',
        // A runner's FetchTask waits long here: a job that arrives quickly was woken, not polled.
        ANVIL__ACTIONS__FETCH_TASK_WAIT: '20s',
        // Work a dead node claimed is the other's after 2 s (plus the delivery timeout).
        ANVIL__CLUSTER__LEASE_TIME: '2s',
        ...(channel === 'redis'
          ? { ANVIL__QUEUE__TYPE: 'redis', ANVIL__QUEUE__CONN_STR: 'redis://127.0.0.1:6379/0' }
          : {}),
      });
      for (const k of ['DB_TYPE', 'HOST', 'USER', 'NAME', 'PASSWD']) {
        const v = process.env[`ANVIL__DATABASE__${k}`];
        if (v !== undefined) env[`ANVIL__DATABASE__${k}`] = v;
      }
      const fresh = await freshPostgresDatabase(loadConfig({ env, cwd: dataDir }).database);
      env['ANVIL__DATABASE__NAME'] = fresh.name;
      dropDb = fresh.drop;
      token = await createAdminWithToken(cli);
      await Promise.all([start('a', portA), start('b', portB)]);
    });

    after(async () => {
      for (const r of held) r.destroy();
      await stopAll();
      receiver?.close();
      if (dropDb) await dropDb();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      if (runnerDir) fs.rmSync(runnerDir, { recursive: true, force: true });
      git.cleanup();
    });

    // A scheduled workflow for the coming minute, pushed first: the tests below run while its
    // time comes, and the last one checks that both nodes' schedulers started it once.
    let scheduledAt = 0;
    if (channel === 'postgres') {
      it('records a schedule pushed to A (checked once its time has come, below)', async () => {
        if (new Date().getUTCSeconds() >= 50) await new Promise((r) => setTimeout(r, 11_000));
        const now = Date.now();
        scheduledAt = Math.floor(now / 60_000 + 1) * 60_000;
        const minute = new Date(scheduledAt).getUTCMinutes();
        assert.equal((await api('a', 'POST', '/user/repos', { name: 'cron', auto_init: true })).status, 201);
        const dir = path.join(git.home, 'cron');
        await git.git(['clone', '--quiet', remote('a', 'cron'), dir]);
        fs.mkdirSync(path.join(dir, '.forgejo/workflows'), { recursive: true });
        fs.writeFileSync(
          path.join(dir, '.forgejo/workflows/nightly.yml'),
          `on:\n  schedule:\n    - cron: '${minute} * * * *'\njobs:\n  n:\n    runs-on: nowhere\n    steps: [{ run: 'true' }]\n`,
        );
        await git.git(['add', '.'], dir);
        await git.git(['commit', '-q', '-m', 'a schedule'], dir);
        await git.git(['push', '-q', remote('a', 'cron'), 'HEAD:main'], dir);
      });
    }

    it('serves one site from both: what one writes the other reads at once', async () => {
      const made = await api('b', 'POST', '/user/repos', { name: 'site', auto_init: true });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const read = await api<{ full_name: string }>('a', 'GET', '/repos/root/site');
      assert.equal(read.status, 200);
      assert.equal(read.body.full_name, 'root/site');
      // A name taken on one node is taken on the other.
      const again = await api('a', 'POST', '/user/repos', { name: 'site' });
      assert.equal(again.status, 409);
      const renamed = await api('a', 'PATCH', '/repos/root/site', { description: 'from A' });
      assert.equal(renamed.status, 200);
      const seen = await api<{ description: string }>('b', 'GET', '/repos/root/site');
      assert.equal(seen.body.description, 'from A');
    });

    it('a heatmap B keeps shows an action recorded on A at once', async () => {
      type Cell = { timestamp: number; contributions: number };
      const total = (cells: Cell[]) => cells.reduce((n, c) => n + c.contributions, 0);
      const before = await api<Cell[]>('b', 'GET', '/users/root/heatmap');
      assert.equal(before.status, 200);
      // Read twice: the second answer is B's kept one.
      assert.equal(total((await api<Cell[]>('b', 'GET', '/users/root/heatmap')).body), total(before.body));
      const made = await api('a', 'POST', '/user/repos', { name: 'heat' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      // Within the channel's delivery, not the kept heatmap's minute.
      await waitFor(
        'the heatmap on B to count the new repository',
        async () =>
          total((await api<Cell[]>('b', 'GET', '/users/root/heatmap')).body) === total(before.body) + 1,
        2_000,
      );
    });

    it('a token revoked, a user suspended or a password set on A is refused by B at once', async () => {
      const bob = await api('a', 'POST', '/admin/users', {
        username: 'bob',
        email: 'bob@example.com',
        password: 'bob-password-1',
        must_change_password: false,
      });
      assert.equal(bob.status, 201, JSON.stringify(bob.body));
      const basic = `Basic ${Buffer.from('bob:bob-password-1').toString('base64')}`;
      const made = await api<{ sha1: string; id: number }>(
        'b',
        'POST',
        '/users/bob/tokens',
        { name: 'one', scopes: ['all'] },
        basic,
      );
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const bobToken = `token ${made.body.sha1}`;
      // Both nodes have resolved (and remember) the token.
      for (const n of ['a', 'b', 'b', 'a'] as const) {
        assert.equal((await api(n, 'GET', '/user', undefined, bobToken)).status, 200);
      }
      const del = await api('a', 'DELETE', `/users/bob/tokens/${made.body.id}`, undefined, basic);
      assert.equal(del.status, 204);
      assert.equal(
        (await api('b', 'GET', '/user', undefined, bobToken)).status,
        401,
        'revoked on A, refused by B',
      );

      const second = await api<{ sha1: string }>(
        'a',
        'POST',
        '/users/bob/tokens',
        { name: 'two', scopes: ['all'] },
        basic,
      );
      assert.equal(second.status, 201);
      const t2 = `token ${second.body.sha1}`;
      for (const n of ['b', 'a', 'b'] as const)
        assert.equal((await api(n, 'GET', '/user', undefined, t2)).status, 200);
      const suspend = await api('a', 'PATCH', '/admin/users/bob', {
        source_id: 0,
        login_name: 'bob',
        prohibit_login: true,
      });
      assert.equal(suspend.status, 200, JSON.stringify(suspend.body));
      const refused = await api('b', 'GET', '/user', undefined, t2);
      assert.notEqual(refused.status, 200, 'suspended on A, refused by B');
      assert.ok([401, 403].includes(refused.status), String(refused.status));
      // And the other way round: lifted on B, accepted by A.
      assert.equal(
        (
          await api('b', 'PATCH', '/admin/users/bob', {
            source_id: 0,
            login_name: 'bob',
            prohibit_login: false,
          })
        ).status,
        200,
      );
      assert.equal((await api('a', 'GET', '/user', undefined, t2)).status, 200);

      // A browser signed in on B is signed out by a password an administrator sets on A.
      const browser = new WebClient(node('b').url);
      await browser.signIn('bob', 'bob-password-1');
      const signedIn = async (n: 'a' | 'b') => {
        const res = await fetch(`${node(n).url}/repo/create`, {
          redirect: 'manual',
          headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        return res.status === 200;
      };
      assert.ok((await signedIn('b')) && (await signedIn('a')), 'one session for both nodes');
      const changed = await api('a', 'PATCH', '/admin/users/bob', {
        source_id: 0,
        login_name: 'bob',
        password: 'bob-password-2',
      });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal(await signedIn('b'), false, 'password set on A, session refused by B');
      // Failed sign-ins on A count on B: five there, and B refuses the right password.
      for (let i = 0; i < 5; i++) {
        const wrong = `Basic ${Buffer.from('bob:not-it').toString('base64')}`;
        assert.equal((await api('a', 'GET', '/user', undefined, wrong)).status, 401);
      }
      const right = `Basic ${Buffer.from('bob:bob-password-2').toString('base64')}`;
      assert.equal((await api('b', 'GET', '/user', undefined, right)).status, 429);
    });

    it('a push to A has its webhook delivered exactly once', async () => {
      assert.equal((await api('b', 'POST', '/user/repos', { name: 'hooked', auto_init: true })).status, 201);
      const hook = await api('a', 'POST', '/repos/root/hooked/hooks', {
        type: 'gitea',
        active: true,
        events: ['push'],
        config: { url: `${hookBase}/once`, content_type: 'json' },
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.body));
      wt = path.join(git.home, 'hooked');
      await git.git(['clone', '--quiet', remote('b', 'hooked'), wt]);
      for (let i = 0; i < 5; i++) {
        await git.commit(wt, `file-${i}.txt`, `content ${i}\n`);
        await git.git(['push', '-q', remote(i % 2 ? 'b' : 'a', 'hooked'), 'HEAD:main'], wt);
      }
      const pushes = () => received.filter((r) => r.path === '/once' && r.event === 'push');
      await waitFor('five push deliveries', () => pushes().length >= 5);
      // Both nodes poll the queue every few seconds: long enough for a second delivery to show.
      await new Promise((r) => setTimeout(r, 6_000));
      const ids = pushes().map((r) => r.delivery);
      assert.equal(ids.length, 5, `each push delivered once: ${ids.join(', ')}`);
      assert.equal(new Set(ids).size, 5);
      const history = await api<Array<{ delivered: boolean; success: boolean }>>(
        'b',
        'GET',
        `/repos/root/hooked/hooks/${(hook.body as { id: number }).id}/deliveries`,
      );
      assert.equal(history.status, 200, JSON.stringify(history.body));
      assert.equal(history.body.length, 5);
      assert.ok(history.body.every((d) => d.delivered && d.success));
    });

    it('a runner long-polling B takes the job a push to A created, woken at once', async () => {
      assert.equal((await api('a', 'POST', '/user/repos', { name: 'ci', auto_init: true })).status, 201);
      const reg = await api<{ token: string }>(
        'b',
        'GET',
        '/repos/root/ci/actions/runners/registration-token',
      );
      assert.equal(reg.status, 200);
      const env2 = { PATH: process.env['PATH'], HOME: runnerDir, LANG: 'C' };
      const register = await exec(
        process.execPath,
        [
          CLI,
          'runner',
          'register',
          '--instance',
          node('b').url,
          '--token',
          reg.body.token,
          '--name',
          'r1',
          '--labels',
          'self-hosted',
        ],
        { env: env2, cwd: runnerDir },
      );
      assert.match(register.stdout, /registered/);
      // A long poll interval: only a wake-up brings the job quickly.
      const daemon = spawn(
        process.execPath,
        [CLI, 'runner', 'daemon', '--once', '--wait', '60', '--interval', '30'],
        {
          cwd: runnerDir,
          env: env2,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let startedAt = 0;
      daemon.stderr.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (!startedAt && /task \d+: started/.test(out)) startedAt = Date.now();
      });
      daemon.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      const exited = new Promise<number | null>((r) => daemon.once('close', (code) => r(code)));
      try {
        await waitFor('the runner to wait for tasks', () => /waiting for tasks/.test(out));
        // Its first FetchTask is now waiting on B (FETCH_TASK_WAIT 20 s).
        await new Promise((r) => setTimeout(r, 500));
        const ci = path.join(git.home, 'ci');
        await git.git(['clone', '--quiet', remote('a', 'ci'), ci]);
        fs.mkdirSync(path.join(ci, '.forgejo/workflows'), { recursive: true });
        fs.writeFileSync(path.join(ci, '.forgejo/workflows/hello.yml'), WORKFLOW);
        await git.git(['add', '.'], ci);
        await git.git(['commit', '-q', '-m', 'a workflow'], ci);
        await git.git(['push', '-q', remote('a', 'ci'), 'HEAD:main'], ci);
        const pushed = Date.now();
        await waitFor('the runner on B to start the task', () => startedAt > 0, 30_000);
        const handoff = startedAt - pushed;
        assert.ok(
          handoff < 3_000,
          `the job reached the runner on B ${handoff} ms after the push to A:\n${out}`,
        );
        assert.equal(await exited, 0, out);
      } finally {
        daemon.kill('SIGKILL');
      }
      const runs = await api<{ workflow_runs: Array<{ status: string }> }>(
        'a',
        'GET',
        '/repos/root/ci/actions/runs',
      );
      assert.equal(runs.body.workflow_runs.length, 1);
      assert.equal(runs.body.workflow_runs[0]!.status, 'success');
    });

    if (channel === 'postgres') {
      it('the scheduled workflow ran once, though both nodes checked it at its time', async () => {
        assert.ok(scheduledAt > 0, 'the schedule was pushed');
        // Both schedulers tick a second past the minute; a run takes a moment more.
        const settle = scheduledAt + 8_000 - Date.now();
        if (settle > 0) await new Promise((r) => setTimeout(r, settle));
        type Runs = { workflow_runs: Array<{ event: string }> };
        await waitFor('the scheduled run', async () => {
          return (await api<Runs>('b', 'GET', '/repos/root/cron/actions/runs')).body.workflow_runs.length > 0;
        });
        await new Promise((r) => setTimeout(r, 2_000));
        const runs = (await api<Runs>('a', 'GET', '/repos/root/cron/actions/runs')).body.workflow_runs;
        assert.deepEqual(
          runs.map((r) => r.event),
          ['schedule'],
        );
      });
    }

    it('a node killed during a delivery: the other completes it after the lease, once', async () => {
      const hook = await api<{ id: number }>('b', 'POST', '/repos/root/hooked/hooks', {
        type: 'gitea',
        active: true,
        events: ['push'],
        config: { url: `${hookBase}/hang`, content_type: 'json' },
      });
      assert.equal(hook.status, 201);
      hangNext = true;
      const before = received.length;
      await git.commit(wt, 'hang.txt', 'hang\n');
      await git.git(['push', '-q', remote('a', 'hooked'), 'HEAD:main'], wt);
      const hangs = () => received.filter((r) => r.path === '/hang');
      await waitFor('the first attempt', () => hangs().length === 1);
      const first = hangs()[0]!;
      await waitFor('the sender of the first attempt', () => first.pid !== undefined, 5_000).catch(
        () => undefined,
      );
      // Kill whichever node is making the delivery (A, which received the push, nearly always).
      const victim = (['a', 'b'] as const).find((n) => nodes[n]?.child.pid === first.pid) ?? 'a';
      const survivor = victim === 'a' ? 'b' : 'a';
      const killedAt = Date.now();
      node(victim).child.kill('SIGKILL');
      await new Promise((r) => node(victim).child.once('exit', r));
      nodes[victim] = undefined;
      await waitFor('the delivery to be made again', () => hangs().length >= 2, 30_000);
      const second = hangs()[1]!;
      assert.equal(second.delivery, first.delivery, 'the same delivery, attempted again');
      assert.ok(
        second.at - killedAt >= 1_000,
        `made again only after the claim ran out (${second.at - killedAt} ms after the kill)`,
      );
      await new Promise((r) => setTimeout(r, 6_000));
      assert.equal(hangs().length, 2, 'not doubled');
      // The other hook of the push got its delivery once, from whichever node.
      const others = received.slice(before).filter((r) => r.path === '/once');
      assert.equal(others.length, 1);
      const history = await api<Array<{ uuid: string; success: boolean; delivered: boolean }>>(
        survivor,
        'GET',
        `/repos/root/hooked/hooks/${hook.body.id}/deliveries`,
      );
      assert.equal(history.status, 200);
      assert.equal(history.body.length, 1, JSON.stringify(history.body));
      assert.equal(history.body[0]!.uuid, first.delivery);
      assert.ok(history.body[0]!.delivered && history.body[0]!.success, JSON.stringify(history.body[0]));
    });
  });
}
