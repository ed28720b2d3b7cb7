// RSS and Atom feeds at Forgejo's addresses: a user's, an organization's and a repository's
// activity, releases and tags, a branch's and a file's commits; what the viewer may read only;
// sanitized descriptions; announced in the pages' heads; off with [other] ENABLE_FEED = false.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser } from 'fast-xml-parser';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@' });
type Rss = { rss: { channel: { title: string; link: string; item?: RssItem | RssItem[] } } };
type RssItem = { title: string; link: string; description?: string; 'content:encoded'?: string };
type Atom = {
  feed: { title: string; entry?: AtomEntry | AtomEntry[]; link: Array<{ '@rel'?: string; '@href': string }> };
};
type AtomEntry = { title: string | { '#text': string }; link: { '@href': string } };
const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

describe('feeds', () => {
  let s: TestServer;
  let alice: { name: string; token: string; password: string };
  let bob: { name: string; token: string; password: string };

  const get = async (p: string, web?: WebClient) => {
    const res = await fetch(s.url + p, { headers: web ? { cookie: cookieOf(web) } : {} });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };
  const cookieOf = (w: WebClient) => [...w.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const rss = async (p: string, web?: WebClient) => {
    const r = await get(p, web);
    assert.equal(r.status, 200, `${p}: ${r.text.slice(0, 200)}`);
    assert.match(r.type, /^application\/rss\+xml/);
    return (xml.parse(r.text) as Rss).rss.channel;
  };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    const auth = { token: alice.token };
    assert.equal(
      (
        await s.api('POST', '/user/repos', {
          ...auth,
          body: { name: 'app', auto_init: true, description: 'The app' },
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await s.api('POST', '/user/repos', {
          ...auth,
          body: { name: 'secret', private: true, auto_init: true },
        })
      ).status,
      201,
    );
    assert.equal(
      (await s.api('POST', '/repos/alice/app/issues', { ...auth, body: { title: 'Crash on start' } })).status,
      201,
    );
    assert.equal(
      (
        await s.api('POST', '/repos/alice/app/issues/1/comments', {
          ...auth,
          body: { body: 'Seen **twice** <script>alert(1)</script>' },
        })
      ).status,
      201,
    );
    assert.equal(
      (await s.api('POST', '/repos/alice/secret/issues', { ...auth, body: { title: 'Hidden plan' } })).status,
      201,
    );
    assert.equal(
      (
        await s.api('POST', '/repos/alice/app/releases', {
          ...auth,
          body: { tag_name: 'v1.0', name: 'First', body: 'Notes with *emphasis*' },
        })
      ).status,
      201,
    );
    assert.equal(
      (
        await s.api('POST', '/repos/alice/app/contents/docs/guide.md', {
          ...auth,
          body: { content: Buffer.from('# Guide\n').toString('base64'), message: 'Add the guide' },
        })
      ).status,
      201,
    );
    assert.equal(
      (await s.api('POST', '/orgs', { token: bob.token, body: { username: 'team' } })).status,
      201,
    );
    assert.equal(
      (await s.api('POST', '/orgs/team/repos', { token: bob.token, body: { name: 'site' } })).status,
      201,
    );
  });

  after(async () => {
    await s.close();
  });

  it("a user's feed (RSS and Atom): what they did, private work only to themselves", async () => {
    const anon = await rss('/alice.rss');
    assert.equal(anon.title, 'Feed of "alice"');
    assert.equal(anon.link, `${s.url}/alice`);
    const titles = list(anon.item).map((i) => i.title);
    assert.ok(titles.includes('alice opened issue alice/app#1'), titles.join('\n'));
    assert.ok(titles.includes('alice created repository alice/app'), titles.join('\n'));
    assert.ok(titles.includes('alice released First of alice/app'), titles.join('\n'));
    assert.ok(!titles.some((t) => t.includes('secret')), 'private work is not in the public feed');
    const issue = list(anon.item).find((i) => i.title === 'alice opened issue alice/app#1')!;
    assert.equal(issue.link, `${s.url}/alice/app/issues/1`);
    // The comment: rendered markdown, sanitized.
    const comment = list(anon.item).find((i) => i.title === 'alice commented on issue alice/app#1')!;
    assert.match(comment.description ?? '', /<strong>twice<\/strong>/);
    assert.doesNotMatch(comment.description ?? '', /<script/);
    assert.match(comment.link, /\/alice\/app\/issues\/1#issuecomment-\d+$/);

    const web = new WebClient(s.url);
    await web.signIn('alice', alice.password);
    const own = await rss('/alice.rss', web);
    assert.ok(list(own.item).some((i) => i.title === 'alice opened issue alice/secret#1'));
    const other = new WebClient(s.url);
    await other.signIn('bob', bob.password);
    assert.ok(!list((await rss('/alice.rss', other)).item).some((i) => i.title.includes('secret')));

    const atom = await get('/alice.atom');
    assert.equal(atom.status, 200);
    assert.match(atom.type, /^application\/atom\+xml/);
    const feed = (xml.parse(atom.text) as Atom).feed;
    assert.equal(feed.title, 'Feed of "alice"');
    assert.ok(list(feed.entry).some((e) => e.link['@href'] === `${s.url}/alice/app/issues/1`));
    assert.equal((await get('/nobody.rss')).status, 404);
  });

  it("a repository's feed, its releases and tags; a private one only to readers", async () => {
    const app = await rss('/alice/app.rss');
    assert.equal(app.title, 'Feed of "alice/app"');
    assert.ok(list(app.item).some((i) => i.title === 'alice opened issue alice/app#1'));
    assert.ok(list(app.item).every((i) => !i.title.includes('secret')));
    assert.equal((await get('/alice/secret.rss')).status, 404);
    assert.equal((await get('/alice/secret.atom')).status, 404);
    const web = new WebClient(s.url);
    await web.signIn('alice', alice.password);
    assert.ok(
      list((await rss('/alice/secret.rss', web)).item).some(
        (i) => i.title === 'alice opened issue alice/secret#1',
      ),
    );

    const releases = await rss('/alice/app/releases.rss');
    const [first] = list(releases.item);
    assert.equal(first?.title, 'First');
    assert.equal(first?.link, `${s.url}/alice/app/releases/tag/v1.0`);
    assert.match(first?.['content:encoded'] ?? '', /<em>emphasis<\/em>/);
    assert.equal(list((await rss('/alice/app/tags.rss')).item).length, 0, 'a release is not a bare tag');
    assert.equal((await get('/alice/app/releases.atom')).status, 200);
    assert.equal((await get('/alice/secret/releases.rss')).status, 404);
  });

  it("a branch's and a file's commits", async () => {
    const branch = await rss('/alice/app/rss/branch/main');
    const titles = list(branch.item).map((i) => i.title);
    assert.deepEqual(titles.slice(0, 2), ['Add the guide', 'Initial commit']);
    assert.match(list(branch.item)[0]!.link, /\/alice\/app\/commit\/[0-9a-f]{40}$/);
    const file = await get('/alice/app/atom/branch/main/docs/guide.md');
    assert.equal(file.status, 200);
    const entries = list((xml.parse(file.text) as Atom).feed.entry);
    assert.equal(entries.length, 1);
    assert.equal((await get('/alice/app/rss/branch/nope')).status, 404);
    assert.equal((await get('/alice/secret/rss/branch/main')).status, 404);
  });

  it("an organization's feed, and the pages announce their feeds", async () => {
    const org = await rss('/team.rss');
    assert.ok(list(org.item).some((i) => i.title === 'bob created repository team/site'));
    const home = await get('/alice/app');
    assert.match(
      home.text,
      /<link rel="alternate" type="application\/rss\+xml" title="[^"]*" href="\/alice\/app\.rss"/,
    );
    const profile = await get('/alice');
    assert.match(profile.text, /href="\/alice\.atom"/);
  });

  it('[other] ENABLE_FEED = false: no feeds and none announced', async () => {
    const off = await startServer({ ANVIL__OTHER__ENABLE_FEED: 'false' });
    try {
      const u = await off.createUser('carol');
      await off.api('POST', '/user/repos', { token: u.token, body: { name: 'r', auto_init: true } });
      for (const p of ['/carol.rss', '/carol/r.atom', '/carol/r/releases.rss', '/carol/r/rss/branch/main'])
        assert.equal((await fetch(off.url + p)).status, 404, p);
      assert.doesNotMatch(await (await fetch(`${off.url}/carol/r`)).text(), /application\/rss\+xml/);
    } finally {
      await off.close();
    }
  });
});
