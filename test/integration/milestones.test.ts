// Milestones over HTTP: create, read by id or by title, list by state and title, edit (close,
// reopen, due date), delete; open_issues and closed_issues kept right as issues join, leave,
// close, reopen and are deleted; who may do what; bad input.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface MilestoneJson {
  id: number;
  title: string;
  description: string;
  state: string;
  open_issues: number;
  closed_issues: number;
  created_at: string;
  updated_at: string | null;
  closed_at: string | null;
  due_on: string | null;
}

interface IssueJson {
  number: number;
  milestone: MilestoneJson | null;
}

/** Forgejo's Milestone definition. */
const MILESTONE_KEYS = [
  'closed_at',
  'closed_issues',
  'created_at',
  'description',
  'due_on',
  'id',
  'open_issues',
  'state',
  'title',
  'updated_at',
];

describe('milestones', () => {
  let s: TestServer;
  let alice: U; // owns alice/proj (public) and alice/secret (private)
  let bob: U; // write collaborator on alice/proj
  let carol: U; // read collaborator on alice/proj
  let dave: U; // unrelated

  const tok = (u: U) => ({ token: u.token });
  const post = <T = MilestoneJson>(u: U, path: string, body: unknown) =>
    s.api<T>('POST', path, { ...tok(u), body });
  const milestone = async (title: string, extra: Record<string, unknown> = {}, repo = 'proj') => {
    const r = await post(alice, `/repos/alice/${repo}/milestones`, { title, ...extra });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const get = async (id: number) =>
    (await s.api<MilestoneJson>('GET', `/repos/alice/proj/milestones/${id}`)).body;
  const counts = async (id: number) => {
    const m = await get(id);
    return [m.open_issues, m.closed_issues];
  };
  const newIssue = async (body: Record<string, unknown>) => {
    const r = await post<IssueJson>(alice, '/repos/alice/proj/issues', { title: 'in a milestone', ...body });
    assert.equal(r.status, 201, r.text);
    return r.body.number;
  };
  const edit = (n: number, body: unknown, u = alice) =>
    s.api<IssueJson>('PATCH', `/repos/alice/proj/issues/${n}`, { ...tok(u), body });

  before(async () => {
    s = await startServer();
    [alice, bob, carol, dave] = (await Promise.all(
      ['alice', 'bob', 'carol', 'dave'].map((n) => s.createUser(n)),
    )) as [U, U, U, U];
    for (const [name, priv] of [
      ['proj', false],
      ['secret', true],
      ['other', false],
    ] as const) {
      assert.equal((await post(alice, '/user/repos', { name, private: priv })).status, 201);
    }
    for (const [u, permission] of [
      [bob, 'write'],
      [carol, 'read'],
    ] as const) {
      const c = await s.api('PUT', `/repos/alice/proj/collaborators/${u.name}`, {
        ...tok(alice),
        body: { permission },
      });
      assert.equal(c.status, 204);
    }
  });

  after(async () => {
    await s.close();
  });

  it('creates a milestone with Forgejo’s shape and reads it by id or title', async () => {
    const r = await post(alice, '/repos/alice/proj/milestones', {
      title: 'v1.0',
      description: 'first release',
      due_on: '2030-06-01T12:00:00Z',
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), MILESTONE_KEYS);
    assert.equal(r.body.title, 'v1.0');
    assert.equal(r.body.description, 'first release');
    assert.equal(r.body.state, 'open');
    assert.equal(r.body.open_issues, 0);
    assert.equal(r.body.closed_issues, 0);
    assert.equal(r.body.due_on, '2030-06-01T12:00:00Z');
    assert.equal(r.body.closed_at, null);
    assert.deepEqual(await get(r.body.id), r.body);
    assert.deepEqual((await s.api<MilestoneJson>('GET', '/repos/alice/proj/milestones/v1.0')).body, r.body);
    const none = await milestone('no due date');
    assert.equal(none.due_on, null);
    const closed = await milestone('born closed', { state: 'closed' });
    assert.equal(closed.state, 'closed');
    assert.ok(closed.closed_at);
  });

  it('refuses bad input with 422 and unknown milestones with 404', async () => {
    for (const body of [
      {},
      { title: '' },
      { title: '   ' },
      { title: 'x'.repeat(256) },
      { title: 'x', state: 'done' },
      { title: 'x', due_on: 'next week' },
      { title: 'x', due_on: 12 },
      { title: 7 },
    ]) {
      const r = await post(alice, '/repos/alice/proj/milestones', body);
      assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
    }
    assert.equal((await s.api('GET', '/repos/alice/proj/milestones/999999')).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/proj/milestones/no-such-title')).status, 404);
    assert.equal(
      (await s.api('PATCH', '/repos/alice/proj/milestones/999999', { ...tok(alice), body: {} })).status,
      404,
    );
    assert.equal((await s.api('DELETE', '/repos/alice/proj/milestones/999999', tok(alice))).status, 404);
    const m = await milestone('edit-bad');
    const path = `/repos/alice/proj/milestones/${m.id}`;
    assert.equal((await s.api('PATCH', path, { ...tok(alice), body: { state: 'finished' } })).status, 422);
    assert.equal((await s.api('PATCH', path, { ...tok(alice), body: { title: '' } })).status, 422);
    assert.equal((await s.api('PATCH', path, { ...tok(alice), body: { due_on: 'x' } })).status, 422);
    // A milestone of another repository is unknown here, for reading and for issues.
    const elsewhere = await milestone('elsewhere', {}, 'other');
    assert.equal((await s.api('GET', `/repos/alice/proj/milestones/${elsewhere.id}`)).status, 404);
    const i = await post(alice, '/repos/alice/proj/issues', { title: 't', milestone: elsewhere.id });
    assert.equal(i.status, 422);
    const n = await newIssue({});
    assert.equal((await edit(n, { milestone: elsewhere.id })).status, 422);
    assert.equal((await edit(n, { milestone: 999999 })).status, 422);
    assert.equal((await edit(n, { milestone: 'v1.0' })).status, 422);
  });

  it('lets writers manage milestones; readers get 403; private repositories 404', async () => {
    assert.equal(
      (await s.api('POST', '/repos/alice/proj/milestones', { body: { title: 'anon' } })).status,
      401,
    );
    assert.equal((await post(carol, '/repos/alice/proj/milestones', { title: 'reader' })).status, 403);
    assert.equal((await post(dave, '/repos/alice/proj/milestones', { title: 'outsider' })).status, 403);
    const m = await post(bob, '/repos/alice/proj/milestones', { title: 'by bob' });
    assert.equal(m.status, 201);
    const path = `/repos/alice/proj/milestones/${m.body.id}`;
    assert.equal((await s.api('PATCH', path, { ...tok(carol), body: { title: 'x' } })).status, 403);
    assert.equal((await s.api('DELETE', path, tok(carol))).status, 403);
    assert.equal((await s.api('GET', path, tok(carol))).status, 200);
    const hidden = await milestone('hidden', {}, 'secret');
    for (const [method, url] of [
      ['GET', '/repos/alice/secret/milestones'],
      ['GET', `/repos/alice/secret/milestones/${hidden.id}`],
      ['PATCH', `/repos/alice/secret/milestones/${hidden.id}`],
      ['DELETE', `/repos/alice/secret/milestones/${hidden.id}`],
      ['POST', '/repos/alice/secret/milestones'],
    ] as const) {
      const body = method === 'PATCH' || method === 'POST' ? { title: 'x' } : undefined;
      assert.equal((await s.api(method, url, { ...tok(dave), body })).status, 404, `${method} ${url}`);
    }
    assert.equal((await s.api('GET', '/repos/alice/secret/milestones')).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/secret/milestones', tok(alice))).status, 200);
  });

  it('lists milestones by state (open by default) and title, with X-Total-Count', async () => {
    const r = await post(alice, '/user/repos', { name: 'listing' });
    assert.equal(r.status, 201);
    const mk = async (title: string, extra: Record<string, unknown> = {}) =>
      (await post(alice, '/repos/alice/listing/milestones', { title, ...extra })).body;
    await mk('Alpha', { due_on: '2031-01-01T00:00:00Z' });
    await mk('Beta', { due_on: '2030-01-01T00:00:00Z' });
    await mk('Gamma');
    await mk('Delta', { state: 'closed' });
    const titles = async (q: string) => {
      const l = await s.api<MilestoneJson[]>('GET', `/repos/alice/listing/milestones${q}`);
      assert.equal(l.status, 200, l.text);
      return [l.body.map((m) => m.title), l.headers.get('x-total-count')];
    };
    // Nearest due date first; no due date last.
    assert.deepEqual(await titles(''), [['Beta', 'Alpha', 'Gamma'], '3']);
    assert.deepEqual(await titles('?state=closed'), [['Delta'], '1']);
    assert.deepEqual((await titles('?state=all'))[1], '4');
    assert.deepEqual(await titles('?state=all&name=ta'), [['Beta', 'Delta'], '2']);
    assert.deepEqual(await titles('?name=GAM'), [['Gamma'], '1']);
    assert.deepEqual(await titles('?limit=1&page=2'), [['Alpha'], '3']);
    assert.equal((await s.api('GET', '/repos/alice/listing/milestones?state=done')).status, 422);
  });

  it('edits, closes and reopens a milestone, and removes its due date', async () => {
    const m = await milestone('to edit', { due_on: '2030-01-01T00:00:00Z' });
    const path = `/repos/alice/proj/milestones/${m.id}`;
    let r = await s.api<MilestoneJson>('PATCH', path, {
      ...tok(bob),
      body: { title: 'edited', description: 'desc', state: 'closed' },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.title, r.body.description, r.body.state], ['edited', 'desc', 'closed']);
    assert.ok(r.body.closed_at);
    assert.equal(r.body.due_on, '2030-01-01T00:00:00Z');
    r = await s.api<MilestoneJson>('PATCH', path, { ...tok(bob), body: { state: 'open', due_on: null } });
    assert.equal(r.body.state, 'open');
    assert.equal(r.body.closed_at, null);
    assert.equal(r.body.due_on, null);
    r = await s.api<MilestoneJson>('PATCH', '/repos/alice/proj/milestones/edited', {
      ...tok(bob),
      body: { due_on: '2032-02-03T04:05:06Z' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.due_on, '2032-02-03T04:05:06Z');
    assert.equal(r.body.title, 'edited');
  });

  it('keeps open_issues and closed_issues right', async () => {
    const m1 = await milestone('counted');
    const m2 = await milestone('counted too');
    const a = await newIssue({ milestone: m1.id });
    const b = await newIssue({ milestone: m1.id });
    const c = await newIssue({ milestone: m1.id, closed: true });
    assert.deepEqual(await counts(m1.id), [2, 1]);
    // Closing and reopening an issue.
    assert.equal((await edit(a, { state: 'closed' })).status, 201);
    assert.deepEqual(await counts(m1.id), [1, 2]);
    await edit(c, { state: 'open' });
    assert.deepEqual(await counts(m1.id), [2, 1]);
    // Moving an issue to another milestone, and out of any.
    await edit(b, { milestone: m2.id });
    assert.deepEqual(await counts(m1.id), [1, 1]);
    assert.deepEqual(await counts(m2.id), [1, 0]);
    await edit(b, { milestone: 0 });
    assert.deepEqual(await counts(m2.id), [0, 0]);
    // The poster's own close by commit counts too.
    const repo = (await s.ctx.repos.requireRepo('alice', 'proj', null)).repo;
    const aliceRow = (await s.ctx.users.getByName('alice'))!;
    await s.ctx.issues.closeByCommit(repo, c, aliceRow, 'c'.repeat(40));
    assert.deepEqual(await counts(m1.id), [0, 2]);
    // Deleting an issue.
    assert.equal((await s.api('DELETE', `/repos/alice/proj/issues/${c}`, tok(alice))).status, 204);
    assert.deepEqual(await counts(m1.id), [0, 1]);
    // The issue JSON carries the counts too.
    const i = await s.api<IssueJson>('GET', `/repos/alice/proj/issues/${a}`);
    assert.equal(i.body.milestone?.id, m1.id);
    assert.equal(i.body.milestone?.closed_issues, 1);
  });

  it('deletes a milestone, leaving its issues without one', async () => {
    const m = await milestone('doomed');
    const n = await newIssue({ milestone: m.id });
    assert.equal((await s.api('DELETE', `/repos/alice/proj/milestones/doomed`, tok(bob))).status, 204);
    assert.equal((await s.api('GET', `/repos/alice/proj/milestones/${m.id}`)).status, 404);
    const i = await s.api<IssueJson>('GET', `/repos/alice/proj/issues/${n}`);
    assert.equal(i.status, 200);
    assert.equal(i.body.milestone, null);
    assert.equal((await s.api('DELETE', `/repos/alice/proj/milestones/${m.id}`, tok(bob))).status, 404);
  });
});
