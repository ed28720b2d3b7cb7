// Actions secrets and variables of organizations, repositories and users: create (201) versus
// update (204), names refused (400), missing ones (404), who may manage them (org owners,
// repository admins, the user themself) and token scopes; values are encrypted at rest and never
// returned by any endpoint. Secrets and variables stay manageable while actions are disabled
// (the default), which is how this server runs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}
interface SecretJson {
  name: string;
  created_at: string;
}
interface VariableJson {
  owner_id: number;
  repo_id: number;
  name: string;
  data: string;
}

const VALUE = 's3cr3t-value-that-must-never-leak';

describe('actions secrets and variables', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let readOnly: User;
  let repoId: number;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    readOnly = await s.createUser('rory', { scopes: ['read:repository', 'read:organization', 'read:user'] });
    const r = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'app' },
    });
    assert.equal(r.status, 201);
    repoId = r.body.id;
    const o = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    assert.equal(o.status, 201);
  });

  after(async () => {
    await s?.close();
  });

  const levels = [
    { level: 'repository', base: () => '/repos/alice/app/actions' },
    { level: 'organization', base: () => '/orgs/acme/actions' },
    { level: 'user', base: () => '/user/actions' },
  ];

  for (const { level, base } of levels) {
    describe(`${level} secrets`, () => {
      it('creates with 201, updates with 204, lists names only and deletes with 204', async () => {
        const put = (name: string, data: string) =>
          s.api('PUT', `${base()}/secrets/${name}`, { token: alice.token, body: { data } });
        let r = await put('deploy_key', VALUE);
        assert.equal(r.status, 201, r.text);
        assert.equal(r.text, '');
        r = await put('DEPLOY_KEY', `${VALUE}-2`);
        assert.equal(r.status, 204, r.text);
        assert.equal((await put('OTHER', 'x')).status, 201);

        const list = await s.api<SecretJson[]>('GET', `${base()}/secrets`, { token: alice.token });
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(
          list.body.map((x) => x.name),
          ['DEPLOY_KEY', 'OTHER'],
        );
        assert.deepEqual(Object.keys(list.body[0]!).sort(), ['created_at', 'name']);
        assert.match(list.body[0]!.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        assert.equal(list.headers.get('x-total-count'), '2');
        assert.ok(!list.text.includes(VALUE));

        assert.equal((await s.api('DELETE', `${base()}/secrets/other`, { token: alice.token })).status, 204);
        const gone = await s.api<{ message: string }>('DELETE', `${base()}/secrets/OTHER`, {
          token: alice.token,
        });
        assert.equal(gone.status, 404);
        assert.match(gone.body.message, /secret does not exist/);
      });

      it('refuses bad names with 400', async () => {
        for (const name of [
          '1ABC',
          'GITHUB_TOKEN',
          'gitea_x',
          'FORGEJO_SECRET',
          'bad-name',
          'with.dot',
          '_%C3%A9',
        ]) {
          const r = await s.api<{ message: string }>('PUT', `${base()}/secrets/${name}`, {
            token: alice.token,
            body: { data: 'x' },
          });
          assert.equal(r.status, 400, `${name}: ${r.text}`);
          assert.match(r.body.message, /invalid secret name/);
        }
        assert.equal(
          (await s.api('PUT', `${base()}/secrets/_OK_1`, { token: alice.token, body: { data: 'x' } })).status,
          201,
        );
        assert.equal(
          (await s.api('DELETE', `${base()}/secrets/GITHUB_X`, { token: alice.token })).status,
          400,
        );
      });

      it('validates the body', async () => {
        const r = await s.api('PUT', `${base()}/secrets/NO_DATA`, { token: alice.token, body: {} });
        assert.equal(r.status, 422);
        const n = await s.api('PUT', `${base()}/secrets/NUM`, { token: alice.token, body: { data: 5 } });
        assert.equal(n.status, 422);
        const big = await s.api('PUT', `${base()}/secrets/BIG`, {
          token: alice.token,
          body: { data: 'x'.repeat(70 * 1024) },
        });
        assert.equal(big.status, 422);
        const bad = await s.api('PUT', `${base()}/secrets/RAW`, { token: alice.token, raw: '{"data":' });
        assert.equal(bad.status, 400);
      });

      it('needs a token scope of its category', async () => {
        const r = await s.api<{ message: string }>('PUT', `${base()}/secrets/SCOPED`, {
          token: readOnly.token,
          body: { data: 'x' },
        });
        assert.equal(r.status, 403);
        assert.equal((await s.api('GET', `${base()}/secrets`)).status, 401);
      });
    });

    describe(`${level} variables`, () => {
      it('creates (201, then 409), reads, renames (204) and deletes (204)', async () => {
        let r = await s.api('POST', `${base()}/variables/stage`, {
          token: alice.token,
          body: { value: 'prod' },
        });
        assert.equal(r.status, 201, r.text);
        r = await s.api('POST', `${base()}/variables/STAGE`, { token: alice.token, body: { value: 'dev' } });
        assert.equal(r.status, 409);
        const got = await s.api<VariableJson>('GET', `${base()}/variables/stage`, { token: alice.token });
        assert.equal(got.status, 200);
        assert.equal(got.body.name, 'STAGE');
        assert.equal(got.body.data, 'prod');
        if (level === 'repository') {
          assert.equal(got.body.repo_id, repoId);
          assert.equal(got.body.owner_id, 0);
        } else {
          assert.equal(got.body.repo_id, 0);
          assert.ok(got.body.owner_id > 0);
        }
        r = await s.api('PUT', `${base()}/variables/STAGE`, {
          token: alice.token,
          body: { name: 'ENVIRONMENT', value: 'staging\r\nx' },
        });
        assert.equal(r.status, 204, r.text);
        assert.equal((await s.api('GET', `${base()}/variables/STAGE`, { token: alice.token })).status, 404);
        const list = await s.api<VariableJson[]>('GET', `${base()}/variables`, { token: alice.token });
        assert.deepEqual(
          list.body.map((v) => [v.name, v.data]),
          [['ENVIRONMENT', 'staging\nx']],
        );
        assert.equal(
          (await s.api('PUT', `${base()}/variables/MISSING`, { token: alice.token, body: { value: 'x' } }))
            .status,
          404,
        );
        assert.equal(
          (await s.api('POST', `${base()}/variables/GITEA_X`, { token: alice.token, body: { value: 'x' } }))
            .status,
          400,
        );
        assert.equal(
          (await s.api('DELETE', `${base()}/variables/environment`, { token: alice.token })).status,
          204,
        );
        assert.equal(
          (await s.api('DELETE', `${base()}/variables/environment`, { token: alice.token })).status,
          404,
        );
      });
    });
  }

  it('lets only repository admins, organization owners and the user themself manage them', async () => {
    // bob sees the public repository but does not administer it: 403; a private one is a 404.
    let r = await s.api('PUT', '/repos/alice/app/actions/secrets/X', {
      token: bob.token,
      body: { data: 'x' },
    });
    assert.equal(r.status, 403);
    assert.equal((await s.api('GET', '/repos/alice/app/actions/secrets', { token: bob.token })).status, 403);
    assert.equal(
      (await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'hidden', private: true } }))
        .status,
      201,
    );
    r = await s.api('PUT', '/repos/alice/hidden/actions/secrets/X', {
      token: bob.token,
      body: { data: 'x' },
    });
    assert.equal(r.status, 404);
    // A collaborator with admin rights may.
    assert.equal(
      (
        await s.api('PUT', '/repos/alice/app/collaborators/bob', {
          token: alice.token,
          body: { permission: 'admin' },
        })
      ).status,
      204,
    );
    r = await s.api('PUT', '/repos/alice/app/actions/secrets/BOB_WAS_HERE', {
      token: bob.token,
      body: { data: 'x' },
    });
    assert.equal(r.status, 201, r.text);
    // Organization members who are not owners may not; the site administrator may.
    r = await s.api('PUT', '/orgs/acme/actions/secrets/X', { token: bob.token, body: { data: 'x' } });
    assert.equal(r.status, 403);
    r = await s.api('PUT', '/orgs/acme/actions/secrets/ROOT_SET', {
      token: s.admin.token,
      body: { data: 'x' },
    });
    assert.equal(r.status, 201);
    assert.equal((await s.api('GET', '/orgs/nope/actions/secrets', { token: alice.token })).status, 404);
    // User secrets are each user's own.
    await s.api('PUT', '/user/actions/secrets/MINE', { token: bob.token, body: { data: 'bob' } });
    const mine = await s.api<SecretJson[]>('GET', '/user/actions/secrets', { token: bob.token });
    assert.deepEqual(
      mine.body.map((x) => x.name),
      ['MINE'],
    );
  });

  it('keeps values encrypted at rest and out of every response', async () => {
    await s.api('PUT', '/repos/alice/app/actions/secrets/AT_REST', {
      token: alice.token,
      body: { data: VALUE },
    });
    const rows = await s.ctx.db.selectFrom('action_secret').select(['name', 'data']).execute();
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.ok(row.data.startsWith('v1:'), 'stored in the SecretBox format');
      assert.ok(!row.data.includes(VALUE));
    }
    for (const p of [
      '/repos/alice/app/actions/secrets',
      '/orgs/acme/actions/secrets',
      '/user/actions/secrets',
    ]) {
      const r = await s.api('GET', p, { token: alice.token });
      assert.equal(r.status, 200);
      assert.ok(!r.text.includes(VALUE), p);
    }
    // The secret decrypts to what was stored (what a job receives).
    const repo = (await s.ctx.repos.getById(repoId))!;
    const { secrets } = await s.ctx.actions.secretsAndVars(repo);
    assert.equal(secrets['AT_REST'], VALUE);
  });

  it('leaves the rest of actions off while disabled (404 with a message)', async () => {
    for (const p of [
      '/repos/alice/app/actions/runs',
      '/repos/alice/app/actions/tasks',
      '/repos/alice/app/actions/runners/registration-token',
      '/orgs/acme/actions/runners/registration-token',
      '/user/actions/runners/registration-token',
      '/admin/runners/registration-token',
      '/repos/alice/app/actions/runners',
      '/admin/actions/runners',
    ]) {
      const r = await s.api<{ message: string }>('GET', p, {
        token: p.startsWith('/admin') ? s.admin.token : alice.token,
      });
      assert.equal(r.status, 404, p);
      assert.match(r.body.message, /Actions are disabled/, p);
    }
    const d = await s.api<{ message: string }>(
      'POST',
      '/repos/alice/app/actions/workflows/ci.yml/dispatches',
      {
        token: alice.token,
        body: { ref: 'main' },
      },
    );
    assert.equal(d.status, 404);
    assert.match(d.body.message, /Actions are disabled/);
    for (const method of ['Register', 'FetchTask', 'Declare']) {
      const r = await s.api<{ code: string; message: string }>(
        'POST',
        `/api/actions/runner.v1.RunnerService/${method}`,
        {
          body: {},
        },
      );
      assert.equal(r.status, 404, method);
      assert.match(r.body.message, /Actions are disabled/);
    }
    const ping = await s.api('POST', '/api/actions/ping.v1.PingService/Ping', { body: { data: 'x' } });
    assert.equal(ping.status, 404);
  });

  it('reserves the bot name', async () => {
    const r = await s.api<{ message: string }>('POST', '/admin/users', {
      token: s.admin.token,
      body: {
        username: 'anvil-actions',
        email: 'bot@example.com',
        password: 'password-123',
        must_change_password: false,
      },
    });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /reserved/);
    const users = await s.api<Array<{ login: string }>>('GET', '/admin/users?limit=50', {
      token: s.admin.token,
    });
    assert.ok(!users.body.some((u) => u.login === 'anvil-actions'), 'the bot is not listed as a user');
  });
});
