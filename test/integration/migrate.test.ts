// Repository migration (POST /repos/migrate) and pull mirrors (mirror: true, POST
// /repos/{owner}/{repo}/mirror-sync, the scheduler), with the real git client on both sides: the
// source is another repository served by an Anvil over loopback HTTP. Also which hosts may be
// reached ([migrations] ALLOWED_DOMAINS, BLOCKED_DOMAINS, ALLOW_LOCALNETWORKS), that credentials
// never show up in responses, stored rows or the repository's git config, and the creation limit.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface RepoJson {
  id: number;
  name: string;
  full_name: string;
  owner: { login: string };
  mirror: boolean;
  private: boolean;
  empty: boolean;
  fork: boolean;
  size: number;
  default_branch: string;
  original_url: string;
  description: string;
}

interface Msg {
  message: string;
}

interface QuotaJson {
  used: { size: { repos: { public: number; private: number } } };
}

describe('migration and pull mirrors', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let carol: User;
  let work: string;

  const migrate = (token: string, body: Record<string, unknown>) =>
    s.api<RepoJson & Msg>('POST', '/repos/migrate', { token, body });
  const src = (repo: string) => `${s.url}/alice/${repo}.git`;
  const aliceCred = (): [string, string] => [alice.name, alice.password];

  async function pushCommit(repo: string, file: string, branch = 'main'): Promise<string> {
    const dir = path.join(work, `${repo}-${file}`.replace(/[^\w-]/g, '_'));
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', repo, aliceCred()), dir]);
    await g.git(['checkout', '--quiet', '-B', branch], dir);
    const oid = await g.commit(dir, file, `${file}\n`);
    await g.git(['push', '--quiet', 'origin', branch], dir);
    return oid;
  }

  before(async () => {
    s = await startServer({ ANVIL__MIGRATIONS__ALLOW_LOCALNETWORKS: 'true' });
    g = new GitClient();
    work = fs.mkdtempSync(path.join(g.home, 'work-'));
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    for (const [name, extra] of [
      ['src', {}],
      ['secret', { private: true }],
      ['trunky', { default_branch: 'trunk' }],
      ['upstream', {}],
    ] as const) {
      const r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, auto_init: true, ...extra },
      });
      assert.equal(r.status, 201, r.text);
    }
    await pushCommit('src', 'dev.txt', 'dev');
    const dir = path.join(work, 'tagger');
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'src', aliceCred()), dir]);
    await g.git(['tag', '-a', '-m', 'release', 'v1.0'], dir);
    await g.git(['push', '--quiet', 'origin', 'v1.0'], dir);
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
  });

  describe('POST /repos/migrate', () => {
    it('migrates the git data over HTTP: 201, same refs, branches, size and quota', async () => {
      const r = await migrate(bob.token, {
        clone_addr: src('src'),
        repo_name: 'copy',
        description: 'a copy',
        private: true,
        service: 'git',
        // Accepted, not forced in: only the git data moves.
        issues: true,
        pull_requests: true,
        labels: true,
        milestones: true,
        releases: true,
        wiki: true,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.full_name, 'bob/copy');
      assert.equal(r.body.owner.login, 'bob');
      assert.equal(r.body.description, 'a copy');
      assert.equal(r.body.private, true);
      assert.equal(r.body.mirror, false);
      assert.equal(r.body.fork, false);
      assert.equal(r.body.empty, false);
      assert.equal(r.body.default_branch, 'main');
      assert.equal(r.body.original_url, src('src'));
      assert.ok(r.body.size > 0);

      const source = await g.lsRemote(src('src'));
      const copy = await g.lsRemote(repoUrl(s.url, 'bob', 'copy', [bob.name, bob.password]));
      // main, dev, the annotated tag and its peeled line.
      assert.equal(source.size, 4);
      assert.deepEqual(copy, source);

      const branches = await s.ctx.db
        .selectFrom('branch')
        .select(['name', 'commit_id'])
        .where('repo_id', '=', r.body.id)
        .orderBy('name')
        .execute();
      assert.deepEqual(
        branches.map((b) => [b.name, b.commit_id]),
        [
          ['dev', source.get('refs/heads/dev')],
          ['main', source.get('refs/heads/main')],
        ],
      );
      const quota = await s.api<QuotaJson>('GET', '/user/quota', { token: bob.token });
      assert.equal(quota.status, 200, quota.text);
      assert.ok(quota.body.used.size.repos.private > 0);
      const config = fs.readFileSync(path.join(s.ctx.repos.pathOf(r.body), 'config'), 'utf8');
      assert.doesNotMatch(config, /remote/);
      assert.ok(fs.existsSync(path.join(s.ctx.repos.pathOf(r.body), 'hooks', 'pre-receive')));
      // Nothing left behind in the scratch area.
      assert.deepEqual(fs.readdirSync(path.join(s.config.repository.root, '.tmp')), []);
    });

    it("keeps the source's default branch", async () => {
      const r = await migrate(bob.token, { clone_addr: src('trunky'), repo_name: 'trunky' });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.default_branch, 'trunk');
      const head = await g.git(['ls-remote', '--symref', repoUrl(s.url, 'bob', 'trunky'), 'HEAD']);
      assert.match(head, /ref: refs\/heads\/trunk\tHEAD/);
    });

    it('reaches the host by name too (localhost resolved, checked and pinned)', async () => {
      const r = await migrate(bob.token, {
        clone_addr: `${s.url.replace('127.0.0.1', 'localhost')}/alice/src.git`,
        repo_name: 'by-name',
      });
      assert.equal(r.status, 201, r.text);
    });

    it('a private source needs credentials; they work and are never shown or stored', async () => {
      const anonymous = await migrate(bob.token, { clone_addr: src('secret'), repo_name: 'secret' });
      assert.equal(anonymous.status, 422, anonymous.text);
      assert.match(anonymous.body.message, /^Authentication failed/);

      const wrong = await migrate(bob.token, {
        clone_addr: src('secret'),
        repo_name: 'secret',
        auth_username: 'alice',
        auth_password: 'Wrong-Password-123',
      });
      assert.equal(wrong.status, 422, wrong.text);
      assert.match(wrong.body.message, /^Authentication failed/);
      assert.doesNotMatch(wrong.text, /Wrong-Password-123/);

      const smuggled = await migrate(bob.token, {
        clone_addr: src('secret'),
        repo_name: 'secret',
        auth_username: 'alice',
        auth_password: `${alice.password}\nurl=http://elsewhere.example/`,
      });
      assert.equal(smuggled.status, 422, smuggled.text);
      assert.match(smuggled.body.message, /line breaks/);

      const r = await migrate(bob.token, {
        clone_addr: src('secret'),
        repo_name: 'secret',
        auth_username: 'alice',
        auth_password: alice.password,
      });
      assert.equal(r.status, 201, r.text);
      assert.doesNotMatch(r.text, new RegExp(alice.password));
      assert.equal(r.body.original_url, src('secret'));
      const source = await g.lsRemote(repoUrl(s.url, 'alice', 'secret', aliceCred()));
      assert.deepEqual(await g.lsRemote(repoUrl(s.url, 'bob', 'secret', [bob.name, bob.password])), source);
      const dir = s.ctx.repos.pathOf(r.body);
      for (const f of ['config', 'FETCH_HEAD', 'packed-refs']) {
        const file = path.join(dir, f);
        if (fs.existsSync(file))
          assert.doesNotMatch(fs.readFileSync(file, 'utf8'), new RegExp(alice.password));
      }
      const row = await s.ctx.db
        .selectFrom('repository')
        .select('original_url')
        .where('id', '=', r.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.original_url, src('secret'));
    });

    it('takes credentials from the URL or a token, and strips them from original_url', async () => {
      const inUrl = await migrate(bob.token, {
        clone_addr: repoUrl(s.url, 'alice', 'secret', aliceCred()),
        repo_name: 'secret-url',
      });
      assert.equal(inUrl.status, 201, inUrl.text);
      assert.equal(inUrl.body.original_url, src('secret'));
      assert.doesNotMatch(inUrl.text, new RegExp(alice.password));

      const byToken = await migrate(bob.token, {
        clone_addr: src('secret'),
        repo_name: 'secret-token',
        auth_username: 'alice',
        auth_token: alice.token,
      });
      assert.equal(byToken.status, 201, byToken.text);
      assert.doesNotMatch(byToken.text, new RegExp(alice.token));
    });

    it('422 for local paths, file:// and other schemes, and bad URLs', async () => {
      const cases: Array<[string, RegExp]> = [
        [`file://${s.ctx.repos.pathOf({ id: 1 })}`, /local repositories/],
        [s.ctx.repos.pathOf({ id: 1 }), /local repositories/],
        ['./relative/repo', /local repositories/],
        ['ssh://git@127.0.0.1/alice/src.git', /scheme ssh is not allowed/],
        ['ext::sh -c touch% /tmp/pwned', /not allowed|not a valid URL/],
        ['not a url', /not a valid URL/],
        ['', /empty/],
      ];
      for (const [clone_addr, message] of cases) {
        const r = await migrate(bob.token, { clone_addr, repo_name: 'nope' });
        assert.equal(r.status, 422, `${clone_addr}: ${r.text}`);
        assert.match(r.body.message, message, clone_addr);
      }
      assert.equal((await s.api('GET', '/repos/bob/nope', { token: bob.token })).status, 404);
    });

    it('422 for missing or invalid fields', async () => {
      const bodies: Array<Record<string, unknown>> = [
        { repo_name: 'x' },
        { clone_addr: src('src') },
        { clone_addr: src('src'), repo_name: 'bad name' },
        { clone_addr: src('src'), repo_name: 'x', service: 'svn' },
        { clone_addr: src('src'), repo_name: 'x', mirror: true, mirror_interval: 'often' },
        { clone_addr: src('src'), repo_name: 'x', mirror: true, mirror_interval: '1m' },
        { clone_addr: src('src'), repo_name: 'x', private: 'yes' },
        { clone_addr: src('src'), repo_name: 'x', repo_owner: 'nobody-here' },
        { clone_addr: src('src'), repo_name: 'x', uid: 99999 },
      ];
      for (const body of bodies) {
        const r = await migrate(bob.token, body);
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      }
      const interval = await migrate(bob.token, {
        clone_addr: src('src'),
        repo_name: 'x',
        mirror: true,
        mirror_interval: '1m',
      });
      assert.match(interval.body.message, /MirrorInterval.*minimum interval of 10m/);
    });

    it('409 when the name is taken; nothing is cloned', async () => {
      const r = await migrate(bob.token, { clone_addr: src('src'), repo_name: 'copy' });
      assert.equal(r.status, 409, r.text);
      assert.equal(r.body.message, 'The repository with the same name already exists.');
    });

    it('a failed clone answers 422 and leaves no repository behind', async () => {
      const r = await migrate(bob.token, {
        clone_addr: 'http://127.0.0.1:1/alice/src.git',
        repo_name: 'gone',
      });
      assert.equal(r.status, 422, r.text);
      assert.match(r.body.message, /^Migration failed/);
      assert.equal((await s.api('GET', '/repos/bob/gone', { token: bob.token })).status, 404);
      assert.deepEqual(fs.readdirSync(path.join(s.config.repository.root, '.tmp')), []);
    });

    it('needs a signed-in caller; other users and organizations need the right to own', async () => {
      const anon = await s.api('POST', '/repos/migrate', {
        body: { clone_addr: src('src'), repo_name: 'a' },
      });
      assert.equal(anon.status, 401);
      const reader = await s.createUser('reader', { scopes: ['read:repository'] });
      const scoped = await migrate(reader.token, { clone_addr: src('src'), repo_name: 'a' });
      assert.equal(scoped.status, 403, scoped.text);

      const forOther = await migrate(bob.token, {
        clone_addr: src('src'),
        repo_name: 'a',
        repo_owner: 'carol',
      });
      assert.equal(forOther.status, 403, forOther.text);
      assert.equal(forOther.body.message, 'Given user is not an organization.');

      const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
      assert.equal(org.status, 201, org.text);
      const notOwner = await migrate(bob.token, {
        clone_addr: src('src'),
        repo_name: 'a',
        repo_owner: 'acme',
      });
      assert.equal(notOwner.status, 403, notOwner.text);
      assert.equal(notOwner.body.message, 'Given user is not owner of organization.');
      const owner = await migrate(alice.token, {
        clone_addr: src('src'),
        repo_name: 'a',
        repo_owner: 'acme',
      });
      assert.equal(owner.status, 201, owner.text);
      assert.equal(owner.body.full_name, 'acme/a');

      const admin = await migrate(s.admin.token, {
        clone_addr: src('src'),
        repo_name: 'given',
        uid: carol.id,
      });
      assert.equal(admin.status, 201, admin.text);
      assert.equal(admin.body.full_name, 'carol/given');
    });

    it('403 at the repository creation limit, before anything is cloned', async () => {
      const limited = await s.createUser('limited');
      await s.api('PATCH', '/admin/users/limited', { token: s.admin.token, body: { max_repo_creation: 0 } });
      const r = await migrate(limited.token, { clone_addr: src('src'), repo_name: 'more' });
      assert.equal(r.status, 403, r.text);
      assert.equal(r.body.message, 'user has already reached maximum limit of repositories [limit: 0]');
    });
  });

  describe('pull mirrors', () => {
    let mirrorId: number;

    it('mirror: true makes a mirror repository with an interval', async () => {
      const r = await migrate(bob.token, {
        clone_addr: src('upstream'),
        repo_name: 'mirror',
        mirror: true,
        mirror_interval: '10m',
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.mirror, true);
      mirrorId = r.body.id;
      const row = await s.ctx.db
        .selectFrom('mirror')
        .selectAll()
        .where('repo_id', '=', r.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(row.interval), 600);
      assert.ok(Math.abs(Number(row.next_update_unix) - (Date.now() / 1000 + 600)) < 30);
      assert.equal(row.remote_address, src('upstream'));
      assert.equal(row.credentials, '');

      const search = await s.api<{ data: RepoJson[] }>('GET', '/repos/search?mode=mirror', {
        token: bob.token,
      });
      assert.deepEqual(
        search.body.data.map((x) => x.full_name),
        ['bob/mirror'],
      );
    });

    it('"0" means only on request; no interval means the default (8h)', async () => {
      const never = await migrate(bob.token, {
        clone_addr: src('upstream'),
        repo_name: 'mirror-never',
        mirror: true,
        mirror_interval: '0',
      });
      assert.equal(never.status, 201, never.text);
      const dflt = await migrate(bob.token, {
        clone_addr: src('upstream'),
        repo_name: 'mirror-dflt',
        mirror: true,
      });
      assert.equal(dflt.status, 201, dflt.text);
      const rows = await s.ctx.db
        .selectFrom('mirror')
        .select(['repo_id', 'interval', 'next_update_unix'])
        .where('repo_id', 'in', [never.body.id, dflt.body.id])
        .orderBy('repo_id')
        .execute();
      assert.deepEqual(
        rows.map((x) => [Number(x.interval), Number(x.next_update_unix) === 0]),
        [
          [0, true],
          [8 * 3600, false],
        ],
      );
    });

    it('POST mirror-sync brings new commits and branch deletions in', async () => {
      const oid = await pushCommit('upstream', 'new.txt');
      await pushCommit('upstream', 'side.txt', 'side');
      const mirrorUrl = repoUrl(s.url, 'bob', 'mirror', [bob.name, bob.password]);
      assert.notEqual((await g.lsRemote(mirrorUrl)).get('refs/heads/main'), oid);

      const r = await s.api('POST', '/repos/bob/mirror/mirror-sync', { token: bob.token });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.text, '');
      const synced = await waitFor(async () => (await g.lsRemote(mirrorUrl)).get('refs/heads/main') === oid);
      assert.ok(synced, 'the mirror did not follow the new commit');
      await waitFor(async () => (await g.lsRemote(mirrorUrl)).has('refs/heads/side'));
      assert.deepEqual(await g.lsRemote(mirrorUrl), await g.lsRemote(src('upstream')));
      const branch = await s.ctx.db
        .selectFrom('branch')
        .select('commit_id')
        .where('repo_id', '=', mirrorId)
        .where('name', '=', 'main')
        .executeTakeFirstOrThrow();
      assert.equal(branch.commit_id, oid);

      // A branch deleted upstream goes away in the mirror.
      await g.git(['push', '--quiet', 'origin', ':side'], path.join(work, 'upstream-side_txt'));
      await s.ctx.mirrors.syncPull(mirrorId);
      assert.equal((await g.lsRemote(mirrorUrl)).has('refs/heads/side'), false);
      const row = await s.ctx.db
        .selectFrom('mirror')
        .select(['last_error', 'updated_unix'])
        .where('repo_id', '=', mirrorId)
        .executeTakeFirstOrThrow();
      assert.equal(row.last_error, '');
      assert.ok(Number(row.updated_unix) > 0);
    });

    it('the scheduler updates mirrors that are due', async () => {
      const oid = await pushCommit('upstream', 'scheduled.txt');
      await s.ctx.db
        .updateTable('mirror')
        .set({ next_update_unix: 1 })
        .where('repo_id', '=', mirrorId)
        .execute();
      await s.ctx.mirrors.tick();
      const refs = await g.lsRemote(repoUrl(s.url, 'bob', 'mirror', [bob.name, bob.password]));
      assert.equal(refs.get('refs/heads/main'), oid);
      const row = await s.ctx.db
        .selectFrom('mirror')
        .select('next_update_unix')
        .where('repo_id', '=', mirrorId)
        .executeTakeFirstOrThrow();
      assert.ok(Number(row.next_update_unix) > Date.now() / 1000 + 500);
    });

    it('a mirror refuses pushes', async () => {
      const dir = path.join(work, 'push-to-mirror');
      await g.git(['clone', '--quiet', repoUrl(s.url, 'bob', 'mirror', [bob.name, bob.password]), dir]);
      await g.commit(dir, 'nope.txt', 'nope\n');
      const r = await g.tryGit(['push', 'origin', 'main'], dir);
      assert.equal(r.ok, false);
      assert.match(r.out, /is a mirror/);
    });

    it('mirror-sync: 400 on a repository that is not a mirror, 403 without write, 401 anonymous', async () => {
      const notMirror = await s.api<Msg>('POST', '/repos/bob/copy/mirror-sync', { token: bob.token });
      assert.equal(notMirror.status, 400, notMirror.text);
      assert.equal(notMirror.body.message, 'Repository is not a mirror');
      const reader = await s.api('POST', '/repos/bob/mirror/mirror-sync', { token: carol.token });
      assert.equal(reader.status, 403, reader.text);
      const anon = await s.api('POST', '/repos/bob/mirror/mirror-sync');
      assert.equal(anon.status, 401, anon.text);
      const missing = await s.api('POST', '/repos/bob/nothing/mirror-sync', { token: bob.token });
      assert.equal(missing.status, 404, missing.text);
    });

    it('a private source is mirrored with encrypted credentials; failures are recorded', async () => {
      const r = await migrate(bob.token, {
        clone_addr: src('secret'),
        repo_name: 'secret-mirror',
        mirror: true,
        auth_username: 'alice',
        auth_password: alice.password,
      });
      assert.equal(r.status, 201, r.text);
      const stored = await s.ctx.db
        .selectFrom('mirror')
        .select('credentials')
        .where('repo_id', '=', r.body.id)
        .executeTakeFirstOrThrow();
      assert.match(stored.credentials, /^v1:/);
      assert.doesNotMatch(stored.credentials, new RegExp(alice.password));

      const oid = await pushCommit('secret', 'more.txt');
      await s.ctx.mirrors.syncPull(r.body.id);
      const refs = await g.lsRemote(repoUrl(s.url, 'bob', 'secret-mirror', [bob.name, bob.password]));
      assert.equal(refs.get('refs/heads/main'), oid);

      // alice's password changes: the next update fails and says why, without any secret in it.
      const changed = await s.api('PATCH', '/admin/users/alice', {
        token: s.admin.token,
        body: { password: 'Another-Password-456', must_change_password: false },
      });
      assert.equal(changed.status, 200, changed.text);
      await s.ctx.mirrors.syncPull(r.body.id);
      const row = await s.ctx.db
        .selectFrom('mirror')
        .select('last_error')
        .where('repo_id', '=', r.body.id)
        .executeTakeFirstOrThrow();
      assert.match(row.last_error, /Authentication failed|401|could not read/i);
      assert.doesNotMatch(row.last_error, new RegExp(alice.password));
      await s.api('PATCH', '/admin/users/alice', {
        token: s.admin.token,
        body: { password: alice.password, must_change_password: false },
      });
    });

    it('deleting a mirror repository removes its mirror record', async () => {
      const del = await s.api('DELETE', '/repos/bob/mirror-never', { token: bob.token });
      assert.equal(del.status, 204, del.text);
      const rows = await s.ctx.db
        .selectFrom('mirror')
        .innerJoin('repository', 'repository.id', 'mirror.repo_id')
        .select('repository.name')
        .where('repository.owner_id', '=', bob.id)
        .orderBy('repository.name')
        .execute();
      assert.deepEqual(
        rows.map((x) => x.name),
        ['mirror', 'mirror-dflt', 'secret-mirror'],
      );
    });
  });
});

