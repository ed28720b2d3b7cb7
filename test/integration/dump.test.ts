// `anvil dump` taken while pushes run, then `anvil restore` into a fresh data directory (and
// database): every repository passes `git fsck`, the API's lists match the original's, branches
// match the restored refs, blobs (a package file, an attachment) download the same bytes, and the
// restored site takes pushes. A restore into a site that is not empty is refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { createContext, type AppContext } from '../../src/app/context.js';
import { buildServer } from '../../src/app/server.js';
import { freePort, freshDatabase, runCli, startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

const exec = promisify(execFile);

describe('anvil dump and restore', () => {
  let s: TestServer;
  let alice: { name: string; token: string; password: string };
  const git = new GitClient();
  let wt: string;
  const target = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-restored-'));
  const archive = path.join(os.tmpdir(), `anvil-dump-test-${process.pid}.tar.gz`);
  let targetEnv: NodeJS.ProcessEnv;
  let dropTarget: (() => Promise<void>) | undefined;
  let restored: { ctx: AppContext; url: string; close(): Promise<void> } | undefined;
  const payload = crypto.randomBytes(300_000);

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    const auth = { token: alice.token };
    assert.equal(
      (await s.api('POST', '/user/repos', { ...auth, body: { name: 'app', auto_init: true } })).status,
      201,
    );
    assert.equal((await s.api('POST', '/user/repos', { ...auth, body: { name: 'empty' } })).status, 201);
    const label = await s.api<{ id: number }>('POST', '/repos/alice/app/labels', {
      ...auth,
      body: { name: 'bug', color: '#ff0000' },
    });
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/app/issues', {
      ...auth,
      body: { title: 'A bug', body: 'It breaks', labels: [label.body.id] },
    });
    assert.equal(issue.status, 201);
    await s.api('POST', '/repos/alice/app/issues/1/comments', { ...auth, body: { body: 'Confirmed' } });
    const form = new FormData();
    form.append('attachment', new Blob([Buffer.from('attached bytes')]), 'notes.txt');
    const att = await fetch(`${s.url}/api/v1/repos/alice/app/issues/1/assets`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}` },
      body: form,
    });
    assert.equal(att.status, 201);
    const put = await fetch(`${s.url}/api/packages/alice/generic/tool/1.0.0/tool.bin`, {
      method: 'PUT',
      headers: { authorization: `token ${alice.token}` },
      body: payload,
    });
    assert.equal(put.status, 201);
    wt = path.join(git.home, 'app');
    await git.git(['clone', '-q', repoUrl(s.url, 'alice', 'app', ['alice', alice.token]), wt]);

    targetEnv = {
      ...s.env,
      ANVIL__SERVER__APP_DATA_PATH: target,
      ANVIL__DATABASE__PATH: path.join(target, 'anvil.db'),
      ANVIL__REPOSITORY__ROOT: path.join(target, 'repositories'),
    };
    const fresh = await freshDatabase(s.config.database);
    if (fresh) {
      targetEnv['ANVIL__DATABASE__NAME'] = fresh.name;
      dropTarget = fresh.drop;
    }
  });

  after(async () => {
    await restored?.close();
    await s.close();
    if (dropTarget) await dropTarget();
    fs.rmSync(target, { recursive: true, force: true });
    fs.rmSync(archive, { force: true });
    git.cleanup();
  });

  it('dumps while pushes run', async () => {
    let pushing = true;
    let pushes = 0;
    const pusher = (async () => {
      while (pushing) {
        await git.commit(wt, `f${pushes}.txt`, crypto.randomBytes(2000).toString('hex'));
        await git.git(['push', '-q', 'origin', `HEAD:refs/heads/${pushes % 2 ? 'main' : 'side'}`], wt);
        pushes++;
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const r = await runCli(s, ['dump', '--file', archive]);
    pushing = false;
    await pusher;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Written: /);
    assert.ok(pushes >= 2, `pushes ran during the dump (${pushes})`);
    assert.ok(fs.statSync(archive).size > payload.length);
  });

  it('restores into a fresh site where every repository passes git fsck', async () => {
    const r = await runCli({ dataDir: target, env: targetEnv }, ['restore', archive]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /rows restored/);
    const root = path.join(target, 'repositories');
    const repos = fs.readdirSync(root).filter((d) => d.endsWith('.git'));
    assert.equal(repos.length, 2);
    for (const repo of repos) await exec('git', ['fsck', '--no-progress'], { cwd: path.join(root, repo) });
  });

  it('serves the same lists, blobs and refs as the original', async () => {
    const port = await freePort();
    const env = {
      ...targetEnv,
      ANVIL__SERVER__HTTP_PORT: String(port),
      ANVIL__SERVER__ROOT_URL: s.url + '/',
    };
    const config = loadConfig({ env, cwd: target });
    const ctx = await createContext(config, pino({ level: 'warn' }));
    const app = await buildServer(ctx);
    await app.listen({ host: '127.0.0.1', port });
    restored = {
      ctx,
      url: `http://127.0.0.1:${port}`,
      close: async () => {
        await app.close();
        await ctx.close();
      },
    };
    const get = async (base: string, p: string) => {
      const res = await fetch(`${base}/api/v1${p}`, { headers: { authorization: `token ${s.admin.token}` } });
      assert.equal(res.status, 200, `${p} on ${base}`);
      return res.json() as Promise<unknown>;
    };
    for (const p of [
      '/admin/users',
      '/users/alice/repos',
      '/repos/alice/app/issues?state=all',
      '/repos/alice/app/issues/1/comments',
      '/repos/alice/app/labels',
      '/repos/alice/app/issues/1/assets',
      '/packages/alice',
      '/packages/alice/generic/tool/1.0.0/files',
    ]) {
      const strip = (v: unknown) =>
        JSON.parse(JSON.stringify(v).replaceAll(s.url, 'URL').replaceAll(restored!.url, 'URL')) as unknown;
      const a = strip(await get(s.url, p));
      const b = strip(await get(restored.url, p));
      if (p === '/users/alice/repos') {
        // Pushes after the dump changed sizes and update times of the original.
        const names = (v: unknown) => (v as Array<{ full_name: string }>).map((r) => r.full_name);
        assert.deepEqual(names(b), names(a));
      } else assert.deepEqual(b, a, p);
    }
    // Branches as the restored refs have them.
    const branches = (await get(restored.url, '/repos/alice/app/branches')) as Array<{
      name: string;
      commit: { id: string };
    }>;
    const refs = await git.lsRemote(repoUrl(restored.url, 'alice', 'app', ['alice', alice.token]));
    assert.deepEqual(
      Object.fromEntries(branches.map((b) => [`refs/heads/${b.name}`, b.commit.id])),
      Object.fromEntries([...refs].filter(([k]) => k.startsWith('refs/heads/'))),
    );
    // Blobs: the package file and the attachment download the same bytes.
    const file = await fetch(`${restored.url}/api/packages/alice/generic/tool/1.0.0/tool.bin`, {
      headers: { authorization: `token ${alice.token}` },
    });
    assert.equal(file.status, 200);
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(payload));
    const [asset] = (await get(restored.url, '/repos/alice/app/issues/1/assets')) as Array<{
      browser_download_url: string;
    }>;
    const dl = await fetch(asset!.browser_download_url.replace(s.url, restored.url), {
      headers: { authorization: `token ${alice.token}` },
    });
    assert.equal(await dl.text(), 'attached bytes');
    // The restored site takes pushes (ids and sequences continue past the restored rows).
    await git.commit(wt, 'after.txt', 'after the restore');
    await git.git(
      ['push', '-q', repoUrl(restored.url, 'alice', 'app', ['alice', alice.token]), 'HEAD:refs/heads/later'],
      wt,
    );
    const issue = await fetch(`${restored.url}/api/v1/repos/alice/app/issues`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'after' }),
    });
    assert.equal(issue.status, 201);
    assert.equal(((await issue.json()) as { number: number }).number, 2);
  });

  it('refuses to restore into a site that is not empty', async () => {
    const r = await runCli({ dataDir: target, env: targetEnv }, ['restore', archive]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not empty|already holds/);
    const junk = path.join(os.tmpdir(), `anvil-not-a-dump-${process.pid}.tar.gz`);
    fs.writeFileSync(junk, 'hello');
    const other = await runCli(s, ['restore', junk]);
    fs.rmSync(junk, { force: true });
    assert.equal(other.code, 1);
  });
});
