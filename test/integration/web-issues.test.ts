// Issue and pull request pages in the web interface, over HTTP: lists (open/closed, search),
// an issue with its text and comments rendered and sanitized, a pull request page, numbers under
// the wrong list redirected, private repositories and turned-off units hidden, and the html_url
// of issues, comments and pull requests answering 200. Forms with files: refused before any file
// is written without a session or a CSRF token ahead of the first file, and no temporary file left
// behind, a request cut off included.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

const XSS = '<img src=x onerror=alert(1)>';

describe('web issue pages', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let bob: { name: string; token: string };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj', auto_init: true } });
    await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', private: true, auto_init: true },
    });
  });
  after(async () => s.close());

  it('lists issues by state and search, and shows one with its comments', async () => {
    const first = await s.api<{ number: number; html_url: string }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: `Broken ${XSS}`, body: `It **fails** <script>alert(1)</script>` },
    });
    const comment = await s.api<{ html_url: string }>(
      'POST',
      `/repos/alice/proj/issues/${first.body.number}/comments`,
      {
        token: bob.token,
        body: { body: `Me too ${XSS} [link](javascript:alert(1))` },
      },
    );
    const second = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'Old one' },
    });
    await s.api('PATCH', `/repos/alice/proj/issues/${second.body.number}`, {
      token: alice.token,
      body: { state: 'closed' },
    });

    const c = new WebClient(s.url);
    const open = await c.get('/alice/proj/issues');
    assert.equal(open.status, 200);
    assert.match(open.text, /Broken &lt;img src=x onerror=alert\(1\)>/);
    assert.doesNotMatch(open.text, /Old one/);
    const closed = await c.get('/alice/proj/issues?state=closed');
    assert.match(closed.text, /Old one/);
    assert.doesNotMatch(closed.text, /Broken/);
    assert.doesNotMatch((await c.get('/alice/proj/issues?q=nothing-like-this')).text, /Broken/);
    assert.match((await c.get('/alice/proj/issues?q=Broken')).text, /Broken/);

    const page = await c.get(`/alice/proj/issues/${first.body.number}`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<strong>fails<\/strong>/);
    assert.match(page.text, /Me too/);
    assert.doesNotMatch(page.text, /<script>alert/);
    assert.doesNotMatch(page.text, /<img src="?x"? onerror/);
    assert.doesNotMatch(page.text, /href="javascript:/);
    for (const url of [first.body.html_url, comment.body.html_url.split('#')[0]!]) {
      assert.equal((await fetch(url)).status, 200, url);
    }
    assert.equal((await c.get('/alice/proj/issues/999')).status, 404);
    assert.equal((await c.get('/alice/proj/issues/abc')).status, 404);
  });

  it('shows pull requests, and sends a number to the list it belongs to', async () => {
    const file = await s.api('POST', '/repos/alice/proj/contents/feature.txt', {
      token: alice.token,
      body: {
        content: Buffer.from('new').toString('base64'),
        message: 'Add a feature',
        new_branch: 'feature',
      },
    });
    assert.equal(file.status, 201, file.text);
    const pr = await s.api<{ number: number; html_url: string }>('POST', '/repos/alice/proj/pulls', {
      token: alice.token,
      body: { title: 'Add the feature', head: 'feature', base: 'main', body: 'Please *merge*' },
    });
    assert.equal(pr.status, 201, pr.text);
    const c = new WebClient(s.url);
    assert.equal((await fetch(pr.body.html_url)).status, 200);
    const list = await c.get('/alice/proj/pulls');
    assert.match(list.text, /Add the feature/);
    assert.doesNotMatch(list.text, /Broken/);
    const page = await c.get(`/alice/proj/pulls/${pr.body.number}`);
    assert.match(page.text, /<em>merge<\/em>/);
    const wrong = await c.get(`/alice/proj/issues/${pr.body.number}`);
    assert.equal(wrong.status, 303);
    assert.equal(wrong.location, `/alice/proj/pulls/${pr.body.number}`);
  });

  it('hides private repositories and turned-off issues', async () => {
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/secret/issues', {
      token: alice.token,
      body: { title: 'Hidden plans' },
    });
    const anon = new WebClient(s.url);
    assert.equal((await anon.get('/alice/secret/issues')).status, 404);
    assert.equal((await anon.get(`/alice/secret/issues/${issue.body.number}`)).status, 404);
    const me = new WebClient(s.url);
    await me.signIn('alice', alice.password);
    assert.match((await me.get(`/alice/secret/issues/${issue.body.number}`)).text, /Hidden plans/);
    await s.api('PATCH', '/repos/alice/proj', { token: alice.token, body: { has_issues: false } });
    assert.equal((await anon.get('/alice/proj/issues')).status, 404);
    assert.equal((await anon.get('/alice/proj/issues/1')).status, 404);
  });

  describe('forms with files', () => {
    const BOUNDARY = 'anvil-test-boundary';
    const field = (name: string, value: string) =>
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const fileHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const uploadsDir = () => path.join(s.dataDir, 'tmp', 'uploads');
    const leftovers = () => (fs.existsSync(uploadsDir()) ? fs.readdirSync(uploadsDir()) : []);
    const systemTemp = () => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('anvil-upload-'));
    let index = 0;

    before(async () => {
      await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'files', auto_init: true } });
      const issue = await s.api<{ number: number }>('POST', '/repos/alice/files/issues', {
        token: alice.token,
        body: { title: 'Files go here' },
      });
      assert.equal(issue.status, 201, issue.text);
      index = issue.body.number;
    });

    /**
     * Starts a multipart POST whose body never ends: `head` and 256 KiB of a file, then nothing.
     * The answer, if the server gives one before the body is whole (else null after 3 s).
     */
    function unfinished(cookies: string, head: string) {
      const req = http.request(`${s.url}/alice/files/issues/${index}/comments`, {
        method: 'POST',
        headers: {
          accept: 'text/html',
          cookie: cookies,
          'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        },
      });
      req.on('error', () => undefined);
      const answer = new Promise<http.IncomingMessage | null>((resolve) => {
        req.once('response', (res) => {
          res.resume();
          resolve(res);
        });
        setTimeout(() => resolve(null), 3000).unref();
      });
      req.write(head);
      req.write(Buffer.alloc(256 * 1024, 1));
      return { req, answer };
    }
    const cookiesOf = (c: WebClient) => [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    async function until(what: string, ok: () => boolean) {
      for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(ok(), what);
    }

    it('refuses an anonymous form before reading it, writing nothing', async () => {
      const before = systemTemp();
      const anon = new WebClient(s.url);
      await anon.get(`/alice/files/issues/${index}`);
      const { req, answer } = unfinished(cookiesOf(anon), field('_csrf', anon.csrf) + fileHead);
      const res = await answer;
      req.destroy();
      assert.ok(res, 'answered before the body was whole');
      assert.equal(res.statusCode, 303);
      assert.match(res.headers.location ?? '', /^\/user\/login\?redirect_to=/);
      assert.equal(res.headers.connection, 'close', 'the rest of the body is not read');
      assert.deepEqual(leftovers(), []);
      assert.deepEqual(systemTemp(), before, 'nothing in the system temporary folder either');
    });

    it('refuses a file that comes before a valid CSRF token, writing nothing', async () => {
      const c = new WebClient(s.url);
      await c.signIn(alice.name, alice.password);
      await c.get(`/alice/files/issues/${index}`);
      for (const [what, head] of [
        ['no token', field('content', 'hello') + fileHead],
        ['a wrong token', field('_csrf', 'not-the-token') + fileHead],
        ['the token after the file', fileHead],
      ] as const) {
        const { req, answer } = unfinished(cookiesOf(c), head);
        const res = await answer;
        req.destroy();
        assert.ok(res, `${what}: answered before the body was whole`);
        assert.equal(res.statusCode, 403, what);
        assert.equal(res.headers.connection, 'close', what);
        assert.deepEqual(leftovers(), [], what);
      }
      // The token in the X-Csrf-Token header lets the files come in any order.
      const form = new FormData();
      form.append('files', new Blob([Buffer.from('header token') as Buffer<ArrayBuffer>]), 'h.txt');
      form.append('content', 'by header');
      const ok = await fetch(`${s.url}/alice/files/issues/${index}/comments`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: cookiesOf(c), 'x-csrf-token': c.csrf, accept: 'text/html' },
        body: form,
      });
      assert.equal(ok.status, 303, await ok.text());
      await until('removed once answered', () => leftovers().length === 0);
    });

    it('removes the temporary file of a form cut off half-way', async () => {
      const c = new WebClient(s.url);
      await c.signIn(alice.name, alice.password);
      await c.get(`/alice/files/issues/${index}`);
      const { req } = unfinished(cookiesOf(c), field('_csrf', c.csrf) + fileHead);
      await until('the file is being written under the data directory', () => leftovers().length === 1);
      req.destroy();
      await until('the file is removed once the client is gone', () => leftovers().length === 0);
      const comments = await s.api<unknown[]>('GET', `/repos/alice/files/issues/${index}/comments`, {
        token: alice.token,
      });
      assert.equal(comments.body.length, 1, 'only the complete form made a comment');
    });
  });
});
