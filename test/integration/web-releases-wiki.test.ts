// Writing releases from the web interface at Forgejo's addresses and field names: a release
// created (its tag made from the branch), bad input returned beside its field (422), a reader
// refused, a form without its CSRF token refused, and a release deleted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

describe('web interface: writing releases', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let a: WebClient;
  let b: WebClient;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    const bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
  });
  after(async () => s.close());

  const releases = async () =>
    (
      await s.api<Array<{ id: number; tag_name: string; name: string; body: string; prerelease: boolean }>>(
        'GET',
        '/repos/alice/proj/releases',
        { token: alice.token },
      )
    ).body;

  it('creates a release and its tag, refuses bad input, readers and missing CSRF, deletes', async () => {
    const list = await a.get('/alice/proj/releases');
    assert.match(list.text, /href="\/alice\/proj\/releases\/new"/);
    const form = await a.get('/alice/proj/releases/new');
    assert.equal(form.status, 200);
    assert.match(form.text, /name="tag_name"/);

    const created = await a.post('/alice/proj/releases/new', {
      tag_name: 'v1.0',
      tag_target: 'main',
      title: 'First',
      content: '**notes**',
      prerelease: 'on',
    });
    assert.equal(created.status, 303, created.text);
    const [r] = await releases();
    assert.equal(r?.tag_name, 'v1.0');
    assert.equal(r?.name, 'First');
    assert.equal(r?.prerelease, true);
    const tag = await s.api('GET', '/repos/alice/proj/tags/v1.0', { token: alice.token });
    assert.equal(tag.status, 200);

    await a.get('/alice/proj/releases/new');
    const noTag = await a.post('/alice/proj/releases/new', { tag_name: ' ', title: 'Kept title' });
    assert.equal(noTag.status, 422);
    assert.match(noTag.text, /id="f-tag_name-error"/);
    assert.match(noTag.text, /value="Kept title"/);
    const badTarget = await a.post('/alice/proj/releases/new', { tag_name: 'v2', tag_target: 'nope' });
    assert.equal(badTarget.status, 422);
    assert.match(badTarget.text, /id="f-tag_target-error"/);
    const dup = await a.post('/alice/proj/releases/new', { tag_name: 'v1.0' });
    assert.equal(dup.status, 422);
    assert.match(dup.text, /id="f-tag_name-error"/);

    const readerList = await b.get('/alice/proj/releases');
    assert.doesNotMatch(readerList.text, /releases\/new|releases\/delete/);
    const readerForm = await b.get('/alice/proj/releases/new');
    assert.ok([403, 404].includes(readerForm.status), String(readerForm.status));
    const readerPost = await b.post('/alice/proj/releases/new', { tag_name: 'evil' });
    assert.ok([403, 404].includes(readerPost.status), String(readerPost.status));
    const readerDelete = await b.post('/alice/proj/releases/delete', { id: String(r!.id) });
    assert.ok([403, 404].includes(readerDelete.status), String(readerDelete.status));

    await a.get('/alice/proj/releases');
    const noCsrf = await a.post('/alice/proj/releases/delete', { id: String(r!.id), _csrf: null });
    assert.ok(noCsrf.status >= 400, String(noCsrf.status));
    assert.equal((await releases()).length, 1);

    const deleted = await a.post('/alice/proj/releases/delete', { id: String(r!.id) });
    assert.equal(deleted.status, 303, deleted.text);
    assert.equal((await releases()).length, 0);
  });
});
