// Crash safety, as an operator meets it: a real `anvil web` process is killed with SIGKILL at fixed
// points of a change (ANVIL_TEST_FAULT, see src/faults.ts), started again, and then checked:
// `git fsck` clean, the API's branches and repository fields equal to the refs on disk, stored
// quota usage equal to a recalculation that measures disk, the change either whole (with its
// events) or absent, and no temporary file or orphaned blob left after the start-up sweep.
// Runs on the suite's database (SQLite, or PostgreSQL with ANVIL__DATABASE__DB_TYPE=postgres).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { mintRuntimeToken } from '../../src/actions/runtime-token.js';
import { createAdminWithToken, freePort, freshDatabase } from '../helpers/server.js';
import { GitClient } from '../helpers/git.js';

const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));
const SECRET = 'crash-test-secret-key';
const exec = promisify(execFile);

interface Web {
  child: ChildProcess;
  output(): string;
}

interface Hook {
  event: string;
  body: Record<string, unknown>;
}

describe('crash safety (SIGKILL at fixed points, then a restart)', () => {
  const git = new GitClient();
  let dataDir: string;
  /** What arms the running server's fault point (ANVIL_TEST_FAULT_FILE). */
  let faultFile: string;
  let url: string;
  let env: NodeJS.ProcessEnv;
  let token: string;
  let dropDb: (() => Promise<void>) | undefined;
  let web: Web | undefined;
  let receiver: http.Server;
  const hooks: Hook[] = [];
  let hookUrl: string;

  async function cli(...args: string[]): Promise<string> {
    const r = await exec(process.execPath, [CLI, ...args], { env, cwd: dataDir });
    return r.stdout;
  }

  /** Starts `anvil web` (armed with `fault` when given) and waits until it answers. */
  async function start(fault?: string, extra: NodeJS.ProcessEnv = {}): Promise<Web> {
    const child = spawn(process.execPath, [CLI, 'web'], {
      cwd: dataDir,
      env: { ...env, ...(fault ? { ANVIL_TEST_FAULT: fault } : {}), ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`anvil web exited before serving:\n${out}`);
      if (Date.now() > deadline) {
        // Not left to take the port later, which would fail every following start.
        child.kill('SIGKILL');
        throw new Error(`anvil web did not answer in time:\n${out}`);
      }
      try {
        const res = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    web = { child, output: () => out };
    return web;
  }

  async function stop(): Promise<void> {
    const w = web;
    web = undefined;
    if (!w || w.child.exitCode !== null || w.child.signalCode !== null) return;
    const exited = new Promise((r) => w.child.once('exit', r));
    w.child.kill('SIGTERM');
    const timer = setTimeout(() => w.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  /**
   * Runs `op` against a server armed with `fault`; asserts the server died of SIGKILL at that
   * point (whatever the client saw), then starts a clean server.
   */
  async function crashDuring(fault: string, op: () => Promise<unknown>): Promise<void> {
    // The running server is armed through ANVIL_TEST_FAULT_FILE (src/faults.ts), and disarmed
    // before the restart: one start per crash.
    const w = web ?? (await start());
    fs.writeFileSync(faultFile, fault);
    const exited = new Promise<NodeJS.Signals | null>((r) => w.child.once('exit', (_c, sig) => r(sig)));
    await op().catch(() => undefined);
    const signal = await Promise.race([
      exited,
      new Promise<string>((r) => setTimeout(() => r('still running'), 30_000)),
    ]);
    fs.writeFileSync(faultFile, '');
    assert.equal(signal, 'SIGKILL', `the server should have died at ${fault}:\n${w.output()}`);
    web = undefined;
    await start();
  }

  async function api<T = Record<string, unknown>>(
    method: string,
    p: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${url}/api/v1${p}`, {
      method,
      headers: {
        authorization: `token ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  }

  const remote = (repo: string) => `${url.replace('://', '://root:root-password-1@')}/root/${repo}.git`;

  async function repoDir(repo: string): Promise<string> {
    const r = await api<{ id: number }>('GET', `/repos/root/${repo}`);
    return path.join(dataDir, 'repositories', `${r.body.id}.git`);
  }

  /** What every crash must leave: git, the API and quota agree, and nothing is left over. */
  async function assertConsistent(repo: string): Promise<void> {
    const dir = await repoDir(repo);
    await exec('git', ['fsck', '--no-progress', '--no-dangling'], { cwd: dir, env: git.env() });
    const heads = new Map(
      [...(await git.lsRemote(remote(repo)))]
        .filter(([ref]) => ref.startsWith('refs/heads/'))
        .map(([ref, oid]) => [ref.slice(11), oid]),
    );
    const branches = await api<Array<{ name: string; commit: { id: string } }>>(
      'GET',
      `/repos/root/${repo}/branches?limit=50`,
    );
    assert.deepEqual(
      new Map(branches.body.map((b) => [b.name, b.commit.id])),
      heads,
      'the API lists the branches git has',
    );
    const r = await api<{ empty: boolean; default_branch: string }>('GET', `/repos/root/${repo}`);
    assert.equal(r.body.empty, heads.size === 0);
    if (heads.size) assert.ok(heads.has(r.body.default_branch), `default branch ${r.body.default_branch}`);
    const recalc = await cli('admin', 'quota', 'recalculate');
    assert.match(recalc, /No drift/, `stored usage should match what is on disk:\n${recalc}`);
    assert.doesNotMatch(recalc, /corrected/, recalc);
    await assertNoLeftovers();
  }

  /** Temporary files and quarantine directories: none once the start-up sweep has run. */
  async function assertNoLeftovers(): Promise<void> {
    let left = leftovers();
    for (let i = 0; left.length && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = leftovers();
    }
    assert.deepEqual(left, [], 'no temporary leftovers');
  }

  function leftovers(): string[] {
    const left: string[] = [];
    for (const kind of ['lfs', 'attachments', 'artifacts', 'packages']) {
      const tmp = path.join(dataDir, kind, '.tmp');
      if (fs.existsSync(tmp)) left.push(...fs.readdirSync(tmp).map((f) => `${kind}/.tmp/${f}`));
    }
    const repos = path.join(dataDir, 'repositories');
    for (const r of fs.existsSync(repos) ? fs.readdirSync(repos) : []) {
      const objects = path.join(repos, r, 'objects');
      if (!fs.existsSync(objects)) continue;
      for (const d of fs.readdirSync(objects))
        if (d.startsWith('tmp_objdir') || d.startsWith('incoming-')) left.push(`${r}/objects/${d}`);
    }
    return left;
  }

  /** The files under a blob store's directory (temporary ones excluded), once the sweep is done. */
  async function blobFiles(kind: string, match: (f: string) => boolean = () => true): Promise<string[]> {
    const dir = path.join(dataDir, kind);
    const list = () =>
      fs.existsSync(dir)
        ? (fs.readdirSync(dir, { recursive: true }) as string[]).filter(
            (f) => !f.startsWith('.tmp') && match(f) && fs.statSync(path.join(dir, f)).isFile(),
          )
        : [];
    let files = list();
    for (let i = 0; files.length && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 100));
      files = list();
    }
    return files;
  }

  const pushesTo = (repo: string) =>
    hooks.filter((h) => h.event === 'push' && (h.body['repository'] as { name: string }).name === repo);

  async function waitFor(what: string, check: () => boolean): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function newRepo(name: string): Promise<string> {
    const r = await api('POST', '/user/repos', { name, auto_init: true });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const hook = await api('POST', `/repos/root/${name}/hooks`, {
      type: 'gitea',
      active: true,
      events: ['push', 'pull_request'],
      config: { url: hookUrl, content_type: 'json' },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const wt = path.join(git.home, name);
    await git.git(['clone', '--quiet', remote(name), wt]);
    return wt;
  }

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-crash-'));
    faultFile = `${dataDir}.fault`;
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    receiver = http.createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (text += d));
      req.on('end', () => {
        hooks.push({ event: String(req.headers['x-gitea-event'] ?? ''), body: JSON.parse(text) });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    env = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ANVIL')) env[k] = v;
    Object.assign(env, {
      ANVIL__SERVER__APP_DATA_PATH: dataDir,
      ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
      ANVIL__SERVER__HTTP_PORT: String(port),
      ANVIL__SERVER__ROOT_URL: `${url}/`,
      ANVIL__SECURITY__SECRET_KEY: SECRET,
      ANVIL__LOG__LEVEL: 'warn',
      ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
      ANVIL__ACTIONS__ENABLED: 'true',
      ANVIL_TEST_FAULT_FILE: faultFile,
    });
    for (const k of ['DB_TYPE', 'HOST', 'USER', 'NAME', 'PASSWD']) {
      const v = process.env[`ANVIL__DATABASE__${k}`];
      if (v !== undefined) env[`ANVIL__DATABASE__${k}`] = v;
    }
    const config = loadConfig({ env, cwd: dataDir });
    const fresh = await freshDatabase(config.database);
    if (fresh) {
      env['ANVIL__DATABASE__NAME'] = fresh.name;
      dropDb = fresh.drop;
    }
    token = await createAdminWithToken(cli);
    await start();
  });

  after(async () => {
    await stop();
    receiver.close();
    if (dropDb) await dropDb();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(faultFile, { force: true });
    git.cleanup();
  });

  describe('push', () => {
    for (const [fault, moved] of [
      ['push:allowed', false],
      ['push:refs-moved', true],
      ['push:recorded', true],
    ] as const) {
      it(`killed at ${fault}: ${moved ? 'recorded and announced' : 'absent'} after the restart`, async () => {
        const name = `push-${fault.replace(/\W/g, '-')}`;
        const wt = await newRepo(name);
        const sha = await git.commit(wt, 'big.bin', crypto.randomBytes(200_000).toString('base64'));
        await git.git(['checkout', '--quiet', '-b', 'feature'], wt);
        await git.commit(wt, 'f.txt', 'feature');
        await crashDuring(fault, () => git.git(['push', '--quiet', 'origin', 'main', 'feature'], wt));
        const refs = await git.lsRemote(remote(name));
        assert.equal(refs.get('refs/heads/main') === sha, moved, 'main moved exactly when git had moved it');
        await assertConsistent(name);
        if (moved) {
          await waitFor('the push webhook', () => pushesTo(name).some((h) => h.body['after'] === sha));
        } else {
          await new Promise((r) => setTimeout(r, 300));
          assert.ok(
            !pushesTo(name).some((h) => h.body['after'] === sha),
            'no event for a push that did not happen',
          );
        }
        // The repository goes on working: the same push now succeeds.
        await git.git(['push', '--quiet', 'origin', 'main', 'feature'], wt);
        await assertConsistent(name);
      });
    }
  });

  describe('graceful shutdown (SIGTERM)', () => {
    /** Resolves with the exit code, or 'still running' after `ms`. */
    const exitOf = (w: Web, ms: number) =>
      Promise.race([
        new Promise<number | null>((r) => w.child.once('exit', (code) => r(code))),
        new Promise<string>((r) => setTimeout(() => r('still running'), ms)),
      ]);

    it('a push under way when SIGTERM arrives finishes whole; then the server exits 0', async () => {
      const name = 'push-sigterm';
      const wt = await newRepo(name);
      const sha = await git.commit(wt, 'big.bin', crypto.randomBytes(200_000).toString('base64'));
      await stop();
      // SIGTERM is sent by the server to itself once the push's checks have passed.
      const w = await start('push:allowed', { ANVIL_TEST_FAULT_SIGNAL: 'SIGTERM' });
      const exited = exitOf(w, 30_000);
      await git.git(['push', '--quiet', 'origin', 'main'], wt);
      assert.equal(await exited, 0, `the server should have stopped cleanly:\n${w.output()}`);
      assert.match(w.output(), /SIGTERM: finishing the requests under way/);
      web = undefined;
      await start();
      const refs = await git.lsRemote(remote(name));
      assert.equal(refs.get('refs/heads/main'), sha);
      await assertConsistent(name);
      await waitFor('the push webhook', () => pushesTo(name).some((h) => h.body['after'] === sha));
    });

    it('a request still running after GRACEFUL_HAMMER_TIME is cut off, leaving nothing behind', async () => {
      await stop();
      const w = await start(undefined, { ANVIL__SERVER__GRACEFUL_HAMMER_TIME: '1s' });
      // An upload whose body stops coming half-way.
      const req = http.request(`${url}/api/packages/root/generic/stuck/1.0.0/stuck.bin`, {
        method: 'PUT',
        headers: { authorization: `token ${token}`, 'content-length': String(1 << 20) },
      });
      req.on('error', () => undefined);
      req.write(Buffer.alloc(64 << 10, 1));
      await waitFor('the upload to start', () => leftovers().some((f) => f.startsWith('packages/.tmp/')));
      const t0 = Date.now();
      const exited = exitOf(w, 15_000);
      w.child.kill('SIGTERM');
      // New connections are refused while the upload is still running (before the hammer ends the
      // process), however long a loaded machine takes to act on the signal.
      let refusedWhileRunning = false;
      while (!refusedWhileRunning && w.child.exitCode === null && w.child.signalCode === null) {
        const refused = await fetch(`${url}/api/v1/version`).then(
          async (res) => (await res.arrayBuffer(), false),
          () => true,
        );
        refusedWhileRunning = refused && w.child.exitCode === null;
        if (!refused) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(refusedWhileRunning, `a new connection was refused before the exit:\n${w.output()}`);
      assert.equal(await exited, 1, `the hammer should have stopped it:\n${w.output()}`);
      // Not before the hammer time (the upload would have been waited for); how much later depends
      // on the machine's load, so it is not asserted.
      const took = Date.now() - t0;
      assert.ok(took >= 900, `exited after ${took} ms`);
      assert.match(w.output(), /GRACEFUL_HAMMER_TIME/);
      req.destroy();
      web = undefined;
      await start();
      const pkg = await api('GET', '/packages/root/generic/stuck/1.0.0');
      assert.equal(pkg.status, 404);
      await assertNoLeftovers();
    });
  });

  describe('merge', () => {
    for (const [fault, merged] of [
      ['merge:intent', false],
      ['merge:ref-moved', true],
      ['merge:recorded', true],
    ] as const) {
      it(`killed at ${fault}: ${merged ? 'merged, with its events' : 'open and mergeable'}`, async () => {
        const name = `merge-${fault.replace(/\W/g, '-')}`;
        const wt = await newRepo(name);
        await git.git(['checkout', '--quiet', '-b', 'topic'], wt);
        await git.commit(wt, 'topic.txt', 'topic work');
        await git.git(['push', '--quiet', 'origin', 'topic'], wt);
        const pr = await api<{ number: number }>('POST', `/repos/root/${name}/pulls`, {
          head: 'topic',
          base: 'main',
          title: 'topic',
        });
        assert.equal(pr.status, 201, JSON.stringify(pr.body));
        const mainBefore = (await git.lsRemote(remote(name))).get('refs/heads/main');
        await crashDuring(fault, () => api('POST', `/repos/root/${name}/pulls/1/merge`, { Do: 'merge' }));
        const p = await api<{ merged: boolean; mergeable: boolean; state: string; merge_commit_sha: string }>(
          'GET',
          `/repos/root/${name}/pulls/1`,
        );
        const mainAfter = (await git.lsRemote(remote(name))).get('refs/heads/main');
        assert.equal(p.body.merged, merged, JSON.stringify(p.body));
        await assertConsistent(name);
        if (merged) {
          assert.notEqual(mainAfter, mainBefore);
          assert.equal(p.body.merge_commit_sha, mainAfter);
          assert.equal(p.body.state, 'closed');
          await waitFor('the merged pull_request webhook', () =>
            hooks.some(
              (h) =>
                h.event === 'pull_request' &&
                (h.body['repository'] as { name: string }).name === name &&
                (h.body['pull_request'] as { merged: boolean }).merged,
            ),
          );
          await waitFor('the push webhook of the merge', () =>
            pushesTo(name).some((h) => h.body['after'] === mainAfter),
          );
          const again = await api('POST', `/repos/root/${name}/pulls/1/merge`, { Do: 'merge' });
          assert.equal(again.status, 405);
        } else {
          assert.equal(mainAfter, mainBefore);
          assert.equal(p.body.state, 'open');
          assert.equal(p.body.mergeable, true);
          const m = await api('POST', `/repos/root/${name}/pulls/1/merge`, { Do: 'merge' });
          assert.equal(m.status, 200, JSON.stringify(m.body));
          await assertConsistent(name);
        }
      });
    }
  });

  describe('scheduled merge', () => {
    it('killed after scheduling, before the queue ran: the restarted server merges it', async () => {
      const name = 'automerge-scheduled';
      const wt = await newRepo(name);
      await git.git(['checkout', '--quiet', '-b', 'topic'], wt);
      await git.commit(wt, 'topic.txt', 'topic work');
      await git.git(['push', '--quiet', 'origin', 'topic'], wt);
      const pr = await api<{ number: number }>('POST', `/repos/root/${name}/pulls`, {
        head: 'topic',
        base: 'main',
        title: 'topic',
      });
      assert.equal(pr.status, 201, JSON.stringify(pr.body));
      const mainBefore = (await git.lsRemote(remote(name))).get('refs/heads/main');
      await crashDuring('automerge:scheduled', () =>
        api('POST', `/repos/root/${name}/pulls/${pr.body.number}/merge`, {
          Do: 'merge',
          merge_when_checks_succeed: true,
          delete_branch_after_merge: true,
        }),
      );
      // The schedule was committed, the queue never ran: the start-up sweep finds it.
      const merged = async () =>
        (await api<{ merged: boolean }>('GET', `/repos/root/${name}/pulls/${pr.body.number}`)).body.merged;
      const deadline = Date.now() + 15_000;
      while (!(await merged())) {
        if (Date.now() > deadline) throw new Error('the scheduled merge was not done after the restart');
        await new Promise((r) => setTimeout(r, 100));
      }
      const refs = await git.lsRemote(remote(name));
      assert.notEqual(refs.get('refs/heads/main'), mainBefore);
      let gone = !refs.has('refs/heads/topic');
      for (let i = 0; !gone && i < 100; i++) {
        await new Promise((r) => setTimeout(r, 100));
        gone = !(await git.lsRemote(remote(name))).has('refs/heads/topic');
      }
      assert.ok(gone, 'the head branch deleted after the merge');
      const again = await api('POST', `/repos/root/${name}/pulls/${pr.body.number}/merge`, {
        Do: 'merge',
        merge_when_checks_succeed: true,
      });
      assert.notEqual(again.status, 201, 'nothing is left to schedule');
    });
  });

  describe('uploads', () => {
    it('an upload cut off by a kill: anvil doctor reports what it left, and the next start removes it', async () => {
      await stop();
      const w = await start();
      const exited = new Promise((r) => w.child.once('exit', r));
      const req = http.request(`${url}/api/packages/root/generic/killed/1.0.0/killed.bin`, {
        method: 'PUT',
        headers: { authorization: `token ${token}`, 'content-length': String(1 << 20) },
      });
      req.on('error', () => undefined);
      req.write(Buffer.alloc(64 << 10, 1));
      await waitFor('the upload to start', () => leftovers().some((f) => f.startsWith('packages/.tmp/')));
      w.child.kill('SIGKILL');
      await exited;
      req.destroy();
      web = undefined;
      // No server runs: what the dead one left is a leftover, however young.
      const check = await exec(process.execPath, [CLI, 'doctor'], { env, cwd: dataDir }).catch(
        (e: { code: number; stdout: string }) => e,
      );
      assert.equal((check as { code?: number }).code, 1, `problems found:\n${check.stdout}`);
      assert.match(check.stdout, /found: temporary file left over: packages\/\.tmp\/\S+ \(\d+ bytes\)/);
      await start();
      await assertNoLeftovers();
      assert.equal((await api('GET', '/packages/root/generic/killed/1.0.0')).status, 404);
      assert.match(await cli('doctor'), /No problems found/);
    });

    it('an LFS upload killed while writing or before its row leaves nothing behind', async () => {
      const name = 'lfs-crash';
      await newRepo(name);
      const content = crypto.randomBytes(300_000);
      const oid = crypto.createHash('sha256').update(content).digest('hex');
      const lfsHeaders = {
        authorization: `token ${token}`,
        accept: 'application/vnd.git-lfs+json',
        'content-type': 'application/vnd.git-lfs+json',
      };
      const upload = async () => {
        const batch = await fetch(`${url}/root/${name}.git/info/lfs/objects/batch`, {
          method: 'POST',
          headers: lfsHeaders,
          body: JSON.stringify({ operation: 'upload', objects: [{ oid, size: content.length }] }),
        });
        const j = (await batch.json()) as {
          objects: Array<{ actions?: { upload?: { href: string; header?: Record<string, string> } } }>;
        };
        const action = j.objects[0]!.actions!.upload!;
        return fetch(action.href, {
          method: 'PUT',
          headers: { ...(action.header ?? {}), 'content-type': 'application/octet-stream' },
          body: content,
        });
      };
      for (const fault of ['storage:written', 'lfs:stored']) {
        await crashDuring(fault, upload);
        await assertConsistent(name);
        assert.deepEqual(
          await blobFiles('lfs', (f) => f.includes(oid.slice(4))),
          [],
          `no blob of the object is left (${fault})`,
        );
      }
      // The object is missing, so the client uploads it again, and that works.
      const res = await upload();
      assert.equal(res.status, 200);
      await assertConsistent(name);
    });

    it('an attachment upload killed after its blob was stored leaves no blob', async () => {
      const name = 'attach-crash';
      await newRepo(name);
      const issue = await api('POST', `/repos/root/${name}/issues`, { title: 'with a file' });
      assert.equal(issue.status, 201);
      const upload = () => {
        const form = new FormData();
        form.append('attachment', new Blob([crypto.randomBytes(50_000)]), 'data.zip');
        return fetch(`${url}/api/v1/repos/root/${name}/issues/1/assets`, {
          method: 'POST',
          headers: { authorization: `token ${token}` },
          body: form,
        });
      };
      await crashDuring('attachment:stored', upload);
      await assertConsistent(name);
      assert.deepEqual(await blobFiles('attachments'), [], 'the orphaned attachment blob was swept');
      const assets = await api<unknown[]>('GET', `/repos/root/${name}/issues/1/assets`);
      assert.deepEqual(assets.body, []);
      assert.equal((await upload()).status, 201);
    });

    it('an artifact killed after its blocks were composed leaves no orphaned blob', async () => {
      const name = 'artifact-crash';
      await newRepo(name);
      const repoId = (await api<{ id: number }>('GET', `/repos/root/${name}`)).body.id;
      const job = { repoId, runId: 7, jobId: 71 };
      const runtime = mintRuntimeToken({ secretKey: SECRET, ...job });
      const twirp = async (method: string, body: unknown) => {
        const res = await fetch(`${url}/twirp/github.actions.results.api.v1.ArtifactService/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${runtime}` },
          body: JSON.stringify(body),
        });
        return (await res.json()) as Record<string, string>;
      };
      const ids = { workflow_run_backend_id: '7', workflow_job_run_backend_id: '71' };
      const created = await twirp('CreateArtifact', { ...ids, name: 'out', version: 4 });
      const signed = created['signed_upload_url']!;
      const block = Buffer.from('block-1').toString('base64');
      const put = await fetch(`${signed}&comp=block&blockid=${encodeURIComponent(block)}`, {
        method: 'PUT',
        body: crypto.randomBytes(100_000),
      });
      assert.equal(put.status, 201);
      await crashDuring('artifact:composed', () =>
        fetch(`${signed}&comp=blocklist`, {
          method: 'PUT',
          body: `<?xml version="1.0" encoding="utf-8"?><BlockList><Latest>${block}</Latest></BlockList>`,
        }),
      );
      await assertConsistent(name);
      assert.deepEqual(await blobFiles('artifacts'), [], 'no composed blob without its artifact');
      const q = await api<{ used: { size: { assets: { artifacts: number } } } }>('GET', '/user/quota');
      assert.equal(q.body.used.size.assets.artifacts, 0);
    });
  });

  it('anvil doctor finds what the database does not know of the repositories, and --fix corrects it', async () => {
    const name = 'doctor';
    const wt = await newRepo(name);
    // A branch written straight into the bare repository, behind Anvil's back.
    await git.git(['checkout', '--quiet', '-b', 'behind-the-back'], wt);
    const sha = await git.commit(wt, 'x.txt', crypto.randomBytes(20_000).toString('hex'));
    await git.git(['push', '--quiet', await repoDir(name), 'behind-the-back'], wt);
    const check = await exec(process.execPath, [CLI, 'doctor'], { env, cwd: dataDir }).catch(
      (e: { code: number; stdout: string }) => e,
    );
    assert.equal((check as { code?: number }).code, 1, 'problems found: exit status 1');
    assert.match(check.stdout, /branch behind-the-back unrecorded/);
    assert.match(check.stdout, /size was \d+, is \d+/);
    const fixed = await cli('doctor', '--fix');
    assert.match(fixed, /fixed: repository \d+: branch behind-the-back unrecorded/);
    const b = await api<{ commit: { id: string } }>('GET', `/repos/root/${name}/branches/behind-the-back`);
    assert.equal(b.body.commit.id, sha);
    await assertConsistent(name);
    assert.match(await cli('doctor'), /No problems found/);
  });

  it('a quota group creation killed half-way leaves neither the group nor its new rule', async () => {
    const body = { name: 'crash-group', rules: [{ name: 'crash-rule', limit: 100, subjects: ['size:all'] }] };
    await crashDuring('quota:group-inserted', () => api('POST', '/admin/quota/groups', body));
    assert.equal((await api('GET', '/admin/quota/groups/crash-group')).status, 404);
    assert.equal((await api('GET', '/admin/quota/rules/crash-rule')).status, 404);
    const created = await api('POST', '/admin/quota/groups', body);
    assert.equal(created.status, 201, JSON.stringify(created.body));
  });
});
