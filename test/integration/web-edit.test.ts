// Editing a repository's labels, milestones and releases from the web interface with a
// browser-like client, at Forgejo's addresses and field names: each write, bad input (422 naming
// the field), a reader refused, and a form without its CSRF token refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

describe('web interface: editing labels, milestones and releases', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; password: string; token: string };
  let a: WebClient;
  let b: WebClient;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    b = new WebClient(s.url);
    await b.signIn('bob', bob.password);
  });
  after(async () => s.close());

  const labels = async () =>
    (
      await s.api<
        Array<{ id: number; name: string; color: string; exclusive: boolean; is_archived: boolean }>
      >('GET', '/repos/alice/proj/labels?limit=50', { token: alice.token })
    ).body;

  it('creates, edits and deletes labels; initializes from a label set', async () => {
    const page = await a.get('/alice/proj/labels');
    assert.equal(page.status, 200);
    assert.match(page.text, /action="\/alice\/proj\/labels\/initialize"/);
    const created = await a.post('/alice/proj/labels/new', {
      title: 'area/ui',
      color: '#00aa00',
      description: 'Pages',
      exclusive: 'on',
    });
    assert.equal(created.status, 303, created.text);
    let [l] = await labels();
    assert.equal(l?.name, 'area/ui');
    assert.equal(l?.exclusive, true);

    const badColor = await a.post('/alice/proj/labels/new', { title: 'x', color: 'green' });
    assert.equal(badColor.status, 422);
    assert.match(badColor.text, /id="f-color-error"/);
    const noTitle = await a.post('/alice/proj/labels/new', { title: ' ', color: '#000000' });
    assert.equal(noTitle.status, 422);
    assert.match(noTitle.text, /id="f-title-error"/);

    const edited = await a.post('/alice/proj/labels/edit', {
      id: String(l!.id),
      title: 'area/web',
      color: '#0000aa',
      description: '',
      archived: 'on',
    });
    assert.equal(edited.status, 303, edited.text);
    l = (
      await s.api<{ id: number; name: string; color: string; exclusive: boolean; is_archived: boolean }>(
        'GET',
        `/repos/alice/proj/labels/${l!.id}`,
        { token: alice.token },
      )
    ).body;
    assert.deepEqual(
      [l?.name, l?.color.replace('#', ''), l?.exclusive, l?.is_archived],
      ['area/web', '0000aa', false, true],
    );
    const badEdit = await a.post('/alice/proj/labels/edit', { id: String(l!.id), title: 'y', color: '#zz' });
    assert.equal(badEdit.status, 422);
    assert.match(badEdit.text, /id="f-color-error"/);
    const missing = await a.post('/alice/proj/labels/edit', { id: '999999', title: 'y', color: '#000000' });
    assert.equal(missing.status, 404);

    // A reader of the public repository sees the labels but cannot change them.
    const readerPage = await b.get('/alice/proj/labels');
    assert.equal(readerPage.status, 200);
    assert.doesNotMatch(readerPage.text, /labels\/new/);
    for (const [path, form] of [
      ['/alice/proj/labels/new', { title: 'z', color: '#000000' }],
      ['/alice/proj/labels/delete', { id: String(l!.id) }],
      ['/alice/proj/labels/initialize', { template_name: 'Default' }],
    ] as const) {
      const r = await b.post(path, form);
      assert.ok([403, 404].includes(r.status), `${path}: ${r.status}`);
    }
    const noCsrf = await a.post('/alice/proj/labels/new', { _csrf: null, title: 'z', color: '#000000' });
    assert.equal(noCsrf.status, 403);

    const deleted = await a.post('/alice/proj/labels/delete', { id: String(l!.id) });
    assert.equal(deleted.status, 303);
    const gone = await s.api('GET', `/repos/alice/proj/labels/${l!.id}`, { token: alice.token });
    assert.equal(gone.status, 404);

    await a.get('/alice/proj/labels');
    const badSet = await a.post('/alice/proj/labels/initialize', { template_name: 'Nope' });
    assert.equal(badSet.status, 422);
    assert.match(badSet.text, /id="f-template_name-error"/);
    const init = await a.post('/alice/proj/labels/initialize', { template_name: 'Default' });
    assert.equal(init.status, 303);
    const all = await labels();
    assert.ok(all.some((x) => x.name === 'Kind/Bug' && x.exclusive));
  });

  it('creates, edits, closes, opens and deletes milestones', async () => {
    const form = await a.get('/alice/proj/milestones/new');
    assert.equal(form.status, 200);
    assert.match(form.text, /name="deadline"/);
    const created = await a.post('/alice/proj/milestones/new', {
      title: 'v1.0',
      content: 'First',
      deadline: '2030-01-31',
    });
    assert.equal(created.status, 303, created.text);
    const list = async (state = 'all') =>
      (
        await s.api<Array<{ id: number; title: string; state: string; due_on: string | null }>>(
          'GET',
          `/repos/alice/proj/milestones?state=${state}`,
          { token: alice.token },
        )
      ).body;
    let [m] = await list();
    assert.equal(m?.title, 'v1.0');
    assert.match(m?.due_on ?? '', /^2030-01-31/);

    const badDate = await a.post('/alice/proj/milestones/new', { title: 'v2', deadline: '31/01/2030' });
    assert.equal(badDate.status, 422);
    assert.match(badDate.text, /id="f-deadline-error"/);
    const noTitle = await a.post('/alice/proj/milestones/new', { title: '', content: 'x' });
    assert.equal(noTitle.status, 422);
    assert.match(noTitle.text, /id="f-title-error"/);

    const edit = await a.get(`/alice/proj/milestone/${m!.id}/edit`);
    assert.equal(edit.status, 200);
    assert.match(edit.text, /value="2030-01-31"/);
    const edited = await a.post(`/alice/proj/milestone/${m!.id}/edit`, {
      title: 'v1.1',
      content: '',
      deadline: '',
    });
    assert.equal(edited.status, 303, edited.text);
    [m] = await list();
    assert.equal(m?.title, 'v1.1');
    assert.equal(m?.due_on ?? null, null);

    assert.equal((await a.post(`/alice/proj/milestone/${m!.id}/close`, {})).status, 303);
    assert.equal((await list('closed')).length, 1);
    assert.equal((await a.post(`/alice/proj/milestone/${m!.id}/open`, {})).status, 303);
    assert.equal((await list('open')).length, 1);

    assert.ok([403, 404].includes((await b.get(`/alice/proj/milestones/new`)).status));
    for (const path of [`/alice/proj/milestone/${m!.id}/close`, '/alice/proj/milestones/delete']) {
      const r = await b.post(path, { id: String(m!.id) });
      assert.ok([403, 404].includes(r.status), `${path}: ${r.status}`);
    }
    const noCsrf = await a.post('/alice/proj/milestones/delete', { _csrf: null, id: String(m!.id) });
    assert.equal(noCsrf.status, 403);

    assert.equal((await a.post('/alice/proj/milestones/delete', { id: String(m!.id) })).status, 303);
    assert.equal((await list()).length, 0);
  });
});
