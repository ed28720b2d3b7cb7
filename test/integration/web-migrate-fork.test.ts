// The migration pages (/repo/migrate: the chooser and the git form) and the fork page
// (/repo/fork/{id}) in the web interface: a repository served by the same test server migrated
// once and as a pull mirror (into an organization whose team may create repositories, which the
// web allows and the API does not), bad input answered with 422 and the message beside the field
// with what was typed kept, forks with "forked from", a second fork into the same account refused
// with a link to the first, private repositories 404, signing in first, CSRF; then one flow in
// Chromium from the header's "+" menu with axe on both pages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser } from '../helpers/web.js';

type User = { name: string; password: string; token: string; id: number };

interface RepoJson {
  id: number;
  mirror: boolean;
  fork: boolean;
  private: boolean;
  description: string;
  original_url: string;
  parent: { full_name: string } | null;
  permissions: { admin: boolean; push: boolean; pull: boolean };
}

describe('web: migrate and fork pages', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  const ids: Record<string, number> = {};
  let upstream: string;

  const signedIn = async (u: User) => {
    const c = new WebClient(s.url);
    await c.signIn(u.name, u.password);
    return c;
  };
  const repo = (full: string, token = alice.token) => s.api<RepoJson>('GET', `/repos/${full}`, { token });

  before(async () => {
    s = await startServer({
      ANVIL__MIGRATIONS__ALLOW_LOCALNETWORKS: 'true',
      ANVIL__MIGRATIONS__BLOCKED_DOMAINS: 'blocked.test',
    });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    const token = alice.token;
    for (const [name, extra] of [
      ['upstream', {}],
      ['proj', { description: 'The project' }],
      ['secret', { private: true }],
    ] as const) {
      const r = await s.api<{ id: number }>('POST', '/user/repos', {
        token,
        body: { name, auto_init: true, ...extra },
      });
      assert.equal(r.status, 201, r.text);
      ids[name] = r.body.id;
    }
    const change = await s.api('POST', '/repos/alice/upstream/contents/notes.txt', {
      token,
      body: { content: Buffer.from('notes\n').toString('base64'), message: 'Upstream change to migrate' },
    });
    assert.equal(change.status, 201, change.text);
    upstream = `${s.url}/alice/upstream.git`;
    // crew: bob's team there may create repositories (he is no owner); solo: bob is no member.
    for (const org of ['crew', 'solo']) {
      const r = await s.api<{ id: number }>('POST', '/orgs', { token, body: { username: org } });
      assert.equal(r.status, 201, r.text);
      ids[org] = r.body.id;
    }
    const team = await s.api<{ id: number }>('POST', '/orgs/crew/teams', {
      token,
      body: { name: 'makers', permission: 'write', units: ['repo.code'], can_create_org_repo: true },
    });
    assert.equal((await s.api('PUT', `/teams/${team.body.id}/members/bob`, { token })).status, 204);
    await s.api('POST', '/orgs/crew/repos', { token, body: { name: 'occupied' } });
  });
  after(async () => s.close());

  it('offers Git as the source, and its form with the owners the user may create in', async () => {
    const anon = new WebClient(s.url);
    const out = await anon.get('/repo/migrate?service_type=1');
    assert.equal(out.status, 303);
    assert.equal(out.location, '/user/login?redirect_to=%2Frepo%2Fmigrate%3Fservice_type%3D1');

    const b = await signedIn(bob);
    const chooser = await b.get('/repo/migrate');
    assert.equal(chooser.status, 200);
    assert.match(chooser.text, /<a class="title" href="\/repo\/migrate\?service_type=1">/);
    assert.doesNotMatch(chooser.text, /service_type=[02-9]/);
    assert.match(chooser.text, /issues, pull requests, releases, labels, milestones, the wiki and LFS/);
    const form = await b.get(`/repo/migrate?service_type=1&org=${ids['crew']}&mirror=1`);
    assert.equal(form.status, 200);
    for (const name of ['clone_addr', 'auth_username', 'auth_password', 'mirror_interval', 'repo_name']) {
      assert.match(form.text, new RegExp(`name="${name}"`), name);
    }
    assert.match(form.text, /<input type="hidden" name="service" value="1"\/?>/);
    assert.match(form.text, /name="mirror" value="on" checked/);
    assert.match(form.text, new RegExp(`<option value="${ids['crew']}" selected>crew</option>`));
    assert.match(form.text, new RegExp(`<option value="${bob.id}">bob</option>`));
    assert.doesNotMatch(form.text, />solo</);
    // Another forge's number: the git form, saying what does not come over.
    const github = await b.get('/repo/migrate?service_type=2');
    assert.equal(github.status, 200);
    assert.match(github.text, /From GitHub, only the git data/);
  });

  it('migrates a repository once, and as a pull mirror into an organization', async () => {
    const b = await signedIn(bob);
    await b.get('/repo/migrate?service_type=1');
    const done = await b.post('/repo/migrate', {
      service: '1',
      clone_addr: upstream,
      uid: String(bob.id),
      repo_name: 'copy',
      description: 'A copy',
      private: 'on',
    });
    assert.equal(done.status, 303, done.text);
    assert.equal(done.location, '/bob/copy');
    const home = await b.get('/bob/copy');
    assert.match(
      home.text,
      /The repository was migrated from http:\/\/127\.0\.0\.1:\d+\/alice\/upstream\.git/,
    );
    assert.match(home.text, /notes\.txt/);
    assert.doesNotMatch(home.text, /mirror of/);
    const commits = await b.get('/bob/copy/commits/branch/main');
    assert.match(commits.text, /Upstream change to migrate/);
    const copy = await repo('bob/copy', bob.token);
    assert.equal(copy.body.mirror, false);
    assert.equal(copy.body.private, true);
    assert.equal(copy.body.description, 'A copy');

    await b.get('/repo/migrate?service_type=1');
    const mirrored = await b.post('/repo/migrate', {
      clone_addr: upstream,
      uid: String(ids['crew']),
      repo_name: 'follow',
      mirror: 'on',
      mirror_interval: '1h',
    });
    assert.equal(mirrored.status, 303, mirrored.text);
    assert.equal(mirrored.location, '/crew/follow');
    const page = await b.get('/crew/follow');
    assert.match(page.text, /<a href="\/crew\/follow">follow<\/a><span class="pill">Mirror<\/span>/);
    assert.match(page.text, /mirror of <a href="http:\/\/127\.0\.0\.1:\d+\/alice\/upstream\.git"/);
    const follow = await repo('crew/follow', bob.token);
    assert.equal(follow.body.mirror, true);
    // bob is no owner of crew: he administers what he made as its collaborator (Forgejo's rule).
    assert.equal(follow.body.permissions.admin, true);
    // The API keeps Forgejo's rule: only an organization's owners migrate into it.
    const api = await s.api<{ message: string }>('POST', '/repos/migrate', {
      token: bob.token,
      body: { clone_addr: upstream, repo_owner: 'crew', repo_name: 'by-api' },
    });
    assert.equal(api.status, 403);
  });

  it('answers bad input with 422 and the message beside the field, keeping what was typed', async () => {
    const b = await signedIn(bob);
    await b.get('/repo/migrate?service_type=1');
    const post = (form: Record<string, string | null>) =>
      b.post('/repo/migrate', { uid: String(bob.id), repo_name: 'fresh', ...form });
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ clone_addr: '' }, 'clone_addr', /The URL to migrate from is required\./],
      [{ clone_addr: 'not a url' }, 'clone_addr', /not a valid URL/],
      [{ clone_addr: 'file:///srv/repo.git' }, 'clone_addr', /not allowed to import local repositories/],
      [{ clone_addr: 'http://blocked.test/x.git' }, 'clone_addr', /is not allowed: the host is blocked/],
      [{ clone_addr: upstream, repo_name: 'copy' }, 'repo_name', /already exists/],
      [{ clone_addr: upstream, repo_name: 'bad name!' }, 'repo_name', /repository name is invalid/],
      [{ clone_addr: upstream, uid: String(ids['solo']) }, 'uid', /cannot create repositories/],
      [
        { clone_addr: upstream, mirror: 'on', mirror_interval: 'soon' },
        'mirror_interval',
        /invalid duration/,
      ],
    ];
    for (const [form, field, message] of cases) {
      const r = await post(form);
      const what = JSON.stringify(form);
      assert.equal(r.status, 422, what);
      const error = new RegExp(`<p class="field-error" id="f-${field}-error">([^<]*)</p>`).exec(r.text);
      assert.ok(error, `${what}: no error beside ${field}`);
      assert.match(error[1]!, message, what);
      assert.match(r.text, new RegExp(`aria-describedby="f-${field}-error"`), what);
      const typed = form['repo_name'] ?? 'fresh';
      assert.match(r.text, new RegExp(`name="repo_name" type="text" value="${typed}"`), what);
    }
    // Everything that can be told before cloning at once; the password is never sent back.
    const both = await post({
      clone_addr: '',
      repo_name: '',
      auth_username: 'me',
      auth_password: 'hunter22',
    });
    assert.equal(both.status, 422);
    assert.match(both.text, /id="f-clone_addr-error"/);
    assert.match(both.text, /id="f-repo_name-error"/);
    assert.match(both.text, /name="auth_username" type="text" value="me"/);
    assert.doesNotMatch(both.text, /hunter22/);
    // The typed address comes back as typed.
    const typed = await post({ clone_addr: 'not a url', description: 'kept <b>text</b>' });
    assert.match(typed.text, /name="clone_addr" type="text" value="not a url"/);
    assert.match(typed.text, /kept &lt;b(>|&gt;)text&lt;\/b(>|&gt;)<\/textarea>/);
    assert.equal((await repo('bob/fresh', bob.token)).status, 404);
    // Without the CSRF token: refused before anything is read.
    const csrf = await post({ clone_addr: upstream, _csrf: null });
    assert.equal(csrf.status, 403);
    assert.equal((await repo('bob/fresh', bob.token)).status, 404);
  });

  it('forks from the form into an account, and shows "forked from"', async () => {
    const anon = new WebClient(s.url);
    const out = await anon.get(`/repo/fork/${ids['proj']}`);
    assert.equal(out.status, 303);
    assert.equal(out.location, `/user/login?redirect_to=%2Frepo%2Ffork%2F${ids['proj']}`);

    const b = await signedIn(bob);
    const home = await b.get('/alice/proj');
    assert.match(
      home.text,
      new RegExp(
        `<a class="button" href="/repo/fork/${ids['proj']}">Fork</a><a class="count" href="/alice/proj/forks" aria-label="0 forks">0</a>`,
      ),
    );
    const form = await b.get(`/repo/fork/${ids['proj']}`);
    assert.equal(form.status, 200);
    assert.match(form.text, /Fork from <a href="\/alice\/proj">alice\/proj<\/a>/);
    assert.match(form.text, new RegExp(`<option value="${bob.id}" selected>bob</option>`));
    assert.match(form.text, new RegExp(`<option value="${ids['crew']}">crew</option>`));
    assert.doesNotMatch(form.text, />alice<\/option>|>solo<\/option>/);
    assert.match(form.text, /name="repo_name" type="text" value="proj"/);
    assert.match(form.text, /The project<\/textarea>/);

    const done = await b.post(`/repo/fork/${ids['proj']}`, {
      uid: String(bob.id),
      repo_name: 'proj-fork',
      description: 'My fork',
    });
    assert.equal(done.status, 303, done.text);
    assert.equal(done.location, '/bob/proj-fork');
    const fork = await b.get('/bob/proj-fork');
    assert.match(fork.text, /Forked from alice\/proj\./);
    assert.match(fork.text, /forked from <a href="\/alice\/proj">alice\/proj<\/a>/);
    assert.match(fork.text, /My fork/);
    const json = await repo('bob/proj-fork', bob.token);
    assert.equal(json.body.fork, true);
    assert.equal(json.body.parent?.full_name, 'alice/proj');
    assert.equal(json.body.description, 'My fork');
    assert.match((await b.get('/alice/proj')).text, /aria-label="1 forks">1<\/a>/);
    // The forks, stargazers and watchers lists.
    const forks = await b.get('/alice/proj/forks');
    assert.equal(forks.status, 200);
    assert.match(forks.text, /href="\/bob\/proj-fork"/);
    assert.match((await b.get('/alice/proj/watchers')).text, /href="\/alice"/);
    assert.match((await b.get('/alice/proj/stars')).text, /Nobody yet/);
    // The form now proposes the account that has no fork yet.
    const next = await b.get(`/repo/fork/${ids['proj']}`);
    assert.match(next.text, new RegExp(`<option value="${ids['crew']}" selected>crew</option>`));
  });

  it('refuses a second fork, taken names, the source owner, unreadable repositories and no CSRF', async () => {
    const b = await signedIn(bob);
    const url = `/repo/fork/${ids['proj']}`;
    await b.get(url);
    const again = await b.post(url, { uid: String(bob.id), repo_name: 'proj-again', description: 'x' });
    assert.equal(again.status, 422);
    assert.match(
      again.text,
      /<p class="field-error" id="f-uid-error">This owner already has a fork of this repository: <a href="\/bob\/proj-fork">bob\/proj-fork<\/a><\/p>/,
    );
    assert.match(again.text, /name="repo_name" type="text" value="proj-again"/);
    assert.equal((await repo('bob/proj-again', bob.token)).status, 404);

    const taken = await b.post(url, { uid: String(ids['crew']), repo_name: 'occupied' });
    assert.equal(taken.status, 422);
    assert.match(taken.text, /id="f-repo_name-error">crew already has a repository named occupied\./);
    const badName = await b.post(url, { uid: String(ids['crew']), repo_name: 'no way' });
    assert.equal(badName.status, 422);
    assert.match(badName.text, /id="f-repo_name-error">repository name is invalid/);
    for (const uid of [String(alice.id), String(ids['solo']), 'x']) {
      const r = await b.post(url, { uid, repo_name: 'elsewhere' });
      assert.equal(r.status, 422, uid);
      assert.match(r.text, /id="f-uid-error"/, uid);
    }
    const csrf = await b.post(url, { uid: String(ids['crew']), repo_name: 'sneaky', _csrf: null });
    assert.equal(csrf.status, 403);
    assert.equal((await repo('crew/sneaky', alice.token)).status, 404);

    for (const p of [`/repo/fork/${ids['secret']}`, '/repo/fork/999999', '/repo/fork/abc']) {
      assert.equal((await b.get(p)).status, 404, p);
    }
    await b.get(url);
    assert.equal((await b.post(`/repo/fork/${ids['secret']}`, { uid: String(bob.id) })).status, 404);
    // Its owner forks it into the organizations, not into the account that has it.
    const a = await signedIn(alice);
    const own = await a.get(`/repo/fork/${ids['secret']}`);
    assert.equal(own.status, 200);
    assert.match(own.text, new RegExp(`<option value="${ids['crew']}" selected>crew</option>`));
    assert.doesNotMatch(own.text, new RegExp(`<option value="${alice.id}"`));
    assert.match(own.text, /The fork is private, as its source is\./);
  });

  describe('in a browser', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(async () => browser?.close());

    it('migrates from the "+" menu and forks, without serious accessibility violations', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${s.url}/user/login`);
      await page.fill('input[name=user_name]', bob.name);
      await page.fill('input[name=password]', bob.password);
      await page.click('main button[type=submit]');
      await page.waitForURL(`${s.url}/`);

      await page.click('details.create-menu summary');
      await page.click('text=New migration');
      await page.waitForURL(`${s.url}/repo/migrate`);
      assert.deepEqual(await accessibilityViolations(page), [], 'chooser');
      await page.click('a.title:has-text("Git")');
      await page.waitForURL(/service_type=1$/);
      await page.fill('input[name=clone_addr]', 'ftp://example.com/x.git');
      await page.fill('input[name=repo_name]', 'in-browser');
      await page.click('button:has-text("Migrate repository")');
      await page.waitForSelector('#f-clone_addr-error');
      assert.deepEqual(await accessibilityViolations(page), [], 'form with an error');
      assert.equal(await page.inputValue('input[name=repo_name]'), 'in-browser');
      await page.fill('input[name=clone_addr]', upstream);
      await page.click('button:has-text("Migrate repository")');
      await page.waitForURL(`${s.url}/bob/in-browser`);
      assert.match(await page.content(), /The repository was migrated from/);

      await page.goto(`${s.url}/alice/upstream`);
      await page.click('a.button:has-text("Fork")');
      await page.waitForURL(`${s.url}/repo/fork/${ids['upstream']}`);
      assert.deepEqual(await accessibilityViolations(page), [], 'fork page');
      await page.fill('input[name=repo_name]', 'upstream-fork');
      await page.click('button:has-text("Fork repository")');
      await page.waitForURL(`${s.url}/bob/upstream-fork`);
      assert.match(await page.content(), /forked from/);
      await context.close();
    });
  });
});
