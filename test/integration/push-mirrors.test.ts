// Push mirrors over HTTP (/repos/{owner}/{repo}/push_mirrors, push_mirrors/{name},
// push_mirrors-sync) with the real git client: pushes to Anvil are pushed on to the mirror (another
// Anvil repository reached over HTTP with its owner's credentials) right after, when sync_on_commit
// is set; on request; and on the schedule. Failures are recorded in last_error without secrets;
// credentials are encrypted at rest and never shown.
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

interface PushMirrorJson {
  repo_name: string;
  remote_name: string;
  remote_address: string;
  created: string;
  last_update: string | null;
  last_error: string;
  interval: string;
  sync_on_commit: boolean;
  public_key: string;
}

interface Msg {
  message: string;
}

const KEYS = [
  'created',
  'interval',
  'last_error',
  'last_update',
  'public_key',
  'remote_address',
  'remote_name',
  'repo_name',
  'sync_on_commit',
];

describe('push mirrors', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let carol: User;
  let dave: User;
  let clone: string;
  let onCommit: PushMirrorJson;

  const target = (name: string) => `${s.url}/bob/${name}.git`;
  const create = (body: Record<string, unknown>, token = alice.token) =>
    s.api<PushMirrorJson & Msg>('POST', '/repos/alice/src/push_mirrors', { token, body });
  const mirrorOf = async (name: string) =>
    (await s.api<PushMirrorJson>('GET', `/repos/alice/src/push_mirrors/${name}`, { token: alice.token }))
      .body;
  const sameRefs = async (name: string) => {
    const a = await g.lsRemote(repoUrl(s.url, 'alice', 'src', [alice.name, alice.password]));
    const b = await g.lsRemote(repoUrl(s.url, 'bob', name, [bob.name, bob.password]));
    return a.size > 0 && JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  };

  before(async () => {
    s = await startServer({ ANVIL__MIGRATIONS__ALLOW_LOCALNETWORKS: 'true' });
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    const src = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'src', auto_init: true },
    });
    assert.equal(src.status, 201, src.text);
    for (const name of ['target', 'target2', 'target3', 'target4']) {
      const r = await s.api('POST', '/user/repos', { token: bob.token, body: { name } });
      assert.equal(r.status, 201, r.text);
    }
    const collab = await s.api('PUT', '/repos/alice/src/collaborators/carol', {
      token: alice.token,
      body: { permission: 'write' },
    });
    assert.equal(collab.status, 204, collab.text);
    clone = path.join(g.home, 'src');
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'src', [alice.name, alice.password]), clone]);
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
  });

  describe('POST /repos/{owner}/{repo}/push_mirrors', () => {
    it('creates a push mirror: 200 PushMirror without credentials; they are encrypted at rest', async () => {
      const r = await create({
        remote_address: target('target'),
        remote_username: 'bob',
        remote_password: bob.password,
        interval: '8h0m0s',
        sync_on_commit: true,
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), KEYS);
      assert.equal(r.body.repo_name, 'src');
      assert.match(r.body.remote_name, /^remote_mirror_[a-z0-9]{10}$/);
      assert.equal(r.body.remote_address, target('target'));
      assert.match(r.body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.equal(r.body.last_update, null);
      assert.equal(r.body.last_error, '');
      assert.equal(r.body.interval, '8h0m0s');
      assert.equal(r.body.sync_on_commit, true);
      assert.doesNotMatch(r.text, new RegExp(bob.password));
      onCommit = r.body;

      const row = await s.ctx.db
        .selectFrom('push_mirror')
        .select(['credentials', 'remote_address', 'interval'])
        .where('remote_name', '=', r.body.remote_name)
        .executeTakeFirstOrThrow();
      assert.match(row.credentials, /^v1:/);
      assert.doesNotMatch(row.credentials, new RegExp(bob.password));
      assert.doesNotMatch(row.remote_address, /@/);
      assert.equal(Number(row.interval), 8 * 3600);
      const repo = await s.api<{ id: number }>('GET', '/repos/alice/src', { token: alice.token });
      const config = fs.readFileSync(path.join(s.ctx.repos.pathOf(repo.body), 'config'), 'utf8');
      assert.doesNotMatch(config, new RegExp(bob.password));
    });

    it('takes credentials given in the address, and shows the address without them', async () => {
      const r = await create({
        remote_address: repoUrl(s.url, 'bob', 'target4', [bob.name, bob.password]),
        interval: '10m',
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.remote_address, target('target4'));
      assert.equal(r.body.interval, '10m0s');
      assert.equal(r.body.sync_on_commit, false);
      assert.doesNotMatch(r.text, new RegExp(bob.password));
    });

    it('400 for bad intervals and addresses, 422 for badly typed fields', async () => {
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ remote_address: target('x'), interval: 'often' }, /invalid duration/],
        [{ remote_address: target('x'), interval: '1m' }, /minimum interval/],
        [{ remote_address: target('x'), interval: '-1h' }, /invalid duration/],
        [{ remote_address: 'file:///tmp/x.git', interval: '0' }, /local repositories/],
        [{ remote_address: '/tmp/x.git', interval: '0' }, /local repositories/],
        [{ remote_address: 'git://127.0.0.1/x.git', interval: '0' }, /scheme git is not allowed/],
        [{ remote_address: 'ssh://git@127.0.0.1/x.git', interval: '0' }, /scheme ssh is not allowed/],
        [{ remote_address: '', interval: '0' }, /empty/],
        [{ interval: '0' }, /empty/],
        [{ remote_address: target('x'), interval: '0', use_ssh: true }, /SSH/],
      ];
      for (const [body, message] of bad) {
        const r = await create(body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.match(r.body.message, message, JSON.stringify(body));
      }
      for (const body of [
        { remote_address: target('x'), sync_on_commit: 'yes' },
        { remote_address: 42 },
        { remote_address: target('x'), interval: 600 },
      ]) {
        const r = await create(body);
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      }
      const list = await s.api<PushMirrorJson[]>('GET', '/repos/alice/src/push_mirrors', {
        token: alice.token,
      });
      assert.equal(list.body.length, 2);
    });

    it('refuses hosts the migration policy refuses', async () => {
      const strict = await startServer();
      try {
        const u = await strict.createUser('u');
        await strict.api('POST', '/user/repos', { token: u.token, body: { name: 'r' } });
        const r = await strict.api<Msg>('POST', '/repos/u/r/push_mirrors', {
          token: u.token,
          body: { remote_address: `${strict.url}/u/other.git`, interval: '0' },
        });
        assert.equal(r.status, 400, r.text);
        assert.match(r.body.message, /local network/);
      } finally {
        await strict.close();
      }
    });
  });

  describe('reading and managing', () => {
    it('lists and gets push mirrors', async () => {
      const list = await s.api<PushMirrorJson[]>('GET', '/repos/alice/src/push_mirrors', {
        token: alice.token,
      });
      assert.equal(list.status, 200, list.text);
      assert.equal(list.headers.get('x-total-count'), '2');
      assert.deepEqual(
        list.body.map((m) => m.remote_address),
        [target('target'), target('target4')],
      );
      const page = await s.api<PushMirrorJson[]>('GET', '/repos/alice/src/push_mirrors?limit=1&page=2', {
        token: alice.token,
      });
      assert.deepEqual(
        page.body.map((m) => m.remote_address),
        [target('target4')],
      );
      const one = await s.api<PushMirrorJson>(
        'GET',
        `/repos/alice/src/push_mirrors/${onCommit.remote_name}`,
        {
          token: alice.token,
        },
      );
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(one.body, onCommit);
      const missing = await s.api('GET', '/repos/alice/src/push_mirrors/remote_mirror_nope', {
        token: alice.token,
      });
      assert.equal(missing.status, 404);
    });

    it('needs repository admin: 403 for writers and readers, 401 anonymous, 404 unseen', async () => {
      const name = onCommit.remote_name;
      for (const token of [carol.token, dave.token]) {
        for (const [method, url, body] of [
          ['GET', '/repos/alice/src/push_mirrors', undefined],
          ['POST', '/repos/alice/src/push_mirrors', { remote_address: target('x'), interval: '0' }],
          ['GET', `/repos/alice/src/push_mirrors/${name}`, undefined],
          ['DELETE', `/repos/alice/src/push_mirrors/${name}`, undefined],
          ['POST', '/repos/alice/src/push_mirrors-sync', undefined],
        ] as const) {
          const r = await s.api(method, url, { token, body });
          assert.equal(r.status, 403, `${method} ${url}: ${r.text}`);
        }
      }
      const anon = await s.api('GET', '/repos/alice/src/push_mirrors');
      assert.equal(anon.status, 401);
      const priv = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'hidden', private: true },
      });
      assert.equal(priv.status, 201);
      const unseen = await s.api('GET', '/repos/alice/hidden/push_mirrors', { token: dave.token });
      assert.equal(unseen.status, 404);

      // Repository administrators (not only the owner) manage push mirrors.
      await s.api('PUT', '/repos/alice/src/collaborators/dave', {
        token: alice.token,
        body: { permission: 'admin' },
      });
      const asAdmin = await s.api<PushMirrorJson[]>('GET', '/repos/alice/src/push_mirrors', {
        token: dave.token,
      });
      assert.equal(asAdmin.status, 200, asAdmin.text);
      assert.equal(asAdmin.body.length, 2);
      await s.api('DELETE', '/repos/alice/src/collaborators/dave', { token: alice.token });
    });
  });

  describe('synchronisation', () => {
    it('sync_on_commit: a push to Anvil reaches the mirror right after', async () => {
      await g.commit(clone, 'one.txt', 'one\n');
      await g.git(['checkout', '--quiet', '-b', 'topic'], clone);
      await g.commit(clone, 'topic.txt', 'topic\n');
      await g.git(['tag', 'v1'], clone);
      await g.git(['checkout', '--quiet', 'main'], clone);
      await g.git(['push', '--quiet', 'origin', 'main', 'topic', 'v1'], clone);
      assert.ok(await waitFor(() => sameRefs('target'), 15_000), 'the mirror did not receive the push');
      const target = await g.lsRemote(repoUrl(s.url, 'bob', 'target'));
      assert.ok(target.has('refs/heads/topic') && target.has('refs/tags/v1'));
      assert.ok(await waitFor(async () => (await mirrorOf(onCommit.remote_name)).last_update !== null));
      const m = await mirrorOf(onCommit.remote_name);
      assert.equal(m.last_error, '');

      // Deleting a branch is mirrored too.
      await g.git(['push', '--quiet', 'origin', ':topic'], clone);
      assert.ok(
        await waitFor(
          async () => !(await g.lsRemote(repoUrl(s.url, 'bob', 'target'))).has('refs/heads/topic'),
          15_000,
        ),
      );
    });

    it('without sync_on_commit nothing is pushed until push_mirrors-sync', async () => {
      const r = await create({
        remote_address: target('target2'),
        remote_username: 'bob',
        remote_password: bob.password,
        interval: '0',
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.interval, '0s');
      await g.commit(clone, 'two.txt', 'two\n');
      await g.git(['push', '--quiet', 'origin', 'main'], clone);
      // The on-commit mirror follows; target2 (no sync_on_commit) must not have moved meanwhile.
      assert.ok(await waitFor(() => sameRefs('target'), 15_000));
      assert.equal((await g.lsRemote(repoUrl(s.url, 'bob', 'target2'))).size, 0);

      const sync = await s.api('POST', '/repos/alice/src/push_mirrors-sync', { token: alice.token });
      assert.equal(sync.status, 200, sync.text);
      assert.equal(sync.text, '');
      assert.ok(await sameRefs('target2'));
      const m = await mirrorOf(r.body.remote_name);
      assert.notEqual(m.last_update, null);
      assert.equal(m.last_error, '');
    });

    it('the scheduler pushes mirrors that are due', async () => {
      await g.commit(clone, 'three.txt', 'three\n');
      await g.git(['push', '--quiet', 'origin', 'main'], clone);
      assert.ok(await waitFor(() => sameRefs('target'), 15_000));
      assert.equal(await sameRefs('target4'), false);
      await s.ctx.db
        .updateTable('push_mirror')
        .set({ next_update_unix: 1 })
        .where('remote_address', '=', target('target4'))
        .execute();
      await s.ctx.mirrors.tick();
      assert.ok(await sameRefs('target4'));
      const row = await s.ctx.db
        .selectFrom('push_mirror')
        .select(['next_update_unix', 'last_error'])
        .where('remote_address', '=', target('target4'))
        .executeTakeFirstOrThrow();
      assert.equal(row.last_error, '');
      assert.ok(Number(row.next_update_unix) > Date.now() / 1000 + 500);
    });

    it('a failing push mirror records last_error, without the password', async () => {
      const wrong = 'Wrong-Password-789';
      const r = await create({
        remote_address: target('target3'),
        remote_username: 'bob',
        remote_password: wrong,
        interval: '0',
        sync_on_commit: true,
      });
      assert.equal(r.status, 200, r.text);
      const sync = await s.api('POST', '/repos/alice/src/push_mirrors-sync', { token: alice.token });
      assert.equal(sync.status, 200, sync.text);
      const m = await mirrorOf(r.body.remote_name);
      assert.notEqual(m.last_update, null);
      assert.match(m.last_error, /Authentication failed|401/);
      assert.doesNotMatch(m.last_error, new RegExp(wrong));
      assert.equal((await g.lsRemote(repoUrl(s.url, 'bob', 'target3'))).size, 0);

      // The on-commit path records its failures as well.
      await s.ctx.db
        .updateTable('push_mirror')
        .set({ last_error: '', last_update_unix: 0 })
        .where('remote_name', '=', r.body.remote_name)
        .execute();
      await g.commit(clone, 'four.txt', 'four\n');
      await g.git(['push', '--quiet', 'origin', 'main'], clone);
      assert.ok(await waitFor(async () => (await mirrorOf(r.body.remote_name)).last_error !== '', 15_000));
      const again = await mirrorOf(r.body.remote_name);
      assert.match(again.last_error, /Authentication failed|401/);
      assert.doesNotMatch(again.last_error, new RegExp(wrong));
    });
  });

  describe('deletion', () => {
    it('DELETE removes a push mirror: 204, then 404', async () => {
      const del = await s.api('DELETE', `/repos/alice/src/push_mirrors/${onCommit.remote_name}`, {
        token: alice.token,
      });
      assert.equal(del.status, 204, del.text);
      const get = await s.api('GET', `/repos/alice/src/push_mirrors/${onCommit.remote_name}`, {
        token: alice.token,
      });
      assert.equal(get.status, 404);
      const again = await s.api('DELETE', `/repos/alice/src/push_mirrors/${onCommit.remote_name}`, {
        token: alice.token,
      });
      assert.equal(again.status, 404);
    });

    it('deleting the repository deletes its push mirrors', async () => {
      const del = await s.api('DELETE', '/repos/alice/src', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      const rows = await s.ctx.db.selectFrom('push_mirror').select('id').execute();
      assert.deepEqual(rows, []);
    });
  });
});
