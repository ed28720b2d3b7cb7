// Git over smart HTTP with the real git client: anonymous and authenticated clones and fetches,
// passwords and tokens, read-only collaborators and team members, empty repositories and the
// first push, sizes and quota, protocol v0 and v2, gzip-compressed requests, archived
// repositories, the push event, and paths that try to leave the repository root.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.js';
import type { AnvilEvents } from '../../src/events/bus.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface RepoJson {
  id: number;
  name: string;
  full_name: string;
  empty: boolean;
  private: boolean;
  size: number;
  default_branch: string;
  archived: boolean;
}

interface QuotaJson {
  used: { size: { repos: { public: number; private: number } } };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const ZERO = '0000000000000000000000000000000000000000';

describe('git over HTTP', () => {
  let s: TestServer;
  let home: string;
  let alice: U;
  let bob: U;
  let carol: U;
  let dave: U;
  let quinn: U;
  let orgTeamId: number;

  /** Runs git in an isolated HOME without prompts; never throws. */
  function git(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn('git', args, {
        cwd: opts.cwd ?? home,
        env: {
          PATH: process.env['PATH'],
          HOME: home,
          LANG: 'C',
          GIT_TERMINAL_PROMPT: '0',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_ASKPASS: '',
          SSH_ASKPASS: '',
          GIT_AUTHOR_NAME: 'Tester',
          GIT_AUTHOR_EMAIL: 'tester@example.com',
          GIT_COMMITTER_NAME: 'Tester',
          GIT_COMMITTER_EMAIL: 'tester@example.com',
          ...opts.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }

  /** git that must succeed; returns its standard output. */
  async function ok(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
    const r = await git(args, opts);
    assert.equal(r.code, 0, `git ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  }

  /** http://user:secret@host:port/owner/repo.git (no credentials when `cred` is absent). */
  function url(owner: string, repo: string, cred?: [string, string], suffix = '.git'): string {
    const u = new URL(`${s.url}/${owner}/${repo}${suffix}`);
    if (cred) {
      u.username = encodeURIComponent(cred[0]);
      u.password = encodeURIComponent(cred[1]);
    }
    return u.toString();
  }

  const pw = (u: U): [string, string] => [u.name, u.password];

  let dirs = 0;
  function freshDir(label: string): string {
    return path.join(home, `${label}-${++dirs}`);
  }

  /** A new working copy with one commit of `file` on `branch`; returns its directory. */
  async function workTree(
    branch = 'main',
    file = 'a.txt',
    content: string | Buffer = 'a\n',
  ): Promise<string> {
    const dir = freshDir('wt');
    fs.mkdirSync(dir);
    await ok(['init', '--quiet', `--initial-branch=${branch}`], { cwd: dir });
    await commit(dir, file, content);
    return dir;
  }

  async function commit(dir: string, file: string, content: string | Buffer): Promise<string> {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
    await ok(['add', file], { cwd: dir });
    await ok(['commit', '--quiet', '-m', `change ${file}`], { cwd: dir });
    return (await ok(['rev-parse', 'HEAD'], { cwd: dir })).trim();
  }

  async function createRepo(owner: U, body: Record<string, unknown>, orgName?: string): Promise<RepoJson> {
    const r = await s.api<RepoJson>('POST', orgName ? `/orgs/${orgName}/repos` : '/user/repos', {
      token: owner.token,
      body,
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function getRepo(owner: string, name: string): Promise<RepoJson> {
    const r = await s.api<RepoJson>('GET', `/repos/${owner}/${name}`, { token: s.admin.token });
    assert.equal(r.status, 200, r.text);
    return r.body;
  }

  /** Bytes of git objects in the repository's bare directory, counted as Anvil counts them. */
  function objectBytes(id: number): number {
    let total = 0;
    const walk = (p: string) => {
      for (const e of fs.readdirSync(p, { withFileTypes: true })) {
        const full = path.join(p, e.name);
        if (e.isDirectory()) walk(full);
        else if (e.isFile()) total += fs.statSync(full).size;
      }
    };
    walk(path.join(s.config.repository.root, `${id}.git`, 'objects'));
    return total;
  }

  async function quota(token: string, org?: string): Promise<{ public: number; private: number }> {
    const r = await s.api<QuotaJson>('GET', org ? `/orgs/${org}/quota` : '/user/quota', { token });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.repos;
  }

  /** The next `push` event of repository `repoId`. */
  function nextPush(repoId: number): Promise<AnvilEvents['push']> {
    return new Promise((resolve) => {
      let done = false;
      s.ctx.events.on('push', (e) => {
        if (!done && e.repoId === repoId) {
          done = true;
          resolve(e);
        }
      });
    });
  }

  /** Collects every `push` event from now on. */
  function pushLog(): AnvilEvents['push'][] {
    const log: AnvilEvents['push'][] = [];
    s.ctx.events.on('push', (e) => {
      log.push(e);
    });
    return log;
  }

  /** A raw GET whose path reaches the server exactly as written (no URL normalization). */
  function rawGet(
    p: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string }> {
    const { hostname, port } = new URL(s.url);
    return new Promise((resolve, reject) => {
      const req = http.request({ host: hostname, port, path: p, method: 'GET', headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  const basic = (u: U) => ({
    authorization: `Basic ${Buffer.from(`${u.name}:${u.password}`).toString('base64')}`,
  });

  before(async () => {
    s = await startServer();
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-http-'));
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    quinn = await s.createUser('quinn');
    const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    assert.equal(org.status, 201, org.text);
    const team = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'pushers', permission: 'write', units: ['repo.code'] },
    });
    assert.equal(team.status, 201, team.text);
    orgTeamId = team.body.id;
    const member = await s.api('PUT', `/teams/${orgTeamId}/members/carol`, { token: alice.token });
    assert.equal(member.status, 204, member.text);
  });

  after(async () => {
    await s.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  describe('public repositories', () => {
    let pub: RepoJson;

    before(async () => {
      pub = await createRepo(alice, { name: 'pub', auto_init: true, description: 'public things' });
    });

    it('are cloned anonymously, with or without the .git suffix', async () => {
      const a = freshDir('anon');
      await ok(['clone', '--quiet', url('alice', 'pub'), a]);
      assert.equal(fs.readFileSync(path.join(a, 'README.md'), 'utf8'), '# pub\n\npublic things\n');
      const b = freshDir('anon');
      await ok(['clone', '--quiet', url('alice', 'pub', undefined, ''), b]);
      assert.equal(
        (await ok(['rev-parse', 'HEAD'], { cwd: a })).trim(),
        (await ok(['rev-parse', 'HEAD'], { cwd: b })).trim(),
      );
      // Owner and repository names are case-insensitive, as the API's.
      const c = freshDir('anon');
      await ok(['clone', '--quiet', url('ALICE', 'Pub'), c]);
    });

    it('fetch brings in commits pushed since the clone', async () => {
      const reader = freshDir('reader');
      await ok(['clone', '--quiet', url('alice', 'pub'), reader]);
      const writer = freshDir('writer');
      await ok(['clone', '--quiet', url('alice', 'pub', pw(alice)), writer]);
      const first = await commit(writer, 'one.txt', 'one\n');
      const second = await commit(writer, 'two.txt', 'two\n');
      await ok(['push', '--quiet', 'origin', 'main'], { cwd: writer });
      await ok(['fetch', '--quiet', 'origin'], { cwd: reader });
      assert.equal((await ok(['rev-parse', 'origin/main'], { cwd: reader })).trim(), second);
      assert.equal((await ok(['rev-parse', 'origin/main~1'], { cwd: reader })).trim(), first);
      await ok(['merge', '--quiet', '--ff-only', 'origin/main'], { cwd: reader });
      assert.equal(fs.readFileSync(path.join(reader, 'two.txt'), 'utf8'), 'two\n');
    });

    it('refuse anonymous pushes with a request for credentials', async () => {
      const dir = freshDir('anon-push');
      await ok(['clone', '--quiet', url('alice', 'pub'), dir]);
      const before = (await ok(['ls-remote', url('alice', 'pub'), 'refs/heads/main'])).split('\t')[0];
      await commit(dir, 'anon.txt', 'anon\n');
      const r = await git(['push', 'origin', 'main'], { cwd: dir });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /could not read Username/);
      const res = await fetch(`${s.url}/alice/pub.git/info/refs?service=git-receive-pack`);
      assert.equal(res.status, 401);
      assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
      const now = (await ok(['ls-remote', url('alice', 'pub'), 'refs/heads/main'])).split('\t')[0];
      assert.equal(now, before);
    });

    it('answer the smart HTTP advertisement with the right content types', async () => {
      for (const service of ['git-upload-pack', 'git-receive-pack']) {
        const res = await fetch(`${s.url}/alice/pub.git/info/refs?service=${service}`, {
          headers: basic(alice),
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), `application/x-${service}-advertisement`);
        const body = await res.text();
        const line = `# service=${service}\n`;
        assert.ok(body.startsWith((line.length + 4).toString(16).padStart(4, '0') + line + '0000'), body);
        assert.match(body, /refs\/heads\/main/);
      }
    });

    it('refuse the dumb protocol and unknown services with 403', async () => {
      for (const q of ['', '?service=git-upload-archive', '?service=foo']) {
        const res = await fetch(`${s.url}/alice/pub.git/info/refs${q}`);
        assert.equal(res.status, 403, q);
        assert.match(await res.text(), /smart HTTP/);
      }
    });

    it('an unknown repository asks anonymous callers for credentials and is 404 for others', async () => {
      const anon = await fetch(`${s.url}/alice/nothing.git/info/refs?service=git-upload-pack`);
      assert.equal(anon.status, 401);
      const signed = await fetch(`${s.url}/alice/nothing.git/info/refs?service=git-upload-pack`, {
        headers: basic(alice),
      });
      assert.equal(signed.status, 404);
      const r = await git(['clone', url('alice', 'nothing', pw(alice)), freshDir('none')]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /not found|404/);
      assert.ok(pub.id > 0);
    });
  });

  describe('private repositories', () => {
    let priv: RepoJson;

    before(async () => {
      priv = await createRepo(alice, { name: 'secret', private: true, auto_init: true });
    });

    it('need credentials: 401 with WWW-Authenticate, and git fails asking for them', async () => {
      for (const service of ['git-upload-pack', 'git-receive-pack']) {
        const res = await fetch(`${s.url}/alice/secret.git/info/refs?service=${service}`);
        assert.equal(res.status, 401);
        assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Anvil"');
      }
      const post = await fetch(`${s.url}/alice/secret.git/git-upload-pack`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-git-upload-pack-request' },
        body: '0000',
      });
      assert.equal(post.status, 401);
      const r = await git(['clone', url('alice', 'secret'), freshDir('anon-priv')]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /could not read Username/);
    });

    it('clone with the password, or with a token as the password', async () => {
      const a = freshDir('priv');
      await ok(['clone', '--quiet', url('alice', 'secret', pw(alice)), a]);
      assert.ok(fs.existsSync(path.join(a, 'README.md')));
      const b = freshDir('priv');
      await ok(['clone', '--quiet', url('alice', 'secret', ['alice', alice.token]), b]);
      const res = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `token ${alice.token}` },
      });
      assert.equal(res.status, 200);
    });

