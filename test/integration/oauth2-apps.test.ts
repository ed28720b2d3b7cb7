// OAuth2 applications over /user/applications/oauth2: create (the client secret shown once, a
// UUID client id), list with paging headers, read, edit (the id and secret stay), delete; another
// user's application is a 404; a missing name or a redirect URI that is not an absolute URL is a
// 422 naming the field.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface App {
  id: number;
  name: string;
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  confidential_client: boolean;
  created: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('OAuth2 applications', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  let bob: { name: string; token: string };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
  });
  after(() => s.close());

  it('creates, lists, reads, edits and deletes; the secret is shown once', async () => {
    const r = await s.api<App>('POST', '/user/applications/oauth2', {
      token: alice.token,
      body: { name: ' my app ', redirect_uris: ['https://example.com/cb'], confidential_client: true },
    });
    assert.equal(r.status, 201, r.text);
    const app = r.body;
    assert.equal(app.name, 'my app');
    assert.match(app.client_id, UUID);
    assert.match(app.client_secret, /^gto_.{20,}$/);
    assert.deepEqual(app.redirect_uris, ['https://example.com/cb']);
    assert.equal(app.confidential_client, true);
    assert.ok(Math.abs(Date.parse(app.created) - Date.now()) < 60_000);
    // The stored secret is not the secret.
    const stored = await s.ctx.db
      .selectFrom('oauth2_application')
      .selectAll()
      .where('id', '=', app.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.client_secret_hash, app.client_secret);
    assert.ok(!stored.client_secret_hash.includes(app.client_secret));

    const second = await s.api<App>('POST', '/user/applications/oauth2', {
      token: alice.token,
      body: { name: 'native', redirect_uris: ['com.example.app:/callback', 'http://127.0.0.1:8080/'] },
    });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.confidential_client, false);
    assert.notEqual(second.body.client_id, app.client_id);

    const list = await s.api<App[]>('GET', '/user/applications/oauth2?limit=1', { token: alice.token });
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('x-total-count'), '2');
    assert.equal(list.body.length, 1);
    assert.equal(list.body[0]!.id, app.id);
    assert.equal(list.body[0]!.client_secret, '');
    assert.equal(list.body[0]!.client_id, app.client_id);

    const got = await s.api<App>('GET', `/user/applications/oauth2/${app.id}`, { token: alice.token });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { ...app, client_secret: '' });

    const edited = await s.api<App>('PATCH', `/user/applications/oauth2/${app.id}`, {
      token: alice.token,
      body: { name: 'renamed', redirect_uris: ['https://example.org/a', 'https://example.org/b'] },
    });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.name, 'renamed');
    assert.deepEqual(edited.body.redirect_uris, ['https://example.org/a', 'https://example.org/b']);
    assert.equal(edited.body.client_id, app.client_id);
    assert.equal(edited.body.client_secret, '');
    assert.equal(edited.body.confidential_client, true);
    const flipped = await s.api<App>('PATCH', `/user/applications/oauth2/${app.id}`, {
      token: alice.token,
      body: { confidential_client: false },
    });
    assert.equal(flipped.body.confidential_client, false);
    assert.equal(flipped.body.name, 'renamed');

    assert.equal(
      (await s.api('DELETE', `/user/applications/oauth2/${app.id}`, { token: alice.token })).status,
      204,
    );
    assert.equal(
      (await s.api('GET', `/user/applications/oauth2/${app.id}`, { token: alice.token })).status,
      404,
    );
    assert.equal(
      (await s.api('DELETE', `/user/applications/oauth2/${app.id}`, { token: alice.token })).status,
      404,
    );
    const left = await s.api<App[]>('GET', '/user/applications/oauth2', { token: alice.token });
    assert.deepEqual(
      left.body.map((a) => a.name),
      ['native'],
    );
  });

  it("hides another user's applications", async () => {
    const mine = await s.api<App>('POST', '/user/applications/oauth2', {
      token: alice.token,
      body: { name: 'private', redirect_uris: ['https://alice.example/cb'] },
    });
    const id = mine.body.id;
    const path = `/user/applications/oauth2/${id}`;
    assert.equal((await s.api('GET', path, { token: bob.token })).status, 404);
    assert.equal((await s.api('PATCH', path, { token: bob.token, body: { name: 'stolen' } })).status, 404);
    assert.equal((await s.api('DELETE', path, { token: bob.token })).status, 404);
    const bobs = await s.api<App[]>('GET', '/user/applications/oauth2', { token: bob.token });
    assert.deepEqual(bobs.body, []);
    assert.equal((await s.api<App>('GET', path, { token: alice.token })).body.name, 'private');
    assert.equal((await s.api('GET', '/user/applications/oauth2')).status, 401);
    assert.equal((await s.api('GET', '/user/applications/oauth2/abc', { token: alice.token })).status, 422);
  });

  it('refuses a missing name and redirect URIs that are not absolute URLs, naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ redirect_uris: ['https://example.com/cb'] }, /\[Name\]/],
      [{ name: '   ', redirect_uris: ['https://example.com/cb'] }, /\[Name\]/],
      [{ name: 'x' }, /\[RedirectURIs\]/],
      [{ name: 'x', redirect_uris: [] }, /\[RedirectURIs\]/],
      [{ name: 'x', redirect_uris: ['/relative/cb'] }, /\[RedirectURIs\].*relative/],
      [{ name: 'x', redirect_uris: ['https://ok.example/', 'example.com/cb'] }, /\[RedirectURIs\]/],
      [{ name: 'x', redirect_uris: ['https://example.com/cb#frag'] }, /\[RedirectURIs\]/],
      [
        { name: 'x', redirect_uris: ['https://example.com/cb'], confidential_client: 'yes' },
        /ConfidentialClient/,
      ],
    ];
    for (const [body, message] of cases) {
      const r = await s.api<{ message: string }>('POST', '/user/applications/oauth2', {
        token: bob.token,
        body,
      });
      assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.message, message, JSON.stringify(body));
    }
    const created = await s.api<App>('POST', '/user/applications/oauth2', {
      token: bob.token,
      body: { name: 'ok', redirect_uris: ['https://example.com/cb'] },
    });
    const path = `/user/applications/oauth2/${created.body.id}`;
    let r = await s.api<{ message: string }>('PATCH', path, { token: bob.token, body: { name: '' } });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /\[Name\]/);
    r = await s.api<{ message: string }>('PATCH', path, {
      token: bob.token,
      body: { redirect_uris: ['nope'] },
    });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /\[RedirectURIs\]/);
    assert.equal((await s.api<App>('GET', path, { token: bob.token })).body.name, 'ok');
    const all = await s.api<App[]>('GET', '/user/applications/oauth2', { token: bob.token });
    assert.equal(all.body.length, 1);
  });
});