describe('migration host policy', () => {
  let local: TestServer;
  let pinned: TestServer;
  let alice: User;

  before(async () => {
    // The default policy: no local networks; plus a blocked list.
    local = await startServer({ ANVIL__MIGRATIONS__BLOCKED_DOMAINS: '*.blocked.test, 203.0.113.0/24' });
    alice = await local.createUser('alice');
    const r = await local.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'src', auto_init: true },
    });
    assert.equal(r.status, 201, r.text);
    // An allow-list naming the loopback address explicitly, and a domain.
    pinned = await startServer({ ANVIL__MIGRATIONS__ALLOWED_DOMAINS: '127.0.0.1, *.allowed.test' });
  });

  after(async () => {
    await local?.close();
    await pinned?.close();
  });

  it('refuses loopback and private addresses by default with 422, by IP and by name', async () => {
    const port = new URL(local.url).port;
    for (const host of [
      '127.0.0.1',
      'localhost',
      '[::1]',
      '10.1.2.3',
      '192.168.0.1',
      '169.254.169.254',
      '0.0.0.0',
    ]) {
      const r = await local.api<Msg>('POST', '/repos/migrate', {
        token: alice.token,
        body: { clone_addr: `http://${host}:${port}/alice/src.git`, repo_name: 'copy' },
      });
      assert.equal(r.status, 422, `${host}: ${r.text}`);
      assert.match(r.body.message, /is not allowed: the host resolves to a local network address/, host);
    }
    assert.equal((await local.api('GET', '/repos/alice/copy', { token: alice.token })).status, 404);
  });

  it('refuses blocked names and addresses with 422', async () => {
    for (const addr of ['http://git.blocked.test/x.git', 'https://203.0.113.7/x.git']) {
      const r = await local.api<Msg>('POST', '/repos/migrate', {
        token: alice.token,
        body: { clone_addr: addr, repo_name: 'copy' },
      });
      assert.equal(r.status, 422, `${addr}: ${r.text}`);
      assert.match(r.body.message, /is blocked/);
    }
  });

  it('an address the allow-list names explicitly is reached; other hosts are not', async () => {
    const bob = await pinned.createUser('bob');
    const made = await pinned.api('POST', '/user/repos', {
      token: bob.token,
      body: { name: 'src', auto_init: true },
    });
    assert.equal(made.status, 201, made.text);
    const ok = await pinned.api<RepoJson>('POST', '/repos/migrate', {
      token: bob.token,
      body: { clone_addr: `${pinned.url}/bob/src.git`, repo_name: 'copy' },
    });
    assert.equal(ok.status, 201, ok.text);
    for (const [addr, message] of [
      ['http://10.0.0.1/x.git', /not in the allowed domains/],
      ['https://93.184.215.14/x.git', /not in the allowed domains/],
      ['http://git.allowed.test/x.git', /cannot be resolved/],
    ] as const) {
      const r = await pinned.api<Msg>('POST', '/repos/migrate', {
        token: bob.token,
        body: { clone_addr: addr, repo_name: 'other' },
      });
      assert.equal(r.status, 422, `${addr}: ${r.text}`);
      assert.match(r.body.message, message, addr);
    }
  });
});