    it('refuse a wrong password', async () => {
      const r = await git(['clone', url('alice', 'secret', ['alice', 'wrong-password']), freshDir('bad')]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /Authentication failed|401/);
      const res = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `Basic ${Buffer.from('alice:wrong-password').toString('base64')}` },
      });
      assert.equal(res.status, 401);
    });

    it('stay hidden (404) from signed-in users without access', async () => {
      const res = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-upload-pack`, {
        headers: basic(dave),
      });
      assert.equal(res.status, 404);
      const r = await git(['clone', url('alice', 'secret', pw(dave)), freshDir('dave')]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /not found|404/);
    });

    it('follow token scopes: read:repository clones but cannot push, no repository scope is refused', async () => {
      const reader = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: pw(alice),
        body: { name: 'reader', scopes: ['read:repository'] },
      });
      assert.equal(reader.status, 201, reader.text);
      const other = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: pw(alice),
        body: { name: 'user-only', scopes: ['read:user'] },
      });
      assert.equal(other.status, 201, other.text);
      const dir = freshDir('scoped');
      await ok(['clone', '--quiet', url('alice', 'secret', ['alice', reader.body.sha1]), dir]);
      await commit(dir, 'scoped.txt', 'x\n');
      const push = await git(['push', 'origin', 'main'], { cwd: dir });
      assert.notEqual(push.code, 0);
      assert.match(push.stderr, /403/);
      const res = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-receive-pack`, {
        headers: { authorization: `Basic ${Buffer.from(`alice:${reader.body.sha1}`).toString('base64')}` },
      });
      assert.equal(res.status, 403);
      assert.match(await res.text(), /write:repository/);
      const none = await git(['clone', url('alice', 'secret', ['alice', other.body.sha1]), freshDir('x')]);
      assert.notEqual(none.code, 0);
      assert.match(none.stderr, /403/);
      assert.ok(priv.private);
      // Public repositories need no scope for pulling, as in Forgejo; pushing still does.
      const pub = freshDir('scoped-pub');
      await ok(['clone', '--quiet', url('alice', 'pub', ['alice', other.body.sha1]), pub]);
      await commit(pub, 'scoped.txt', 'x\n');
      const refused = await git(['push', 'origin', 'main'], { cwd: pub });
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /403/);
    });

    it('restricted users pull public repositories with their credentials, but nothing private', async () => {
      const rita = await s.createUser('rita');
      const r = await s.api('PATCH', '/admin/users/rita', {
        token: s.admin.token,
        body: { restricted: true },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal((await s.api('GET', '/repos/alice/pub', { token: rita.token })).status, 404);
      await ok(['clone', '--quiet', url('alice', 'pub', pw(rita)), freshDir('rita')]);
      const res = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-upload-pack`, {
        headers: basic(rita),
      });
      assert.equal(res.status, 404);
      const push = await fetch(`${s.url}/alice/pub.git/info/refs?service=git-receive-pack`, {
        headers: basic(rita),
      });
      assert.equal(push.status, 404);
    });
  });

  describe('collaborators and teams', () => {
    it('a read-only collaborator clones but every push is refused with 403', async () => {
      const repo = await createRepo(alice, { name: 'shared', private: true, auto_init: true });
      const put = await s.api('PUT', '/repos/alice/shared/collaborators/bob', {
        token: alice.token,
        body: { permission: 'read' },
      });
      assert.equal(put.status, 204, put.text);
      const events = pushLog();
      const dir = freshDir('bob');
      await ok(['clone', '--quiet', url('alice', 'shared', pw(bob)), dir]);
      const head = (await ok(['rev-parse', 'HEAD'], { cwd: dir })).trim();
      await commit(dir, 'bob.txt', 'bob\n');
      const r = await git(['push', 'origin', 'main'], { cwd: dir });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /403/);
      const res = await fetch(`${s.url}/alice/shared.git/info/refs?service=git-receive-pack`, {
        headers: basic(bob),
      });
      assert.equal(res.status, 403);
      assert.match(await res.text(), /bob has no write access/);
      // Nothing changed on the server and nothing was announced.
      const remote = (await ok(['ls-remote', url('alice', 'shared', pw(alice)), 'refs/heads/main'])).split(
        '\t',
      )[0];
      assert.equal(remote, head);
      assert.equal(events.filter((e) => e.repoId === repo.id).length, 0);

      // Write permission lets the same collaborator push.
      const up = await s.api('PUT', '/repos/alice/shared/collaborators/bob', {
        token: alice.token,
        body: { permission: 'write' },
      });
      assert.equal(up.status, 204);
      await ok(['push', '--quiet', 'origin', 'main'], { cwd: dir });
      const pushed = (await ok(['ls-remote', url('alice', 'shared', pw(alice)), 'refs/heads/main'])).split(
        '\t',
      )[0];
      assert.equal(pushed, (await ok(['rev-parse', 'HEAD'], { cwd: dir })).trim());
    });

    it('a team member with write access to the repository pushes; before that they see nothing', async () => {
      const repo = await createRepo(alice, { name: 'proj', private: true, auto_init: true }, 'acme');
      const hidden = await git(['clone', url('acme', 'proj', pw(carol)), freshDir('carol')]);
      assert.notEqual(hidden.code, 0);
      assert.match(hidden.stderr, /not found|404/);

      const add = await s.api('PUT', `/teams/${orgTeamId}/repos/acme/proj`, { token: alice.token });
      assert.equal(add.status, 204, add.text);
      const dir = freshDir('carol');
      await ok(['clone', '--quiet', url('acme', 'proj', pw(carol)), dir]);
      const oid = await commit(dir, 'carol.txt', 'carol\n');
      const event = nextPush(repo.id);
      await ok(['push', '--quiet', 'origin', 'main'], { cwd: dir });
      const e = await event;
      assert.equal(e.pusherId, carol.id);
      const remote = (await ok(['ls-remote', url('acme', 'proj', pw(alice)), 'refs/heads/main'])).split(
        '\t',
      )[0];
      assert.equal(remote, oid);

      // A team that only reads cannot push.
      const readers = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
        token: alice.token,
        body: { name: 'readers', permission: 'read', units: ['repo.code'] },
      });
      assert.equal(readers.status, 201, readers.text);
      assert.equal(
        (await s.api('PUT', `/teams/${readers.body.id}/members/dave`, { token: alice.token })).status,
        204,
      );
      assert.equal(
        (await s.api('PUT', `/teams/${readers.body.id}/repos/acme/proj`, { token: alice.token })).status,
        204,
      );
      const d = freshDir('dave');
      await ok(['clone', '--quiet', url('acme', 'proj', pw(dave)), d]);
      await commit(d, 'dave.txt', 'dave\n');
      const refused = await git(['push', 'origin', 'main'], { cwd: d });
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /403/);
    });
  });

  describe('empty repositories and the first push', () => {
    it('clone, then the first push sets the default branch, records branches and the event', async () => {
      const repo = await createRepo(alice, { name: 'blank' });
      assert.equal(repo.empty, true);
      assert.equal(repo.default_branch, 'main');
      assert.equal(repo.size, 0);
      const dir = freshDir('blank');
      const clone = await git(['clone', url('alice', 'blank', pw(alice)), dir]);
      assert.equal(clone.code, 0, clone.stderr);
      assert.match(clone.stderr, /empty repository/);

      await ok(['checkout', '--quiet', '-b', 'trunk'], { cwd: dir });
      const oid = await commit(dir, 'first.txt', 'first\n');
      const event = nextPush(repo.id);
      await ok(['push', '--quiet', 'origin', 'trunk'], { cwd: dir });
      // As soon as git push returns, the API knows.
      const after = await getRepo('alice', 'blank');
      assert.equal(after.empty, false);
      assert.equal(after.default_branch, 'trunk');
      assert.deepEqual((await event).updates, [{ ref: 'refs/heads/trunk', oldOid: ZERO, newOid: oid }]);
      const symref = await ok(['ls-remote', '--symref', url('alice', 'blank', pw(alice)), 'HEAD']);
      assert.match(symref, /^ref: refs\/heads\/trunk\tHEAD/);
      const branches = await s.ctx.db
        .selectFrom('branch')
        .select(['name', 'commit_id', 'commit_message', 'pusher_id'])
        .where('repo_id', '=', repo.id)
        .execute();
      assert.deepEqual(branches, [
        { name: 'trunk', commit_id: oid, commit_message: 'change first.txt', pusher_id: alice.id },
      ]);

      // A second branch and a tag leave the default branch alone; the event lists each ref.
      await ok(['checkout', '--quiet', '-b', 'feature'], { cwd: dir });
      const f = await commit(dir, 'feature.txt', 'feature\n');
      await ok(['tag', 'v1', oid], { cwd: dir });
      const second = nextPush(repo.id);
      await ok(['push', '--quiet', 'origin', 'feature', 'v1'], { cwd: dir });
      const updates = (await second).updates.sort((x, y) => x.ref.localeCompare(y.ref));
      assert.deepEqual(updates, [
        { ref: 'refs/heads/feature', oldOid: ZERO, newOid: f },
        { ref: 'refs/tags/v1', oldOid: ZERO, newOid: oid },
      ]);
      assert.equal((await getRepo('alice', 'blank')).default_branch, 'trunk');
      const names = await s.ctx.db
        .selectFrom('branch')
        .select('name')
        .where('repo_id', '=', repo.id)
        .orderBy('name')
        .execute();
      assert.deepEqual(
        names.map((n) => n.name),
        ['feature', 'trunk'],
      );

      // Deleting a branch is a push too: its record goes.
      const del = nextPush(repo.id);
      await ok(['push', '--quiet', 'origin', '--delete', 'feature'], { cwd: dir });
      assert.deepEqual((await del).updates, [{ ref: 'refs/heads/feature', oldOid: f, newOid: ZERO }]);
      const left = await s.ctx.db
        .selectFrom('branch')
        .select('name')
        .where('repo_id', '=', repo.id)
        .execute();
      assert.deepEqual(
        left.map((n) => n.name),
        ['trunk'],
      );
    });

    it('a push to the default branch of an empty repository keeps its name', async () => {
      await createRepo(alice, { name: 'blank2', default_branch: 'develop' });
      const dir = await workTree('develop');
      await ok(['push', '--quiet', url('alice', 'blank2', pw(alice)), 'develop'], { cwd: dir });
      const repo = await getRepo('alice', 'blank2');
      assert.equal(repo.default_branch, 'develop');
      assert.equal(repo.empty, false);
    });
  });

  describe('sizes and quota', () => {
    it('a push updates the size and the owner’s public or private usage; deletion gives it back', async () => {
      const start = await quota(quinn.token);
      assert.deepEqual(start, { public: 0, private: 0 });
      const pub = await createRepo(quinn, { name: 'data' });
      const priv = await createRepo(quinn, { name: 'hidden-data', private: true });
      // Incompressible content, so the pack is at least as large as the data.
      const blob = crypto.randomBytes(300 * 1024);
      const dir = await workTree('main', 'blob.bin', blob);
      await ok(['push', '--quiet', url('quinn', 'data', pw(quinn)), 'main'], { cwd: dir });
      const pubBytes = objectBytes(pub.id);
      assert.ok(pubBytes > 300 * 1024, String(pubBytes));
      assert.equal((await getRepo('quinn', 'data')).size, Math.floor(pubBytes / 1024));
      assert.deepEqual(await quota(quinn.token), { public: pubBytes, private: 0 });

      await commit(dir, 'more.bin', crypto.randomBytes(100 * 1024));
      await ok(['push', '--quiet', url('quinn', 'hidden-data', pw(quinn)), 'main'], { cwd: dir });
      const privBytes = objectBytes(priv.id);
      assert.ok(privBytes > 400 * 1024, String(privBytes));
      assert.equal((await getRepo('quinn', 'hidden-data')).size, Math.floor(privBytes / 1024));
      assert.deepEqual(await quota(quinn.token), { public: pubBytes, private: privBytes });

      // Sizes order the user's repositories.
      const bySize = await s.api<RepoJson[]>('GET', '/user/repos?order_by=size', { token: quinn.token });
      assert.deepEqual(
        bySize.body.map((r) => r.name),
        ['data', 'hidden-data'],
      );

      const del = await s.api('DELETE', '/repos/quinn/hidden-data', { token: quinn.token });
      assert.equal(del.status, 204, del.text);
      assert.equal(fs.existsSync(path.join(s.config.repository.root, `${priv.id}.git`)), false);
      assert.deepEqual(await quota(quinn.token), { public: pubBytes, private: 0 });
      assert.equal((await s.api('DELETE', '/repos/quinn/data', { token: quinn.token })).status, 204);
      assert.deepEqual(await quota(quinn.token), { public: 0, private: 0 });
    });

    it('an organization repository counts toward the organization, not the pusher', async () => {
      const aliceBefore = await quota(alice.token);
      const carolBefore = await quota(carol.token);
      const orgBefore = await quota(alice.token, 'acme');
      const repo = await createRepo(alice, { name: 'heavy' }, 'acme');
      assert.equal(
        (await s.api('PUT', `/teams/${orgTeamId}/repos/acme/heavy`, { token: alice.token })).status,
        204,
      );
      const dir = await workTree('main', 'big.bin', crypto.randomBytes(200 * 1024));
      await ok(['push', '--quiet', url('acme', 'heavy', pw(carol)), 'main'], { cwd: dir });
      const bytes = objectBytes(repo.id);
      assert.ok(bytes > 200 * 1024);
      assert.deepEqual(await quota(alice.token, 'acme'), {
        public: orgBefore.public + bytes,
        private: orgBefore.private,
      });
      assert.deepEqual(await quota(alice.token), aliceBefore);
      assert.deepEqual(await quota(carol.token), carolBefore);
    });
  });

  describe('protocols and encodings', () => {
    before(async () => {
      const repo = await createRepo(alice, { name: 'many' });
      // 60 branches on 60 different commits: a clone wants 60 objects, more than 1 KiB of request.
      const dir = await workTree('main', 'f0.txt', '0\n');
      for (let i = 1; i < 60; i++) {
        await commit(dir, `f${i}.txt`, `${i}\n`);
        await ok(['branch', `b${i}`], { cwd: dir });
      }
      await ok(['push', '--quiet', url('alice', 'many', pw(alice)), '--all'], { cwd: dir });
      assert.equal((await getRepo('alice', 'many')).empty, false);
      assert.ok(repo.id);
    });

    it('protocol v2 and v0 both clone', async () => {
      for (const version of ['2', '0']) {
        const dir = freshDir(`v${version}`);
        const r = await git(['-c', `protocol.version=${version}`, 'clone', url('alice', 'many'), dir], {
          env: { GIT_TRACE_PACKET: '1' },
        });
        assert.equal(r.code, 0, r.stderr);
        // git's packet trace shows which protocol the server spoke.
        if (version === '2') assert.match(r.stderr, /git< version 2/);
        else assert.doesNotMatch(r.stderr, /version 2/);
        const branches = await ok(['branch', '-r'], { cwd: dir });
        assert.equal(branches.split('\n').filter((l) => /origin\/b\d+/.test(l)).length, 59);
      }
      const v2 = await fetch(`${s.url}/alice/many.git/info/refs?service=git-upload-pack`, {
        headers: { 'git-protocol': 'version=2' },
      });
      assert.equal(v2.status, 200);
      assert.ok((await v2.text()).startsWith('000eversion 2\n'));
      const v0 = await fetch(`${s.url}/alice/many.git/info/refs?service=git-upload-pack`);
      assert.ok((await v0.text()).startsWith('001e# service=git-upload-pack\n0000'));
    });

    it('large negotiations arrive gzip-compressed from git and are inflated', async () => {
      const dir = freshDir('gzip');
      const r = await git(['-c', 'protocol.version=0', 'clone', url('alice', 'many'), dir], {
        env: { GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /Content-Encoding: gzip/i);
      assert.equal(
        (await ok(['branch', '-r'], { cwd: dir })).split('\n').filter((l) => l.includes('origin/b')).length,
        59,
      );
    });

    it('a gzip-compressed upload-pack request sent by hand gets a pack', async () => {
      const refs = await ok(['ls-remote', url('alice', 'many'), 'refs/heads/main']);
      const oid = refs.split('\t')[0]!;
      const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;
      const request = pkt(`want ${oid} ofs-delta\n`) + '0000' + pkt('done\n');
      for (const gzip of [true, false]) {
        const res = await fetch(`${s.url}/alice/many.git/git-upload-pack`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-git-upload-pack-request',
            ...(gzip ? { 'content-encoding': 'gzip' } : {}),
          },
          body: gzip ? zlib.gzipSync(request) : request,
        });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), 'application/x-git-upload-pack-result');
        const body = Buffer.from(await res.arrayBuffer());
        assert.equal(body.subarray(0, 8).toString(), '0008NAK\n');
        assert.equal(body.subarray(8, 12).toString(), 'PACK');
      }
    });

    it('a body that is not gzip although it says so is a 400', async () => {
      for (const body of ['this is not gzip', zlib.gzipSync('0032want').subarray(0, 12)]) {
        const res = await fetch(`${s.url}/alice/many.git/git-upload-pack`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
          body,
        });
        assert.equal(res.status, 400);
        assert.match(await res.text(), /could not be read/);
      }
      // The server still works.
      assert.equal((await fetch(`${s.url}/alice/many.git/info/refs?service=git-upload-pack`)).status, 200);
    });
  });

  describe('archived repositories', () => {
    it('refuse pushes but still clone; unarchiving allows pushing again', async () => {
      await createRepo(alice, { name: 'old', auto_init: true });
      const dir = freshDir('old');
      await ok(['clone', '--quiet', url('alice', 'old', pw(alice)), dir]);
      const arch = await s.api<RepoJson>('PATCH', '/repos/alice/old', {
        token: alice.token,
        body: { archived: true },
      });
      assert.equal(arch.status, 200);
      assert.equal(arch.body.archived, true);
      await commit(dir, 'late.txt', 'late\n');
      const r = await git(['push', 'origin', 'main'], { cwd: dir });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /403/);
      const res = await fetch(`${s.url}/alice/old.git/info/refs?service=git-receive-pack`, {
        headers: basic(alice),
      });
      assert.equal(res.status, 403);
      assert.match(await res.text(), /archived/);
      await ok(['clone', '--quiet', url('alice', 'old'), freshDir('old-clone')]);
      const un = await s.api('PATCH', '/repos/alice/old', { token: alice.token, body: { archived: false } });
      assert.equal(un.status, 200);
      await ok(['push', '--quiet', 'origin', 'main'], { cwd: dir });
    });
  });

  describe('concurrency', () => {
    it('parallel clones and a push at the same time all succeed', async () => {
      await createRepo(alice, { name: 'busy', auto_init: true });
      const writer = freshDir('busy');
      await ok(['clone', '--quiet', url('alice', 'busy', pw(alice)), writer]);
      const oid = await commit(writer, 'w.txt', crypto.randomBytes(64 * 1024).toString('hex'));
      const clones = Array.from({ length: 6 }, () =>
        git(['clone', '--quiet', url('alice', 'busy'), freshDir('c')]),
      );
      const push = git(['push', '--quiet', 'origin', 'main'], { cwd: writer });
      const results = await Promise.all([...clones, push]);
      for (const r of results) assert.equal(r.code, 0, r.stderr);
      const remote = (await ok(['ls-remote', url('alice', 'busy'), 'refs/heads/main'])).split('\t')[0];
      assert.equal(remote, oid);
    });
  });

  describe('paths', () => {
    it('names with .., encoded slashes or absolute paths never leave the repository root', async () => {
      const root = s.config.repository.root;
      const before = fs.readdirSync(root).sort();
      const paths = [
        '/..%2F..%2F..%2Fetc/passwd.git/info/refs?service=git-upload-pack',
        '/alice/..%2F..%2F..%2Fetc.git/info/refs?service=git-upload-pack',
        '/alice/%2E%2E.git/info/refs?service=git-upload-pack',
        '/%2Fetc/passwd/info/refs?service=git-upload-pack',
        '/alice/%2Fetc%2Fpasswd/info/refs?service=git-upload-pack',
        `/alice/${encodeURIComponent(root)}/info/refs?service=git-upload-pack`,
        '/alice/pub.git%2F..%2F..%2F1.git/info/refs?service=git-upload-pack',
        '/alice/..%5C..%5Cwindows/info/refs?service=git-upload-pack',
        '/alice/pub%00.git/info/refs?service=git-upload-pack',
        '/../../etc/passwd/info/refs?service=git-upload-pack',
        '/alice/../../etc/info/refs?service=git-upload-pack',
      ];
      for (const p of paths) {
        const signed = await rawGet(p, basic(alice));
        // 422: a NUL byte in a path parameter is refused before any route runs.
        assert.ok([400, 404, 422].includes(signed.status), `${p}: ${signed.status} ${signed.body}`);
        assert.doesNotMatch(signed.body, /root:|# service/, p);
        const anon = await rawGet(p);
        assert.ok([400, 401, 404, 422].includes(anon.status), `${p}: ${anon.status}`);
      }
      for (const p of [
        '/api/v1/repos/..%2F..%2Fetc/passwd',
        '/api/v1/repos/alice/..%2F..%2F..%2Fetc',
        '/api/v1/repos/%2Fetc/passwd',
        '/api/v1/repos/alice/%2E%2E',
        '/api/v1/repos/../../etc/passwd',
      ]) {
        const r = await rawGet(p, { authorization: `token ${alice.token}` });
        assert.ok([400, 404].includes(r.status), `${p}: ${r.status} ${r.body}`);
      }
      const pushTo = await workTree();
      const r = await git(['push', url('alice', '..%2F..%2Fescape', pw(alice)), 'main'], { cwd: pushTo });
      assert.notEqual(r.code, 0);
      assert.deepEqual(fs.readdirSync(root).sort(), before);
      assert.equal(fs.existsSync(path.join(root, '..', 'escape')), false);
      assert.equal(fs.existsSync(path.join(root, '..', 'escape.git')), false);
    });
  });
});
