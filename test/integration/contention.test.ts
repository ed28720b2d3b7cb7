// Writes while another connection holds the database: on SQLite a second connection (another
// process, the `anvil` CLI, a backup) holding the write lock for a moment must make writes wait,
// never fail, and must not stop the server answering meanwhile; on PostgreSQL concurrent changes
// to the same rows (quota group memberships) must not surface deadlocks as 500s (nor on MariaDB).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { SQLite } from '../../src/db/sqlite-driver.js';
import { runCli, startServer, type Reply, type TestServer } from '../helpers/server.js';

/** The write-lock cases are SQLite's own (one writer at a time, held by another connection). */
const sqlite = (process.env['ANVIL__DATABASE__DB_TYPE'] ?? 'sqlite3') === 'sqlite3';

type User = Awaited<ReturnType<TestServer['createUser']>>;

/** Holds SQLite's write lock from another connection, as another process would. */
function holdWriteLock(file: string): { release(): void } {
  const other = new SQLite(file);
  other.exec('BEGIN IMMEDIATE');
  // A write, so the lock is a real writer's (a pending change), not only a reservation.
  other.exec(
    'CREATE TABLE IF NOT EXISTS contention_probe (x INTEGER); INSERT INTO contention_probe VALUES (1)',
  );
  return {
    release() {
      if (!other.open) return;
      other.exec('COMMIT');
      other.close();
    },
  };
}

describe('contention', { skip: !sqlite }, () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let teamId: number;
  let labelId: number;

  before(async () => {
    s = await startServer({ ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback' });
    [alice, bob] = await Promise.all([s.createUser('alice'), s.createUser('bob')]);
    await s.createUser('dave');
    const admin = { token: s.admin.token };
    const ok = (r: Reply, what: string) =>
      assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${r.text}`);
    ok(await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj' } }), 'repo');
    ok(await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } }), 'org');
    const team = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'readers', permission: 'read', units: ['repo.code'] },
    });
    ok(team, 'team');
    teamId = team.body.id;
    ok(
      await s.api('POST', '/repos/alice/proj/issues', { token: alice.token, body: { title: 'first' } }),
      'issue',
    );
    const label = await s.api<{ id: number }>('POST', '/repos/alice/proj/labels', {
      token: alice.token,
      body: { name: 'bug', color: 'ff0000' },
    });
    ok(label, 'label');
    labelId = label.body.id;
    ok(await s.api('POST', '/admin/quota/groups', { ...admin, body: { name: 'g1' } }), 'group g1');
    ok(await s.api('POST', '/admin/quota/groups', { ...admin, body: { name: 'doomed' } }), 'group doomed');
    ok(
      await s.api('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'old', scopes: ['all'] },
      }),
      'token old',
    );
    // Routes compile on their first request; the reads timed below are not first.
    for (const path of ['/version', '/users/alice', '/repos/alice/proj/issues']) {
      assert.equal((await s.api('GET', path, { token: alice.token })).status, 200);
    }
  });

  after(async () => {
    await s?.close();
  });

  it('every kind of write waits out a write lock held by another connection: no 5xx, all done after it ends', async () => {
    const admin = { token: s.admin.token };
    const a = { token: alice.token };
    const writes: [string, string, Record<string, unknown>][] = [
      [
        'POST',
        '/admin/users',
        { ...admin, body: { username: 'carol', email: 'carol@example.com', password: 'carol-password-1' } },
      ],
      ['PATCH', '/admin/users/bob', { ...admin, body: { full_name: 'Bob B' } }],
      [
        'POST',
        '/users/alice/tokens',
        { basic: [alice.name, alice.password], body: { name: 'new', scopes: ['all'] } },
      ],
      ['DELETE', '/users/alice/tokens/old', { basic: [alice.name, alice.password] }],
      ['POST', '/user/repos', { ...a, body: { name: 'second' } }],
      ['PATCH', '/repos/alice/proj', { ...a, body: { description: 'edited' } }],
      ['PUT', '/repos/alice/proj/collaborators/bob', { ...a, body: { permission: 'write' } }],
      ['PUT', '/repos/alice/proj/subscription', a],
      ['POST', '/orgs', { ...a, body: { username: 'beta' } }],
      ['PATCH', '/orgs/acme', { ...a, body: { description: 'edited' } }],
      [
        'POST',
        '/orgs/acme/teams',
        { ...a, body: { name: 'writers', permission: 'write', units: ['repo.code'] } },
      ],
      ['PUT', `/teams/${teamId}/members/bob`, a],
      ['POST', '/repos/alice/proj/issues', { ...a, body: { title: 'second' } }],
      ['PATCH', '/repos/alice/proj/issues/1', { ...a, body: { title: 'first, edited' } }],
      ['POST', '/repos/alice/proj/issues/1/comments', { ...a, body: { body: 'a comment' } }],
      ['POST', '/repos/alice/proj/issues/1/labels', { ...a, body: { labels: [labelId] } }],
      ['POST', '/repos/alice/proj/labels', { ...a, body: { name: 'feature', color: '00ff00' } }],
      ['POST', '/repos/alice/proj/milestones', { ...a, body: { title: 'v1' } }],
      [
        'POST',
        '/repos/alice/proj/hooks',
        {
          ...a,
          body: {
            type: 'forgejo',
            active: true,
            config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
          },
        },
      ],
      ['POST', '/admin/quota/rules', { ...admin, body: { name: 'r1', limit: 1000, subjects: ['size:all'] } }],
      ['POST', '/admin/quota/groups', { ...admin, body: { name: 'g2' } }],
      ['DELETE', '/admin/quota/groups/doomed', admin],
      ['PUT', '/admin/quota/groups/g1/users/bob', admin],
      ['POST', '/admin/users/dave/quota/groups', { ...admin, body: { groups: ['g1'] } }],
    ];
    assert.ok(new Set(writes.map(([m, p]) => `${m} ${p}`)).size >= 18);

    const lock = holdWriteLock(s.config.database.path);
    let held = true;
    const results = writes.map(async ([method, path, opts]) => {
      const r = await s.api(method, path, opts);
      return { what: `${method} ${path}`, r, whileHeld: held };
    });
    // While the lock is held, the server keeps answering what needs no write: the waiting writes
    // hold up neither its event loop nor its one SQLite connection. The lock is released once the
    // reads are answered (and the writes have waited a while), or at the latest after
    // STUCK_AFTER_MS, inside the writes' 5 s wait: a read stuck behind the lock then ends after
    // the release, which the order check below reports, however slow or loaded the machine.
    const STUCK_AFTER_MS = 4000;
    const reads = (async () => {
      await sleep(200);
      return Promise.all(
        ['/version', '/users/alice', '/repos/alice/proj/issues'].map(async (path) => {
          const r = await s.api('GET', path, a);
          return { path, r, whileHeld: held };
        }),
      );
    })();
    const answered = await Promise.race([
      Promise.all([reads, sleep(1500)]).then(([r]) => r),
      sleep(STUCK_AFTER_MS).then(() => undefined),
    ])
      .finally(() => {
        held = false;
        lock.release();
      })
      .catch(async (err: unknown) => {
        // Let the waiting writes finish before the next test takes the lock again.
        await Promise.allSettled(results);
        throw err;
      });
    for (const { path, r, whileHeld } of answered ?? (await reads)) {
      assert.equal(r.status, 200, `${path}: ${r.status} ${r.text}`);
      assert.ok(whileHeld, `GET ${path} was answered only once the lock was released`);
    }
    for (const { what, r, whileHeld } of await Promise.all(results)) {
      assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${r.text}`);
      assert.ok(!whileHeld, `${what} answered before the lock was released`);
    }
    const carol = await s.api('GET', '/users/carol', a);
    assert.equal(carol.status, 200);
    const members = await s.api<{ username: string }[]>('GET', '/admin/quota/groups/g1/users', admin);
    assert.deepEqual(members.body.map((u) => u.username).sort(), ['bob', 'dave']);
  });

  it('the CLI waits out a write lock held by another connection: generate-access-token succeeds', async () => {
    const lock = holdWriteLock(s.config.database.path);
    const cli = runCli(s, [
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'bob',
      '--token-name',
      'cli',
      '--raw',
    ]);
    // Long enough for the CLI to start and meet the lock, well inside its 5 s wait.
    await sleep(2500);
    lock.release();
    const r = await cli;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^[0-9a-f]{40}\n$/);
    const me = await s.api<{ login: string }>('GET', '/user', { token: r.stdout.trim() });
    assert.equal(me.status, 200);
    assert.equal(me.body.login, bob.name);
  });

  it('a write that cannot get the lock within the wait answers 503, and the server stays up', async () => {
    const lock = holdWriteLock(s.config.database.path);
    try {
      const r = await s.api('POST', '/repos/alice/proj/labels', {
        token: alice.token,
        body: { name: 'late', color: '0000ff' },
      });
      assert.equal(r.status, 503, r.text);
    } finally {
      lock.release();
    }
    const r = await s.api('POST', '/repos/alice/proj/labels', {
      token: alice.token,
      body: { name: 'late', color: '0000ff' },
    });
    assert.equal(r.status, 201, r.text);
  });
});

