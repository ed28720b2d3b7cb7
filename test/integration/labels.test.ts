// Labels over HTTP: repository and organization labels (create, read by id or name, edit,
// delete, colors, archiving), labels of issues (add, replace, remove, clear; by id or by name),
// the exclusive rule (the scope is what comes before the last '/'; adding one replaces the other
// of its scope; two of one scope in one request are a 422 that changes nothing), organization
// labels on the organization's repositories, and who may do what.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface LabelJson {
  id: number;
  name: string;
  exclusive: boolean;
  is_archived: boolean;
  color: string;
  description: string;
  url: string;
}

interface IssueJson {
  number: number;
  labels: LabelJson[];
}

interface TimelineJson {
  type: string;
  body: string;
  label: LabelJson | null;
}

/** Forgejo's Label definition. */
const LABEL_KEYS = ['color', 'description', 'exclusive', 'id', 'is_archived', 'name', 'url'];

describe('labels', () => {
  let s: TestServer;
  let alice: U; // owns alice/proj (public) and alice/secret (private); owner of the acme organization
  let bob: U; // write collaborator on alice/proj; member (not owner) of acme
  let carol: U; // read collaborator on alice/proj
  let dave: U; // unrelated

  const tok = (u: U) => ({ token: u.token });
  const post = <T = LabelJson>(u: U, path: string, body: unknown) =>
    s.api<T>('POST', path, { ...tok(u), body });
  const label = async (repo: string, name: string, extra: Record<string, unknown> = {}) => {
    const r = await post(alice, `/repos/alice/${repo}/labels`, { name, color: '336699', ...extra });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const issue = async (repo = 'proj', owner = 'alice') => {
    const r = await post<IssueJson>(alice, `/repos/${owner}/${repo}/issues`, { title: 'labelled' });
    assert.equal(r.status, 201, r.text);
    return r.body.number;
  };
  const labelsOf = async (n: number, repo = 'proj', owner = 'alice') => {
    const r = await s.api<LabelJson[]>('GET', `/repos/${owner}/${repo}/issues/${n}/labels`, tok(alice));
    assert.equal(r.status, 200, r.text);
    return r.body.map((l) => l.name).sort();
  };

  before(async () => {
    s = await startServer();
    [alice, bob, carol, dave] = (await Promise.all(
      ['alice', 'bob', 'carol', 'dave'].map((n) => s.createUser(n)),
    )) as [U, U, U, U];
    for (const [name, priv] of [
      ['proj', false],
      ['secret', true],
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

  describe('repository labels', () => {
    it('creates a label with Forgejo’s shape, normalizing the color', async () => {
      const r = await post(alice, '/repos/alice/proj/labels', {
        name: 'bug',
        color: '#E11D21',
        description: 'Something is broken',
      });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), LABEL_KEYS);
      assert.deepEqual(r.body, {
        id: r.body.id,
        name: 'bug',
        exclusive: false,
        is_archived: false,
        color: 'e11d21',
        description: 'Something is broken',
        url: `${s.url}/api/v1/repos/alice/proj/labels/${r.body.id}`,
      });
      for (const [color, stored] of [
        ['00aabb', '00aabb'],
        ['#abc', 'aabbcc'],
        ['FFF', 'ffffff'],
      ]) {
        const c = await post(alice, '/repos/alice/proj/labels', { name: `c-${color}`, color });
        assert.equal(c.status, 201, c.text);
        assert.equal(c.body.color, stored);
      }
      const got = await s.api<LabelJson>('GET', `/repos/alice/proj/labels/${r.body.id}`);
      assert.deepEqual(got.body, r.body);
      const byName = await s.api<LabelJson>('GET', '/repos/alice/proj/labels/bug');
      assert.equal(byName.body.id, r.body.id);
    });

    it('refuses bad colors and names with 422, creating nothing', async () => {
      const before = (await s.api('GET', '/repos/alice/proj/labels')).headers.get('x-total-count');
      for (const body of [
        { name: 'x', color: 'red' },
        { name: 'x', color: '#12345' },
        { name: 'x', color: '#1234567' },
        { name: 'x', color: 'ggg' },
        { name: 'x', color: '' },
        { name: 'x' },
        { color: '00aabb' },
        { name: '', color: '00aabb' },
        { name: '   ', color: '00aabb' },
        { name: 'x', color: 123456 },
        { name: 'x', color: '00aabb', exclusive: 'yes' },
      ]) {
        const r = await post(alice, '/repos/alice/proj/labels', body);
        assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      }
      assert.equal((await s.api('GET', '/repos/alice/proj/labels')).headers.get('x-total-count'), before);
    });

    it('edits and deletes labels', async () => {
      const l = await label('proj', 'to-edit');
      const path = `/repos/alice/proj/labels/${l.id}`;
      let r = await s.api<LabelJson>('PATCH', path, {
        ...tok(bob),
        body: { name: 'edited', color: 'ABCDEF', description: 'd', exclusive: true },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        [r.body.name, r.body.color, r.body.description, r.body.exclusive],
        ['edited', 'abcdef', 'd', true],
      );
      r = await s.api<LabelJson>('PATCH', path, { ...tok(bob), body: { description: 'only this' } });
      assert.deepEqual([r.body.name, r.body.color, r.body.description], ['edited', 'abcdef', 'only this']);
      assert.equal((await s.api('PATCH', path, { ...tok(bob), body: { color: 'blue' } })).status, 422);
      assert.equal((await s.api('PATCH', path, { ...tok(bob), body: { name: '' } })).status, 422);
      assert.equal(
        (await s.api('PATCH', '/repos/alice/proj/labels/999999', { ...tok(bob), body: {} })).status,
        404,
      );
      // A label on an issue goes away with it.
      const n = await issue();
      await post(alice, `/repos/alice/proj/issues/${n}/labels`, { labels: [l.id] });
      assert.deepEqual(await labelsOf(n), ['edited']);
      assert.equal((await s.api('DELETE', path, tok(bob))).status, 204);
      assert.equal((await s.api('GET', path)).status, 404);
      assert.equal((await s.api('DELETE', path, tok(bob))).status, 404);
      assert.deepEqual(await labelsOf(n), []);
    });

    it('lets writers manage labels; readers get 403; private repositories 404', async () => {
      const body = { name: 'perm', color: '000000' };
      assert.equal((await s.api('POST', '/repos/alice/proj/labels', { body })).status, 401);
      assert.equal((await post(carol, '/repos/alice/proj/labels', body)).status, 403);
      assert.equal((await post(dave, '/repos/alice/proj/labels', body)).status, 403);
      assert.equal((await post(bob, '/repos/alice/proj/labels', body)).status, 201);
      const l = await label('secret', 'hidden');
      for (const [method, path] of [
        ['GET', '/repos/alice/secret/labels'],
        ['GET', `/repos/alice/secret/labels/${l.id}`],
        ['PATCH', `/repos/alice/secret/labels/${l.id}`],
        ['DELETE', `/repos/alice/secret/labels/${l.id}`],
        ['POST', '/repos/alice/secret/labels'],
      ] as const) {
        const r = await s.api(method, path, {
          ...tok(dave),
          body: method === 'GET' || method === 'DELETE' ? undefined : body,
        });
        assert.equal(r.status, 404, `${method} ${path}`);
        assert.equal(
          (await s.api(method, path, { body: method === 'GET' || method === 'DELETE' ? undefined : body }))
            .status,
          method === 'GET' ? 404 : 401,
        );
      }
      // A label of another repository is not found through this one.
      assert.equal((await s.api('GET', `/repos/alice/proj/labels/${l.id}`, tok(alice))).status, 404);
    });

    it('hides archived labels from lists unless asked, keeping them on issues and their archive time', async () => {
      const kept = await label('proj', 'old-stuff');
      const n = await issue();
      await post(alice, `/repos/alice/proj/issues/${n}/labels`, { labels: [kept.id] });
      const archived = await s.api<LabelJson>('PATCH', `/repos/alice/proj/labels/${kept.id}`, {
        ...tok(alice),
        body: { is_archived: true },
      });
      assert.equal(archived.status, 200);
      assert.equal(archived.body.is_archived, true);
      const row = async () =>
        (
          await s.ctx.db
            .selectFrom('label')
            .select('archived_unix')
            .where('id', '=', kept.id)
            .executeTakeFirstOrThrow()
        ).archived_unix;
      const at = await row();
      assert.ok(at > 0);
      const names = async (q: string) =>
        (await s.api<LabelJson[]>('GET', `/repos/alice/proj/labels${q}`)).body.map((l) => l.name);
      assert.ok(!(await names('?limit=50')).includes('old-stuff'));
      assert.ok((await names('?limit=50&archived=true')).includes('old-stuff'));
      assert.ok(!(await names('?limit=50&archived=false')).includes('old-stuff'));
      assert.equal((await s.api('GET', '/repos/alice/proj/labels?archived=maybe')).status, 422);
      // Still on the issue, still readable by id.
      assert.deepEqual(await labelsOf(n), ['old-stuff']);
      const issueJson = await s.api<IssueJson>('GET', `/repos/alice/proj/issues/${n}`);
      assert.equal(issueJson.body.labels[0]!.is_archived, true);
      assert.equal(
        (await s.api<LabelJson>('GET', `/repos/alice/proj/labels/${kept.id}`)).body.is_archived,
        true,
      );
      // Archiving again keeps the first time; an edit without is_archived keeps it archived.
      await new Promise((r) => setTimeout(r, 1100));
      await s.api('PATCH', `/repos/alice/proj/labels/${kept.id}`, {
        ...tok(alice),
        body: { is_archived: true },
      });
      await s.api('PATCH', `/repos/alice/proj/labels/${kept.id}`, {
        ...tok(alice),
        body: { description: 'x' },
      });
      assert.equal(await row(), at);
      const un = await s.api<LabelJson>('PATCH', `/repos/alice/proj/labels/${kept.id}`, {
        ...tok(alice),
        body: { is_archived: false },
      });
      assert.equal(un.body.is_archived, false);
      assert.equal(await row(), 0);
      assert.ok((await names('?limit=50')).includes('old-stuff'));
      // Created archived.
      const born = await label('proj', 'born-archived', { is_archived: true });
      assert.equal(born.is_archived, true);
      assert.ok(!(await names('?limit=50')).includes('born-archived'));
    });
  });

  describe('labels of issues', () => {
    it('adds by id or name, replaces, removes and clears', async () => {
      const a = await label('proj', 'lab-a');
      const b = await label('proj', 'lab-b');
      const n = await issue();
      const base = `/repos/alice/proj/issues/${n}/labels`;
      let r = await post<LabelJson[]>(bob, base, { labels: [a.id] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.map((l) => l.name),
        ['lab-a'],
      );
      r = await post<LabelJson[]>(bob, base, { labels: ['lab-b', 'lab-a'] });
      assert.deepEqual(
        r.body.map((l) => l.name),
        ['lab-a', 'lab-b'],
      );
      r = await s.api<LabelJson[]>('PUT', base, { ...tok(bob), body: { labels: [b.id] } });
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.map((l) => l.name),
        ['lab-b'],
      );
      assert.equal((await s.api('DELETE', `${base}/${b.id}`, tok(bob))).status, 204);
      assert.deepEqual(await labelsOf(n), []);
      // Removing a label the issue does not have changes nothing.
      assert.equal((await s.api('DELETE', `${base}/${b.id}`, tok(bob))).status, 204);
      await post(bob, base, { labels: [a.id, b.id] });
      assert.equal((await s.api('DELETE', base, tok(bob))).status, 204);
      assert.deepEqual(await labelsOf(n), []);
      r = await s.api<LabelJson[]>('PUT', base, { ...tok(bob), body: { labels: [] } });
      assert.deepEqual(r.body, []);
      const tl = await s.api<TimelineJson[]>('GET', `/repos/alice/proj/issues/${n}/timeline`);
      const labelEvents = tl.body.filter((t) => t.type === 'label').map((t) => [t.label?.name, t.body]);
      assert.deepEqual(labelEvents.slice(0, 3), [
        ['lab-a', '1'],
        ['lab-b', '1'],
        ['lab-a', ''],
      ]);
    });

    it('refuses unknown labels (422), mixed lists (400) and non-writers (403), changing nothing', async () => {
      const a = await label('proj', 'only-a');
      const secretLabel = await label('secret', 'secret-only');
      const n = await issue();
      const base = `/repos/alice/proj/issues/${n}/labels`;
      await post(alice, base, { labels: [a.id] });
      for (const [body, status] of [
        [{ labels: [999999] }, 422],
        [{ labels: ['no-such-label'] }, 422],
        [{ labels: [secretLabel.id] }, 422],
        [{ labels: ['secret-only'] }, 422],
        [{ labels: [a.id, 'only-a'] }, 400],
        [{ labels: [true] }, 422],
        [{ labels: 'only-a' }, 422],
      ] as const) {
        for (const method of ['POST', 'PUT'] as const) {
          const r = await s.api(method, base, { ...tok(alice), body });
          assert.equal(r.status, status, `${method} ${JSON.stringify(body)}: ${r.text}`);
        }
      }
      assert.equal((await s.api('DELETE', `${base}/999999`, tok(alice))).status, 422);
      assert.equal((await post(carol, base, { labels: [a.id] })).status, 403);
      assert.equal((await s.api('PUT', base, { ...tok(carol), body: { labels: [] } })).status, 403);
      assert.equal((await s.api('DELETE', base, tok(carol))).status, 403);
      assert.equal((await s.api('DELETE', `${base}/${a.id}`, tok(carol))).status, 403);
      assert.equal((await s.api('DELETE', base)).status, 401);
      assert.equal((await s.api('GET', `/repos/alice/proj/issues/99999/labels`)).status, 404);
      assert.deepEqual(await labelsOf(n), ['only-a']);
    });
  });

  describe('the exclusive rule', () => {
    let high: LabelJson;
    let low: LabelJson;
    let plain: LabelJson;
    before(async () => {
      high = await label('proj', 'priority/high', { exclusive: true });
      low = await label('proj', 'priority/low', { exclusive: true });
      plain = await label('proj', 'priority/maybe');
    });

    it('replaces the label of the same scope when an exclusive label is added', async () => {
      const n = await issue();
      const base = `/repos/alice/proj/issues/${n}/labels`;
      await post(alice, base, { labels: [high.id, plain.id] });
      assert.deepEqual(await labelsOf(n), ['priority/high', 'priority/maybe']);
      const r = await post<LabelJson[]>(alice, base, { labels: ['priority/low'] });
      assert.equal(r.status, 200);
      // The non-exclusive label of the same scope stays.
      assert.deepEqual(r.body.map((l) => l.name).sort(), ['priority/low', 'priority/maybe']);
      const tl = await s.api<TimelineJson[]>('GET', `/repos/alice/proj/issues/${n}/timeline`);
      assert.deepEqual(
        tl.body
          .filter((t) => t.type === 'label')
          .map((t) => [t.label?.name, t.body])
          .slice(-2),
        [
          ['priority/high', ''],
          ['priority/low', '1'],
        ],
      );
    });

    it('refuses two exclusive labels of one scope in one request with 422, changing nothing', async () => {
      const n = await issue();
      const base = `/repos/alice/proj/issues/${n}/labels`;
      await post(alice, base, { labels: [plain.id] });
      const events: unknown[] = [];
      s.ctx.events.on('issue.labelled', (p) => void events.push(p));
      for (const method of ['POST', 'PUT'] as const) {
        for (const labels of [
          [high.id, low.id],
          ['priority/high', 'priority/low'],
        ]) {
          const r = await s.api<{ message: string }>(method, base, { ...tok(alice), body: { labels } });
          assert.equal(r.status, 422, `${method} ${JSON.stringify(labels)}: ${r.text}`);
          assert.match(r.body.message, /priority/);
        }
      }
      assert.deepEqual(await labelsOf(n), ['priority/maybe']);
      assert.deepEqual(events, []);
      const tl = await s.api<TimelineJson[]>('GET', `/repos/alice/proj/issues/${n}/timeline`);
      assert.equal(tl.body.filter((t) => t.type === 'label').length, 1);
      // Creating an issue with both is refused too, and creates nothing.
      const count = async () =>
        (await s.api('GET', '/repos/alice/proj/issues?state=all')).headers.get('x-total-count');
      const c = await count();
      const r = await post(alice, '/repos/alice/proj/issues', { title: 'both', labels: [high.id, low.id] });
      assert.equal(r.status, 422);
      assert.equal(await count(), c);
      // The same label twice is fine.
      const twice = await post<LabelJson[]>(alice, base, { labels: [high.id, high.id] });
      assert.equal(twice.status, 200);
      assert.deepEqual(twice.body.map((l) => l.name).sort(), ['priority/high', 'priority/maybe']);
    });

    it('keeps one exclusive label of a scope when requests race', async () => {
      for (let round = 0; round < 3; round++) {
        const n = await issue();
        const base = `/repos/alice/proj/issues/${n}/labels`;
        const replies = await Promise.all(
          [high, low, high, low, high, low].map((l) => post<LabelJson[]>(alice, base, { labels: [l.id] })),
        );
        for (const r of replies) assert.equal(r.status, 200, r.text);
        const names = await labelsOf(n);
        assert.equal(names.length, 1, names.join(', '));
      }
    });

    it('takes the scope from the last "/"', async () => {
      const abC = await label('proj', 'a/b/c', { exclusive: true });
      const abD = await label('proj', 'a/b/d', { exclusive: true });
      const aX = await label('proj', 'a/x', { exclusive: true });
      const noScope1 = await label('proj', 'lonely', { exclusive: true });
      const noScope2 = await label('proj', 'alone', { exclusive: true });
      const trailing = await label('proj', 'a/b/', { exclusive: true });
      const n = await issue();
      const base = `/repos/alice/proj/issues/${n}/labels`;
      // Scopes a/b and a differ: both stay; labels without a scope are not exclusive of each other.
      let r = await s.api<LabelJson[]>('PUT', base, {
        ...tok(alice),
        body: { labels: [abC.id, aX.id, noScope1.id, noScope2.id, trailing.id] },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.map((l) => l.name).sort(), ['a/b/', 'a/b/c', 'a/x', 'alone', 'lonely']);
      // a/b/d shares the scope a/b with a/b/c: it replaces it, and nothing else.
      r = await post<LabelJson[]>(alice, base, { labels: [abD.id] });
      assert.deepEqual(r.body.map((l) => l.name).sort(), ['a/b/', 'a/b/d', 'a/x', 'alone', 'lonely']);
      // Both a/b labels at once: 422.
      assert.equal((await post(alice, base, { labels: [abC.id, abD.id] })).status, 422);
      assert.equal(
        (await s.api('PUT', base, { ...tok(alice), body: { labels: ['a/b/c', 'a/b/d'] } })).status,
        422,
      );
      // An exclusive label edited into a shared scope now counts.
      const e = await label('proj', 'other/one', { exclusive: true });
      await s.api('PATCH', `/repos/alice/proj/labels/${e.id}`, { ...tok(alice), body: { name: 'a/b/e' } });
      r = await post<LabelJson[]>(alice, base, { labels: [e.id] });
      assert.deepEqual(r.body.map((l) => l.name).sort(), ['a/b/', 'a/b/e', 'a/x', 'alone', 'lonely']);
    });
  });

  describe('organization labels', () => {
    let orgLabel: LabelJson;
    before(async () => {
      assert.equal((await post(alice, '/orgs', { username: 'acme' })).status, 201);
      assert.equal(
        (await post(alice, '/orgs', { username: 'hidden-org', visibility: 'private' })).status,
        201,
      );
      const team = await post<{ id: number }>(alice, '/orgs/acme/teams', {
        name: 'writers',
        permission: 'write',
        units: ['repo.code', 'repo.issues'],
        includes_all_repositories: true,
      });
      assert.equal(team.status, 201, team.text);
      assert.equal((await s.api('PUT', `/teams/${team.body.id}/members/bob`, tok(alice))).status, 204);
      assert.equal((await post(alice, '/orgs/acme/repos', { name: 'tool' })).status, 201);
    });

    it('lets owners manage organization labels; members get 403, outsiders of private ones 404', async () => {
      const r = await post(alice, '/orgs/acme/labels', {
        name: 'org/urgent',
        color: 'ff0000',
        exclusive: true,
      });
      assert.equal(r.status, 201, r.text);
      orgLabel = r.body;
      assert.deepEqual(Object.keys(r.body).sort(), LABEL_KEYS);
      assert.equal(r.body.url, `${s.url}/api/v1/orgs/acme/labels/${r.body.id}`);
      assert.equal((await post(bob, '/orgs/acme/labels', { name: 'nope', color: 'ff0000' })).status, 403);
      assert.equal(
        (await s.api('POST', '/orgs/acme/labels', { body: { name: 'n', color: 'ff0000' } })).status,
        401,
      );
      assert.equal((await post(alice, '/orgs/acme/labels', { name: 'bad', color: 'nope' })).status, 422);
      assert.equal((await post(dave, '/orgs/hidden-org/labels', { name: 'x', color: 'ff0000' })).status, 404);
      assert.equal((await s.api('GET', '/orgs/hidden-org/labels', tok(dave))).status, 404);
      assert.equal((await s.api('GET', '/orgs/hidden-org/labels', tok(alice))).status, 200);
      assert.equal((await s.api('GET', '/orgs/no-such-org/labels')).status, 404);

      const list = await s.api<LabelJson[]>('GET', '/orgs/acme/labels');
      assert.deepEqual(
        list.body.map((l) => l.name),
        ['org/urgent'],
      );
      assert.equal(list.headers.get('x-total-count'), '1');
      const one = `/orgs/acme/labels/${orgLabel.id}`;
      assert.deepEqual((await s.api<LabelJson>('GET', one)).body, orgLabel);
      assert.equal((await s.api('PATCH', one, { ...tok(bob), body: { color: '000000' } })).status, 403);
      const e = await s.api<LabelJson>('PATCH', one, {
        ...tok(alice),
        body: { description: 'now', color: '#00F' },
      });
      assert.equal(e.status, 200);
      assert.deepEqual([e.body.description, e.body.color], ['now', '0000ff']);
      assert.equal((await s.api('DELETE', one, tok(bob))).status, 403);
      // A repository label is not an organization label.
      const repoLabel = await label('proj', 'repo-only');
      assert.equal((await s.api('GET', `/orgs/acme/labels/${repoLabel.id}`)).status, 404);
      assert.equal((await s.api('GET', `/orgs/acme/labels/999999`)).status, 404);
    });

    it('takes the old organization’s labels off the issues of a transferred repository', async () => {
      const keep = await post(alice, '/orgs/acme/labels', { name: 'org-kept', color: '123456' });
      assert.equal((await post(alice, '/orgs/acme/repos', { name: 'moving' })).status, 201);
      const repoLabel = await post(alice, '/repos/acme/moving/labels', { name: 'own', color: '654321' });
      const n = await issue('moving', 'acme');
      const r = await post<LabelJson[]>(alice, `/repos/acme/moving/issues/${n}/labels`, {
        labels: [keep.body.id, repoLabel.body.id],
      });
      assert.deepEqual(r.body.map((l) => l.name).sort(), ['org-kept', 'own']);
      const t = await post(alice, '/repos/acme/moving/transfer', { new_owner: 'alice' });
      assert.equal(t.status, 202, t.text);
      assert.deepEqual(await labelsOf(n, 'moving'), ['own']);
      // The repository's own label still filters; the old organization's does not apply.
      const list = await s.api<IssueJson[]>('GET', '/repos/alice/moving/issues?labels=own');
      assert.deepEqual(
        list.body.map((i) => i.number),
        [n],
      );
      assert.deepEqual(
        (await s.api<IssueJson[]>('GET', '/repos/alice/moving/issues?labels=org-kept')).body,
        [],
      );
    });

    it('uses organization labels on the organization’s repositories, by id or name', async () => {
      const repoLabel = await post(alice, '/repos/acme/tool/labels', {
        name: 'org/low',
        color: '00ff00',
        exclusive: true,
      });
      assert.equal(repoLabel.status, 201);
      const n = await issue('tool', 'acme');
      const base = `/repos/acme/tool/issues/${n}/labels`;
      let r = await post<LabelJson[]>(bob, base, { labels: [orgLabel.id] });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.map((l) => [l.name, l.url]),
        [['org/urgent', `${s.url}/api/v1/orgs/acme/labels/${orgLabel.id}`]],
      );
      // Exclusive across organization and repository labels of one scope.
      r = await post<LabelJson[]>(bob, base, { labels: ['org/low'] });
      assert.deepEqual(
        r.body.map((l) => l.name),
        ['org/low'],
      );
      r = await s.api<LabelJson[]>('PUT', base, { ...tok(bob), body: { labels: ['org/urgent'] } });
      assert.deepEqual(
        r.body.map((l) => l.name),
        ['org/urgent'],
      );
      assert.equal((await post(bob, base, { labels: [orgLabel.id, repoLabel.body.id] })).status, 422);
      // The list filter knows organization labels.
      const list = await s.api<IssueJson[]>('GET', '/repos/acme/tool/issues?labels=org/urgent');
      assert.deepEqual(
        list.body.map((i) => i.number),
        [n],
      );
      // Not usable on a repository of another owner.
      const m = await issue('proj');
      assert.equal(
        (await post(alice, `/repos/alice/proj/issues/${m}/labels`, { labels: [orgLabel.id] })).status,
        422,
      );
      assert.equal(
        (await post(alice, `/repos/alice/proj/issues/${m}/labels`, { labels: ['org/urgent'] })).status,
        422,
      );
      // Deleting the organization label takes it off the issue.
      assert.equal((await s.api('DELETE', `/orgs/acme/labels/${orgLabel.id}`, tok(alice))).status, 204);
      assert.deepEqual(await labelsOf(n, 'tool', 'acme'), []);
    });
  });
});
