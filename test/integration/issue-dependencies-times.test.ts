// Issue dependencies, tracked times and stopwatches over HTTP: dependencies in one repository and
// across repositories, what an issue blocks, the timeline events on both issues, closing refused
// (412) while a dependency is open, tracked times added, listed (filters, rights), deleted and
// reset, stopwatches started, stopped and cancelled, and the caller's times and stopwatches.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface IssueJson {
  id: number;
  number: number;
  title: string;
  state: string;
  repository: { full_name: string };
}

interface TrackedTimeJson {
  id: number;
  created: string;
  time: number;
  user_id: number;
  user_name: string;
  issue_id: number;
  issue: IssueJson;
}

interface StopWatchJson {
  created: string;
  seconds: number;
  duration: string;
  issue_index: number;
  issue_title: string;
  repo_owner_name: string;
  repo_name: string;
}

interface TimelineJson {
  id: number;
  type: string;
  body: string;
  user: { login: string };
  dependent_issue: IssueJson | null;
  tracked_time: TrackedTimeJson | null;
}

const TRACKED_TIME_KEYS = ['created', 'id', 'issue', 'issue_id', 'time', 'user_id', 'user_name'];
const STOPWATCH_KEYS = [
  'created',
  'duration',
  'issue_index',
  'issue_title',
  'repo_name',
  'repo_owner_name',
  'seconds',
];