describe('concurrent quota group membership changes', () => {
  let s: TestServer;
  const users = ['u0', 'u1', 'u2'];
  const groups = ['q0', 'q1', 'q2'];

  before(async () => {
    s = await startServer();
    for (const u of users) await s.createUser(u);
    for (const g of groups) {
      const r = await s.api('POST', '/admin/quota/groups', { token: s.admin.token, body: { name: g } });
      assert.equal(r.status, 201, r.text);
    }
  });

  after(async () => {
    await s?.close();
  });

  it('adds, removes and replacements over the same users and groups, many at once: no 5xx', async () => {
    // A fixed sequence (a small LCG), so a failure can be replayed.
    let seed = 12345;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const ops = Array.from({ length: 600 }, () => {
      const u = users[next(users.length)]!;
      const kind = next(3);
      if (kind === 2) {
        const set = groups.filter(() => next(2) === 1);
        return { method: 'POST', path: `/admin/users/${u}/quota/groups`, body: { groups: set }, ok: [204] };
      }
      const g = groups[next(groups.length)]!;
      return kind === 0
        ? { method: 'PUT', path: `/admin/quota/groups/${g}/users/${u}`, ok: [204, 409] }
        : { method: 'DELETE', path: `/admin/quota/groups/${g}/users/${u}`, ok: [204, 404] };
    });
    const statuses = new Map<number, number>();
    const failures: string[] = [];
    let i = 0;
    const worker = async () => {
      while (i < ops.length) {
        const op = ops[i++]!;
        const r = await s.api(op.method, op.path, { token: s.admin.token, body: op.body });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (!op.ok.includes(r.status)) failures.push(`${op.method} ${op.path}: ${r.status} ${r.text}`);
      }
    };
    await Promise.all(Array.from({ length: 48 }, worker));
    assert.deepEqual(failures, [], JSON.stringify(Object.fromEntries(statuses)));
    // Every user's groups still read back consistently.
    for (const u of users) {
      const r = await s.api('GET', `/admin/users/${u}/quota`, { token: s.admin.token });
      assert.equal(r.status, 200, r.text);
    }
  });
});
