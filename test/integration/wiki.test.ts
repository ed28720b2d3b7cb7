// Repository wikis: the API (/wiki/new, /wiki/page/{name} get/patch/delete, /wiki/pages,
// /wiki/revisions/{name}) with Forgejo's page names (spaces, '-', unicode, '/', reserved names),
// its refusals (readers 403, outsiders and anonymous callers on private repositories 404, has_wiki
// false 404, bad input 400/422 naming the field), and `{repo}.wiki.git` over smart HTTP with the
// real git client: pages made through the API appear in a clone and pages pushed appear in the API
// (with their revisions), pushes without write access are refused, a push creates a wiki, no push
// event runs for the repository, the wiki is outside the repository size quota, the `wiki`
// webhook event, the web pages (rendered, sanitized, private ones hidden), and the wiki goes with
// its repository.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, waitFor } from '../helpers/git.js';
import type { AnvilEvents } from '../../src/events/bus.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface WikiCommitJson {
  sha: string;
  author: { name: string; email: string; date: string };
  commiter: { name: string; email: string; date: string };
  message: string;
}

interface WikiPageJson {
  title: string;
  html_url: string;
  sub_url: string;
  last_commit?: WikiCommitJson;
  content_base64: string;
  commit_count: number;
  sidebar: string;
  footer: string;
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');

describe('repository wikis', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: U;
  let bob: U;
  let carol: U;
  let eve: U;
  let docsId: number;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  let receiver: http.Server;

  /** The wiki clone URL, with credentials when given. */
  function wikiUrl(owner: string, repo: string, who?: U, suffix = '.wiki.git'): string {
    const u = new URL(`${s.url}/${owner}/${repo}${suffix}`);
    if (who) {
      u.username = encodeURIComponent(who.name);
      u.password = encodeURIComponent(who.password);
    }
    return u.toString();
  }

  async function createRepo(owner: U, body: Record<string, unknown>) {
    const r = await s.api<{ id: number; has_wiki: boolean }>('POST', '/user/repos', {
      token: owner.token,
      body,
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function newPage(repo: string, title: string, content: string, who: U = alice, message?: string) {
    const r = await s.api<WikiPageJson>('POST', `/repos/alice/${repo}/wiki/new`, {
      token: who.token,
      body: { title, content_base64: b64(content), ...(message ? { message } : {}) },
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  const getPage = (repo: string, name: string, token?: string) =>
    s.api<WikiPageJson>('GET', `/repos/alice/${repo}/wiki/page/${name}`, token ? { token } : {});

  before(async () => {
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    s = await startServer({ ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback' });
    s.ctx.webhooks.start();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    eve = await s.createUser('eve');
    docsId = (await createRepo(alice, { name: 'docs', auto_init: true })).id;
    await createRepo(alice, { name: 'secret', private: true, auto_init: true });
    for (const [repo, who, permission] of [
      ['docs', 'bob', 'read'],
      ['docs', 'carol', 'write'],
      ['secret', 'bob', 'read'],
    ] as const) {
      const r = await s.api('PUT', `/repos/alice/${repo}/collaborators/${who}`, {
        token: alice.token,
        body: { permission },
      });
      assert.equal(r.status, 204, r.text);
    }
  });

  after(async () => {
    await s.close();
    g.cleanup();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('a repository starts with the wiki unit on and no wiki: pages and clones find nothing', async () => {
    const repo = await s.api<{ has_wiki: boolean }>('GET', '/repos/alice/docs', { token: alice.token });
    assert.equal(repo.body.has_wiki, true);
    assert.equal((await s.api('GET', '/repos/alice/docs/wiki/pages', { token: alice.token })).status, 404);
    assert.equal((await getPage('docs', 'Home', alice.token)).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/docs/wiki/revisions/Home')).status, 404);
    const clone = await g.tryGit(['clone', '--quiet', wikiUrl('alice', 'docs'), path.join(g.home, 'none')]);
    assert.equal(clone.ok, false);
    assert.match(clone.out, /not found|404/i);
    // Reading created nothing.
    assert.equal(fs.existsSync(s.ctx.wiki.pathOf({ id: docsId })), false);
  });

  it('creates pages with Forgejo names: spaces, dashes, unicode and slashes', async () => {
    const home = await newPage('docs', 'Home', '# Welcome\n\nSee [[Getting Started]].\n');
    assert.equal(home.title, 'Home');
    assert.equal(home.sub_url, 'Home');
    assert.equal(home.html_url, `${s.url}/alice/docs/wiki/Home`);
    assert.equal(unb64(home.content_base64), '# Welcome\n\nSee [[Getting Started]].\n');
    assert.equal(home.commit_count, 1);
    assert.equal(home.last_commit?.message, 'Add "Home"\n');
    assert.equal(home.last_commit?.author.name, 'alice');
    assert.equal(home.last_commit?.commiter.email, 'alice@example.com');
    assert.match(home.last_commit?.author.date ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(home.sidebar, '');

    const cases: Array<[string, string]> = [
      ['Getting Started', 'Getting-Started'],
      ['release-notes 2024', 'release-notes+2024.-'],
      ['Über uns', '%C3%9Cber-uns'],
      ['a/b', 'a%2Fb'],
      ['100% sure', '100%25-sure'],
    ];
    for (const [title, sub] of cases) {
      const p = await newPage('docs', title, `page ${title}\n`, alice, `write ${title}`);
      assert.equal(p.sub_url, sub, title);
      assert.equal(p.title, title);
      assert.equal(p.last_commit?.message, `write ${title}\n`);
      const got = await getPage('docs', sub);
      assert.equal(got.status, 200, `${title}: ${got.text}`);
      assert.equal(unb64(got.body.content_base64), `page ${title}\n`);
      assert.equal(got.body.title, title);
    }
    // The same page by its title escaped differently.
    const spaced = await getPage('docs', 'Getting%20Started');
    assert.equal(spaced.status, 200, spaced.text);
    assert.equal(spaced.body.sub_url, 'Getting-Started');
    // A sidebar shows with every page.
    await newPage('docs', '_Sidebar', '* [[Home]]\n');
    assert.equal(unb64((await getPage('docs', 'Home')).body.sidebar), '* [[Home]]\n');
  });

  it('refuses bad input: taken, reserved and empty titles, content that is not base64', async () => {
    const post = (body: unknown) =>
      s.api<{ message: string }>('POST', '/repos/alice/docs/wiki/new', { token: alice.token, body });
    const taken = await post({ title: 'Home', content_base64: b64('again') });
    assert.equal(taken.status, 400, taken.text);
    assert.match(taken.body.message, /already exists/);
    const reserved = await post({ title: '_pages', content_base64: b64('x') });
    assert.equal(reserved.status, 400, reserved.text);
    assert.match(reserved.body.message, /reserved/);
    for (const body of [{ content_base64: b64('x') }, { title: '   ', content_base64: b64('x') }]) {
      const r = await post(body);
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.message, /\[Title\]/);
    }
    for (const content of ['not base64!', 'abc', '====']) {
      const r = await post({ title: 'Bad', content_base64: content });
      assert.equal(r.status, 400, r.text);
      assert.match(r.body.message, /\[ContentBase64\]/);
    }
    const typed = await post({ title: 5, content_base64: b64('x') });
    assert.equal(typed.status, 422, typed.text);
    assert.match(typed.body.message, /Title/);
    const patched = await s.api<{ message: string }>('PATCH', '/repos/alice/docs/wiki/page/Home', {
      token: alice.token,
      body: { content_base64: '***' },
    });
    assert.equal(patched.status, 400, patched.text);
    // Nothing was written.
    assert.equal((await getPage('docs', 'Bad')).status, 404);
    assert.equal((await getPage('docs', 'Home')).body.commit_count, 1);
  });

  it('lists pages in file order with their last commits, a page at a time', async () => {
    const r = await s.api<Array<{ title: string; sub_url: string; last_commit: WikiCommitJson }>>(
      'GET',
      '/repos/alice/docs/wiki/pages',
    );
    assert.equal(r.status, 200, r.text);
    const files = [
      ['100%25-sure.md', '100% sure'],
      ['Getting-Started.md', 'Getting Started'],
      ['Home.md', 'Home'],
      ['_Sidebar.md', '_Sidebar'],
      ['a%2Fb.md', 'a/b'],
      ['release-notes 2024.-.md', 'release-notes 2024'],
      ['%C3%9Cber-uns.md', 'Über uns'],
    ].sort((x, y) => Buffer.compare(Buffer.from(x[0]!), Buffer.from(y[0]!)));
    assert.deepEqual(
      r.body.map((p) => p.title),
      files.map((f) => f[1]),
    );
    assert.equal(r.headers.get('x-total-count'), '7');
    assert.ok(r.body.every((p) => /^[0-9a-f]{40}$/.test(p.last_commit.sha)));
    assert.equal(r.body.find((p) => p.title === 'Home')?.last_commit.message, 'Add "Home"\n');
    const second = await s.api<Array<{ title: string }>>(
      'GET',
      '/repos/alice/docs/wiki/pages?page=2&limit=3',
    );
    assert.deepEqual(
      second.body.map((p) => p.title),
      files.slice(3, 6).map((f) => f[1]),
    );
  });

  it('edits, renames and deletes pages; revisions list their commits', async () => {
    const edit = await s.api<WikiPageJson>('PATCH', '/repos/alice/docs/wiki/page/Home', {
      token: alice.token,
      body: { content_base64: b64('# Welcome back\n'), message: 'Reword home' },
    });
    assert.equal(edit.status, 200, edit.text);
    assert.equal(edit.body.sub_url, 'Home');
    assert.equal(edit.body.commit_count, 2);
    assert.equal(unb64(edit.body.content_base64), '# Welcome back\n');
    const revs = await s.api<{ commits: WikiCommitJson[]; count: number }>(
      'GET',
      '/repos/alice/docs/wiki/revisions/Home',
    );
    assert.equal(revs.status, 200, revs.text);
    assert.equal(revs.body.count, 2);
    assert.deepEqual(
      revs.body.commits.map((c) => c.message),
      ['Reword home\n', 'Add "Home"\n'],
    );
    assert.equal(revs.headers.get('x-total-count'), '2');

    const renamed = await s.api<WikiPageJson>('PATCH', '/repos/alice/docs/wiki/page/Getting-Started', {
      token: alice.token,
      body: { title: 'Start Here', content_base64: b64('start\n') },
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.sub_url, 'Start-Here');
    assert.equal(renamed.body.last_commit?.message, 'Update "Start-Here"\n');
    assert.equal((await getPage('docs', 'Getting-Started')).status, 404);
    assert.equal(unb64((await getPage('docs', 'Start-Here')).body.content_base64), 'start\n');

    const del = await s.api('DELETE', '/repos/alice/docs/wiki/page/a%2Fb', { token: alice.token });
    assert.equal(del.status, 204, del.text);
    assert.equal((await getPage('docs', 'a%2Fb')).status, 404);
    const again = await s.api('DELETE', '/repos/alice/docs/wiki/page/a%2Fb', { token: alice.token });
    assert.equal(again.status, 404, again.text);
    assert.equal((await s.api('GET', '/repos/alice/docs/wiki/revisions/Nope')).status, 404);
    // Names that try to leave the wiki name nothing.
    for (const name of ['..%2F..%2Fetc%2Fpasswd', '%2E%2E', '.git%2Fconfig.md']) {
      const r = await getPage('docs', name);
      assert.equal(r.status, 404, `${name}: ${r.text}`);
    }
  });

  it('readers read, only writers write; private wikis are hidden from outsiders', async () => {
    assert.equal((await getPage('docs', 'Home', bob.token)).status, 200);
    assert.equal((await getPage('docs', 'Home')).status, 200);
    const body = { title: 'Bobs page', content_base64: b64('bob') };
    const denied = [
      await s.api('POST', '/repos/alice/docs/wiki/new', { token: bob.token, body }),
      await s.api('PATCH', '/repos/alice/docs/wiki/page/Home', { token: bob.token, body }),
      await s.api('DELETE', '/repos/alice/docs/wiki/page/Home', { token: bob.token }),
    ];
    for (const r of denied) assert.equal(r.status, 403, r.text);
    const anon = await s.api('POST', '/repos/alice/docs/wiki/new', { body });
    assert.equal(anon.status, 401, anon.text);
    assert.equal((await getPage('docs', 'Bobs-page')).status, 404);
    // A collaborator with write access writes.
    const carolPage = await newPage('docs', 'Carols page', 'carol\n', carol);
    assert.equal(carolPage.last_commit?.author.name, 'carol');

    await newPage('secret', 'Home', 'secret home\n');
    assert.equal((await getPage('secret', 'Home', bob.token)).status, 200);
    assert.equal((await getPage('secret', 'Home', eve.token)).status, 404);
    assert.equal((await getPage('secret', 'Home')).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/secret/wiki/pages')).status, 404);
    const eveWrite = await s.api('POST', '/repos/alice/secret/wiki/new', { token: eve.token, body });
    assert.equal(eveWrite.status, 404, eveWrite.text);
    // Over git too: outsiders are asked to sign in, then refused.
    const anonClone = await g.tryGit(['clone', wikiUrl('alice', 'secret'), path.join(g.home, 'anon-secret')]);
    assert.equal(anonClone.ok, false);
    const eveClone = await g.tryGit([
      'clone',
      wikiUrl('alice', 'secret', eve),
      path.join(g.home, 'eve-secret'),
    ]);
    assert.equal(eveClone.ok, false);
    const bobClone = path.join(g.home, 'bob-secret');
    await g.git(['clone', '--quiet', wikiUrl('alice', 'secret', bob), bobClone]);
    assert.equal(fs.readFileSync(path.join(bobClone, 'Home.md'), 'utf8'), 'secret home\n');
  });

  it('pages made through the API appear in a git clone of the wiki, and pushed pages in the API', async () => {
    const pushes: AnvilEvents['push'][] = [];
    s.ctx.events.on('push', (e) => {
      pushes.push(e);
    });
    const dir = path.join(g.home, 'docs-wiki');
    await g.git(['clone', '--quiet', wikiUrl('alice', 'docs', carol), dir]);
    assert.equal(fs.readFileSync(path.join(dir, 'Home.md'), 'utf8'), '# Welcome back\n');
    assert.equal(
      fs.readFileSync(path.join(dir, 'release-notes 2024.-.md'), 'utf8'),
      'page release-notes 2024\n',
    );
    assert.equal(fs.readFileSync(path.join(dir, '%C3%9Cber-uns.md'), 'utf8'), 'page Über uns\n');
    assert.equal(fs.existsSync(path.join(dir, 'a%2Fb.md')), false);
    assert.equal((await g.git(['rev-parse', '--abbrev-ref', 'HEAD'], dir)).trim(), 'main');
    // Also without the .git suffix.
    await g.git([
      'clone',
      '--quiet',
      wikiUrl('alice', 'docs', undefined, '.wiki'),
      path.join(g.home, 'plain'),
    ]);

    const pushed = await g.commit(dir, 'From-Git.md', '# Pushed\n', 'Page from git');
    await g.commit(dir, 'Home.md', '# Home from git\n', 'Home from git');
    await g.git(['push', '--quiet', 'origin', 'main'], dir);
    const page = await getPage('docs', 'From-Git');
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.title, 'From Git');
    assert.equal(unb64(page.body.content_base64), '# Pushed\n');
    assert.equal(page.body.last_commit?.sha, pushed);
    assert.equal(page.body.last_commit?.author.name, 'Tester');
    const revs = await s.api<{ commits: WikiCommitJson[]; count: number }>(
      'GET',
      '/repos/alice/docs/wiki/revisions/Home',
    );
    assert.equal(revs.body.count, 3);
    assert.equal(revs.body.commits[0]?.message, 'Home from git\n');
    // An API write after the push builds on it.
    await newPage('docs', 'After Push', 'after\n');
    await g.git(['pull', '--quiet', '--ff-only', 'origin', 'main'], dir);
    assert.equal(fs.readFileSync(path.join(dir, 'After-Push.md'), 'utf8'), 'after\n');
    assert.equal(fs.readFileSync(path.join(dir, 'From-Git.md'), 'utf8'), '# Pushed\n');
    // The wiki's push is not the repository's: no push event, the repository's branches unchanged.
    assert.deepEqual(pushes, []);
    const branches = await s.api<Array<{ name: string }>>('GET', '/repos/alice/docs/branches');
    assert.deepEqual(
      branches.body.map((b) => b.name),
      ['main'],
    );
  });

  it('refuses pushes without write access to the wiki', async () => {
    const dir = path.join(g.home, 'bob-wiki');
    await g.git(['clone', '--quiet', wikiUrl('alice', 'docs', bob), dir]);
    await g.commit(dir, 'Bob.md', 'bob\n');
    const r = await g.tryGit(['push', 'origin', 'main'], dir);
    assert.equal(r.ok, false);
    assert.match(r.out, /403/);
    await g.git(['remote', 'set-url', 'origin', wikiUrl('alice', 'docs')], dir);
    const anon = await g.tryGit(['push', 'origin', 'main'], dir);
    assert.equal(anon.ok, false);
    assert.equal((await getPage('docs', 'Bob')).status, 404);
  });

  it('a push creates the wiki of a repository that has none (HEAD follows its one branch)', async () => {
    await createRepo(alice, { name: 'pushed' });
    const dir = await g.workTree('master');
    await g.commit(dir, 'Home.md', 'pushed home\n');
    await g.git(['push', '--quiet', wikiUrl('alice', 'pushed', alice), 'master'], dir);
    const page = await getPage('pushed', 'Home');
    assert.equal(page.status, 200, page.text);
    assert.equal(unb64(page.body.content_base64), 'pushed home\n');
    const clone = path.join(g.home, 'pushed-clone');
    await g.git(['clone', '--quiet', wikiUrl('alice', 'pushed'), clone]);
    assert.equal(fs.readFileSync(path.join(clone, 'Home.md'), 'utf8'), 'pushed home\n');
  });

  it('a renamed repository leads its wiki on: git and the API follow to the new name', async () => {
    const r = await s.api('PATCH', '/repos/alice/pushed', { token: alice.token, body: { name: 'pushed2' } });
    assert.equal(r.status, 200, r.text);
    for (const suffix of ['.wiki.git', '.wiki']) {
      const dir = path.join(g.home, `renamed${suffix}`);
      await g.git(['clone', '--quiet', wikiUrl('alice', 'pushed', alice, suffix), dir]);
      assert.equal(fs.readFileSync(path.join(dir, 'Home.md'), 'utf8'), 'pushed home\n');
    }
    const moved = await fetch(`${s.url}/alice/pushed.wiki.git/info/refs?service=git-upload-pack`, {
      redirect: 'manual',
    });
    assert.equal(moved.status, 307);
    assert.match(
      moved.headers.get('location') ?? '',
      /\/alice\/pushed2\.wiki\.git\/info\/refs\?service=git-upload-pack$/,
    );
    const page = await getPage('pushed', 'Home', alice.token);
    assert.equal(page.status, 200, page.text);
    assert.equal(unb64(page.body.content_base64), 'pushed home\n');
  });

  it('writes at the same time all land, one commit each', async () => {
    const titles = Array.from({ length: 6 }, (_, i) => `Parallel ${i}`);
    const results = await Promise.all(
      titles.map((t) =>
        s.api('POST', '/repos/alice/docs/wiki/new', {
          token: alice.token,
          body: { title: t, content_base64: b64(t) },
        }),
      ),
    );
    for (const r of results) assert.equal(r.status, 201, r.text);
    for (const t of titles) {
      const p = await getPage('docs', t.replace(' ', '-'));
      assert.equal(unb64(p.body.content_base64), t);
    }
    // The same new page twice at once: one wins, the other is told it exists.
    const twice = await Promise.all(
      [1, 2].map(() =>
        s.api('POST', '/repos/alice/docs/wiki/new', {
          token: alice.token,
          body: { title: 'Twice', content_base64: b64('twice') },
        }),
      ),
    );
    assert.deepEqual(twice.map((r) => r.status).sort(), [201, 400]);
  });

  it('team members reach the wiki only through a team unit that includes it', async () => {
    const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'wikiorg' } });
    assert.equal(org.status, 201, org.text);
    const repo = await s.api('POST', '/orgs/wikiorg/repos', {
      token: alice.token,
      body: { name: 'private-docs', private: true },
    });
    assert.equal(repo.status, 201, repo.text);
    const team = async (name: string, units: string[]) => {
      const t = await s.api<{ id: number }>('POST', '/orgs/wikiorg/teams', {
        token: alice.token,
        body: { name, permission: 'write', units, includes_all_repositories: true },
      });
      assert.equal(t.status, 201, t.text);
      return t.body.id;
    };
    const coders = await team('coders', ['repo.code']);
    const writers = await team('writers', ['repo.wiki']);
    assert.equal((await s.api('PUT', `/teams/${coders}/members/eve`, { token: alice.token })).status, 204);
    assert.equal((await s.api('PUT', `/teams/${writers}/members/carol`, { token: alice.token })).status, 204);
    const body = { title: 'Team Page', content_base64: b64('team\n') };
    const eveWrite = await s.api('POST', '/repos/wikiorg/private-docs/wiki/new', { token: eve.token, body });
    assert.equal(eveWrite.status, 404, eveWrite.text);
    const carolWrite = await s.api('POST', '/repos/wikiorg/private-docs/wiki/new', {
      token: carol.token,
      body,
    });
    assert.equal(carolWrite.status, 201, carolWrite.text);
    const eveClone = await g.tryGit([
      'clone',
      wikiUrl('wikiorg', 'private-docs', eve),
      path.join(g.home, 'eve-team'),
    ]);
    assert.equal(eveClone.ok, false);
    assert.match(eveClone.out, /403/);
    const dir = path.join(g.home, 'carol-team');
    await g.git(['clone', '--quiet', wikiUrl('wikiorg', 'private-docs', carol), dir]);
    await g.commit(dir, 'Carol.md', 'carol\n');
    await g.git(['push', '--quiet', 'origin', 'main'], dir);
    const p = await s.api('GET', '/repos/wikiorg/private-docs/wiki/page/Carol', { token: carol.token });
    assert.equal(p.status, 200, p.text);
  });

  it('has_wiki false: the API answers 404, git 403; turned on again, the pages are back', async () => {
    const off = await s.api<{ has_wiki: boolean }>('PATCH', '/repos/alice/docs', {
      token: alice.token,
      body: { has_wiki: false },
    });
    assert.equal(off.status, 200, off.text);
    assert.equal(off.body.has_wiki, false);
    assert.equal((await getPage('docs', 'Home', alice.token)).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/docs/wiki/pages', { token: alice.token })).status, 404);
    const post = await s.api('POST', '/repos/alice/docs/wiki/new', {
      token: alice.token,
      body: { title: 'Off', content_base64: b64('x') },
    });
    assert.equal(post.status, 404, post.text);
    const clone = await g.tryGit(['clone', wikiUrl('alice', 'docs', alice), path.join(g.home, 'off')]);
    assert.equal(clone.ok, false);
    assert.match(clone.out, /wiki is disabled|403/);
    const on = await s.api('PATCH', '/repos/alice/docs', { token: alice.token, body: { has_wiki: true } });
    assert.equal(on.status, 200, on.text);
    assert.equal((await getPage('docs', 'Home')).status, 200);
  });

  it('the wiki is outside the repository size quota (size:wiki is always within it)', async () => {
    const wally = await s.createUser('wally');
    const rule = await s.api('POST', '/admin/quota/rules', {
      token: s.admin.token,
      body: { name: 'tiny-repos', limit: 1, subjects: ['size:repos:all'] },
    });
    assert.equal(rule.status, 201, rule.text);
    const group = await s.api('POST', '/admin/quota/groups', {
      token: s.admin.token,
      body: { name: 'tiny', rules: [{ name: 'tiny-repos' }] },
    });
    assert.equal(group.status, 201, group.text);
    const member = await s.api('POST', '/admin/users/wally/quota/groups', {
      token: s.admin.token,
      body: { groups: ['tiny'] },
    });
    assert.equal(member.status, 204, member.text);
    await createRepo(wally, { name: 'full', auto_init: true });
    const usage = async () =>
      (
        await s.api<{ used: { size: { repos: { public: number } } } }>('GET', '/user/quota', {
          token: wally.token,
        })
      ).body.used.size.repos.public;
    const before = await usage();
    assert.ok(before > 1);
    // The repository itself is over quota: a file written through the API is refused.
    const file = await s.api('POST', '/repos/wally/full/contents/x.txt', {
      token: wally.token,
      body: { content: b64('x') },
    });
    assert.equal(file.status, 413, file.text);
    // Its wiki is not.
    const r = await s.api('POST', '/repos/wally/full/wiki/new', {
      token: wally.token,
      body: { title: 'Home', content_base64: b64('x'.repeat(10_000)) },
    });
    assert.equal(r.status, 201, r.text);
    const dir = path.join(g.home, 'wally-wiki');
    await g.git(['clone', '--quiet', wikiUrl('wally', 'full', wally), dir]);
    await g.commit(dir, 'Big.md', 'y'.repeat(50_000));
    await g.git(['push', '--quiet', 'origin', 'main'], dir);
    assert.equal((await s.api('GET', '/repos/wally/full/wiki/page/Big', { token: wally.token })).status, 200);
    assert.equal(await usage(), before);
    const check = await s.api('GET', '/user/quota/check?subject=size:wiki', { token: wally.token });
    assert.equal(check.text, 'true');
    const repos = await s.api('GET', '/user/quota/check?subject=size:repos:all', { token: wally.token });
    assert.equal(repos.text, 'false');
  });

  it('sends the wiki webhook event for pages written through the API', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const hook = await s.api('POST', '/repos/alice/docs/hooks', {
      token: alice.token,
      body: {
        type: 'forgejo',
        config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' },
        events: ['wiki'],
        active: true,
      },
    });
    assert.equal(hook.status, 201, hook.text);
    await newPage('docs', 'Hooked Page', 'hooked\n', alice, 'Hook me');
    await s.api('DELETE', '/repos/alice/docs/wiki/page/Hooked-Page', { token: alice.token });
    assert.ok(await waitFor(async () => received.length >= 2, 15_000, 50), `got ${received.length}`);
    const [created, deleted] = received.map((r) => ({
      event: r.headers['x-forgejo-event'],
      body: JSON.parse(r.body) as Record<string, unknown>,
    }));
    assert.equal(created!.event, 'wiki');
    assert.equal(created!.body['action'], 'created');
    assert.equal(created!.body['page'], 'Hooked-Page');
    assert.equal(created!.body['comment'], 'Hook me');
    assert.equal((created!.body['repository'] as { full_name: string }).full_name, 'alice/docs');
    assert.equal((created!.body['sender'] as { login: string }).login, 'alice');
    assert.equal(deleted!.body['action'], 'deleted');
  });

  it('web pages render pages with the markdown renderer (sanitized), list them, and hide private wikis', async () => {
    const html = async (p: string) => {
      const r = await fetch(`${s.url}${p}`, { redirect: 'manual' });
      return { status: r.status, text: await r.text() };
    };
    await newPage(
      'docs',
      'A <b> tag',
      '# Safe Title\n\n<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n**bold** [link](javascript:alert(3))\n',
    );
    const page = await html('/alice/docs/wiki/A-%3Cb%3E-tag');
    assert.equal(page.status, 200, page.text);
    assert.match(page.text, /<strong>bold<\/strong>/);
    assert.match(page.text, /Safe Title<\/h1>/);
    assert.match(page.text, /<h2[^>]*>A &lt;b> tag<\/h2>/);
    assert.doesNotMatch(page.text, /<script>alert/);
    assert.doesNotMatch(page.text, /<img[^>]*onerror/);
    assert.doesNotMatch(page.text, /href="javascript:/);
    assert.doesNotMatch(page.text, /<b> tag/);
    // The sidebar shows beside it, its [[wiki link]] a link; Home is the wiki's front page.
    assert.match(
      page.text,
      /<aside [^>]*><div class="markdown"><ul>\s*<li><a href="\/alice\/docs\/wiki\/Home">Home<\/a><\/li>/,
    );
    const home = await html('/alice/docs/wiki');
    assert.equal(home.status, 200, home.text);
    assert.match(home.text, /Home from git<\/h1>/);
    const list = await html('/alice/docs/wiki/?action=_pages');
    assert.equal(list.status, 200, list.text);
    assert.match(list.text, /href="\/alice\/docs\/wiki\/A-%3Cb%3E-tag">A &lt;b> tag<\/a>/);
    assert.match(list.text, /href="\/alice\/docs\/wiki\/From-Git">From Git<\/a>/);
    assert.equal((await html('/alice/docs/wiki/No-Such-Page')).status, 404);
    assert.equal((await html('/alice/secret/wiki')).status, 404);
    assert.equal((await html('/alice/secret/wiki/Home')).status, 404);
    await createRepo(alice, { name: 'blank' });
    const blank = await html('/alice/blank/wiki');
    assert.equal(blank.status, 200, blank.text);
    assert.match(blank.text, /no pages yet/);
  });

  it('the wiki goes with its repository', async () => {
    const repo = await createRepo(alice, { name: 'gone' });
    await newPage('gone', 'Home', 'soon gone\n');
    const dir = s.ctx.wiki.pathOf(repo);
    assert.ok(fs.existsSync(dir));
    const del = await s.api('DELETE', '/repos/alice/gone', { token: alice.token });
    assert.equal(del.status, 204, del.text);
    assert.equal(fs.existsSync(dir), false);
  });
});
