// The code pages of a repository in the web interface, over HTTP: the home (files, README rendered
// and sanitized, clone URL), directories and files at branches (with slashes), tags and commits,
// raw and archive downloads, history, a commit with its diff and .diff/.patch, branches and tags;
// XSS in file names, branch names, README and commit messages inert; private repositories 404 to
// outsiders; and the html_url, download_url, zipball/tarball URLs the API hands out answering 200.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';
import { GitClient } from '../helpers/git.js';

const XSS = '<img src=x onerror=alert(1)>';

describe('web code pages', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string };
  let work: string;

  const client = new GitClient();
  // Asynchronous: the server runs in this process.
  const git = (args: string[]) => client.git(args, work);

  before(async () => {
    // Small display and diff limits, so that a few lines exceed them.
    s = await startServer({
      ANVIL__UI__MAX_DISPLAY_FILE_SIZE: '4096',
      ANVIL__GIT__MAX_GIT_DIFF_LINES: '100',
      ANVIL__GIT__MAX_GIT_DIFF_FILES: '2',
      ANVIL__GIT__MAX_GIT_DIFF_LINE_CHARACTERS: '200',
      ANVIL__INDEXER__REPO_INDEXER_ENABLED: 'true',
    });
    alice = await s.createUser('alice');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'proj' } });
    await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'secret', private: true, auto_init: true },
    });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-webcode-'));
    await git(['init', '-q', '-b', 'main', '.']);
    fs.writeFileSync(
      path.join(work, 'README.md'),
      `# Hello <script>alert(1)</script>\n\nSome **bold** text. [x](javascript:alert(1))\n\n${XSS}\n\n\`\`\`js\nconst a = 1;\n\`\`\`\n`,
    );
    fs.mkdirSync(path.join(work, 'src'));
    fs.writeFileSync(
      path.join(work, 'src', 'main.ts'),
      'export const answer: number = 42;\nconsole.log("<b>hi</b>");\n',
    );
    fs.writeFileSync(path.join(work, `${'weird<b>'}.txt`), 'x\n');
    fs.writeFileSync(path.join(work, 'page.html'), '<script>alert(document.cookie)</script>\n');
    await git(['add', '.']);
    await git(['commit', '-q', '-m', `First commit ${XSS}`]);
    await git(['checkout', '-q', '-b', 'feature/deep']);
    fs.writeFileSync(path.join(work, 'src', 'main.ts'), 'export const answer: number = 43;\n');
    await git(['commit', '-q', '-am', 'Change the answer']);
    await git(['checkout', '-q', 'main']);
    await git(['tag', 'v1.0']);
    const remote = `http://alice:${alice.token}@127.0.0.1:${new URL(s.url).port}/alice/proj.git`;
    await git(['push', '-q', remote, 'main', 'feature/deep', 'v1.0']);
  });
  after(async () => {
    await s.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('shows the repository home with its files and a sanitized README', async () => {
    const c = new WebClient(s.url);
    const home = await c.get('/alice/proj');
    assert.equal(home.status, 200, home.text);
    assert.match(home.text, /<title>alice\/proj - Anvil<\/title>/);
    assert.match(home.text, /href="\/alice\/proj\/src\/branch\/main\/src"/);
    assert.match(home.text, /value="http:\/\/127\.0\.0\.1:\d+\/alice\/proj\.git"/);
    assert.match(home.text, /<strong>bold<\/strong>/);
    assert.match(home.text, /class="hljs language-js"/);
    assert.doesNotMatch(home.text, /<script>alert/);
    assert.doesNotMatch(home.text, /<img src="?x"? onerror/);
    assert.doesNotMatch(home.text, /href="javascript:/);
    assert.doesNotMatch(home.text, /weird<b>/, 'file names are escaped');
    assert.match(home.text, /weird&lt;b>\.txt/);
  });

  it('browses directories and files at branches, tags and commits', async () => {
    const c = new WebClient(s.url);
    const dir = await c.get('/alice/proj/src/branch/main/src');
    assert.equal(dir.status, 200);
    assert.match(dir.text, /main\.ts/);
    const file = await c.get('/alice/proj/src/branch/main/src/main.ts');
    assert.equal(file.status, 200);
    assert.match(file.text, /id="L1"/);
    assert.match(file.text, /href="#L2"/);
    assert.match(file.text, /class="hljs-keyword">export/);
    assert.doesNotMatch(file.text, /<b>hi<\/b>/, 'code is escaped');
    const deep = await c.get('/alice/proj/src/branch/feature/deep/src/main.ts');
    assert.equal(deep.status, 200);
    assert.match(deep.text, /43/);
    assert.equal((await c.get('/alice/proj/src/tag/v1.0/src/main.ts')).status, 200);
    const sha = (await git(['rev-parse', 'main'])).trim();
    assert.equal((await c.get(`/alice/proj/src/commit/${sha}/README.md`)).status, 200);
    assert.equal((await c.get('/alice/proj/src/branch/nope/README.md')).status, 404);
    assert.equal((await c.get('/alice/proj/src/branch/main/nothing.txt')).status, 404);
    assert.equal((await c.get('/alice/proj/src/bogus/main/README.md')).status, 404);
  });

  it('serves raw files safely, archives, history, commits with diffs, branches and tags', async () => {
    const c = new WebClient(s.url);
    const raw = await c.get('/alice/proj/raw/branch/main/src/main.ts');
    assert.equal(raw.status, 200);
    assert.equal(raw.text, 'export const answer: number = 42;\nconsole.log("<b>hi</b>");\n');
    const html = await fetch(`${s.url}/alice/proj/raw/branch/main/page.html`);
    assert.doesNotMatch(html.headers.get('content-type') ?? '', /html/);
    assert.equal(html.headers.get('x-content-type-options'), 'nosniff');
    const zip = await fetch(`${s.url}/alice/proj/archive/main.zip`);
    assert.equal(zip.status, 200);
    assert.equal(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString(),
      'PK',
    );
    assert.equal((await fetch(`${s.url}/alice/proj/archive/v1.0.tar.gz`)).status, 200);
    const history = await c.get('/alice/proj/commits/branch/feature/deep');
    assert.equal(history.status, 200);
    assert.match(history.text, /Change the answer/);
    assert.doesNotMatch(history.text, /<img src=x onerror/);
    const sha = (await git(['rev-parse', 'feature/deep'])).trim();
    const commit = await c.get(`/alice/proj/commit/${sha}`);
    assert.equal(commit.status, 200);
    // Unified: old and new line numbers, then the sign and the text.
    assert.match(
      commit.text,
      /<tr class="dl del"><td class="ln">1<\/td><td class="ln"><\/td><td class="code"><span class="sign">-<\/span>export const answer: number = 42;/,
    );
    assert.match(
      commit.text,
      /<tr class="dl add"><td class="ln"><\/td><td class="ln">1<\/td><td class="code"><span class="sign">\+<\/span>export const answer: number = 43;/,
    );
    assert.match(commit.text, /console\.log\(&quot;&lt;b>hi&lt;\/b>&quot;\)/);
    // Split: the deleted line beside the added one that replaced it, the unpaired one alone.
    const split = await c.get(`/alice/proj/commit/${sha}?style=split`);
    assert.match(
      split.text,
      /<tr class="dl pair"><td class="ln del">1<\/td><td class="code del">export const answer: number = 42;<\/td><td class="ln add">1<\/td><td class="code add">export const answer: number = 43;<\/td><\/tr>/,
    );
    assert.match(
      split.text,
      /<td class="ln del">2<\/td><td class="code del">console\.log[^<]*<\/td><td class="ln empty"><\/td>/,
    );
    const diff = await fetch(`${s.url}/alice/proj/commit/${sha}.diff`);
    assert.match(await diff.text(), /^diff --git a\/src\/main\.ts b\/src\/main\.ts/m);
    const patch = await fetch(`${s.url}/alice/proj/commit/${sha}.patch`);
    assert.match(await patch.text(), /^Subject: \[PATCH\] Change the answer/m);
    // Blame: each run of lines with the commit that last changed it, summaries escaped.
    const blame = await c.get('/alice/proj/blame/branch/main/src/main.ts');
    assert.equal(blame.status, 200);
    assert.match(
      blame.text,
      /<tr id="L1" class="run"><td class="blame muted"><a href="\/alice\/proj\/commit\/[0-9a-f]{40}">First commit &lt;img src=x onerror=alert\(1\)><\/a>/,
    );
    assert.match(blame.text, /<tr id="L2"><td class="blame muted"><\/td>/);
    const deep = await c.get('/alice/proj/blame/branch/feature/deep/src/main.ts');
    assert.match(deep.text, new RegExp(`<a href="/alice/proj/commit/${sha}">Change the answer</a>`));
    assert.equal((await c.get('/alice/proj/blame/branch/main/no-such-file')).status, 404);
    assert.equal((await c.get('/alice/proj/blame/branch/main/src')).status, 404);
    assert.match((await c.get('/alice/proj/branches')).text, /feature\/deep/);
    assert.match((await c.get('/alice/proj/tags')).text, /v1\.0/);
  });

  it('draws big files in blocks, cuts big diffs at the limits with a link to all, and compresses pages', async () => {
    await git(['checkout', '-q', '-b', 'big', 'main']);
    const wide = 'w'.repeat(300);
    const lines = [wide, ...Array.from({ length: 299 }, (_, i) => `line ${i + 2}`)];
    fs.writeFileSync(path.join(work, 'big.ts'), `${lines.join('\n')}\n`);
    fs.writeFileSync(path.join(work, 'huge.txt'), 'h'.repeat(5000));
    fs.writeFileSync(path.join(work, 'more.txt'), 'more\n');
    await git(['add', '.']);
    await git(['commit', '-q', '-m', 'Big things']);
    await git([
      'push',
      '-q',
      `http://alice:${alice.token}@127.0.0.1:${new URL(s.url).port}/alice/proj.git`,
      'big',
    ]);
    await git(['checkout', '-q', 'main']);
    const sha = (await git(['rev-parse', 'big'])).trim();
    const c = new WebClient(s.url);

    // 300 lines: two full blocks of 128 (drawn only when on screen) and the rest, every line anchored.
    const file = await c.get('/alice/proj/src/branch/big/big.ts');
    assert.equal(file.status, 200);
    assert.match(file.text, /<div class="code lines d3">/);
    assert.equal(file.text.match(/<div class="chunk full">/g)?.length, 2);
    assert.equal(file.text.match(/<div class="chunk">/g)?.length, 1);
    assert.match(
      file.text,
      /<div class="l" id="L300"><a href="#L300">300<\/a><code>line <span class="hljs-number">300<\/span><\/code><\/div>/,
    );
    // Over [ui] MAX_DISPLAY_FILE_SIZE: a link to the raw file instead.
    const huge = await c.get('/alice/proj/src/branch/big/huge.txt');
    assert.equal(huge.status, 200);
    assert.match(huge.text, /too large to show \(5000 bytes\)/);
    assert.match(huge.text, /href="\/alice\/proj\/raw\/branch\/big\/huge\.txt"/);
    assert.doesNotMatch(huge.text, /hhhhhhhhhh/);

    // [git] MAX_GIT_DIFF_LINES, _FILES and _LINE_CHARACTERS cut the diff, saying so; ?full=1 shows it all.
    const cut = await c.get(`/alice/proj/commit/${sha}`);
    assert.equal(cut.status, 200);
    assert.match(cut.text, /3 changed files with 302 additions/);
    assert.match(cut.text, /The first 100 of 301 lines of this file are shown\./);
    assert.match(cut.text, /1 more changed file is not shown\./);
    assert.match(cut.text, new RegExp(`href="/alice/proj/commit/${sha}\\?full=1"`));
    assert.match(cut.text, new RegExp(`${'w'.repeat(200)}…<`));
    assert.doesNotMatch(cut.text, new RegExp('w'.repeat(201)));
    assert.doesNotMatch(cut.text, />line 150</);
    assert.doesNotMatch(cut.text, /more\.txt/);
    const whole = await c.get(`/alice/proj/commit/${sha}?full=1&style=split`);
    assert.match(whole.text, />line 300</);
    assert.match(whole.text, /more\.txt/);
    assert.match(whole.text, new RegExp(wide));
    assert.doesNotMatch(whole.text, /class="diff-cut/);
    // Past 128 rows, the diff is drawn as tables of 128 rows.
    assert.ok((whole.text.match(/<div class="chunk"><table class="diff-table split">/g)?.length ?? 0) >= 3);

    // Pages and API JSON are compressed for clients that accept it; raw files and small answers are not.
    for (const encoding of ['br', 'gzip']) {
      const r = await fetch(`${s.url}/alice/proj/src/branch/big/big.ts`, {
        headers: { 'accept-encoding': encoding },
      });
      assert.equal(r.headers.get('content-encoding'), encoding);
      assert.match(r.headers.get('vary') ?? '', /accept-encoding/i);
      assert.match(await r.text(), /<div class="l" id="L300">/);
    }
    const plain = await fetch(`${s.url}/alice/proj/src/branch/big/big.ts`, {
      headers: { 'accept-encoding': 'identity' },
    });
    assert.equal(plain.headers.get('content-encoding'), null);
    const json = await fetch(`${s.url}/api/v1/repos/alice/proj`, {
      headers: { 'accept-encoding': 'gzip', authorization: `token ${alice.token}` },
    });
    assert.equal(json.headers.get('content-encoding'), 'gzip');
    assert.equal(((await json.json()) as { full_name: string }).full_name, 'alice/proj');
    const raw = await fetch(`${s.url}/alice/proj/raw/branch/big/big.ts`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    assert.equal(raw.headers.get('content-encoding'), null);
    assert.equal(raw.headers.get('content-length'), String(Buffer.byteLength(`${lines.join('\n')}\n`)));
    const small = await fetch(`${s.url}/api/v1/version`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(small.headers.get('content-encoding'), null);
  });

  it('searches the code of the default branch, the words marked and linked to their lines', async () => {
    const c = new WebClient(s.url);
    const found = await c.get('/alice/proj/search?q=ANSWER');
    assert.equal(found.status, 200);
    assert.match(found.text, /1 file on <code>main<\/code>/);
    assert.match(
      found.text,
      /<a href="\/alice\/proj\/src\/branch\/main\/src\/main\.ts#L1">1<\/a><code>export const <mark>answer<\/mark>: number = 42;<\/code>/,
    );
    // The text of a line is escaped; the query too.
    const tags = await c.get(`/alice/proj/search?q=${encodeURIComponent('<b>hi')}`);
    assert.match(tags.text, /console\.log\(&quot;<mark>&lt;b>hi<\/mark>&lt;\/b>&quot;\)/);
    assert.doesNotMatch(tags.text, /<b>hi/);
    assert.match((await c.get('/alice/proj/search?q=nowhere-to-be-found')).text, /No code matches/);
    assert.match((await c.get('/alice/proj/search')).text, /name="q"/);
    // Private repositories are searched by their readers only.
    assert.equal((await c.get('/alice/secret/search?q=a')).status, 404);
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    assert.equal((await a.get('/alice/secret/search?q=secret')).status, 200);
  });

  it('searches the code of every repository one may read at /explore/code', async () => {
    const anon = new WebClient(s.url);
    const tab = await anon.get('/explore/repos');
    assert.match(tab.text, /<a href="\/explore\/code"[^>]*>Code<\/a>/);
    const found = await anon.get('/explore/code?q=ANSWER');
    assert.equal(found.status, 200);
    assert.match(found.text, /<a href="\/alice\/proj">alice\/proj<\/a>/);
    assert.match(found.text, /<mark>answer<\/mark>/);
    // Private repositories: their readers only.
    const secret = await anon.get('/explore/code?q=secret');
    assert.doesNotMatch(secret.text, /alice\/secret/);
    const a = new WebClient(s.url);
    await a.signIn('alice', alice.password);
    assert.match(
      (await a.get('/explore/code?q=secret')).text,
      /<a href="\/alice\/secret">alice\/secret<\/a>/,
    );
    assert.match((await anon.get('/explore/code?q=nowhere-to-be-found')).text, /No code matches/);
    assert.match((await anon.get('/explore/code')).text, /name="q"/);
  });

  it('hides private repositories from outsiders and shows empty ones with instructions', async () => {
    const anon = new WebClient(s.url);
    assert.equal((await anon.get('/alice/secret')).status, 404);
    assert.equal((await anon.get('/alice/secret/src/branch/main/README.md')).status, 404);
    assert.equal((await fetch(`${s.url}/alice/secret/raw/branch/main/README.md`)).status, 404);
    assert.equal((await fetch(`${s.url}/alice/secret/archive/main.zip`)).status, 404);
    const me = new WebClient(s.url);
    await me.signIn('alice', alice.password);
    assert.equal((await me.get('/alice/secret')).status, 200);
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'blank' } });
    const blank = await me.get('/alice/blank');
    assert.equal(blank.status, 200);
    assert.match(blank.text, /This repository is empty/);
    assert.match(blank.text, /git push -u origin main/);
  });

  it('shows releases with rendered notes and downloadable assets', async () => {
    const rel = await s.api<{ id: number; html_url: string; tarball_url: string; zipball_url: string }>(
      'POST',
      '/repos/alice/proj/releases',
      {
        token: alice.token,
        body: { tag_name: 'v1.0', name: 'First <script>x</script>', body: `Notes with **bold** ${XSS}` },
      },
    );
    assert.equal(rel.status, 201, rel.text);
    const form = new FormData();
    form.set('attachment', new Blob([Buffer.from('asset bytes') as Buffer<ArrayBuffer>]), 'tool.bin');
    const up = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.body.id}/assets`, {
      method: 'POST',
      body: form,
      headers: { authorization: `token ${alice.token}` },
    });
    assert.equal(up.status, 201, await up.clone().text());
    const asset = (await up.json()) as { browser_download_url: string };

    const c = new WebClient(s.url);
    const list = await c.get('/alice/proj/releases');
    assert.equal(list.status, 200);
    assert.match(list.text, /<strong>bold<\/strong>/);
    assert.doesNotMatch(list.text, /<script>x/);
    assert.doesNotMatch(list.text, /<img src="?x"? onerror/);
    assert.match(list.text, /tool\.bin/);
    for (const url of [
      rel.body.html_url,
      rel.body.tarball_url,
      rel.body.zipball_url,
      asset.browser_download_url,
    ]) {
      assert.equal((await fetch(url)).status, 200, url);
    }
    const latest = await c.get('/alice/proj/releases/latest');
    assert.equal(latest.status, 303);
    assert.equal(latest.location, '/alice/proj/releases/tag/v1.0');
    const dl = await fetch(`${s.url}/alice/proj/releases/download/v1.0/tool.bin`);
    assert.equal(dl.status, 200);
    assert.equal(await dl.text(), 'asset bytes');
    assert.equal((await fetch(`${s.url}/alice/proj/releases/download/v1.0/nope.bin`)).status, 404);
    assert.equal((await c.get('/alice/proj/releases/tag/v9')).status, 404);
  });

  it('resolves the html_url and download links the API hands out', async () => {
    const auth = { token: alice.token };
    const repo = await s.api<{ html_url: string }>('GET', '/repos/alice/proj', auth);
    const file = await s.api<{ html_url: string; download_url: string }>(
      'GET',
      '/repos/alice/proj/contents/src/main.ts',
      auth,
    );
    const sha = (await git(['rev-parse', 'main'])).trim();
    const commit = await s.api<{ html_url: string }>('GET', `/repos/alice/proj/git/commits/${sha}`, auth);
    const tag = await s.api<{ zipball_url: string; tarball_url: string }>(
      'GET',
      '/repos/alice/proj/tags/v1.0',
      auth,
    );
    const branch = await s.api<{ commit: { url: string } }>('GET', '/repos/alice/proj/branches/main', auth);
    const urls = [
      repo.body.html_url,
      file.body.html_url,
      file.body.download_url,
      commit.body.html_url,
      tag.body.zipball_url,
      tag.body.tarball_url,
      branch.body.commit.url,
    ];
    for (const url of urls) {
      assert.ok(url, 'the API gives the link');
      const r = await fetch(url);
      assert.equal(r.status, 200, url);
    }
  });
});
