// Rendering (/markdown, /markdown/raw, /markup) with Forgejo's flavour: GFM tables, task lists,
// autolinks, heading ids, references (#12, owner/repo#12, @user, commit ids) linked as the mode and
// context allow, fenced code highlighted, and known XSS payloads neutralized. Also the label
// templates (/label/templates, a repository created with issue_labels) and /nodeinfo.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface Msg {
  message: string;
}

describe('markup rendering, label templates and nodeinfo', () => {
  let s: TestServer;
  let alice: { name: string; token: string };

  const markdown = async (body: unknown, token?: string) => {
    const r = await s.api<string>('POST', '/markdown', { body, ...(token ? { token } : {}) });
    return { status: r.status, html: r.text, type: r.headers.get('content-type') ?? '' };
  };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    await s.api('PATCH', '/admin/users/alice', { token: s.admin.token, body: {} });
    await s.createUser('hidden');
    await s.api('PATCH', '/admin/users/hidden', { token: s.admin.token, body: { visibility: 'private' } });
  });
  after(() => s.close());

  it('renders GFM: tables, task lists, strikethrough, autolinks, heading ids, highlighted code', async () => {
    const text = [
      '# Hello World!',
      '',
      '| a | b |',
      '|---|:-:|',
      '| 1 | 2 |',
      '',
      '- [x] done',
      '- [ ] to do',
      '',
      '~~gone~~ and https://example.com/page',
      '',
      '```js',
      'const x = 1;',
      '```',
    ].join('\n');
    const r = await markdown({ Text: text, Mode: 'gfm' });
    assert.equal(r.status, 200);
    assert.match(r.type, /^text\/html/);
    assert.match(r.html, /<h1 id="user-content-hello-world">Hello World!<\/h1>/);
    assert.match(r.html, /<table>[\s\S]*<th>a<\/th>[\s\S]*<td style="text-align:center">2<\/td>/);
    assert.match(
      r.html,
      /<input[^>]*type="checkbox"[^>]*checked[^>]*>|<input[^>]*checked[^>]*type="checkbox"/,
    );
    assert.match(r.html, /<li class="task-list-item">/);
    assert.match(r.html, /<s>gone<\/s>/);
    assert.match(
      r.html,
      /<a href="https:\/\/example.com\/page" rel="nofollow noopener">https:\/\/example.com\/page<\/a>/,
    );
    assert.match(r.html, /<code class="hljs language-js"><span class="hljs-keyword">const<\/span>/);
  });

  it('links references as the mode and context allow, and only to accounts that may be shown', async () => {
    const sha = 'a'.repeat(40);
    const text = `See #12 and other/place#3, thanks @alice and @nobody and @hidden; fixed in ${sha}. Not in \`#5\`.`;
    let r = await markdown({ Text: text, Mode: 'gfm', Context: 'alice/tool' });
    const root = s.url;
    assert.ok(r.html.includes(`<a href="${root}/alice/tool/issues/12" class="ref-issue">#12</a>`), r.html);
    assert.ok(r.html.includes(`<a href="${root}/other/place/issues/3" class="ref-issue">other/place#3</a>`));
    assert.ok(r.html.includes(`<a href="${root}/alice" class="mention">@alice</a>`));
    assert.ok(r.html.includes('@nobody') && !r.html.includes(`${root}/nobody`));
    assert.ok(
      r.html.includes('@hidden') && !r.html.includes(`${root}/hidden"`),
      'a private account is not linked',
    );
    assert.ok(
      r.html.includes(
        `<a href="${root}/alice/tool/commit/${sha}" class="commit"><code>aaaaaaaaaa</code></a>`,
      ),
    );
    assert.ok(r.html.includes('<code>#5</code>'), 'no reference inside code');
    // A private account shows to an administrator.
    r = await markdown({ Text: '@hidden', Mode: 'gfm' }, s.admin.token);
    assert.ok(r.html.includes(`<a href="${root}/hidden" class="mention">@hidden</a>`));
    // Plain markdown mode links no issue (no repository context), comments break lines.
    r = await markdown({ Text: 'see #12\nnext line', Context: 'alice/tool' });
    assert.ok(!r.html.includes('ref-issue'));
    assert.ok(!r.html.includes('<br'));
    r = await markdown({ Text: 'see #12\nnext line', Mode: 'comment', Context: `${root}/alice/tool` });
    assert.ok(r.html.includes('ref-issue'));
    assert.ok(r.html.includes('<br'));
    // A link's text keeps its own target.
    r = await markdown({ Text: '[#7](https://elsewhere.example/x)', Mode: 'gfm', Context: 'alice/tool' });
    assert.ok(!r.html.includes('ref-issue'));
  });

  it('neutralizes known XSS payloads', async () => {
    const payloads = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '[x](javascript:alert(1))',
      '[x](JaVaScRiPt:alert(1))',
      '[x](&#106;avascript:alert(1))',
      '[x](java\tscript:alert(1))',
      '[x](vbscript:msgbox(1))',
      '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '![x](javascript:alert(1))',
      '![x"onerror="alert(1)](https://example.com/a.png)',
      '<svg onload=alert(1)>',
      '<a href=" javascript:alert(1)">x</a>',
      '<iframe src="https://evil.example"></iframe>',
      '<style>body{display:none}</style>',
      '[x](https://ok.example "title\\" onmouseover=\\"alert(1)")',
      '<details open ontoggle=alert(1)>',
      '`<script>` and <b onclick=alert(1)>bold</b>',
    ];
    for (const text of payloads) {
      for (const mode of ['markdown', 'gfm', 'comment']) {
        const r = await markdown({ Text: text, Mode: mode, Context: 'alice/tool' });
        assert.equal(r.status, 200);
        const html = r.html;
        assert.ok(!/<script/i.test(html), `${text}: ${html}`);
        assert.ok(!/<(iframe|style|svg)/i.test(html), `${text}: ${html}`);
        // An event attribute among a tag's attributes (quoted values skipped: text there is inert).
        assert.ok(
          !/<[a-z]+(\s+[\w-]+(="[^"]*")?)*\s+on[a-z]+=/i.test(html),
          `event attribute: ${text}: ${html}`,
        );
        assert.ok(!/<[^>]*(href|src)="\s*(javascript|vbscript|data):/i.test(html), `${text}: ${html}`);
      }
    }
  });

  it('renders raw markdown and markup by file name; refuses unknown modes and extensions', async () => {
    const raw = await fetch(`${s.url}/api/v1/markdown/raw`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '**bold** @alice',
    });
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get('content-type') ?? '', /^text\/html/);
    const html = await raw.text();
    assert.match(html, /<strong>bold<\/strong>/);
    assert.ok(html.includes('class="mention"'));
    // Body-less: an empty document.
    const empty = await fetch(`${s.url}/api/v1/markdown/raw`, { method: 'POST' });
    assert.equal(empty.status, 200);
    assert.equal(await empty.text(), '');

    let r = await s.api<string>('POST', '/markup', {
      body: { Text: '# Title\n\nbody', Mode: 'file', FilePath: 'docs/README.md' },
    });
    assert.equal(r.status, 200);
    assert.match(r.text, /<h1 id="user-content-title">Title<\/h1>/);
    r = await s.api<string>('POST', '/markup', { body: { Text: '*x*', Mode: 'gfm' } });
    assert.match(r.text, /<em>x<\/em>/);
    const bad = await s.api<Msg>('POST', '/markup', { body: { Text: 'x', Mode: 'file', FilePath: 'a.xyz' } });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /Unsupported render extension: \.xyz/);
    const mode = await s.api<Msg>('POST', '/markdown', { body: { Text: 'x', Mode: 'nonsense' } });
    assert.equal(mode.status, 422);
    assert.match(mode.body.message, /Mode/);
    const typed = await s.api<Msg>('POST', '/markdown', { body: { Text: 5 } });
    assert.equal(typed.status, 422);
    // Body-less /markdown is an empty document.
    const none = await s.api<string>('POST', '/markdown', {});
    assert.equal(none.status, 200);
    assert.equal(none.text, '');
  });

  it('lists label templates and starts a repository with one', async () => {
    const list = await s.api<string[]>('GET', '/label/templates');
    assert.deepEqual(list.body, ['Advanced', 'Default']);
    const def = await s.api<Array<{ name: string; color: string; exclusive: boolean; description: string }>>(
      'GET',
      '/label/templates/Default',
    );
    assert.equal(def.status, 200);
    const bug = def.body.find((l) => l.name === 'Kind/Bug')!;
    assert.deepEqual(bug, {
      name: 'Kind/Bug',
      color: 'ee0701',
      description: 'Something is not working',
      exclusive: true,
    });
    const adv = await s.api<Array<{ name: string; exclusive: boolean }>>('GET', '/label/templates/advanced');
    assert.ok(adv.body.some((l) => l.name === 'Kind: Bug' && !l.exclusive));
    assert.equal((await s.api('GET', '/label/templates/Nope')).status, 404);

    const created = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'labelled', issue_labels: 'Default' },
    });
    assert.equal(created.status, 201);
    const labels = await s.api<Array<{ name: string; color: string; exclusive: boolean }>>(
      'GET',
      '/repos/alice/labelled/labels?limit=50',
      { token: alice.token },
    );
    assert.equal(labels.body.length, def.body.length);
    const l = labels.body.find((x) => x.name === 'Priority/High')!;
    assert.equal(l.color, 'd32f2f');
    assert.equal(l.exclusive, true);
    // An unknown template creates nothing.
    const refused = await s.api<Msg>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'unlabelled', issue_labels: 'Nope' },
    });
    assert.equal(refused.status, 422);
    assert.match(refused.body.message, /IssueLabels/);
    assert.equal((await s.api('GET', '/repos/alice/unlabelled', { token: alice.token })).status, 404);
  });

  it('answers nodeinfo with counts that follow the site', async () => {
    const wk = await s.api<{ links: Array<{ rel: string; href: string }> }>(
      'GET',
      '/api/../.well-known/nodeinfo',
    );
    assert.equal(wk.status, 200);
    assert.equal(wk.body.links[0]!.href, `${s.config.server.rootUrl}api/v1/nodeinfo`);
    type Node = {
      version: string;
      software: { name: string };
      openRegistrations: boolean;
      usage: { users: { total: number }; localPosts: number; localComments: number };
    };
    const before = (await s.api<Node>('GET', '/nodeinfo')).body;
    assert.equal(before.version, '2.1');
    assert.equal(before.software.name, 'anvil');
    assert.equal(before.openRegistrations, true);
    await s.createUser('newcomer');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'talk' } });
    await s.api('POST', '/repos/alice/talk/issues', { token: alice.token, body: { title: 'hi' } });
    await s.api('POST', '/repos/alice/talk/issues/1/comments', { token: alice.token, body: { body: 'yo' } });
    const now = (await s.api<Node>('GET', '/nodeinfo')).body;
    assert.equal(now.usage.users.total, before.usage.users.total + 1);
    assert.equal(now.usage.localPosts, before.usage.localPosts + 1);
    assert.equal(now.usage.localComments, before.usage.localComments + 1);
  });
});
