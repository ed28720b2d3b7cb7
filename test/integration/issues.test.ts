// Issues over HTTP: creation (numbers unique and increasing under concurrency), reading, editing,
// closing (by hand and by a commit), the list filters and the cross-repository search, locks,
// pins, due dates, reactions, subscriptions, the timeline, comments, events on the bus, token
// scopes, and the permission rules (private repositories answer 404 to outsiders, never 403).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';
import type { AnvilEvents } from '../../src/events/bus.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Msg {
  message: string;
}

interface UserJson {
  id: number;
  login: string;
}

interface LabelJson {
  id: number;
  name: string;
}

interface MilestoneJson {
  id: number;
  title: string;
  open_issues: number;
  closed_issues: number;
}

interface IssueJson {
  id: number;
  url: string;
  html_url: string;
  number: number;
  user: UserJson;
  title: string;
  body: string;
  ref: string;
  labels: LabelJson[];
  milestone: MilestoneJson | null;
  assignee: UserJson | null;
  assignees: UserJson[] | null;
  state: string;
  is_locked: boolean;
  comments: number;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  due_date: string | null;
  pull_request: unknown;
  repository: { id: number; name: string; owner: string; full_name: string };
  pin_order: number;
}

interface CommentJson {
  id: number;
  html_url: string;
  issue_url: string;
  pull_request_url: string;
  user: UserJson;
  body: string;
  created_at: string;
  updated_at: string;
}

interface TimelineJson {
  id: number;
  type: string;
  body: string;
  user: UserJson;
  label: LabelJson | null;
  milestone: MilestoneJson | null;
  old_milestone: MilestoneJson | null;
  assignee: UserJson | null;
  removed_assignee: boolean;
  old_title: string;
  new_title: string;
  ref_commit_sha: string;
}

interface ReactionJson {
  user: UserJson;
  content: string;
  created_at: string;
}

/** Forgejo's Issue definition. */
const ISSUE_KEYS = [
  'assets',
  'assignee',
  'assignees',
  'body',
  'closed_at',
  'comments',
  'created_at',
  'due_date',
  'html_url',
  'id',
  'is_locked',
  'labels',
  'milestone',
  'number',
  'original_author',
  'original_author_id',
  'pin_order',
  'pull_request',
  'ref',
  'repository',
  'state',
  'title',
  'updated_at',
  'url',
  'user',
];

/** Forgejo's Comment definition. */
const COMMENT_KEYS = [
  'assets',
  'body',
  'created_at',
  'html_url',
  'id',
  'issue_url',
  'original_author',
  'original_author_id',
  'pull_request_url',
  'updated_at',
  'user',
];

/** Forgejo's TimelineComment definition. */
const TIMELINE_KEYS = [
  'assignee',
  'assignee_team',
  'body',
  'created_at',
  'dependent_issue',
  'html_url',
  'id',
  'issue_url',
  'label',
  'milestone',
  'new_ref',
  'new_title',
  'old_milestone',
  'old_project_id',
  'old_ref',
  'old_title',
  'project_id',
  'pull_request_url',
  'ref_action',
  'ref_comment',
  'ref_commit_sha',
  'ref_issue',
  'removed_assignee',
  'resolve_doer',
  'review_id',
  'tracked_time',
  'type',
  'updated_at',
  'user',
];

const keys = (o: object) => Object.keys(o).sort();
const numbers = (r: Reply<IssueJson[]>) => r.body.map((i) => i.number);

