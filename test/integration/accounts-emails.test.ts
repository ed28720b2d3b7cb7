// The signed-in user's settings (/user/settings) and e-mail addresses (/user/emails), and the
// administrators' list of every address (/admin/emails[/search]): Forgejo's shapes and statuses,
// addresses unique across accounts (a secondary address blocks another account's registration),
// sign-in and commit authorship by a secondary address, hidden activity and pronouns, bad input
// and permission denials.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface Settings {
  full_name: string;
  website: string;
  description: string;
  location: string;
  pronouns: string;
  language: string;
  theme: string;
  diff_view_style: string;
  enable_repo_unit_hints: boolean;
  hide_email: boolean;
  hide_activity: boolean;
  hide_pronouns: boolean;
}
interface Email {
  email: string;
  verified: boolean;
  primary: boolean;
  user_id: number;
  username: string;
}
interface Msg {
  message: string;
}

describe('account settings and e-mail addresses', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string; id: number };
  let bob: { name: string; password: string; token: string; id: number };
  let readOnly: string;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    const t = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: [alice.name, alice.password],
      body: { name: 'read-only', scopes: ['read:user'] },
    });
    readOnly = t.body.sha1;
  });
  after(async () => s.close());

  it('reads and changes settings, keeping what is not sent', async () => {
    const before = await s.api<Settings>('GET', '/user/settings', { token: alice.token });
    assert.equal(before.status, 200);
    assert.deepEqual(before.body, {
      full_name: '',
      website: '',
      description: '',
      location: '',
      pronouns: '',
      language: '',
      theme: 'forgejo-auto',
      diff_view_style: '',
      enable_repo_unit_hints: true,
      hide_email: false,
      hide_activity: false,
      hide_pronouns: false,
    });
    const r = await s.api<Settings>('PATCH', '/user/settings', {
      token: alice.token,
      body: {
        full_name: 'Alice A.',
        website: 'https://alice.example.com',
        location: 'Lisbon',
        pronouns: 'she/her',
        language: 'pt-PT',
        theme: 'forgejo-dark',
        diff_view_style: 'split',
        enable_repo_unit_hints: false,
        hide_email: true,
      },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.full_name, 'Alice A.');
    assert.equal(r.body.diff_view_style, 'split');
    assert.equal(r.body.enable_repo_unit_hints, false);
    assert.equal(r.body.hide_email, true);
    // The same values come back from the user JSON and a later read; untouched fields stay.
    const me = await s.api<{ full_name: string; website: string; location: string }>('GET', '/user', {
      token: alice.token,
    });
    assert.equal(me.body.full_name, 'Alice A.');
    assert.equal(me.body.website, 'https://alice.example.com');
    const again = await s.api<Settings>('PATCH', '/user/settings', {
      token: alice.token,
      body: { description: 'hello' },
    });
    assert.equal(again.body.location, 'Lisbon');
    assert.equal(again.body.description, 'hello');
    assert.equal(again.body.theme, 'forgejo-dark');
    // hide_email: others see the no-reply placeholder.
    const seen = await s.api<{ email: string }>('GET', '/users/alice', { token: bob.token });
    assert.match(seen.body.email, /@noreply\./);
  });

  it('refuses bad settings with 422 naming the field, and anonymous or read-only callers', async () => {
    for (const [body, field] of [
      [{ website: 'javascript:alert(1)' }, 'website'],
      [{ website: 'not a url' }, 'website'],
      [{ full_name: 'x'.repeat(101) }, 'full_name'],
      [{ location: 'x'.repeat(51) }, 'location'],
      [{ diff_view_style: 'sideways' }, 'diff_view_style'],
      [{ hide_email: 'yes' }, 'hide_email'],
    ] as const) {
      const r = await s.api<Msg>('PATCH', '/user/settings', { token: alice.token, body });
      assert.equal(r.status, 422, JSON.stringify(body));
      // Named as Forgejo names it (the Go field: DiffViewStyle) or as sent (diff_view_style).
      const named = r.body.message.toLowerCase().replace(/_/g, '');
      assert.ok(named.includes(field.replace(/_/g, '')), r.text);
    }
    assert.equal((await s.api('GET', '/user/settings')).status, 401);
    assert.equal((await s.api('GET', '/user/settings', { token: readOnly })).status, 200);
    const denied = await s.api('PATCH', '/user/settings', { token: readOnly, body: { location: 'x' } });
    assert.equal(denied.status, 403);
    assert.equal(
      (await s.api<Settings>('GET', '/user/settings', { token: alice.token })).body.location,
      'Lisbon',
    );
  });

  it('hides activity and pronouns as asked', async () => {
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'visible' } });
    const feed = (token?: string) =>
      s.api<unknown[]>('GET', '/users/alice/activities/feeds', token ? { token } : {});
    assert.ok((await feed(bob.token)).body.length > 0);
    await s.api('PATCH', '/user/settings', {
      token: alice.token,
      body: { hide_activity: true, hide_pronouns: true },
    });
    assert.deepEqual((await feed(bob.token)).body, []);
    assert.deepEqual((await s.api('GET', '/users/alice/heatmap', { token: bob.token })).body, []);
    // Alice herself and administrators still see it.
    assert.ok((await feed(alice.token)).body.length > 0);
    assert.ok((await feed(s.admin.token)).body.length > 0);
    // Pronouns kept private: shown to signed-in callers only.
    assert.equal((await s.api<{ pronouns: string }>('GET', '/users/alice')).body.pronouns, '');
    assert.equal(
      (await s.api<{ pronouns: string }>('GET', '/users/alice', { token: bob.token })).body.pronouns,
      'she/her',
    );
    await s.api('PATCH', '/user/settings', {
      token: alice.token,
      body: { hide_activity: false, hide_pronouns: false },
    });
    assert.ok((await feed(bob.token)).body.length > 0);
  });

  it('lists, adds and deletes e-mail addresses', async () => {
    let r = await s.api<Email[]>('GET', '/user/emails', { token: alice.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, [
      { email: 'alice@example.com', verified: true, primary: true, user_id: alice.id, username: 'alice' },
    ]);
    r = await s.api<Email[]>('POST', '/user/emails', {
      token: alice.token,
      body: { emails: ['alice@work.example', 'Alice.Two@Example.org'] },
    });
    assert.equal(r.status, 201);
    assert.deepEqual(
      r.body.map((e) => [e.email, e.primary, e.verified]),
      [
        ['alice@example.com', true, true],
        ['alice@work.example', false, true],
        ['Alice.Two@Example.org', false, true],
      ],
    );
    const del = await s.api('DELETE', '/user/emails', {
      token: alice.token,
      body: { emails: ['alice.two@example.org'] },
    });
    assert.equal(del.status, 204);
    r = await s.api<Email[]>('GET', '/user/emails', { token: alice.token });
    assert.deepEqual(
      r.body.map((e) => e.email),
      ['alice@example.com', 'alice@work.example'],
    );
    // An empty list deletes nothing.
    assert.equal((await s.api('DELETE', '/user/emails', { token: alice.token, body: {} })).status, 204);
  });

  it('keeps every address to one account, all or nothing', async () => {
    const add = (token: string, emails: unknown) =>
      s.api<Msg>('POST', '/user/emails', { token, body: { emails } });
    // Another account's primary or secondary address, in any case; or one's own again.
    for (const taken of ['BOB@example.com', 'alice@WORK.example', 'alice@example.com']) {
      const r = await add(taken.startsWith('BOB') ? alice.token : bob.token, [taken]);
      assert.equal(r.status, 422, taken);
      assert.match(r.body.message, /has been used/);
    }
    // A list with one bad address adds none of them.
    let r = await add(bob.token, ['bob@second.example', 'not-an-address']);
    assert.equal(r.status, 422);
    assert.match(r.body.message, /emails/i);
    r = await add(bob.token, ['bob@third.example', 'BOB@THIRD.example']);
    assert.equal(r.status, 422);
    assert.deepEqual(
      (await s.api<Email[]>('GET', '/user/emails', { token: bob.token })).body.map((e) => e.email),
      ['bob@example.com'],
    );
    assert.equal((await add(bob.token, [])).status, 422);
    assert.equal((await add(bob.token, 'bob@x.example')).status, 422);
    // Deleting: an address of someone else, or none at all: 404; the primary one: 422.
    let d = await s.api('DELETE', '/user/emails', {
      token: bob.token,
      body: { emails: ['alice@work.example'] },
    });
    assert.equal(d.status, 404);
    d = await s.api('DELETE', '/user/emails', {
      token: bob.token,
      body: { emails: ['nobody@none.example'] },
    });
    assert.equal(d.status, 404);
    d = await s.api<Msg>('DELETE', '/user/emails', {
      token: bob.token,
      body: { emails: ['bob@example.com'] },
    });
    assert.equal(d.status, 422);
    // A secondary address blocks creating an account with it.
    const created = await s.api<Msg>('POST', '/admin/users', {
      token: s.admin.token,
      body: { username: 'mallory', email: 'Alice@Work.example', password: 'mallory-password-1' },
    });
    assert.equal(created.status, 422);
    // Scopes and anonymous callers.
    assert.equal((await s.api('GET', '/user/emails')).status, 401);
    assert.equal((await add(readOnly, ['alice@ro.example'])).status, 403);
  });

  it('signs in with a secondary address and credits commits to it', async () => {
    const r = await s.api<{ login: string }>('GET', '/user', {
      basic: ['alice@work.example', alice.password],
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.login, 'alice');
    assert.equal((await s.api('GET', '/user', { basic: ['alice@work.example', 'wrong'] })).status, 401);
    // A commit whose author is the secondary address is Alice's.
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'authored', auto_init: true } });
    const file = await s.api<{ commit: { sha: string } }>('POST', '/repos/alice/authored/contents/a.txt', {
      token: alice.token,
      body: {
        content: Buffer.from('a').toString('base64'),
        message: 'by the work address',
        author: { name: 'Alice at work', email: 'alice@work.example' },
      },
    });
    assert.equal(file.status, 201, JSON.stringify(file.body));
    const c = await s.api<{ author: { login: string } | null }>(
      'GET',
      `/repos/alice/authored/git/commits/${file.body.commit.sha}`,
      { token: alice.token },
    );
    assert.equal(c.body.author?.login, 'alice');
  });

  it('changing the primary address through the admin API keeps the old one as secondary', async () => {
    const r = await s.api('PATCH', '/admin/users/bob', {
      token: s.admin.token,
      body: { email: 'bob@new.example' },
    });
    assert.equal(r.status, 200);
    const emails = (await s.api<Email[]>('GET', '/user/emails', { token: bob.token })).body;
    assert.deepEqual(
      emails.map((e) => [e.email, e.primary]),
      [
        ['bob@new.example', true],
        ['bob@example.com', false],
      ],
    );
    // Taking another account's address is refused.
    const taken = await s.api('PATCH', '/admin/users/bob', {
      token: s.admin.token,
      body: { email: 'alice@work.example' },
    });
    assert.equal(taken.status, 400);
  });

  it('lists and searches every address for administrators only', async () => {
    const all = await s.api<Email[]>('GET', '/admin/emails?limit=50', { token: s.admin.token });
    assert.equal(all.status, 200);
    const mine = all.body.filter((e) => e.username === 'alice').map((e) => e.email);
    assert.deepEqual(mine, ['alice@example.com', 'alice@work.example']);
    assert.equal(all.headers.get('x-total-count'), String(all.body.length));
    const found = await s.api<Email[]>('GET', '/admin/emails/search?q=WORK', { token: s.admin.token });
    assert.deepEqual(
      found.body.map((e) => [e.email, e.username, e.user_id]),
      [['alice@work.example', 'alice', alice.id]],
    );
    const byName = await s.api<Email[]>('GET', '/admin/emails/search?q=bob', { token: s.admin.token });
    assert.deepEqual(byName.body.map((e) => e.email).sort(), ['bob@example.com', 'bob@new.example']);
    const paged = await s.api<Email[]>('GET', '/admin/emails?limit=1&page=2', { token: s.admin.token });
    assert.equal(paged.body.length, 1);
    assert.equal((await s.api('GET', '/admin/emails', { token: bob.token })).status, 403);
    assert.equal((await s.api('GET', '/admin/emails/search?q=a')).status, 401);
  });
});
