// Notifications over HTTP: threads for repository watchers and issue participants when someone
// else opens an issue or comments, none for the actor or for users who cannot read the
// repository, marking read and pinned, the unread count, repository watches, and the token rules
// (every notifications endpoint needs an access token with the notification scope).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServer, type TestServer } from '../helpers/server.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Thread {
  id: number;
  unread: boolean;
  pinned: boolean;
  updated_at: string;
  url: string;
  repository: { id: number; full_name: string };
  subject: {
    title: string;
    url: string;
    html_url: string;
    latest_comment_url: string;
    latest_comment_html_url: string;
    type: string;
    state: string;
  };
}

const THREAD_KEYS = ['id', 'pinned', 'repository', 'subject', 'unread', 'updated_at', 'url'];
const SUBJECT_KEYS = [
  'html_url',
  'latest_comment_html_url',
  'latest_comment_url',
  'state',
  'title',
  'type',
  'url',
];

describe('notifications', () => {
  let s: TestServer;
  let alice: U; // owns alice/proj (public) and alice/secret (private)
  let bob: U; // write collaborator on both; watches both
  let carol: U; // watches alice/proj; no access to alice/secret
  let dave: U; // token without the notification scope
  let erin: U; // watched alice/gone while it was public; it turned private

  const tok = (u: U) => ({ token: u.token });
  const threads = async (u: U, query = '') => {
    const r = await s.api<Thread[]>('GET', `/notifications${query}`, tok(u));
    assert.equal(r.status, 200, r.text);
    return r;
  };
  const newIssue = async (u: U, repo: string, title: string, body = '') => {
    const r = await s.api<{ number: number; id: number }>('POST', `/repos/alice/${repo}/issues`, {
      ...tok(u),
      body: { title, body },
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  /** fetch drops the body of a 205 (a null-body status); Forgejo sends one, so read it raw. */
  const send205 = <T>(method: string, path: string, u: U) =>
    new Promise<{ status: number; body: T }>((resolve, reject) => {
      const req = http.request(
        `${s.url}/api/v1${path}`,
        { method, headers: { authorization: `token ${u.token}` } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || 'null') as T }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  const watch = async (u: U, repo: string) => {
    const r = await s.api<{ subscribed: boolean }>('PUT', `/repos/alice/${repo}/subscription`, tok(u));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.subscribed, true);
  };

  before(async () => {
    s = await startServer({
      // These tests watch repositories explicitly; the creator's automatic watch is tested in social.test.ts.
      ANVIL__SERVICE__AUTO_WATCH_NEW_REPOS: 'false',
    });
    [alice, bob, carol, erin] = (await Promise.all(
      ['alice', 'bob', 'carol', 'erin'].map((n) => s.createUser(n)),
    )) as [U, U, U, U];
    dave = await s.createUser('dave', { scopes: ['read:repository', 'write:issue'] });
    for (const [name, priv] of [
      ['proj', false],
      ['secret', true],
      ['gone', false],
    ] as const) {
      const r = await s.api('POST', '/user/repos', { ...tok(alice), body: { name, private: priv } });
      assert.equal(r.status, 201, r.text);
      const c = await s.api('PUT', `/repos/alice/${name}/collaborators/bob`, {
        ...tok(alice),
        body: { permission: 'write' },
      });
      assert.equal(c.status, 204, c.text);
    }
    await watch(bob, 'proj');
    await watch(bob, 'secret');
    await watch(carol, 'proj');
    await watch(erin, 'gone');
    const p = await s.api('PATCH', '/repos/alice/gone', { ...tok(alice), body: { private: true } });
    assert.equal(p.status, 200, p.text);
  });

  after(async () => {
    await s.close();
  });

  describe('repository watches', () => {
    it('reports, counts and removes a watch', async () => {
      const r = await s.api<{ subscribed: boolean; ignored: boolean; url: string }>(
        'GET',
        '/repos/alice/proj/subscription',
        tok(bob),
      );
      assert.equal(r.status, 200, r.text);
      assert.deepEqual([r.body.subscribed, r.body.ignored], [true, false]);
      assert.match(r.body.url, /\/api\/v1\/repos\/alice\/proj\/subscription$/);
      const repo = await s.api<{ watchers_count: number }>('GET', '/repos/alice/proj', tok(alice));
      assert.equal(repo.body.watchers_count, 2);
      assert.equal((await s.api('GET', '/repos/alice/proj/subscription', tok(alice))).status, 404);
      assert.equal((await s.api('PUT', '/repos/alice/proj/subscription', tok(alice))).status, 200);
      assert.equal((await s.api('DELETE', '/repos/alice/proj/subscription', tok(alice))).status, 204);
      assert.equal((await s.api('GET', '/repos/alice/proj/subscription', tok(alice))).status, 404);
      // A private repository the caller cannot read: 404, nothing revealed.
      assert.equal((await s.api('PUT', '/repos/alice/secret/subscription', tok(carol))).status, 404);
      assert.equal((await s.api('PUT', '/repos/alice/proj/subscription')).status, 401);
    });
  });

  describe('threads', () => {
    let issue: { number: number; id: number };

    it('notifies watchers when someone else opens an issue, never the actor', async () => {
      issue = await newIssue(alice, 'proj', 'Watched issue');
      const b = await threads(bob);
      assert.equal(b.headers.get('x-total-count'), '1');
      const [t] = b.body;
      assert.ok(t);
      assert.deepEqual(Object.keys(t).sort(), THREAD_KEYS);
      assert.deepEqual(Object.keys(t.subject).sort(), SUBJECT_KEYS);
      assert.equal(t.unread, true);
      assert.equal(t.pinned, false);
      assert.equal(t.repository.full_name, 'alice/proj');
      assert.equal(t.subject.type, 'Issue');
      assert.equal(t.subject.state, 'open');
      assert.equal(t.subject.title, 'Watched issue');
      assert.match(t.subject.url, new RegExp(`/api/v1/repos/alice/proj/issues/${issue.number}$`));
      assert.match(t.url, new RegExp(`/api/v1/notifications/threads/${t.id}$`));
      assert.equal((await threads(carol)).body.length, 1);
      // alice opened it: nothing for her.
      assert.equal((await threads(alice)).body.length, 0);
    });

    it('notifies the poster and watchers when someone comments, one thread per issue', async () => {
      const c = await s.api<{ id: number }>('POST', `/repos/alice/proj/issues/${issue.number}/comments`, {
        ...tok(bob),
        body: { body: 'a comment' },
      });
      assert.equal(c.status, 201, c.text);
      const a = await threads(alice);
      assert.equal(a.body.length, 1);
      assert.equal(a.body[0]!.subject.latest_comment_url.endsWith(`/issues/comments/${c.body.id}`), true);
      assert.match(a.body[0]!.subject.latest_comment_html_url, new RegExp(`#issuecomment-${c.body.id}$`));
      // bob commented: his thread from the opening is not duplicated.
      assert.equal((await threads(bob)).body.length, 1);
      const carolThreads = await threads(carol);
      assert.equal(carolThreads.body.length, 1);
      assert.equal(carolThreads.body[0]!.subject.latest_comment_url.endsWith(`/${c.body.id}`), true);
    });

    it('gives nothing to users who cannot read the repository', async () => {
      await newIssue(alice, 'secret', 'Secret issue', 'hello @carol');
      assert.equal((await threads(carol)).body.length, 1, 'only the public issue');
      assert.equal((await threads(bob, '?subject-type=issue')).body.length, 2);
      // erin watched alice/gone while it was public.
      await newIssue(bob, 'gone', 'Now private');
      assert.equal((await threads(erin, '?all=true')).body.length, 0);
      assert.equal((await s.api<{ new: number }>('GET', '/notifications/new', tok(erin))).body.new, 0);
    });

    it('counts unread threads', async () => {
      const r = await s.api<{ new: number }>('GET', '/notifications/new', tok(bob));
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { new: 2 });
    });

    it('marks one thread read, pinned and unread; 404 for someone else’s', async () => {
      const [t] = (await threads(carol)).body;
      assert.ok(t);
      const one = await s.api<Thread>('GET', `/notifications/threads/${t.id}`, tok(carol));
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.id, t.id);
      assert.equal((await s.api('GET', `/notifications/threads/${t.id}`, tok(bob))).status, 404);
      assert.equal((await s.api('PATCH', `/notifications/threads/${t.id}`, tok(bob))).status, 404);
      assert.equal((await s.api('GET', '/notifications/threads/999999', tok(carol))).status, 404);
      assert.equal((await s.api('GET', '/notifications/threads/abc', tok(carol))).status, 422);

      const read = await send205<Thread>('PATCH', `/notifications/threads/${t.id}`, carol);
      assert.equal(read.status, 205);
      assert.equal(read.body.unread, false);
      assert.equal((await threads(carol)).body.length, 0, 'read threads leave the default list');
      assert.equal((await threads(carol, '?all=true')).body.length, 1);
      assert.equal((await threads(carol, '?status-types=read')).body.length, 1);
      assert.equal((await s.api<{ new: number }>('GET', '/notifications/new', tok(carol))).body.new, 0);

      const pinned = await send205<Thread>('PATCH', `/notifications/threads/${t.id}?to-status=pinned`, carol);
      assert.equal(pinned.status, 205);
      assert.deepEqual([pinned.body.pinned, pinned.body.unread], [true, false]);
      assert.equal((await threads(carol)).body.length, 1, 'pinned threads are listed by default');
      const bad = await s.api('PATCH', `/notifications/threads/${t.id}?to-status=bogus`, tok(carol));
      assert.ok(bad.status >= 400 && bad.status < 500, bad.text);

      // A new comment keeps a pinned thread pinned.
      await s.api('POST', `/repos/alice/proj/issues/${issue.number}/comments`, {
        ...tok(alice),
        body: { body: 'again' },
      });
      const after = await s.api<Thread>('GET', `/notifications/threads/${t.id}`, tok(carol));
      assert.equal(after.body.pinned, true);
      const unread = await send205<Thread>('PATCH', `/notifications/threads/${t.id}?to-status=unread`, carol);
      assert.equal(unread.body.unread, true);
    });

    it('a read thread becomes unread again on a new event', async () => {
      const [t] = (await threads(alice)).body;
      assert.ok(t);
      await s.api('PATCH', `/notifications/threads/${t.id}`, tok(alice));
      assert.equal((await threads(alice)).body.length, 0);
      await s.api('POST', `/repos/alice/proj/issues/${issue.number}/comments`, {
        ...tok(bob),
        body: { body: 'ping' },
      });
      const again = await threads(alice);
      assert.equal(again.body.length, 1);
      assert.equal(again.body[0]!.unread, true);
      // Closing notifies too; the thread shows the state.
      const closed = await s.api('PATCH', `/repos/alice/proj/issues/${issue.number}`, {
        ...tok(bob),
        body: { state: 'closed' },
      });
      assert.equal(closed.status, 201, closed.text);
      assert.equal((await threads(alice)).body[0]!.subject.state, 'closed');
    });

    it('marks all threads read, and per repository', async () => {
      const before = await threads(bob);
      assert.equal(before.body.length, 2);
      const repoList = await s.api<Thread[]>('GET', '/repos/alice/secret/notifications', tok(bob));
      assert.equal(repoList.status, 200, repoList.text);
      assert.equal(repoList.body.length, 1);
      assert.equal(repoList.body[0]!.repository.full_name, 'alice/secret');

      const r = await send205<Thread[]>('PUT', '/repos/alice/secret/notifications', bob);
      assert.equal(r.status, 205);
      assert.equal(r.body.length, 1);
      assert.equal(r.body[0]!.unread, false);
      assert.equal((await threads(bob)).body.length, 1);

      const all = await send205<Thread[]>('PUT', '/notifications', bob);
      assert.equal(all.status, 205);
      assert.equal(all.body.length, 1);
      assert.deepEqual((await s.api('GET', '/notifications/new', tok(bob))).body, { new: 0 });
      assert.equal((await threads(bob)).body.length, 0);

      // last_read_at in the past marks nothing newer.
      const back = await send205<Thread[]>(
        'PUT',
        '/notifications?to-status=unread&status-types=read&last_read_at=2000-01-01T00:00:00Z',
        bob,
      );
      assert.equal(back.status, 205);
      assert.equal(back.body.length, 0);
      const bad = await s.api('PUT', '/notifications?last_read_at=yesterday', tok(bob));
      assert.ok(bad.status >= 400 && bad.status < 500, bad.text);
      const bad2 = await s.api('GET', '/notifications?since=nope', tok(bob));
      assert.ok(bad2.status >= 400 && bad2.status < 500, bad2.text);
      // Outsiders get 404 on a private repository's notifications.
      assert.equal((await s.api('GET', '/repos/alice/secret/notifications', tok(carol))).status, 404);
    });

    it('pages with X-Total-Count and filters by time', async () => {
      const r = await threads(bob, '?all=true&limit=1');
      assert.equal(r.body.length, 1);
      assert.equal(r.headers.get('x-total-count'), '2');
      assert.equal((await threads(bob, '?all=true&before=2000-01-01T00:00:00Z')).body.length, 0);
      assert.equal((await threads(bob, '?all=true&since=2000-01-01T00:00:00Z')).body.length, 2);
      assert.equal((await threads(bob, '?all=true&subject-type=pull')).body.length, 0);
    });
  });

  describe('tokens', () => {
    const endpoints: Array<[string, string]> = [
      ['GET', '/notifications'],
      ['PUT', '/notifications'],
      ['GET', '/notifications/new'],
      ['GET', '/notifications/threads/1'],
      ['PATCH', '/notifications/threads/1'],
      ['GET', '/repos/alice/proj/notifications'],
      ['PUT', '/repos/alice/proj/notifications'],
    ];

    it('answers 401 "token is required" without credentials', async () => {
      for (const [method, path] of endpoints) {
        const r = await s.api(method, path);
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.equal((r.body as { message: string }).message, 'token is required', `${method} ${path}`);
      }
    });

    it('answers 401 "token is required" to basic authentication alone', async () => {
      for (const [method, path] of endpoints) {
        const r = await s.api(method, path, { basic: [bob.name, bob.password] });
        assert.equal(r.status, 401, `${method} ${path}`);
        assert.equal((r.body as { message: string }).message, 'token is required', `${method} ${path}`);
      }
    });

    it('answers 403 to a token without the notification scope', async () => {
      for (const [method, path] of endpoints) {
        const r = await s.api<{ message: string }>(method, path, tok(dave));
        assert.equal(r.status, 403, `${method} ${path}`);
        assert.match(r.body.message, /notification/);
      }
    });

    it('accepts a token with only the notification scope', async () => {
      const only = await s.api<{ sha1: string }>('POST', `/users/${bob.name}/tokens`, {
        basic: [bob.name, bob.password],
        body: { name: 'notif-only', scopes: ['read:notification'] },
      });
      assert.equal(only.status, 201, only.text);
      const r = await s.api('GET', '/notifications/new', { token: only.body.sha1 });
      assert.equal(r.status, 200, r.text);
      const w = await s.api('PUT', '/notifications', { token: only.body.sha1 });
      assert.equal(w.status, 403, w.text);
    });
  });
});