describe('issue dependencies, tracked times and stopwatches', () => {
  let s: TestServer;
  let alice: U; // owns alice/proj, alice/other (public) and alice/secret (private)
  let bob: U; // write collaborator on proj and other
  let carol: U; // read collaborator on proj
  let dave: U; // no relation
  let admin: U; // site administrator

  const call = <T = unknown>(u: U, method: string, path: string, body?: unknown) =>
    s.api<T>(method, path, { token: u.token, ...(body === undefined ? {} : { body }) });
  const newIssue = async (u: U, repo: string, title: string) => {
    const r = await call<IssueJson>(u, 'POST', `/repos/alice/${repo}/issues`, { title });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const timeline = async (repo: string, index: number) => {
    const r = await call<TimelineJson[]>(alice, 'GET', `/repos/alice/${repo}/issues/${index}/timeline`);
    assert.equal(r.status, 200, r.text);
    return r.body;
  };

  before(async () => {
    s = await startServer();
    [alice, bob, carol, dave] = (await Promise.all(
      ['alice', 'bob', 'carol', 'dave'].map((n) => s.createUser(n)),
    )) as [U, U, U, U];
    admin = await s.createUser('sitemin', { admin: true });
    for (const [name, priv] of [
      ['proj', false],
      ['other', false],
      ['secret', true],
    ] as const) {
      const r = await call(alice, 'POST', '/user/repos', { name, private: priv });
      assert.equal(r.status, 201, r.text);
    }
    for (const [repo, u, permission] of [
      ['proj', bob, 'write'],
      ['other', bob, 'write'],
      ['proj', carol, 'read'],
    ] as const) {
      const c = await call(alice, 'PUT', `/repos/alice/${repo}/collaborators/${u.name}`, { permission });
      assert.equal(c.status, 204, c.text);
    }
  });

  after(async () => {
    await s.close();
  });

  describe('dependencies', () => {
    it('adds, lists and removes a dependency in one repository, with events on both issues', async () => {
      const a = await newIssue(alice, 'proj', 'depends');
      const b = await newIssue(alice, 'proj', 'blocker');
      const meta = { owner: 'alice', repo: 'proj', index: b.number };
      const r = await call<IssueJson>(bob, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, meta);
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.number, a.number);
      // Adding it again changes nothing.
      const again = await call(bob, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, meta);
      assert.equal(again.status, 201, again.text);

      const deps = await call<IssueJson[]>(carol, 'GET', `/repos/alice/proj/issues/${a.number}/dependencies`);
      assert.equal(deps.status, 200, deps.text);
      assert.deepEqual(
        deps.body.map((i) => i.number),
        [b.number],
      );
      const blocks = await call<IssueJson[]>(carol, 'GET', `/repos/alice/proj/issues/${b.number}/blocks`);
      assert.deepEqual(
        blocks.body.map((i) => i.number),
        [a.number],
      );
      const noneBlocked = await call<IssueJson[]>(
        carol,
        'GET',
        `/repos/alice/proj/issues/${a.number}/blocks`,
      );
      assert.deepEqual(noneBlocked.body, []);

      const onA = (await timeline('proj', a.number)).filter((e) => e.type === 'add_dependency');
      const onB = (await timeline('proj', b.number)).filter((e) => e.type === 'add_dependency');
      assert.equal(onA.length, 1);
      assert.equal(onB.length, 1);
      assert.equal(onA[0]!.dependent_issue?.number, b.number);
      assert.equal(onB[0]!.dependent_issue?.number, a.number);
      assert.equal(onA[0]!.user.login, 'bob');

      const del = await call<IssueJson>(
        bob,
        'DELETE',
        `/repos/alice/proj/issues/${a.number}/dependencies`,
        meta,
      );
      assert.equal(del.status, 200, del.text);
      assert.equal(del.body.number, a.number);
      const after = await call<IssueJson[]>(
        carol,
        'GET',
        `/repos/alice/proj/issues/${a.number}/dependencies`,
      );
      assert.deepEqual(after.body, []);
      const removed = (await timeline('proj', b.number)).filter((e) => e.type === 'remove_dependency');
      assert.equal(removed.length, 1);
      assert.equal(removed[0]!.dependent_issue?.number, a.number);
      const gone = await call(bob, 'DELETE', `/repos/alice/proj/issues/${a.number}/dependencies`, meta);
      assert.equal(gone.status, 404, gone.text);
    });

    it('blocks an issue of another repository through /blocks, and lists it from both sides', async () => {
      const blocker = await newIssue(alice, 'proj', 'cross blocker');
      const blocked = await newIssue(alice, 'other', 'cross blocked');
      const r = await call<IssueJson>(bob, 'POST', `/repos/alice/proj/issues/${blocker.number}/blocks`, {
        owner: 'alice',
        repo: 'other',
        index: blocked.number,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.number, blocker.number);
      assert.equal(r.body.repository.full_name, 'alice/proj');
      const deps = await call<IssueJson[]>(
        bob,
        'GET',
        `/repos/alice/other/issues/${blocked.number}/dependencies`,
      );
      assert.deepEqual(
        deps.body.map((i) => [i.repository.full_name, i.number]),
        [['alice/proj', blocker.number]],
      );
      const blocks = await call<IssueJson[]>(bob, 'GET', `/repos/alice/proj/issues/${blocker.number}/blocks`);
      assert.deepEqual(
        blocks.body.map((i) => [i.repository.full_name, i.number]),
        [['alice/other', blocked.number]],
      );
    });

    it('refuses to close an issue with an open dependency (412), and allows it once that is closed', async () => {
      const a = await newIssue(alice, 'other', 'waits');
      const b = await newIssue(alice, 'proj', 'first');
      const add = await call(alice, 'POST', `/repos/alice/other/issues/${a.number}/dependencies`, {
        owner: 'alice',
        repo: 'proj',
        index: b.number,
      });
      assert.equal(add.status, 201, add.text);
      const refused = await call<{ message: string }>(
        alice,
        'PATCH',
        `/repos/alice/other/issues/${a.number}`,
        {
          state: 'closed',
        },
      );
      assert.equal(refused.status, 412, refused.text);
      assert.match(refused.body.message, /open dependencies/);
      const still = await call<IssueJson>(alice, 'GET', `/repos/alice/other/issues/${a.number}`);
      assert.equal(still.body.state, 'open');

      const closeB = await call(alice, 'PATCH', `/repos/alice/proj/issues/${b.number}`, { state: 'closed' });
      assert.equal(closeB.status, 201, closeB.text);
      const closed = await call<IssueJson>(alice, 'PATCH', `/repos/alice/other/issues/${a.number}`, {
        state: 'closed',
      });
      assert.equal(closed.status, 201, closed.text);
      assert.equal(closed.body.state, 'closed');
    });

    it('answers 403 to a reader, 404 for a hidden repository, 422 for itself or a circle', async () => {
      const a = await newIssue(alice, 'proj', 'rights');
      const b = await newIssue(alice, 'proj', 'rights dep');
      const meta = { owner: 'alice', repo: 'proj', index: b.number };
      const reader = await call(carol, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, meta);
      assert.equal(reader.status, 403, reader.text);
      const outsider = await call(dave, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, meta);
      assert.equal(outsider.status, 403, outsider.text);

      // The private repository: 404 from the URL and from the body alike.
      const hidden = await newIssue(alice, 'secret', 'hidden');
      const inUrl = await call(bob, 'GET', `/repos/alice/secret/issues/${hidden.number}/dependencies`);
      assert.equal(inUrl.status, 404, inUrl.text);
      const inBody = await call(bob, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, {
        owner: 'alice',
        repo: 'secret',
        index: hidden.number,
      });
      assert.equal(inBody.status, 404, inBody.text);
      const noIssue = await call(bob, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, {
        ...meta,
        index: 9999,
      });
      assert.equal(noIssue.status, 404, noIssue.text);

      const self = await call<{ message: string }>(
        bob,
        'POST',
        `/repos/alice/proj/issues/${a.number}/dependencies`,
        {
          ...meta,
          index: a.number,
        },
      );
      assert.equal(self.status, 422, self.text);
      assert.match(self.body.message, /^\[Index\]/);

      const ok = await call(bob, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, meta);
      assert.equal(ok.status, 201, ok.text);
      const circle = await call(bob, 'POST', `/repos/alice/proj/issues/${b.number}/dependencies`, {
        ...meta,
        index: a.number,
      });
      assert.equal(circle.status, 422, circle.text);

      // A dependency on an issue of a private repository is left out for those who cannot read it.
      const adminDep = await call(alice, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, {
        owner: 'alice',
        repo: 'secret',
        index: hidden.number,
      });
      assert.equal(adminDep.status, 201, adminDep.text);
      const seen = await call<IssueJson[]>(carol, 'GET', `/repos/alice/proj/issues/${a.number}/dependencies`);
      assert.deepEqual(
        seen.body.map((i) => i.number),
        [b.number],
      );
      const all = await call<IssueJson[]>(alice, 'GET', `/repos/alice/proj/issues/${a.number}/dependencies`);
      assert.equal(all.body.length, 2);
    });
    it('makes no circle when both directions are asked at once', async () => {
      const a = await newIssue(alice, 'proj', 'race a');
      const b = await newIssue(alice, 'proj', 'race b');
      const [ab, ba] = await Promise.all([
        call(bob, 'POST', `/repos/alice/proj/issues/${a.number}/dependencies`, {
          owner: 'alice',
          repo: 'proj',
          index: b.number,
        }),
        call(bob, 'POST', `/repos/alice/proj/issues/${b.number}/dependencies`, {
          owner: 'alice',
          repo: 'proj',
          index: a.number,
        }),
      ]);
      assert.deepEqual([ab.status, ba.status].sort(), [201, 422], `${ab.text} ${ba.text}`);
    });
  });

  describe('tracked times', () => {
    let issue: IssueJson; // in alice/proj, posted by carol (a reader)

    before(async () => {
      issue = await newIssue(carol, 'proj', 'time sink');
    });

    it('adds time as Forgejo shows it, with an add_time_manual event', async () => {
      const r = await call<TrackedTimeJson>(bob, 'POST', `/repos/alice/proj/issues/${issue.number}/times`, {
        time: 3600,
        created: '2026-01-02T03:04:05Z',
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), TRACKED_TIME_KEYS);
      assert.equal(r.body.time, 3600);
      assert.equal(r.body.user_name, 'bob');
      assert.equal(r.body.user_id, bob.id);
      assert.equal(r.body.issue_id, issue.id);
      assert.equal(r.body.issue.number, issue.number);
      assert.equal(r.body.created, '2026-01-02T03:04:05Z');
      const ev = (await timeline('proj', issue.number)).filter((e) => e.type === 'add_time_manual');
      assert.deepEqual(
        ev.map((e) => [e.user.login, e.body]),
        [['bob', '|3600']],
      );
      assert.equal(ev[0]!.tracked_time?.id, r.body.id);
      assert.equal(ev[0]!.tracked_time?.time, 3600);
      assert.equal(ev[0]!.tracked_time?.issue.number, issue.number);
    });

    it('lets the poster track time, not other readers; 422 for a bad time', async () => {
      const poster = await call<TrackedTimeJson>(
        carol,
        'POST',
        `/repos/alice/proj/issues/${issue.number}/times`,
        {
          time: 60,
        },
      );
      assert.equal(poster.status, 200, poster.text);
      const other = await newIssue(alice, 'proj', 'not carols');
      const refused = await call(carol, 'POST', `/repos/alice/proj/issues/${other.number}/times`, {
        time: 60,
      });
      assert.equal(refused.status, 403, refused.text);
      for (const time of [0, -5]) {
        const bad = await call<{ message: string }>(
          bob,
          'POST',
          `/repos/alice/proj/issues/${issue.number}/times`,
          {
            time,
          },
        );
        assert.equal(bad.status, 422, bad.text);
        assert.match(bad.body.message, /^\[Time\]/);
      }
      const noTime = await call(bob, 'POST', `/repos/alice/proj/issues/${issue.number}/times`, {});
      assert.equal(noTime.status, 422, noTime.text);
      const badCreated = await call(bob, 'POST', `/repos/alice/proj/issues/${issue.number}/times`, {
        time: 5,
        created: 'yesterday',
      });
      assert.equal(badCreated.status, 422, badCreated.text);
    });

    it('lists times: everyone’s for writers (user filter, since/before), one’s own for others', async () => {
      const forAlice = await call<TrackedTimeJson>(
        alice,
        'POST',
        `/repos/alice/proj/issues/${issue.number}/times`,
        {
          time: 120,
          created: '2026-03-01T00:00:00Z',
          user_name: 'bob',
        },
      );
      assert.equal(forAlice.status, 200, forAlice.text);
      assert.equal(forAlice.body.user_name, 'bob', 'the repository owner adds time for bob');

      const all = await call<TrackedTimeJson[]>(bob, 'GET', `/repos/alice/proj/issues/${issue.number}/times`);
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(
        all.body.map((t) => [t.user_name, t.time]),
        [
          ['bob', 3600],
          ['bob', 120],
          ['carol', 60],
        ],
      );
      assert.equal(all.headers.get('x-total-count'), '3');
      const bobs = await call<TrackedTimeJson[]>(
        alice,
        'GET',
        `/repos/alice/proj/issues/${issue.number}/times?user=bob`,
      );
      assert.deepEqual(
        bobs.body.map((t) => t.time),
        [3600, 120],
      );
      const since = await call<TrackedTimeJson[]>(
        alice,
        'GET',
        `/repos/alice/proj/issues/${issue.number}/times?since=2026-02-01T00:00:00Z&before=2026-04-01T00:00:00Z`,
      );
      assert.deepEqual(
        since.body.map((t) => t.time),
        [120],
      );
      const badSince = await call(alice, 'GET', `/repos/alice/proj/issues/${issue.number}/times?since=nope`);
      assert.equal(badSince.status, 422, badSince.text);
      const unknown = await call(alice, 'GET', `/repos/alice/proj/issues/${issue.number}/times?user=nobody`);
      assert.equal(unknown.status, 404, unknown.text);

      // carol (a reader) sees her own times only, and may not ask for bob's.
      const own = await call<TrackedTimeJson[]>(
        carol,
        'GET',
        `/repos/alice/proj/issues/${issue.number}/times`,
      );
      assert.deepEqual(
        own.body.map((t) => t.user_name),
        ['carol'],
      );
      const others = await call(carol, 'GET', `/repos/alice/proj/issues/${issue.number}/times?user=bob`);
      assert.equal(others.status, 403, others.text);

      const repo = await call<TrackedTimeJson[]>(bob, 'GET', '/repos/alice/proj/times?user=carol');
      assert.equal(repo.status, 200, repo.text);
      assert.deepEqual(
        repo.body.map((t) => [t.issue.number, t.time]),
        [[issue.number, 60]],
      );
      const paged = await call<TrackedTimeJson[]>(bob, 'GET', '/repos/alice/proj/times?limit=1&page=2');
      assert.equal(paged.body.length, 1);
      assert.equal(paged.headers.get('x-total-count'), '3');
      const repoOwn = await call<TrackedTimeJson[]>(carol, 'GET', '/repos/alice/proj/times');
      assert.deepEqual(
        repoOwn.body.map((t) => t.user_name),
        ['carol'],
      );

      const byUser = await call<TrackedTimeJson[]>(alice, 'GET', '/repos/alice/proj/times/bob');
      assert.equal(byUser.status, 200, byUser.text);
      assert.deepEqual(
        byUser.body.map((t) => t.time),
        [3600, 120],
      );
      const notAdmin = await call(carol, 'GET', '/repos/alice/proj/times/bob');
      assert.equal(notAdmin.status, 403, notAdmin.text);
      const self = await call(carol, 'GET', '/repos/alice/proj/times/carol');
      assert.equal(self.status, 200, self.text);
      const hidden = await call(dave, 'GET', '/repos/alice/secret/times');
      assert.equal(hidden.status, 404, hidden.text);
      const anonymous = await s.api('GET', '/repos/alice/proj/times');
      assert.equal(anonymous.status, 401, anonymous.text);

      const mine = await call<TrackedTimeJson[]>(bob, 'GET', '/user/times');
      assert.equal(mine.status, 200, mine.text);
      assert.deepEqual(
        mine.body.map((t) => t.time),
        [3600, 120],
      );
      const mineSince = await call<TrackedTimeJson[]>(bob, 'GET', '/user/times?since=2026-02-01T00:00:00Z');
      assert.deepEqual(
        mineSince.body.map((t) => t.time),
        [120],
      );
    });

    it('deletes one time (its user or a site administrator) and resets the caller’s times', async () => {
      const list = await call<TrackedTimeJson[]>(
        bob,
        'GET',
        `/repos/alice/proj/issues/${issue.number}/times?user=bob`,
      );
      const [first, second] = list.body;
      const notYours = await call(
        alice,
        'DELETE',
        `/repos/alice/proj/issues/${issue.number}/times/${first!.id}`,
      );
      assert.equal(notYours.status, 403, notYours.text);
      const del = await call(bob, 'DELETE', `/repos/alice/proj/issues/${issue.number}/times/${first!.id}`);
      assert.equal(del.status, 204, del.text);
      const twice = await call(bob, 'DELETE', `/repos/alice/proj/issues/${issue.number}/times/${first!.id}`);
      assert.equal(twice.status, 404, twice.text);
      const byAdmin = await call(
        admin,
        'DELETE',
        `/repos/alice/proj/issues/${issue.number}/times/${second!.id}`,
      );
      assert.equal(byAdmin.status, 204, byAdmin.text);
      const left = await call<TrackedTimeJson[]>(
        bob,
        'GET',
        `/repos/alice/proj/issues/${issue.number}/times`,
      );
      assert.deepEqual(
        left.body.map((t) => t.user_name),
        ['carol'],
      );
      const deleted = (await timeline('proj', issue.number)).filter((e) => e.type === 'delete_time_manual');
      assert.deepEqual(
        deleted.map((e) => [e.user.login, e.body]),
        [
          ['bob', '|3600'],
          ['bob', '|120'],
        ],
      );

      const reset = await call(carol, 'DELETE', `/repos/alice/proj/issues/${issue.number}/times`);
      assert.equal(reset.status, 204, reset.text);
      const none = await call(carol, 'DELETE', `/repos/alice/proj/issues/${issue.number}/times`);
      assert.equal(none.status, 404, none.text);
      const empty = await call<TrackedTimeJson[]>(
        bob,
        'GET',
        `/repos/alice/proj/issues/${issue.number}/times`,
      );
      assert.deepEqual(empty.body, []);
    });
  });

  describe('stopwatches', () => {
    it('starts, lists, stops (adding a time) and cancels, with 409s and the timeline events', async () => {
      const a = await newIssue(alice, 'proj', 'clocked');
      const b = await newIssue(alice, 'other', 'clocked too');
      const base = `/repos/alice/proj/issues/${a.number}/stopwatch`;

      const stopNone = await call(bob, 'POST', `${base}/stop`);
      assert.equal(stopNone.status, 409, stopNone.text);
      const cancelNone = await call(bob, 'DELETE', `${base}/delete`);
      assert.equal(cancelNone.status, 409, cancelNone.text);

      const start = await call(bob, 'POST', `${base}/start`);
      assert.equal(start.status, 201, start.text);
      const again = await call(bob, 'POST', `${base}/start`);
      assert.equal(again.status, 409, again.text);

      const list = await call<StopWatchJson[]>(bob, 'GET', '/user/stopwatches');
      assert.equal(list.status, 200, list.text);
      assert.equal(list.body.length, 1);
      assert.deepEqual(Object.keys(list.body[0]!).sort(), STOPWATCH_KEYS);
      assert.equal(list.body[0]!.issue_index, a.number);
      assert.equal(list.body[0]!.issue_title, 'clocked');
      assert.equal(list.body[0]!.repo_owner_name, 'alice');
      assert.equal(list.body[0]!.repo_name, 'proj');
      assert.equal(typeof list.body[0]!.seconds, 'number');
      const others = await call<StopWatchJson[]>(alice, 'GET', '/user/stopwatches');
      assert.deepEqual(others.body, []);

      // Starting on another issue stops the running one (which becomes a tracked time).
      const other = await call(bob, 'POST', `/repos/alice/other/issues/${b.number}/stopwatch/start`);
      assert.equal(other.status, 201, other.text);
      const now = await call<StopWatchJson[]>(bob, 'GET', '/user/stopwatches');
      assert.deepEqual(
        now.body.map((w) => [w.repo_name, w.issue_index]),
        [['other', b.number]],
      );
      const tracked = await call<TrackedTimeJson[]>(bob, 'GET', `/repos/alice/proj/issues/${a.number}/times`);
      assert.equal(tracked.body.length, 1);

      const stop = await call(bob, 'POST', `/repos/alice/other/issues/${b.number}/stopwatch/stop`);
      assert.equal(stop.status, 201, stop.text);
      const afterStop = await call<TrackedTimeJson[]>(
        bob,
        'GET',
        `/repos/alice/other/issues/${b.number}/times`,
      );
      assert.equal(afterStop.body.length, 1);
      assert.equal(afterStop.body[0]!.user_name, 'bob');

      const restart = await call(bob, 'POST', `${base}/start`);
      assert.equal(restart.status, 201, restart.text);
      const cancel = await call(bob, 'DELETE', `${base}/delete`);
      assert.equal(cancel.status, 204, cancel.text);
      const empty = await call<StopWatchJson[]>(bob, 'GET', '/user/stopwatches');
      assert.deepEqual(empty.body, []);
      const stillOne = await call<TrackedTimeJson[]>(
        bob,
        'GET',
        `/repos/alice/proj/issues/${a.number}/times`,
      );
      assert.equal(stillOne.body.length, 1, 'a cancelled stopwatch tracks no time');

      const events = (await timeline('proj', a.number))
        .map((e) => e.type)
        .filter((t) => t.includes('tracking'));
      assert.deepEqual(events, ['start_tracking', 'stop_tracking', 'start_tracking', 'cancel_tracking']);
      const stopEvent = (await timeline('other', b.number)).find((e) => e.type === 'stop_tracking');
      assert.match(stopEvent!.body, /^\|\d+$/);
      assert.equal(stopEvent!.tracked_time?.user_name, 'bob');

      // The web page shows the events too.
      const page = await fetch(`${s.url}/alice/proj/issues/${a.number}`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /started working/);
      assert.match(html, /stopped working, spent/);
      assert.match(html, /cancelled time tracking/);
    });

    it('stops the closer’s stopwatch when the issue is closed', async () => {
      const i = await newIssue(alice, 'proj', 'closing clock');
      const start = await call(bob, 'POST', `/repos/alice/proj/issues/${i.number}/stopwatch/start`);
      assert.equal(start.status, 201, start.text);
      const close = await call(bob, 'PATCH', `/repos/alice/proj/issues/${i.number}`, { state: 'closed' });
      assert.equal(close.status, 201, close.text);
      const running = await call<StopWatchJson[]>(bob, 'GET', '/user/stopwatches');
      assert.deepEqual(running.body, []);
      const times = await call<TrackedTimeJson[]>(bob, 'GET', `/repos/alice/proj/issues/${i.number}/times`);
      assert.equal(times.body.length, 1);
      const types = (await timeline('proj', i.number)).map((e) => e.type);
      assert.deepEqual(types, ['start_tracking', 'stop_tracking', 'close']);
    });

    it('is for writers: 403 for a reader (even the poster), 404 for a hidden repository', async () => {
      const mine = await newIssue(carol, 'proj', 'carol clocks');
      const reader = await call(carol, 'POST', `/repos/alice/proj/issues/${mine.number}/stopwatch/start`);
      assert.equal(reader.status, 403, reader.text);
      const hidden = await newIssue(alice, 'secret', 'secret clock');
      const outsider = await call(
        dave,
        'POST',
        `/repos/alice/secret/issues/${hidden.number}/stopwatch/start`,
      );
      assert.equal(outsider.status, 404, outsider.text);
      const anonymous = await s.api('GET', '/user/stopwatches');
      assert.equal(anonymous.status, 401, anonymous.text);
    });
  });
});