describe('issues', () => {
  let s: TestServer;
  let alice: U; // owns alice/proj (public) and alice/secret (private)
  let bob: U; // write collaborator on both
  let carol: U; // read collaborator on both
  let dave: U; // no relation to alice's repositories
  const events: Array<{ name: keyof AnvilEvents; payload: unknown }> = [];

  const tok = (u: U) => ({ token: u.token });
  const post = <T = IssueJson>(u: U, path: string, body: unknown) =>
    s.api<T>('POST', path, { ...tok(u), body });
  const newIssue = async (u: U, repo: string, body: Record<string, unknown>) => {
    const r = await post(u, `/repos/alice/${repo}/issues`, body);
    assert.equal(r.status, 201, r.text);
    return r.body;
  };

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
      const r = await post(alice, '/user/repos', { name, private: priv });
      assert.equal(r.status, 201, r.text);
      for (const [u, permission] of [
        [bob, 'write'],
        [carol, 'read'],
      ] as const) {
        const c = await s.api('PUT', `/repos/alice/${name}/collaborators/${u.name}`, {
          ...tok(alice),
          body: { permission },
        });
        assert.equal(c.status, 204, c.text);
      }
    }
    for (const name of [
      'issue.opened',
      'issue.edited',
      'issue.closed',
      'issue.reopened',
      'issue.labelled',
      'issue.assigned',
      'issue.milestoned',
      'comment.created',
      'comment.edited',
      'comment.deleted',
    ] as const) {
      s.ctx.events.on(name, (payload) => void events.push({ name, payload }));
    }
  });

  after(async () => {
    await s.close();
  });

  describe('creation', () => {
    it('creates an issue with Forgejo’s shape and number 1', async () => {
      const r = await post(alice, '/repos/alice/proj/issues', {
        title: '  First issue ',
        body: 'Hello @bob',
      });
      assert.equal(r.status, 201, r.text);
      const i = r.body;
      assert.deepEqual(keys(i), ISSUE_KEYS);
      assert.equal(i.number, 1);
      assert.equal(i.title, 'First issue');
      assert.equal(i.body, 'Hello @bob');
      assert.equal(i.state, 'open');
      assert.equal(i.user.login, 'alice');
      assert.deepEqual(i.labels, []);
      assert.equal(i.assignee, null);
      assert.equal(i.assignees, null);
      assert.equal(i.milestone, null);
      assert.equal(i.closed_at, null);
      assert.equal(i.due_date, null);
      assert.equal(i.pull_request, null);
      assert.equal(i.is_locked, false);
      assert.equal(i.comments, 0);
      assert.equal(i.pin_order, 0);
      assert.deepEqual(i.repository, {
        id: i.repository.id,
        name: 'proj',
        owner: 'alice',
        full_name: 'alice/proj',
      });
      assert.equal(i.url, `${s.url}/api/v1/repos/alice/proj/issues/1`);
      assert.equal(i.html_url, `${s.url}/alice/proj/issues/1`);
      const opened = events.find((e) => e.name === 'issue.opened');
      assert.deepEqual(opened?.payload, {
        repoId: i.repository.id,
        issueId: i.id,
        index: 1,
        isPull: false,
        doerId: alice.id,
        mentionedIds: [bob.id],
      });
      const got = await s.api<IssueJson>('GET', '/repos/alice/proj/issues/1', tok(alice));
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, i);
      // Anonymous callers see the poster without private details.
      const anon = await s.api<IssueJson>('GET', '/repos/alice/proj/issues/1');
      assert.equal(anon.status, 200);
      assert.equal((anon.body.user as unknown as { email: string }).email, 'alice@noreply.127.0.0.1');
    });

    it('gives unique, increasing numbers to 20 concurrent creations', async () => {
      const before = (await s.api<IssueJson[]>('GET', '/repos/alice/other/issues?state=all&limit=50')).body
        .length;
      const replies = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          post(bob, '/repos/alice/other/issues', { title: `concurrent ${k}` }),
        ),
      );
      for (const r of replies) assert.equal(r.status, 201, r.text);
      const got = replies.map((r) => r.body.number).sort((a, b) => a - b);
      assert.deepEqual(
        got,
        Array.from({ length: 20 }, (_, k) => before + k + 1),
      );
      // Numbers follow creation order: a later id never has a smaller number.
      const byId = replies.map((r) => r.body).sort((a, b) => a.id - b.id);
      for (let k = 1; k < byId.length; k++) assert.ok(byId[k]!.number > byId[k - 1]!.number);
      const list = await s.api<IssueJson[]>('GET', '/repos/alice/other/issues?limit=50');
      assert.equal(list.headers.get('x-total-count'), String(before + 20));
    });

    it('refuses bad input with 4xx and creates nothing', async () => {
      const count = async () =>
        Number(
          (await s.api('GET', '/repos/alice/proj/issues?state=all', tok(alice))).headers.get('x-total-count'),
        );
      const n = await count();
      const cases: Array<[unknown, number]> = [
        [{}, 422],
        [{ title: '' }, 422],
        [{ title: '   ' }, 422],
        [{ title: 'x'.repeat(256) }, 422],
        [{ title: 5 }, 422],
        [{ title: 't', labels: [999999] }, 422],
        [{ title: 't', labels: ['bug'] }, 422],
        [{ title: 't', milestone: 999999 }, 422],
        [{ title: 't', assignees: ['nobody-here'] }, 422],
        [{ title: 't', assignees: ['dave'] }, 422],
        [{ title: 't', due_date: 'tomorrow' }, 422],
      ];
      for (const [body, status] of cases) {
        const r = await post(alice, '/repos/alice/proj/issues', body);
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
        assert.ok((r.body as unknown as Msg).message);
      }
      const raw = await s.api('POST', '/repos/alice/proj/issues', { ...tok(alice), raw: '{"title": ' });
      assert.equal(raw.status, 400);
      assert.equal(await count(), n);
    });

    it('needs a signed-in caller who can read the repository', async () => {
      assert.equal(
        (await s.api('POST', '/repos/alice/proj/issues', { body: { title: 'anon' } })).status,
        401,
      );
      // Anyone who reads a public repository may open issues.
      const r = await post(dave, '/repos/alice/proj/issues', { title: 'from dave' });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.user.login, 'dave');
      // A private repository is not revealed.
      assert.equal((await post(dave, '/repos/alice/secret/issues', { title: 'x' })).status, 404);
      assert.equal((await post(dave, '/repos/alice/nothing/issues', { title: 'x' })).status, 404);
      // A reader's labels, milestone and assignees are ignored, as in Forgejo.
      const ms = await post<MilestoneJson>(alice, '/repos/alice/proj/milestones', { title: 'm-reader' });
      const lb = await post<LabelJson>(alice, '/repos/alice/proj/labels', {
        name: 'reader-label',
        color: 'ff0000',
      });
      const c = await post(carol, '/repos/alice/proj/issues', {
        title: 'from carol',
        labels: [lb.body.id],
        milestone: ms.body.id,
        assignees: ['bob'],
      });
      assert.equal(c.status, 201, c.text);
      assert.deepEqual(c.body.labels, []);
      assert.equal(c.body.milestone, null);
      assert.equal(c.body.assignees, null);
    });

    it('lets writers set labels, milestone, assignees, due date and closed', async () => {
      const ms = await post<MilestoneJson>(alice, '/repos/alice/proj/milestones', { title: 'v1' });
      const lb = await post<LabelJson>(alice, '/repos/alice/proj/labels', {
        name: 'kind/bug',
        color: '#e11d21',
      });
      const r = await post(bob, '/repos/alice/proj/issues', {
        title: 'full',
        labels: [lb.body.id],
        milestone: ms.body.id,
        assignee: 'alice',
        assignees: ['bob'],
        due_date: '2030-05-06T10:00:00Z',
        closed: true,
        ref: 'refs/heads/main',
      });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(
        r.body.labels.map((l) => l.name),
        ['kind/bug'],
      );
      assert.equal(r.body.milestone?.id, ms.body.id);
      assert.deepEqual(r.body.assignees?.map((a) => a.login).sort(), ['alice', 'bob']);
      assert.equal(r.body.assignee?.login, 'alice');
      assert.equal(r.body.due_date, '2030-05-06T10:00:00Z');
      assert.equal(r.body.state, 'closed');
      assert.ok(r.body.closed_at);
      assert.equal(r.body.ref, 'refs/heads/main');
      const m = await s.api<MilestoneJson>('GET', `/repos/alice/proj/milestones/${ms.body.id}`);
      assert.equal(m.body.closed_issues, 1);
      assert.equal(m.body.open_issues, 0);
    });
  });

  it('never answers 500 to odd input', async () => {
    const cases: Array<[string, string, unknown, number]> = [
      ['POST', '/repos/alice/proj/issues', { title: 'a\u0000b' }, 422],
      ['POST', '/repos/alice/proj/issues', { title: 't', body: 'nul\u0000' }, 422],
      ['POST', '/repos/alice/proj/issues', { title: 't', assignees: ['a\u0000'] }, 422],
      ['POST', '/repos/alice/proj/issues', { title: 't', labels: [1e20] }, 422],
      ['POST', '/repos/alice/proj/issues', { title: 't', milestone: 1e20 }, 422],
      ['POST', '/repos/alice/proj/issues/1/comments', { body: 'x\u0000' }, 422],
      ['POST', '/repos/alice/proj/labels', { name: 'a\u0000', color: 'fff' }, 422],
      ['POST', '/repos/alice/proj/milestones', { title: 'a\u0000' }, 422],
      ['GET', '/repos/alice/proj/issues?created_by=a%00b', undefined, 422],
      ['GET', '/repos/alice/proj/issues?labels=a%00b', undefined, 422],
      ['GET', '/repos/alice/proj/issues?milestones=99999999999999999999', undefined, 200],
      ['GET', '/repos/alice/proj/issues?labels=99999999999999999999', undefined, 200],
      ['GET', '/repos/alice/proj/issues?page=99999999999999999999', undefined, 422],
      ['GET', '/repos/alice/proj/issues/99999999999999999999', undefined, 422],
      ['GET', '/repos/alice/proj/issues/-1', undefined, 404],
      ['GET', '/repos/alice/proj/issues/comments/99999999999999999999', undefined, 422],
      ['GET', '/repos/alice/proj/labels/99999999999999999999', undefined, 404],
      ['GET', '/repos/alice/proj/labels/a%00b', undefined, 422],
      ['GET', '/repos/alice/proj/milestones/99999999999999999999', undefined, 404],
      ['GET', '/repos/alice/proj/milestones/a%00b', undefined, 422],
      ['GET', '/repos/issues/search?priority_repo_id=99999999999999999999', undefined, 422],
      ['GET', '/repos/issues/search?owner=a%00b', undefined, 422],
      ['PUT', '/repos/alice/proj/issues/1/subscriptions/a%00b', undefined, 422],
      ['DELETE', '/repos/alice/proj/issues/1/labels/99999999999999999999', undefined, 422],
      ['PATCH', '/repos/alice/proj/issues/1/pin/99999999999999999999', undefined, 422],
    ];
    const wrong: string[] = [];
    for (const [method, path, body, status] of cases) {
      const r = await s.api(method, path, { ...tok(alice), body });
      if (r.status !== status) wrong.push(`${method} ${path} ${JSON.stringify(body)}: ${r.status} ${r.text}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('formats times as Forgejo does (RFC 3339, UTC, whole seconds)', async () => {
    const { isoTime } = await import('../../src/issues/input.js');
    for (const t of [0, 59, 86399, 951782400, 1709164800, 1795309087, 4102444800, 253402300799]) {
      assert.equal(isoTime(t), new Date(t * 1000).toISOString().slice(0, 19) + 'Z');
    }
    for (let t = 0; t < 4_000_000_000; t += 7_777_777) {
      assert.equal(isoTime(t), new Date(t * 1000).toISOString().slice(0, 19) + 'Z');
    }
  });

  describe('reading and permissions', () => {
    let secretIssue: IssueJson;
    before(async () => {
      secretIssue = await newIssue(alice, 'secret', { title: 'hidden' });
    });

    it('answers 404 for unknown numbers and hides private repositories', async () => {
      assert.equal((await s.api('GET', '/repos/alice/proj/issues/9999')).status, 404);
      assert.equal((await s.api('GET', '/repos/alice/proj/issues/0')).status, 404);
      assert.equal((await s.api('GET', '/repos/alice/proj/issues/abc')).status, 422);
      const path = `/repos/alice/secret/issues/${secretIssue.number}`;
      assert.equal((await s.api('GET', path)).status, 404);
      assert.equal((await s.api('GET', path, tok(dave))).status, 404);
      assert.equal((await s.api('GET', path, tok(carol))).status, 200);
      assert.equal((await s.api('GET', '/repos/alice/secret/issues', tok(dave))).status, 404);
      assert.equal((await s.api('GET', '/repos/alice/secret/issues/comments', tok(dave))).status, 404);
      assert.equal((await s.api('GET', `${path}/comments`, tok(dave))).status, 404);
      assert.equal((await s.api('GET', `${path}/timeline`, tok(dave))).status, 404);
      assert.equal((await s.api('PATCH', path, { ...tok(dave), body: { title: 'x' } })).status, 404);
      assert.equal((await post(dave, `${path}/comments`, { body: 'x' })).status, 404);
      assert.equal((await post(dave, `${path}/reactions`, { content: 'heart' })).status, 404);
      assert.equal((await s.api('PUT', `${path}/lock`, tok(dave))).status, 404);
      assert.equal((await s.api('GET', '/repos/alice/secret/issues/pinned', tok(dave))).status, 404);
    });

    it('follows the token scope category issue', async () => {
      const readOnly = await s.api<{ sha1: string }>('POST', '/users/carol/tokens', {
        basic: [carol.name, carol.password],
        body: { name: 'ro', scopes: ['read:issue', 'read:repository'] },
      });
      const repoOnly = await s.api<{ sha1: string }>('POST', '/users/carol/tokens', {
        basic: [carol.name, carol.password],
        body: { name: 'repo', scopes: ['write:repository'] },
      });
      const path = `/repos/alice/secret/issues/${secretIssue.number}`;
      assert.equal((await s.api('GET', path, { token: readOnly.body.sha1 })).status, 200);
      const w = await s.api('POST', `${path}/comments`, { token: readOnly.body.sha1, body: { body: 'x' } });
      assert.equal(w.status, 403);
      assert.match((w.body as Msg).message, /write:issue/);
      assert.equal((await s.api('GET', path, { token: repoOnly.body.sha1 })).status, 403);
    });

    it('refuses changes to the issues of an archived repository with 403', async () => {
      assert.equal((await post(alice, '/user/repos', { name: 'attic' })).status, 201);
      const i = await newIssue(alice, 'attic', { title: 'before archiving' });
      const e = await s.api('PATCH', '/repos/alice/attic', { ...tok(alice), body: { archived: true } });
      assert.equal(e.status, 200, e.text);
      const path = `/repos/alice/attic/issues/${i.number}`;
      assert.equal((await post(alice, '/repos/alice/attic/issues', { title: 'x' })).status, 403);
      assert.equal((await s.api('PATCH', path, { ...tok(alice), body: { title: 'x' } })).status, 403);
      assert.equal((await post(alice, `${path}/comments`, { body: 'x' })).status, 403);
      assert.equal((await post(alice, `${path}/reactions`, { content: 'heart' })).status, 403);
      assert.equal((await s.api('PUT', `${path}/lock`, tok(alice))).status, 403);
      assert.equal((await s.api('GET', path)).status, 200);
      assert.equal((await s.api('GET', '/repos/alice/attic/issues')).status, 200);
    });

    it('lets a repository without issues answer 404', async () => {
      const r = await post(alice, '/user/repos', { name: 'noissues' });
      assert.equal(r.status, 201);
      const e = await s.api('PATCH', '/repos/alice/noissues', { ...tok(alice), body: { has_issues: false } });
      assert.equal(e.status, 200, e.text);
      assert.equal((await post(alice, '/repos/alice/noissues/issues', { title: 'x' })).status, 404);
    });
  });

  describe('editing', () => {
    let issue: IssueJson;
    before(async () => {
      issue = await newIssue(carol, 'proj', { title: 'carol’s issue', body: 'body' });
    });
    const path = () => `/repos/alice/proj/issues/${issue.number}`;
    const patch = (u: U, body: unknown) => s.api<IssueJson>('PATCH', path(), { ...tok(u), body });

    it('lets the poster edit the title and body and close (201, as in Forgejo)', async () => {
      let r = await patch(carol, { title: 'renamed', body: 'new body' });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.title, 'renamed');
      assert.equal(r.body.body, 'new body');
      const edited = events.filter((e) => e.name === 'issue.edited').at(-1)?.payload as {
        changes: unknown;
      };
      assert.deepEqual(edited.changes, { title: { from: 'carol’s issue' }, body: { from: 'body' } });
      r = await patch(carol, { state: 'closed' });
      assert.equal(r.status, 201);
      assert.equal(r.body.state, 'closed');
      assert.ok(r.body.closed_at);
      const closed = events.filter((e) => e.name === 'issue.closed').at(-1)?.payload as { commitId: string };
      assert.equal(closed.commitId, '');
      r = await patch(carol, { state: 'open' });
      assert.equal(r.body.state, 'open');
      assert.equal(r.body.closed_at, null);
      assert.equal(events.filter((e) => e.name === 'issue.reopened').length, 1);
    });

    it('refuses others without write access, and bad values', async () => {
      assert.equal((await patch(dave, { title: 'mine now' })).status, 403);
      assert.equal((await s.api('PATCH', path(), { body: { title: 'anon' } })).status, 401);
      assert.equal((await patch(carol, { state: 'merged' })).status, 422);
      assert.equal((await patch(carol, { title: '' })).status, 422);
      assert.equal((await patch(bob, { milestone: 999999 })).status, 422);
      assert.equal((await patch(bob, { assignees: ['dave'] })).status, 422);
      assert.equal((await patch(bob, { due_date: '06/05/2030' })).status, 422);
      assert.equal((await s.api<IssueJson>('GET', path())).body.title, 'renamed');
    });

    it('lets writers set milestone, assignees and due date; ignores them from a reader poster', async () => {
      const ms = await post<MilestoneJson>(alice, '/repos/alice/proj/milestones', { title: 'edit-ms' });
      let r = await patch(bob, {
        milestone: ms.body.id,
        assignees: ['bob', 'alice'],
        due_date: '2031-01-02T08:00:00+02:00',
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.milestone?.title, 'edit-ms');
      assert.deepEqual(
        r.body.assignees?.map((a) => a.login),
        ['bob', 'alice'],
      );
      // The due date is the end of that day, in the time's own offset.
      assert.equal(r.body.due_date, '2031-01-02T21:59:59Z');
      const assigned = events.filter((e) => e.name === 'issue.assigned').at(-1)?.payload as {
        added: number[];
      };
      assert.deepEqual(assigned.added, [bob.id, alice.id]);
      r = await patch(carol, { milestone: 0, assignees: [], unset_due_date: true, title: 'carol again' });
      assert.equal(r.status, 201);
      assert.equal(r.body.title, 'carol again');
      assert.equal(r.body.milestone?.title, 'edit-ms');
      assert.equal(r.body.assignees?.length, 2);
      assert.ok(r.body.due_date);
      r = await patch(bob, { milestone: null, assignees: [], unset_due_date: true });
      assert.equal(r.body.milestone, null);
      assert.equal(r.body.assignees, null);
      assert.equal(r.body.due_date, null);
    });
  });

  describe('lists and filters', () => {
    let repoId: number;
    const ids: Record<string, number> = {};
    before(async () => {
      const r = await post<{ id: number }>(alice, '/user/repos', { name: 'filters' });
      repoId = r.body.id;
      await s.api('PUT', '/repos/alice/filters/collaborators/bob', {
        ...tok(alice),
        body: { permission: 'write' },
      });
      const label = async (name: string) =>
        (await post<LabelJson>(alice, '/repos/alice/filters/labels', { name, color: '00ff00' })).body.id;
      ids['bug'] = await label('bug');
      ids['ui'] = await label('ui');
      ids['m1'] = (
        await post<MilestoneJson>(alice, '/repos/alice/filters/milestones', { title: 'm1' })
      ).body.id;
      ids['m2'] = (
        await post<MilestoneJson>(alice, '/repos/alice/filters/milestones', { title: 'm2' })
      ).body.id;
      await newIssue(alice, 'filters', { title: 'one bug', labels: [ids['bug']], milestone: ids['m1'] }); // #1
      await newIssue(alice, 'filters', {
        title: 'two bug ui',
        labels: [ids['bug'], ids['ui']],
        assignees: ['bob'],
      }); // #2
      await newIssue(bob, 'filters', {
        title: 'three',
        body: 'needle in body, ping @carol',
        milestone: ids['m2'],
      }); // #3
      await newIssue(alice, 'filters', { title: 'four closed', closed: true, labels: [ids['ui']] }); // #4
    });
    const list = (query: string, u?: U) =>
      s.api<IssueJson[]>('GET', `/repos/alice/filters/issues${query}`, u ? tok(u) : {});

    it('lists open issues newest first with X-Total-Count and pages', async () => {
      const r = await list('');
      assert.equal(r.status, 200);
      assert.deepEqual(numbers(r), [3, 2, 1]);
      assert.equal(r.headers.get('x-total-count'), '3');
      const p = await list('?state=all&limit=2&page=2');
      assert.deepEqual(numbers(p), [2, 1]);
      assert.equal(p.headers.get('x-total-count'), '4');
      assert.match(p.headers.get('link') ?? '', /rel="first"/);
      assert.deepEqual(numbers(await list('?state=closed')), [4]);
      assert.deepEqual(numbers(await list('?state=all&sort=oldest')), [1, 2, 3, 4]);
      assert.deepEqual(numbers(await list('?type=issues&state=all')), [4, 3, 2, 1]);
      assert.deepEqual(numbers(await list('?type=pulls&state=all')), []);
    });

    it('filters by labels (names or ids, all of them) and milestones (titles or ids, any)', async () => {
      assert.deepEqual(numbers(await list('?labels=bug')), [2, 1]);
      assert.deepEqual(numbers(await list('?labels=bug,ui')), [2]);
      assert.deepEqual(numbers(await list(`?labels=${ids['ui']}&state=all`)), [4, 2]);
      assert.deepEqual(numbers(await list('?labels=bug,no-such-label')), [2, 1]);
      assert.deepEqual(numbers(await list('?labels=no-such-label')), []);
      assert.deepEqual(numbers(await list('?milestones=m1')), [1]);
      assert.deepEqual(numbers(await list(`?milestones=m1,${ids['m2']}`)), [3, 1]);
      assert.deepEqual(numbers(await list('?milestones=none-such')), []);
    });

    it('filters by text, poster, assignee, mention and update time', async () => {
      assert.deepEqual(numbers(await list('?q=BUG')), [2, 1]);
      assert.deepEqual(numbers(await list('?q=needle')), [3]);
      assert.deepEqual(numbers(await list('?created_by=bob')), [3]);
      assert.deepEqual(numbers(await list('?assigned_by=bob')), [2]);
      assert.deepEqual(numbers(await list('?mentioned_by=carol')), [3]);
      assert.equal((await list('?created_by=no-such-user')).status, 404);
      assert.deepEqual(
        numbers(await list('?since=2000-01-01T00:00:00Z&before=2999-01-01T00:00:00Z')),
        [3, 2, 1],
      );
      assert.deepEqual(numbers(await list('?since=2999-01-01T00:00:00Z')), []);
      assert.deepEqual(numbers(await list('?before=2000-01-01T00:00:00Z')), []);
    });

    it('follows closing and reopening in the label filter', async () => {
      assert.deepEqual(numbers(await list('?labels=ui')), [2]);
      assert.deepEqual(numbers(await list('?labels=ui&state=closed')), [4]);
      const edit = (n: number, state: string) =>
        s.api('PATCH', `/repos/alice/filters/issues/${n}`, { ...tok(alice), body: { state } });
      assert.equal((await edit(4, 'open')).status, 201);
      assert.deepEqual(numbers(await list('?labels=ui')), [4, 2]);
      assert.equal((await edit(2, 'closed')).status, 201);
      assert.deepEqual(numbers(await list('?labels=ui')), [4]);
      assert.deepEqual(numbers(await list('?labels=ui&state=closed')), [2]);
      assert.deepEqual(numbers(await list('?labels=ui&sort=oldest&state=closed')), [2]);
      assert.equal((await list('?labels=ui&state=closed')).headers.get('x-total-count'), '1');
      // Labels added to a closed issue carry its state too.
      await post(alice, '/repos/alice/filters/issues/2/labels', { labels: ['bug'] });
      assert.deepEqual(numbers(await list('?labels=bug&state=closed')), [2]);
      await edit(2, 'open');
      await edit(4, 'closed');
      assert.deepEqual(numbers(await list('?labels=ui')), [2]);
      assert.deepEqual(numbers(await list('?labels=bug')), [2, 1]);
      // A mention in a comment counts for mentioned_by.
      await post(alice, '/repos/alice/filters/issues/1/comments', { body: 'cc @dave' });
      assert.deepEqual(numbers(await list('?mentioned_by=dave')), [1]);
    });

    it('refuses bad query values with 422', async () => {
      for (const q of [
        '?state=opened',
        '?type=prs',
        '?since=yesterday',
        '?before=2020-13-45',
        '?sort=random',
        '?page=x',
      ]) {
        const r = await list(q);
        assert.equal(r.status, 422, `${q}: ${r.text}`);
      }
    });

    it('searches across the repositories the caller can read', async () => {
      await newIssue(alice, 'secret', { title: 'secret needle' });
      const search = (query: string, u?: U) =>
        s.api<IssueJson[]>('GET', `/repos/issues/search${query}`, u ? tok(u) : {});
      let r = await search('?q=needle', alice);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.map((i) => i.repository.full_name).sort(), ['alice/filters', 'alice/secret']);
      r = await search('?q=needle', dave);
      assert.deepEqual(
        r.body.map((i) => i.repository.full_name),
        ['alice/filters'],
      );
      r = await search('?q=needle');
      assert.deepEqual(
        r.body.map((i) => i.repository.full_name),
        ['alice/filters'],
      );
      assert.equal(r.headers.get('x-total-count'), '1');
      r = await search('?q=needle&priority_repo_id=' + repoId, alice);
      assert.equal(r.body[0]!.repository.full_name, 'alice/filters');
      // Labels by name, any of them; the owner filter; the caller's own issues.
      r = await search('?owner=alice&labels=bug,ui&state=all', alice);
      assert.deepEqual(numbers(r).sort(), [1, 2, 4]);
      r = await search('?owner=alice&created=true&q=three', bob);
      assert.deepEqual(numbers(r), [3]);
      r = await search('?assigned=true&owner=alice', bob);
      assert.ok(r.body.every((i) => i.assignees?.some((a) => a.login === 'bob')));
      assert.ok(r.body.length >= 1);
      r = await search('?milestones=m2&owner=alice');
      assert.deepEqual(numbers(r), [3]);
      assert.equal((await search('?owner=no-such-owner')).status, 400);
      assert.equal((await search('?team=owners')).status, 400);
      assert.equal((await search('?owner=alice&team=devs')).status, 400);
      assert.equal((await search('?state=bad')).status, 422);
      r = await search('?type=pulls', alice);
      assert.deepEqual(r.body, []);
    });

    it('searches within a team of an organization', async () => {
      assert.equal((await post(alice, '/orgs', { username: 'acme' })).status, 201);
      for (const name of ['alpha', 'beta']) {
        assert.equal((await post(alice, '/orgs/acme/repos', { name, private: true })).status, 201);
        const i = await post(alice, `/repos/acme/${name}/issues`, { title: `org ${name}` });
        assert.equal(i.status, 201);
      }
      const team = await post<{ id: number }>(alice, '/orgs/acme/teams', {
        name: 'devs',
        permission: 'read',
        units: ['repo.code', 'repo.issues'],
      });
      assert.equal(team.status, 201, team.text);
      assert.equal((await s.api('PUT', `/teams/${team.body.id}/members/dave`, tok(alice))).status, 204);
      assert.equal((await s.api('PUT', `/teams/${team.body.id}/repos/acme/alpha`, tok(alice))).status, 204);
      const search = (query: string, u: U) =>
        s.api<IssueJson[]>('GET', `/repos/issues/search${query}`, tok(u));
      let r = await search('?owner=acme', dave);
      assert.deepEqual(
        r.body.map((i) => i.repository.full_name),
        ['acme/alpha'],
      );
      r = await search('?owner=acme&team=devs', alice);
      assert.deepEqual(
        r.body.map((i) => i.repository.full_name),
        ['acme/alpha'],
      );
      r = await search('?owner=acme', alice);
      assert.deepEqual(r.body.map((i) => i.repository.full_name).sort(), ['acme/alpha', 'acme/beta']);
    });
  });

  describe('locks, pins and due dates', () => {
    let issue: IssueJson;
    before(async () => {
      issue = await newIssue(carol, 'proj', { title: 'to lock' });
    });
    const path = () => `/repos/alice/proj/issues/${issue.number}`;

    it('locks and unlocks for writers only; comments on a locked issue come from writers', async () => {
      assert.equal((await s.api('PUT', `${path()}/lock`, tok(carol))).status, 403);
      assert.equal(
        (await s.api('PUT', `${path()}/lock`, { ...tok(bob), body: { lock_reason: 'Bored' } })).status,
        400,
      );
      assert.equal(
        (await s.api('PUT', `${path()}/lock`, { ...tok(bob), body: { lock_reason: 'Too heated' } })).status,
        204,
      );
      assert.equal((await s.api('PUT', `${path()}/lock`, tok(bob))).status, 208);
      assert.equal((await s.api<IssueJson>('GET', path())).body.is_locked, true);
      const denied = await post(carol, `${path()}/comments`, { body: 'let me in' });
      assert.equal(denied.status, 403);
      assert.equal((await post(carol, `${path()}/reactions`, { content: 'heart' })).status, 403);
      assert.equal((await post(bob, `${path()}/comments`, { body: 'writers may' })).status, 201);
      assert.equal((await s.api('DELETE', `${path()}/lock`, tok(carol))).status, 403);
      assert.equal((await s.api('DELETE', `${path()}/lock`, tok(bob))).status, 204);
      assert.equal((await s.api('DELETE', `${path()}/lock`, tok(bob))).status, 208);
      assert.equal((await post(carol, `${path()}/comments`, { body: 'now I can' })).status, 201);
      const tl = await s.api<TimelineJson[]>('GET', `${path()}/timeline`);
      const lock = tl.body.find((t) => t.type === 'lock');
      assert.equal(lock?.body, 'Too heated');
      assert.ok(tl.body.some((t) => t.type === 'unlock'));
    });

    it('pins at most three issues, in order, and moves and unpins them', async () => {
      const pins: IssueJson[] = [];
      for (let k = 0; k < 4; k++) pins.push(await newIssue(alice, 'other', { title: `pin ${k}` }));
      const pin = (i: IssueJson, u: U) => s.api('POST', `/repos/alice/other/issues/${i.number}/pin`, tok(u));
      assert.equal((await pin(pins[0]!, carol)).status, 403);
      for (const i of pins.slice(0, 3)) assert.equal((await pin(i, bob)).status, 204);
      assert.equal((await pin(pins[0]!, bob)).status, 204);
      const full = await pin(pins[3]!, bob);
      assert.equal(full.status, 400);
      const pinned = async () =>
        (await s.api<IssueJson[]>('GET', '/repos/alice/other/issues/pinned')).body.map((i) => [
          i.number,
          i.pin_order,
        ]);
      assert.deepEqual(await pinned(), [
        [pins[0]!.number, 1],
        [pins[1]!.number, 2],
        [pins[2]!.number, 3],
      ]);
      const move = (i: IssueJson, p: number | string, u = bob) =>
        s.api('PATCH', `/repos/alice/other/issues/${i.number}/pin/${p}`, tok(u));
      assert.equal((await move(pins[2]!, 1)).status, 204);
      assert.deepEqual(await pinned(), [
        [pins[2]!.number, 1],
        [pins[0]!.number, 2],
        [pins[1]!.number, 3],
      ]);
      assert.equal((await move(pins[2]!, 99)).status, 204);
      assert.deepEqual(
        (await pinned()).map(([n]) => n),
        [pins[0]!.number, pins[1]!.number, pins[2]!.number],
      );
      assert.equal((await move(pins[3]!, 1)).status, 404);
      assert.equal((await move(pins[0]!, 0)).status, 422);
      assert.equal((await move(pins[0]!, 1, carol)).status, 403);
      assert.equal(
        (await s.api('DELETE', `/repos/alice/other/issues/${pins[0]!.number}/pin`, tok(bob))).status,
        204,
      );
      assert.deepEqual(await pinned(), [
        [pins[1]!.number, 1],
        [pins[2]!.number, 2],
      ]);
    });

    it('sets and removes the due date for writers only', async () => {
      const d = `${path()}/deadline`;
      assert.equal((await post(carol, d, { due_date: '2030-01-01T00:00:00Z' })).status, 403);
      assert.equal((await post(bob, d, { due_date: 'soon' })).status, 422);
      assert.equal((await post(bob, d, {})).status, 422);
      const r = await post<{ due_date: string | null }>(bob, d, { due_date: '2030-03-04T05:06:07Z' });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body, { due_date: '2030-03-04T23:59:59Z' });
      assert.equal((await s.api<IssueJson>('GET', path())).body.due_date, '2030-03-04T23:59:59Z');
      const cleared = await post<{ due_date: string | null }>(bob, d, { due_date: null });
      assert.deepEqual(cleared.body, { due_date: null });
      const types = (await s.api<TimelineJson[]>('GET', `${path()}/timeline`)).body.map((t) => t.type);
      assert.ok(types.includes('added_deadline') && types.includes('removed_deadline'));
    });
  });

  describe('reactions and subscriptions', () => {
    let issue: IssueJson;
    let comment: CommentJson;
    before(async () => {
      issue = await newIssue(alice, 'proj', { title: 'react to me' });
      comment = (
        await post<CommentJson>(alice, `/repos/alice/proj/issues/${issue.number}/comments`, { body: 'c' })
      ).body;
    });

    it('adds, lists and removes reactions on issues and comments', async () => {
      for (const base of [
        `/repos/alice/proj/issues/${issue.number}`,
        `/repos/alice/proj/issues/comments/${comment.id}`,
      ]) {
        const url = `${base}/reactions`;
        const r = await post<ReactionJson>(dave, url, { content: 'heart' });
        assert.equal(r.status, 201, r.text);
        assert.deepEqual(keys(r.body), ['content', 'created_at', 'user']);
        assert.equal(r.body.user.login, 'dave');
        assert.equal((await post(dave, url, { content: 'heart' })).status, 200);
        assert.equal((await post(carol, url, { content: '+1' })).status, 201);
        assert.equal((await post(dave, url, { content: 'poop' })).status, 422);
        assert.equal((await s.api('POST', url, { body: { content: 'heart' } })).status, 401);
        const list = await s.api<ReactionJson[]>('GET', url);
        assert.equal(list.status, 200);
        assert.deepEqual(
          list.body.map((x) => [x.user.login, x.content]),
          [
            ['dave', 'heart'],
            ['carol', '+1'],
          ],
        );
        assert.equal(list.headers.get('x-total-count'), '2');
        assert.equal((await s.api('DELETE', url, { ...tok(dave), body: { content: 'heart' } })).status, 200);
        assert.equal((await s.api<ReactionJson[]>('GET', url)).body.length, 1);
      }
      assert.equal((await s.api('GET', '/repos/alice/proj/issues/comments/999999/reactions')).status, 404);
    });

    it('subscribes and unsubscribes users', async () => {
      const base = `/repos/alice/proj/issues/${issue.number}/subscriptions`;
      interface Watch {
        subscribed: boolean;
        ignored: boolean;
        url: string;
        repository_url: string;
      }
      // The poster takes part, so follows it; dave does not.
      let w = await s.api<Watch>('GET', `${base}/check`, tok(alice));
      assert.equal(w.status, 200);
      assert.equal(w.body.subscribed, true);
      assert.equal(w.body.url, `${s.url}/api/v1/repos/alice/proj/issues/${issue.number}/subscriptions`);
      assert.equal(w.body.repository_url, `${s.url}/api/v1/repos/alice/proj`);
      assert.equal((await s.api<Watch>('GET', `${base}/check`, tok(dave))).body.subscribed, false);
      assert.equal((await s.api('GET', `${base}/check`)).status, 401);
      assert.equal((await s.api('PUT', `${base}/dave`, tok(dave))).status, 201);
      assert.equal((await s.api('PUT', `${base}/dave`, tok(dave))).status, 200);
      assert.equal((await s.api('PUT', `${base}/carol`, tok(dave))).status, 403);
      assert.equal((await s.api('PUT', `${base}/no-such-user`, tok(dave))).status, 404);
      assert.equal((await s.api('PUT', `${base}/carol`, { token: s.admin.token })).status, 201);
      const list = await s.api<UserJson[]>('GET', base);
      // In the order they subscribed.
      assert.deepEqual(
        list.body.map((u) => u.login),
        ['dave', 'carol'],
      );
      assert.equal(list.headers.get('x-total-count'), '2');
      assert.equal((await s.api('DELETE', `${base}/alice`, tok(alice))).status, 201);
      w = await s.api<Watch>('GET', `${base}/check`, tok(alice));
      assert.equal(w.body.subscribed, false);
      assert.equal(w.body.ignored, true);
      const watchers = await s.ctx.issues.watchers((await s.ctx.issues.getById(issue.id))!);
      assert.deepEqual(
        watchers.sort((a, b) => a - b),
        [carol.id, dave.id].sort((a, b) => a - b),
      );
    });
  });

  describe('comments', () => {
    let issue: IssueJson;
    before(async () => {
      issue = await newIssue(alice, 'proj', { title: 'discuss' });
    });
    const base = () => `/repos/alice/proj/issues/${issue.number}/comments`;

    it('creates, lists, gets, edits and deletes comments', async () => {
      const c = await post<CommentJson>(carol, base(), { body: 'first! @dave' });
      assert.equal(c.status, 201, c.text);
      assert.deepEqual(keys(c.body), COMMENT_KEYS);
      assert.equal(c.body.user.login, 'carol');
      assert.equal(c.body.issue_url, `${s.url}/alice/proj/issues/${issue.number}`);
      assert.equal(c.body.html_url, `${s.url}/alice/proj/issues/${issue.number}#issuecomment-${c.body.id}`);
      assert.equal(c.body.pull_request_url, '');
      const created = events.filter((e) => e.name === 'comment.created').at(-1)?.payload as {
        commentId: number;
        mentionedIds: number[];
      };
      assert.equal(created.commentId, c.body.id);
      assert.deepEqual(created.mentionedIds, [dave.id]);
      const d = await post<CommentJson>(dave, base(), { body: 'second' });
      assert.equal(d.status, 201);
      assert.equal(
        (await s.api<IssueJson>('GET', `/repos/alice/proj/issues/${issue.number}`)).body.comments,
        2,
      );

      const list = await s.api<CommentJson[]>('GET', base());
      assert.deepEqual(
        list.body.map((x) => x.body),
        ['first! @dave', 'second'],
      );
      assert.equal(list.headers.get('x-total-count'), '2');
      const paged = await s.api<CommentJson[]>('GET', `${base()}?limit=1&page=2`);
      assert.deepEqual(
        paged.body.map((x) => x.body),
        ['second'],
      );
      assert.equal(
        (await s.api<CommentJson[]>('GET', `${base()}?since=2999-01-01T00:00:00Z`)).body.length,
        0,
      );

      const one = `/repos/alice/proj/issues/comments/${c.body.id}`;
      assert.deepEqual((await s.api<CommentJson>('GET', one, tok(carol))).body, c.body);
      // Only the poster and writers edit or delete.
      assert.equal((await s.api('PATCH', one, { ...tok(dave), body: { body: 'hijack' } })).status, 403);
      const e = await s.api<CommentJson>('PATCH', one, { ...tok(carol), body: { body: 'edited' } });
      assert.equal(e.status, 200, e.text);
      assert.equal(e.body.body, 'edited');
      const ev = events.filter((x) => x.name === 'comment.edited').at(-1)?.payload as { oldBody: string };
      assert.equal(ev.oldBody, 'first! @dave');
      assert.equal(
        (await s.api<CommentJson>('PATCH', one, { ...tok(bob), body: { body: 'by writer' } })).status,
        200,
      );
      assert.equal((await s.api('PATCH', one, { ...tok(carol), body: { body: '' } })).status, 422);
      assert.equal((await s.api('PATCH', one, { ...tok(carol), body: {} })).status, 422);
      // The deprecated path with the issue number works too.
      const old = `/repos/alice/proj/issues/${issue.number}/comments/${d.body.id}`;
      assert.equal(
        (await s.api('PATCH', old, { ...tok(dave), body: { body: 'second, edited' } })).status,
        200,
      );

      assert.equal((await s.api('DELETE', one, tok(dave))).status, 403);
      assert.equal((await s.api('DELETE', one, tok(carol))).status, 204);
      assert.equal((await s.api('GET', one)).status, 404);
      assert.equal((await s.api('DELETE', one, tok(carol))).status, 404);
      assert.equal(events.filter((x) => x.name === 'comment.deleted').length, 1);
      assert.equal(
        (await s.api<IssueJson>('GET', `/repos/alice/proj/issues/${issue.number}`)).body.comments,
        1,
      );
    });

    it('refuses bad comments and hides comments of other repositories', async () => {
      assert.equal((await post(carol, base(), { body: '' })).status, 422);
      assert.equal((await post(carol, base(), { body: '  ' })).status, 422);
      assert.equal((await post(carol, base(), {})).status, 422);
      assert.equal((await s.api('POST', base(), { body: { body: 'anon' } })).status, 401);
      const c = await post<CommentJson>(alice, base(), { body: 'stay here' });
      assert.equal((await s.api('GET', `/repos/alice/other/issues/comments/${c.body.id}`)).status, 404);
      assert.equal((await s.api('GET', '/repos/alice/proj/issues/comments/999999')).status, 404);
      // A timeline event is not a comment: 204, as in Forgejo.
      const tl = await s.api<TimelineJson[]>('GET', `/repos/alice/proj/issues/1/timeline`);
      const event = tl.body.find((t) => t.type !== 'comment');
      if (event)
        assert.equal((await s.api('GET', `/repos/alice/proj/issues/comments/${event.id}`)).status, 204);
    });

    it('lists the comments of a repository, oldest first, with since and before', async () => {
      const r = await s.api<CommentJson[]>('GET', '/repos/alice/proj/issues/comments?limit=100');
      assert.equal(r.status, 200);
      const total = Number(r.headers.get('x-total-count'));
      assert.equal(total, r.body.length);
      assert.ok(total >= 3);
      const ids = r.body.map((c) => c.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      );
      assert.ok(r.body.every((c) => c.issue_url.startsWith(`${s.url}/alice/proj/issues/`)));
      const none = await s.api<CommentJson[]>(
        'GET',
        '/repos/alice/proj/issues/comments?before=2000-01-01T00:00:00Z',
      );
      assert.deepEqual(none.body, []);
      assert.equal((await s.api('GET', '/repos/alice/proj/issues/comments?since=nope')).status, 422);
    });
  });

  describe('timeline, closing by commit and deletion', () => {
    it('records events in the timeline', async () => {
      const ms = await post<MilestoneJson>(alice, '/repos/alice/proj/milestones', { title: 'tl' });
      const lb = await post<LabelJson>(alice, '/repos/alice/proj/labels', {
        name: 'tl-label',
        color: 'abcdef',
      });
      const i = await newIssue(alice, 'proj', { title: 'old title' });
      const path = `/repos/alice/proj/issues/${i.number}`;
      await s.api('PATCH', path, {
        ...tok(alice),
        body: { title: 'new title', milestone: ms.body.id, assignees: ['bob'] },
      });
      await post(alice, `${path}/labels`, { labels: [lb.body.id] });
      await s.api('PATCH', path, { ...tok(alice), body: { state: 'closed' } });
      await s.api('PATCH', path, { ...tok(alice), body: { state: 'open', assignees: [] } });
      await post(alice, `${path}/comments`, { body: 'a comment' });
      const tl = await s.api<TimelineJson[]>('GET', `${path}/timeline`);
      assert.equal(tl.status, 200);
      for (const t of tl.body) assert.deepEqual(keys(t), TIMELINE_KEYS);
      const types = tl.body.map((t) => t.type);
      // One edit records its changes in Forgejo's order: title, milestone, assignees, then state.
      assert.deepEqual(types, [
        'change_title',
        'milestone',
        'assignees',
        'label',
        'close',
        'assignees',
        'reopen',
        'comment',
      ]);
      assert.equal(tl.body[0]!.old_title, 'old title');
      assert.equal(tl.body[0]!.new_title, 'new title');
      assert.equal(tl.body[1]!.milestone?.title, 'tl');
      assert.equal(tl.body[1]!.old_milestone, null);
      assert.equal(tl.body[2]!.assignee?.login, 'bob');
      assert.equal(tl.body[2]!.removed_assignee, false);
      assert.equal(tl.body[3]!.label?.name, 'tl-label');
      assert.equal(tl.body[3]!.body, '1');
      assert.equal(tl.body[5]!.removed_assignee, true);
      assert.equal(tl.body[5]!.assignee?.login, 'bob');
      assert.equal(tl.body[7]!.body, 'a comment');
      const page = await s.api<TimelineJson[]>('GET', `${path}/timeline?limit=3&page=2`);
      assert.deepEqual(
        page.body.map((t) => t.type),
        ['label', 'close', 'assignees'],
      );
      assert.equal(page.headers.get('x-total-count'), '8');
    });

    it('closes an issue from a commit, recording the commit and the closer', async () => {
      const i = await newIssue(carol, 'proj', { title: 'fixed by a commit' });
      const repo = (await s.ctx.repos.requireRepo('alice', 'proj', null)).repo;
      const sha = 'a'.repeat(40);
      const bobRow = (await s.ctx.users.getByName('bob'))!;
      const closed = await s.ctx.issues.closeByCommit(repo, i.number, bobRow, sha);
      assert.equal(closed.is_closed, 1);
      assert.equal(closed.closed_by_commit, sha);
      assert.equal(closed.closed_by_id, bob.id);
      assert.ok(closed.closed_unix > 0);
      const ev = events.filter((e) => e.name === 'issue.closed').at(-1)?.payload as {
        commitId: string;
        doerId: number;
      };
      assert.deepEqual([ev.commitId, ev.doerId], [sha, bob.id]);
      const tl = await s.api<TimelineJson[]>('GET', `/repos/alice/proj/issues/${i.number}/timeline`);
      assert.equal(tl.body.at(-1)?.type, 'close');
      assert.equal(tl.body.at(-1)?.ref_commit_sha, sha);
      // Already closed: nothing happens. A reader cannot close by commit.
      assert.equal(
        (await s.ctx.issues.closeByCommit(repo, i.number, bobRow, 'b'.repeat(40))).closed_by_commit,
        sha,
      );
      const carolRow = (await s.ctx.users.getByName('carol'))!;
      const other = await newIssue(carol, 'proj', { title: 'not by carol' });
      await assert.rejects(s.ctx.issues.closeByCommit(repo, other.number, carolRow, sha), {
        kind: 'forbidden',
      });
      await assert.rejects(s.ctx.issues.closeByCommit(repo, 99999, bobRow, sha), { kind: 'not_found' });
      // Reopening by hand clears the commit.
      const reopened = await s.api<IssueJson>('PATCH', `/repos/alice/proj/issues/${i.number}`, {
        ...tok(carol),
        body: { state: 'open' },
      });
      assert.equal(reopened.body.state, 'open');
      const row = await s.ctx.issues.getById(i.id);
      assert.equal(row?.closed_by_commit, '');
      assert.equal(row?.closed_by_id, null);
    });

    it('deletes an issue for repository administrators only', async () => {
      const i = await newIssue(carol, 'proj', { title: 'delete me' });
      const path = `/repos/alice/proj/issues/${i.number}`;
      assert.equal((await s.api('DELETE', path, tok(carol))).status, 403);
      assert.equal((await s.api('DELETE', path, tok(bob))).status, 403);
      assert.equal((await s.api('DELETE', path, tok(alice))).status, 204);
      assert.equal((await s.api('GET', path)).status, 404);
      // Numbers are never reused.
      const next = await newIssue(carol, 'proj', { title: 'after delete' });
      assert.equal(next.number, i.number + 1);
    });

    it('shows the Ghost user for a deleted poster', async () => {
      const ghost = await s.createUser('ghosty');
      const i = await newIssue(ghost, 'proj', { title: 'orphan' });
      await post(ghost, `/repos/alice/proj/issues/${i.number}/comments`, { body: 'boo' });
      assert.equal((await s.api('DELETE', '/admin/users/ghosty', { token: s.admin.token })).status, 204);
      const r = await s.api<IssueJson>('GET', `/repos/alice/proj/issues/${i.number}`);
      assert.equal(r.status, 200);
      assert.equal(r.body.user.id, -1);
      assert.equal(r.body.user.login, 'Ghost');
      const c = await s.api<CommentJson[]>('GET', `/repos/alice/proj/issues/${i.number}/comments`);
      assert.equal(c.body[0]!.user.login, 'Ghost');
    });
  });
});
