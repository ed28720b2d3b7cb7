// Access tokens over HTTP: creation (password only, scopes normalized, value shown once), listing,
// deletion by id or name, and storage of a hash only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SQLite } from '../../src/db/sqlite-driver.js';
import pg from 'pg';
import { postgresConnection } from '../../src/db/database.js';
import mysql from 'mysql2/promise';
import { mysqlConnection } from '../../src/db/mysql.js';
import { startServer, type TestServer } from '../helpers/server.js';

interface Msg {
  message: string;
}

interface TokenJson {
  id: number;
  name: string;
  sha1: string;
  token_last_eight: string;
  scopes: string[];
  scope: string;
  created_at: string;
  updated_at: string;
}

const TOKEN_KEYS = ['created_at', 'id', 'name', 'scope', 'scopes', 'sha1', 'token_last_eight', 'updated_at'];

describe('access tokens: /users/{username}/tokens', () => {
  let s: TestServer;
  let gina: Awaited<ReturnType<TestServer['createUser']>>;
  let hal: Awaited<ReturnType<TestServer['createUser']>>;
  let n = 0;

  const ginaBasic = () => ({ basic: [gina.name, gina.password] as [string, string] });
  const rootBasic = () => ({ basic: [s.admin.name, s.admin.password] as [string, string] });

  function createRaw(user: string, body: unknown, auth: Parameters<TestServer['api']>[2] = ginaBasic()) {
    return s.api<TokenJson & Msg>('POST', `/users/${user}/tokens`, { ...auth, body });
  }

  async function create(scopes: string[], name = `tok-${++n}`): Promise<TokenJson> {
    const r = await createRaw('gina', { name, scopes });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function list(user = 'gina', auth = ginaBasic()) {
    return s.api<TokenJson[]>('GET', `/users/${user}/tokens?limit=50`, auth);
  }

  before(async () => {
    s = await startServer();
    gina = await s.createUser('gina');
    hal = await s.createUser('hal');
  });
  after(() => s.close());

  describe('POST', () => {
    it('creates a token: 201 with the value (40 hex), its last eight characters and its scopes', async () => {
      const r = await createRaw('gina', { name: 'first', scopes: ['read:user'] });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), TOKEN_KEYS);
      assert.equal(typeof r.body.id, 'number');
      assert.equal(r.body.name, 'first');
      assert.match(r.body.sha1, /^[0-9a-f]{40}$/);
      assert.equal(r.body.token_last_eight, r.body.sha1.slice(-8));
      assert.deepEqual(r.body.scopes, ['read:user']);
      assert.equal(r.body.scope, 'read:user');
      assert.match(r.body.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);

      const me = await s.api<{ login: string }>('GET', '/user', { token: r.body.sha1 });
      assert.equal(me.status, 200);
      assert.equal(me.body.login, 'gina');
    });

    it('normalizes the scopes: write implies read, `all` absorbs the rest, categories in a fixed order', async () => {
      const cases: Array<[string[], string]> = [
        [['read:user', 'write:user', 'write:repository'], 'write:repository,write:user'],
        [['all', 'read:user'], 'all'],
        [['read:user', 'all'], 'all'],
        [['read:user', 'read:user'], 'read:user'],
        [['read:user', 'read:activitypub', 'write:issue'], 'read:activitypub,write:issue,read:user'],
        [['public-only', 'read:repository'], 'public-only,read:repository'],
        [['read:organization', 'public-only', 'all'], 'public-only,all'],
        [
          [
            'write:activitypub',
            'write:admin',
            'write:misc',
            'write:notification',
            'write:organization',
            'write:package',
            'write:issue',
            'write:repository',
            'write:user',
          ],
          'all',
        ],
      ];
      for (const [scopes, scope] of cases) {
        const t = await create(scopes);
        assert.equal(t.scope, scope, JSON.stringify(scopes));
        assert.deepEqual(t.scopes, scope.split(','), JSON.stringify(scopes));
      }
    });

    it('answers 400 when no scope is given', async () => {
      for (const body of [
        { name: 'noscope' },
        { name: 'noscope', scopes: [] },
        { name: 'noscope', scopes: [''] },
        { name: 'noscope', scopes: [' ', ','] },
      ]) {
        const r = await createRaw('gina', body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
        assert.match(r.body.message, /scope/);
      }
      const names = (await list()).body.map((t) => t.name);
      assert.ok(!names.includes('noscope'), 'nothing was created');
    });

    it('answers 400 for an unknown scope, naming it', async () => {
      for (const bad of [
        'read:nonsense',
        'admin',
        'read:',
        'delete:user',
        'READ:USER',
        'read:user:extra',
        'sudo',
      ]) {
        const r = await createRaw('gina', { name: 'badscope', scopes: ['read:user', bad] });
        assert.equal(r.status, 400, bad);
        assert.ok(r.body.message.includes(bad), `${bad}: ${r.body.message}`);
      }
      const names = (await list()).body.map((t) => t.name);
      assert.ok(!names.includes('badscope'), 'nothing was created');
    });

    it('answers 400 for a name the user already uses; another user may use it', async () => {
      await create(['read:user'], 'dup');
      const r = await createRaw('gina', { name: 'dup', scopes: ['read:user'] });
      assert.equal(r.status, 400);
      assert.match(r.body.message, /used already/);
      const trimmed = await createRaw('gina', { name: '  dup  ', scopes: ['read:user'] });
      assert.equal(trimmed.status, 400, 'the name is trimmed before comparing');
      const other = await createRaw(
        'hal',
        { name: 'dup', scopes: ['read:user'] },
        { basic: [hal.name, hal.password] },
      );
      assert.equal(other.status, 201);
    });

    it('answers 422 when the name is missing or empty', async () => {
      for (const body of [
        { scopes: ['read:user'] },
        { name: '', scopes: ['read:user'] },
        { name: '  ', scopes: ['all'] },
      ]) {
        const r = await createRaw('gina', body);
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.match(r.body.message, /Name/);
      }
      const notArray = await createRaw('gina', { name: 'x', scopes: { read: 'user' } });
      assert.equal(notArray.status, 422);
    });

    it('needs a password: a token, in any form, gets 401', async () => {
      const body = { name: 'by-token', scopes: ['all'] };
      const viaHeader = await createRaw('gina', body, { token: gina.token });
      assert.equal(viaHeader.status, 401);
      assert.equal(viaHeader.body.message, 'auth required');
      const viaQuery = await s.api<Msg>('POST', `/users/gina/tokens?token=${gina.token}`, { body });
      assert.equal(viaQuery.status, 401);
      const viaBasic = await createRaw('gina', body, { basic: ['gina', gina.token] });
      assert.equal(viaBasic.status, 401, 'a token given as the password is still a token');
      const anonymous = await createRaw('gina', body, {});
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.message, 'token is required');
      const wrong = await createRaw('gina', body, { basic: ['gina', 'wrong-password'] });
      assert.equal(wrong.status, 401);
      const adminToken = await createRaw('gina', body, { token: s.admin.token });
      assert.equal(adminToken.status, 401);
      const names = (await list()).body.map((t) => t.name);
      assert.ok(!names.includes('by-token'), 'nothing was created');
    });

    it("answers 403 for another user's tokens; an administrator may create them", async () => {
      const r = await createRaw('hal', { name: 'not-mine', scopes: ['all'] });
      assert.equal(r.status, 403);
      const names = (await list('hal', { basic: [hal.name, hal.password] })).body.map((t) => t.name);
      assert.ok(!names.includes('not-mine'));

      const byAdmin = await createRaw('hal', { name: 'from-admin', scopes: ['read:user'] }, rootBasic());
      assert.equal(byAdmin.status, 201, byAdmin.text);
      const me = await s.api<{ login: string }>('GET', '/user', { token: byAdmin.body.sha1 });
      assert.equal(me.status, 200);
      assert.equal(me.body.login, 'hal', 'the token belongs to the path user');
    });

    it('answers 404 for an unknown user', async () => {
      const mine = await createRaw('nobody-here', { name: 'x', scopes: ['all'] });
      assert.equal(mine.status, 404);
      const byAdmin = await createRaw('nobody-here', { name: 'x', scopes: ['all'] }, rootBasic());
      assert.equal(byAdmin.status, 404);
    });
  });

  describe('GET', () => {
    it('lists the tokens without their value, with X-Total-Count', async () => {
      const r = await list();
      assert.equal(r.status, 200);
      assert.ok(r.body.length > 0);
      assert.equal(r.headers.get('x-total-count'), String(r.body.length));
      for (const t of r.body) {
        assert.deepEqual(Object.keys(t).sort(), TOKEN_KEYS);
        assert.equal(t.sha1, '', `${t.name}: no value in a listing`);
        assert.match(t.token_last_eight, /^[0-9a-f]{8}$/);
        assert.deepEqual(t.scopes, t.scope.split(','));
      }
      const first = r.body.find((t) => t.name === 'first')!;
      assert.equal(first.scope, 'read:user');
      assert.ok(!r.body.some((t) => t.name === 'from-admin'), "only this user's tokens");
    });

    it('pages with limit', async () => {
      const all = await list();
      const total = all.body.length;
      const r = await s.api<TokenJson[]>('GET', '/users/gina/tokens?limit=2&page=2', ginaBasic());
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((t) => t.id),
        all.body.slice(2, 4).map((t) => t.id),
      );
      assert.equal(r.headers.get('x-total-count'), String(total));
      assert.match(r.headers.get('link') ?? '', /rel="next"/);
    });

    it('needs a password, and is refused for another user unless an administrator asks', async () => {
      const byToken = await s.api<Msg>('GET', '/users/gina/tokens', { token: gina.token });
      assert.equal(byToken.status, 401);
      const anonymous = await s.api<Msg>('GET', '/users/gina/tokens');
      assert.equal(anonymous.status, 401);
      const other = await s.api<Msg>('GET', '/users/gina/tokens', { basic: [hal.name, hal.password] });
      assert.equal(other.status, 403);
      const byAdmin = await s.api<TokenJson[]>('GET', '/users/gina/tokens?limit=50', rootBasic());
      assert.equal(byAdmin.status, 200);
      assert.equal(byAdmin.body.length, (await list()).body.length);
      assert.ok(byAdmin.body.every((t) => t.sha1 === ''));
    });
  });

  describe('DELETE', () => {
    it('deletes by id: 204, and the token no longer authenticates', async () => {
      const t = await create(['all'], 'delete-by-id');
      assert.equal((await s.api('GET', '/user', { token: t.sha1 })).status, 200);
      const r = await s.api('DELETE', `/users/gina/tokens/${t.id}`, ginaBasic());
      assert.equal(r.status, 204);
      assert.equal(r.text, '');
      const after = await s.api<Msg>('GET', '/user', { token: t.sha1 });
      assert.equal(after.status, 401);
      assert.equal((await s.api('GET', '/version', { token: t.sha1 })).status, 401);
      assert.ok(!(await list()).body.some((x) => x.id === t.id));
      const again = await s.api('DELETE', `/users/gina/tokens/${t.id}`, ginaBasic());
      assert.equal(again.status, 404);
    });

    it('deletes by name: 204, and the token no longer authenticates', async () => {
      const t = await create(['read:user'], 'delete-by-name');
      const r = await s.api('DELETE', '/users/gina/tokens/delete-by-name', ginaBasic());
      assert.equal(r.status, 204);
      assert.equal((await s.api('GET', '/user', { token: t.sha1 })).status, 401);
      assert.equal((await s.api('GET', '/user', { basic: ['gina', t.sha1] })).status, 401);
      assert.ok(!(await list()).body.some((x) => x.name === 'delete-by-name'));
    });

    it('leaves the other tokens working', async () => {
      const keep = await create(['read:user'], 'keep-me');
      const drop = await create(['read:user'], 'drop-me');
      assert.equal((await s.api('DELETE', `/users/gina/tokens/${drop.id}`, ginaBasic())).status, 204);
      assert.equal((await s.api('GET', '/user', { token: keep.sha1 })).status, 200);
    });

    it('answers 404 for an unknown id or name, and for the token of another user', async () => {
      for (const ref of ['987654', 'no-such-token']) {
        const r = await s.api<Msg>('DELETE', `/users/gina/tokens/${ref}`, ginaBasic());
        assert.equal(r.status, 404, ref);
      }
      const hals = await s.api<TokenJson[]>('GET', '/users/hal/tokens', { basic: [hal.name, hal.password] });
      const halToken = hals.body.find((t) => t.name === 'test')!;
      const r = await s.api('DELETE', `/users/gina/tokens/${halToken.id}`, ginaBasic());
      assert.equal(r.status, 404, "another user's token id is not found under this user");
      assert.equal((await s.api('GET', '/user', { token: hal.token })).status, 200);
    });

    it('needs a password; refuses another user with 403 unless an administrator asks', async () => {
      const t = await create(['read:user'], 'guarded');
      const byToken = await s.api('DELETE', `/users/gina/tokens/${t.id}`, { token: gina.token });
      assert.equal(byToken.status, 401);
      const anonymous = await s.api('DELETE', `/users/gina/tokens/${t.id}`);
      assert.equal(anonymous.status, 401);
      const other = await s.api('DELETE', `/users/gina/tokens/${t.id}`, { basic: [hal.name, hal.password] });
      assert.equal(other.status, 403);
      assert.equal((await s.api('GET', '/user', { token: t.sha1 })).status, 200, 'still valid');
      const byAdmin = await s.api('DELETE', `/users/gina/tokens/${t.id}`, rootBasic());
      assert.equal(byAdmin.status, 204);
      assert.equal((await s.api('GET', '/user', { token: t.sha1 })).status, 401);
    });
  });

  describe('storage', () => {
    it('keeps only a hash of the token in the database', async () => {
      const t = await create(['all'], 'stored');
      const rows = await s.ctx.db.selectFrom('access_token').selectAll().execute();
      assert.ok(rows.length > 1);
      const row = rows.find((r) => r.id === t.id);
      assert.ok(row, 'the row exists');
      assert.equal(row.name, 'stored');
      assert.equal(row.token_last_eight, t.sha1.slice(-8));
      assert.notEqual(row.token_hash, t.sha1);
      for (const r of rows) {
        for (const [column, value] of Object.entries(r)) {
          const text = String(value).toLowerCase();
          assert.ok(!text.includes(t.sha1), `the token appears in column ${column}`);
          assert.ok(!text.includes(gina.token), `a token appears in column ${column}`);
          assert.ok(!text.includes(t.sha1.slice(0, 20)), `half of the token appears in column ${column}`);
        }
      }
      assert.equal((await s.api('GET', '/user', { token: t.sha1 })).status, 200);
    });

    it('sees a token deleted by another process within a second', async () => {
      const t = await create(['all'], 'elsewhere');
      assert.equal(
        (await s.api('GET', '/user', { token: t.sha1 })).status,
        200,
        'resolved (and kept in memory)',
      );
      // Another process's write: a connection of its own, outside this server's database layer.
      if (s.config.database.type === 'postgres') {
        const client = new pg.Client(postgresConnection(s.config.database));
        await client.connect();
        await client.query('DELETE FROM access_token WHERE id = $1', [t.id]);
        await client.end();
      } else if (s.config.database.type === 'mysql') {
        const client = await mysql.createConnection(mysqlConnection(s.config.database));
        await client.query('DELETE FROM access_token WHERE id = ?', [t.id]);
        await client.end();
      } else {
        const other = new SQLite(s.config.database.path);
        other.pragma('busy_timeout = 5000');
        other.prepare('DELETE FROM access_token WHERE id = ?').run(t.id);
        other.close();
      }
      // Remembered for at most a second after it was looked up, which was before the deletion:
      // a request sent a second after the deletion is refused, however loaded the machine.
      await new Promise((r) => setTimeout(r, 1050));
      assert.equal((await s.api('GET', '/user', { token: t.sha1 })).status, 401);
    });
  });
});
