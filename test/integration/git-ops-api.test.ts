// Git operations over HTTP, checked with the real git client: several file changes in one commit,
// applying a diff, renaming a branch, git notes, EditorConfig definitions, updating a pull request's
// head branch from its base (merge and rebase), and finding pull requests by base/head and pinned;
// who may do each, bad input (422) and conflicts (409).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface ContentsJson {
  path: string;
  sha: string;
  content: string | null;
}

interface FilesJson {
  files: Array<ContentsJson | null>;
  commit: { sha: string; message: string; parents: Array<{ sha: string }> };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('git operations API', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: U;
  let bob: U;
  let dave: U;
  let wt: string;

  const url = (u: U, owner = 'alice', repo = 'proj') => repoUrl(s.url, owner, repo, [u.name, u.password]);

  /** The tip of `branch` on the server, fetched with git ('' when it does not exist). */
  async function remoteTip(branch: string): Promise<string> {
    await g.git(['fetch', '--quiet', '--prune', 'origin'], wt);
    const r = await g.tryGit(['rev-parse', '--verify', '--quiet', `origin/${branch}`], wt);
    return r.ok ? r.out.trim() : '';
  }

  async function show(rev: string, file: string): Promise<string> {
    return g.git(['show', `${rev}:${file}`], wt);
  }

  before(async () => {
    s = await startServer();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    dave = await s.createUser('dave');
    let r = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', auto_init: true },
    });
    assert.equal(r.status, 201, r.text);
    for (const [u, permission] of [
      [bob, 'read'],
      [dave, 'write'],
    ] as const) {
      r = await s.api('PUT', `/repos/alice/proj/collaborators/${u.name}`, {
        token: alice.token,
        body: { permission },
      });
      assert.equal(r.status, 204, r.text);
    }
    const parent = await g.workTree();
    wt = path.join(parent, 'proj');
    await g.git(['clone', '--quiet', url(alice), wt]);
  });

  after(async () => {
    await s?.ctx.pulls.idle();
    await s?.close();
    g?.cleanup();
  });

  describe('POST /contents (several files, one commit)', () => {
    it('creates, updates, moves and deletes files in one commit', async () => {
      let r = await s.api<FilesJson>('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: {
          files: [
            { operation: 'create', path: 'a.txt', content: b64('a\n') },
            { operation: 'create', path: 'dir/b.txt', content: b64('b\n') },
            { operation: 'create', path: 'c.txt', content: b64('c\n') },
          ],
        },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.files.length, 3);
      assert.equal(r.body.files[1]!.path, 'dir/b.txt');
      assert.equal(r.body.commit.message, 'Add a.txt, dir/b.txt, c.txt\n');
      const first = r.body.commit.sha;
      assert.equal(await remoteTip('main'), first);
      assert.equal(await show(first, 'dir/b.txt'), 'b\n');
      const shas = Object.fromEntries(r.body.files.map((f) => [f!.path, f!.sha]));

      r = await s.api<FilesJson>('POST', '/repos/alice/proj/contents', {
        token: dave.token,
        body: {
          message: 'several',
          files: [
            { operation: 'update', path: 'a.txt', content: b64('A\n'), sha: shas['a.txt'] },
            {
              operation: 'update',
              path: 'moved.txt',
              from_path: 'dir/b.txt',
              content: b64('B\n'),
              sha: shas['dir/b.txt'],
            },
            { operation: 'delete', path: 'c.txt', sha: shas['c.txt'] },
          ],
        },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.files[2], null);
      assert.equal(r.body.commit.message, 'several\n');
      assert.deepEqual(
        r.body.commit.parents.map((p) => p.sha),
        [first],
      );
      const second = r.body.commit.sha;
      assert.equal(await remoteTip('main'), second);
      const files = (await g.git(['ls-tree', '-r', '--name-only', second], wt)).trim().split('\n');
      assert.deepEqual(files.sort(), ['README.md', 'a.txt', 'moved.txt']);
      assert.equal(await show(second, 'moved.txt'), 'B\n');
      assert.equal((await g.git(['rev-list', '--count', `${first}..${second}`], wt)).trim(), '1');
    });

    it('commits to a new branch', async () => {
      const r = await s.api<FilesJson>('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { new_branch: 'multi', files: [{ operation: 'create', path: 'n.txt', content: b64('n') }] },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(await remoteTip('multi'), r.body.commit.sha);
    });

    it('refuses readers (403), strangers on private repos (404), bad input (422) and stale shas (409)', async () => {
      const one = { files: [{ operation: 'create', path: 'x.txt', content: b64('x') }] };
      let r = await s.api('POST', '/repos/alice/proj/contents', { token: bob.token, body: one });
      assert.equal(r.status, 403, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', { body: one });
      assert.equal(r.status, 401, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', { token: alice.token, body: { files: [] } });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { files: [{ operation: 'create', path: 'a.txt', content: b64('again') }] },
      });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: {
          files: [
            { operation: 'create', path: 'y.txt', content: b64('1') },
            { operation: 'create', path: 'y.txt', content: b64('2') },
          ],
        },
      });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { files: [{ operation: 'create', path: 'z.txt', content: '@@@' }] },
      });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { files: [{ operation: 'update', path: 'a.txt', content: b64('q'), sha: '0'.repeat(40) }] },
      });
      assert.equal(r.status, 409, r.text);
      r = await s.api('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { branch: 'nope', files: [{ operation: 'create', path: 'w.txt', content: b64('w') }] },
      });
      assert.equal(r.status, 404, r.text);
    });
  });

  describe('PATCH /branches/{branch} (rename)', () => {
    it('renames a branch; open pull requests and a protection rule named after it follow', async () => {
      let r = await s.api('POST', '/repos/alice/proj/branches', {
        token: alice.token,
        body: { new_branch_name: 'old-name' },
      });
      assert.equal(r.status, 201, r.text);
      await s.api('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { branch: 'old-name', files: [{ operation: 'create', path: 'ren.txt', content: b64('r') }] },
      });
      const pr = await s.api<{ number: number }>('POST', '/repos/alice/proj/pulls', {
        token: alice.token,
        body: { head: 'old-name', base: 'main', title: 'from old' },
      });
      assert.equal(pr.status, 201, pr.text);
      r = await s.api('POST', '/repos/alice/proj/branch_protections', {
        token: alice.token,
        body: { rule_name: 'old-name' },
      });
      assert.equal(r.status, 201, r.text);
      const tip = await remoteTip('old-name');
      const pushes: Array<Array<{ ref: string; oldOid: string; newOid: string }>> = [];
      s.ctx.events.on('push', (e) => {
        pushes.push(e.updates);
      });

      r = await s.api('PATCH', '/repos/alice/proj/branches/old-name', {
        token: dave.token,
        body: { name: 'new/name' },
      });
      assert.equal(r.status, 204, r.text);
      assert.equal(await remoteTip('old-name'), '');
      assert.equal(await remoteTip('new/name'), tip);
      r = await s.api('GET', '/repos/alice/proj/branches/new/name', { token: alice.token });
      assert.equal(r.status, 200, r.text);
      r = await s.api('GET', '/repos/alice/proj/branches/old-name', { token: alice.token });
      assert.equal(r.status, 404, r.text);
      const p = await s.api<{ head: { ref: string } }>('GET', `/repos/alice/proj/pulls/${pr.body.number}`, {
        token: alice.token,
      });
      assert.equal(p.body.head.ref, 'new/name');
      r = await s.api('GET', '/repos/alice/proj/branch_protections/new%2Fname', { token: alice.token });
      assert.equal(r.status, 200, r.text);
      // Announced like a push deleting the old branch and creating the new one.
      const zero = '0'.repeat(40);
      assert.deepEqual(pushes.at(-1), [
        { ref: 'refs/heads/old-name', oldOid: tip, newOid: zero },
        { ref: 'refs/heads/new/name', oldOid: zero, newOid: tip },
      ]);
    });

    it('renames the default branch: the repository and HEAD follow', async () => {
      let r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name: 'dflt', auto_init: true },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('PATCH', '/repos/alice/dflt/branches/main', {
        token: alice.token,
        body: { name: 'trunk' },
      });
      assert.equal(r.status, 204, r.text);
      const repo = await s.api<{ default_branch: string }>('GET', '/repos/alice/dflt', {
        token: alice.token,
      });
      assert.equal(repo.body.default_branch, 'trunk');
      const head = await g.git(['ls-remote', '--symref', url(alice, 'alice', 'dflt'), 'HEAD']);
      assert.match(head, /ref: refs\/heads\/trunk\tHEAD/);
      const branches = await s.api<Array<{ name: string }>>('GET', '/repos/alice/dflt/branches', {
        token: alice.token,
      });
      assert.deepEqual(
        branches.body.map((b) => b.name),
        ['trunk'],
      );
    });

    it('refuses: 422 (taken, same, invalid), 404 (missing), 403 (reader, glob rule), 401', async () => {
      let r = await s.api('POST', '/repos/alice/proj/branches', {
        token: alice.token,
        body: { new_branch_name: 'rel/one' },
      });
      assert.equal(r.status, 201, r.text);
      const cases: Array<[string, unknown, number, string?]> = [
        ['rel/one', { name: 'main' }, 422],
        ['rel/one', { name: 'rel/one' }, 422],
        ['rel/one', { name: 'bad..name' }, 422],
        ['rel/one', {}, 422],
        ['missing', { name: 'x-missing' }, 404],
        ['rel/one', { name: 'rel-two' }, 403, bob.token],
      ];
      for (const [from, body, status, token] of cases) {
        r = await s.api('PATCH', `/repos/alice/proj/branches/${from}`, { token: token ?? alice.token, body });
        assert.equal(r.status, status, `${from} ${JSON.stringify(body)}: ${r.text}`);
      }
      r = await s.api('PATCH', '/repos/alice/proj/branches/rel/one', { body: { name: 'zz' } });
      assert.equal(r.status, 401, r.text);
      r = await s.api('POST', '/repos/alice/proj/branch_protections', {
        token: alice.token,
        body: { rule_name: 'rel/*' },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('PATCH', '/repos/alice/proj/branches/rel/one', {
        token: alice.token,
        body: { name: 'free' },
      });
      assert.equal(r.status, 403, r.text);
      assert.ok(await remoteTip('rel/one'));
    });
  });

  describe('git notes', () => {
    it('sets, reads, replaces and removes a note; git sees it', async () => {
      const tip = await remoteTip('main');
      let r = await s.api<{ message: string; commit: { sha: string } }>(
        'GET',
        `/repos/alice/proj/git/notes/${tip}`,
        {
          token: bob.token,
        },
      );
      assert.equal(r.status, 404, r.text);
      r = await s.api('POST', `/repos/alice/proj/git/notes/${tip}`, {
        token: dave.token,
        body: { message: 'reviewed\n' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.message, 'reviewed\n');
      await g.git(['fetch', '--quiet', 'origin', 'refs/notes/commits:refs/notes/commits'], wt);
      assert.equal(await g.git(['notes', 'show', tip], wt), 'reviewed\n');
      const notesTip = (await g.git(['rev-parse', 'refs/notes/commits'], wt)).trim();
      assert.equal(r.body.commit.sha, notesTip);

      r = await s.api('GET', '/repos/alice/proj/git/notes/main', { token: bob.token });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.message, 'reviewed\n');
      r = await s.api('POST', '/repos/alice/proj/git/notes/main', {
        token: alice.token,
        body: { message: 'v2' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.message, 'v2\n');

      r = await s.api('POST', `/repos/alice/proj/git/notes/${tip}`, {
        token: bob.token,
        body: { message: 'x' },
      });
      assert.equal(r.status, 403, r.text);
      r = await s.api('DELETE', `/repos/alice/proj/git/notes/${tip}`, { token: bob.token });
      assert.equal(r.status, 403, r.text);
      r = await s.api('POST', `/repos/alice/proj/git/notes/${'f'.repeat(40)}`, {
        token: alice.token,
        body: { message: 'x' },
      });
      assert.equal(r.status, 404, r.text);
      r = await s.api('GET', '/repos/alice/proj/git/notes/..bad', { token: alice.token });
      assert.equal(r.status, 422, r.text);

      r = await s.api('DELETE', `/repos/alice/proj/git/notes/${tip}`, { token: dave.token });
      assert.equal(r.status, 204, r.text);
      r = await s.api('DELETE', `/repos/alice/proj/git/notes/${tip}`, { token: dave.token });
      assert.equal(r.status, 404, r.text);
      r = await s.api('GET', `/repos/alice/proj/git/notes/${tip}`, { token: alice.token });
      assert.equal(r.status, 404, r.text);
    });
  });

  describe('GET /editorconfig/{filepath}', () => {
    it('answers the definitions of the root .editorconfig for a path, at a ref; 404 without one', async () => {
      let r = await s.api('GET', '/repos/alice/proj/editorconfig/a.txt', { token: bob.token });
      assert.equal(r.status, 404, r.text);
      const ec = [
        'root = true',
        '',
        '[*]',
        'indent_style = space',
        'indent_size = 2',
        'end_of_line = LF',
        'charset = utf-8',
        '',
        '# Go',
        '[*.go]',
        'indent_style = tab',
        '',
        '[docs/**.md]',
        'indent_size = 4',
        '',
        '[{Makefile,*.mk}]',
        'indent_style = tab',
        'tab_width = 8',
      ].join('\n');
      const w = await s.api<FilesJson>('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { new_branch: 'ec', files: [{ operation: 'create', path: '.editorconfig', content: b64(ec) }] },
      });
      assert.equal(w.status, 201, w.text);
      r = await s.api('GET', '/repos/alice/proj/editorconfig/a.txt', { token: bob.token });
      assert.equal(r.status, 404, r.text);
      const cases: Array<[string, Record<string, string>]> = [
        ['a.txt', { charset: 'utf-8', indent_style: 'space', indent_size: '2', end_of_line: 'lf' }],
        ['cmd/x/main.go', { charset: 'utf-8', indent_style: 'tab', indent_size: '2', end_of_line: 'lf' }],
        ['docs/a/b.md', { charset: 'utf-8', indent_style: 'space', indent_size: '4', end_of_line: 'lf' }],
        ['other/docs/b.md', { charset: 'utf-8', indent_style: 'space', indent_size: '2', end_of_line: 'lf' }],
        ['sub/Makefile', { charset: 'utf-8', indent_style: 'tab', indent_size: '2', end_of_line: 'lf' }],
      ];
      for (const [file, want] of cases) {
        r = await s.api('GET', `/repos/alice/proj/editorconfig/${file}?ref=ec`, { token: bob.token });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, want, file);
      }
      r = await s.api('GET', '/repos/alice/proj/editorconfig/a.txt?ref=nope', { token: bob.token });
      assert.equal(r.status, 404, r.text);
    });
  });

  describe('POST /diffpatch', () => {
    const patch = [
      'diff --git a/a.txt b/a.txt',
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1 +1,2 @@',
      ' A',
      '+patched',
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1 @@',
      '+fresh',
      '',
    ].join('\n');

    it('applies a unified diff as one commit', async () => {
      const before = await remoteTip('main');
      const r = await s.api<{ content: null; commit: { sha: string; message: string } }>(
        'POST',
        '/repos/alice/proj/diffpatch',
        { token: dave.token, body: { content: patch } },
      );
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.commit.message, 'apply-patch\n');
      const tip = await remoteTip('main');
      assert.equal(tip, r.body.commit.sha);
      assert.equal((await g.git(['rev-parse', `${tip}^`], wt)).trim(), before);
      assert.equal(await show(tip, 'a.txt'), 'A\npatched\n');
      assert.equal(await show(tip, 'new.txt'), 'fresh\n');
    });

    it('refuses a diff that does not apply (422), readers (403), a missing branch (404)', async () => {
      const bad = patch.replace(' A\n', ' nothing like this\n').replace('new.txt', 'other.txt');
      let r = await s.api('POST', '/repos/alice/proj/diffpatch', {
        token: alice.token,
        body: { content: bad },
      });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/diffpatch', {
        token: alice.token,
        body: { content: 'garbage' },
      });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/diffpatch', { token: alice.token, body: {} });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/diffpatch', { token: bob.token, body: { content: patch } });
      assert.equal(r.status, 403, r.text);
      r = await s.api('POST', '/repos/alice/proj/diffpatch', {
        token: alice.token,
        body: { content: patch, branch: 'nope' },
      });
      assert.equal(r.status, 404, r.text);
    });

    it('commits to a new branch with the given message', async () => {
      const p2 = ['--- /dev/null', '+++ b/side.txt', '@@ -0,0 +1 @@', '+side', ''].join('\n');
      const r = await s.api<{ commit: { sha: string } }>('POST', '/repos/alice/proj/diffpatch', {
        token: alice.token,
        body: { content: p2, new_branch: 'patched', message: 'side file' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(await remoteTip('patched'), r.body.commit.sha);
      assert.equal(await show(r.body.commit.sha, 'side.txt'), 'side\n');
    });
  });

  describe('pull requests: update from the base, by base/head, pinned', () => {
    interface PR {
      number: number;
      head: { ref: string; sha: string };
    }

    async function commitOn(branch: string, file: string, content: string): Promise<string> {
      const r = await s.api<FilesJson>('POST', '/repos/alice/proj/contents', {
        token: alice.token,
        body: { branch, files: [{ operation: 'create', path: file, content: b64(content) }] },
      });
      assert.equal(r.status, 201, r.text);
      return r.body.commit.sha;
    }

    async function branchWithPull(name: string, file: string, content: string): Promise<PR> {
      const r = await s.api('POST', '/repos/alice/proj/branches', {
        token: alice.token,
        body: { new_branch_name: name },
      });
      assert.equal(r.status, 201, r.text);
      await commitOn(name, file, content);
      const pr = await s.api<PR>('POST', '/repos/alice/proj/pulls', {
        token: alice.token,
        body: { head: name, base: 'main', title: name },
      });
      assert.equal(pr.status, 201, pr.text);
      return pr.body;
    }

    let upd: PR;

    it('finds the open pull request by base and head; 404 otherwise', async () => {
      upd = await branchWithPull('upd', 'upd.txt', 'upd\n');
      for (const head of ['upd', 'alice:upd', 'alice/proj:upd']) {
        const r = await s.api<PR>('GET', `/repos/alice/proj/pulls/main/${head}`, { token: bob.token });
        assert.equal(r.status, 200, `${head}: ${r.text}`);
        assert.equal(r.body.number, upd.number);
      }
      for (const path of ['main/nope', 'upd/main', 'main/nobody:upd']) {
        const r = await s.api('GET', `/repos/alice/proj/pulls/${path}`, { token: bob.token });
        assert.equal(r.status, 404, `${path}: ${r.text}`);
      }
      // The routes next to it still answer.
      let r = await s.api<PR>('GET', `/repos/alice/proj/pulls/${upd.number}`, { token: bob.token });
      assert.equal(r.status, 200, r.text);
      r = await s.api('GET', `/repos/alice/proj/pulls/${upd.number}/files`, { token: bob.token });
      assert.equal(r.status, 200, r.text);
    });

    it('updates the head branch with a merge commit of the base', async () => {
      const oldHead = await remoteTip('upd');
      const mainTip = await commitOn('main', 'later.txt', 'later\n');
      let r = await s.api('POST', `/repos/alice/proj/pulls/${upd.number}/update`, { token: bob.token });
      assert.equal(r.status, 403, r.text);
      r = await s.api('POST', `/repos/alice/proj/pulls/${upd.number}/update`, {});
      assert.equal(r.status, 401, r.text);
      r = await s.api('POST', `/repos/alice/proj/pulls/${upd.number}/update?style=squash`, {
        token: dave.token,
      });
      assert.equal(r.status, 422, r.text);
      r = await s.api('POST', '/repos/alice/proj/pulls/9999/update', { token: dave.token });
      assert.equal(r.status, 404, r.text);

      r = await s.api('POST', `/repos/alice/proj/pulls/${upd.number}/update`, { token: dave.token });
      assert.equal(r.status, 200, r.text);
      const tip = await remoteTip('upd');
      const parents = (await g.git(['rev-list', '--parents', '-n', '1', tip], wt)).trim().split(' ').slice(1);
      assert.deepEqual(parents, [oldHead, mainTip]);
      assert.equal(
        (await g.git(['log', '-1', '--format=%s', tip], wt)).trim(),
        "Merge branch 'main' into upd",
      );
      assert.equal(await show(tip, 'later.txt'), 'later\n');
      assert.ok(
        await waitFor(async () => {
          const p = await s.api<PR>('GET', `/repos/alice/proj/pulls/${upd.number}`, { token: alice.token });
          return p.body.head.sha === tip;
        }),
        'the pull request follows its head',
      );
      // Up to date: nothing moves.
      r = await s.api('POST', `/repos/alice/proj/pulls/${upd.number}/update`, { token: dave.token });
      assert.equal(r.status, 200, r.text);
      assert.equal(await remoteTip('upd'), tip);
    });

    it('rebases the head branch onto the base', async () => {
      const mainTip = await commitOn('main', 'later2.txt', 'later2\n');
      const r = await s.api('POST', `/repos/alice/proj/pulls/${upd.number}/update?style=rebase`, {
        token: alice.token,
      });
      assert.equal(r.status, 200, r.text);
      const tip = await remoteTip('upd');
      assert.ok((await g.tryGit(['merge-base', '--is-ancestor', mainTip, tip], wt)).ok);
      const own = (await g.git(['rev-list', `${mainTip}..${tip}`], wt)).trim().split('\n');
      assert.equal(own.length, 1);
      assert.equal(await show(tip, 'upd.txt'), 'upd\n');
    });

    it('answers 409 on conflicts (merge and rebase), 422 for a closed pull request', async () => {
      const cf = await branchWithPull('cf', 'clash.txt', 'theirs\n');
      await commitOn('main', 'clash.txt', 'ours\n');
      const before = await remoteTip('cf');
      for (const style of ['merge', 'rebase']) {
        const r = await s.api('POST', `/repos/alice/proj/pulls/${cf.number}/update?style=${style}`, {
          token: alice.token,
        });
        assert.equal(r.status, 409, `${style}: ${r.text}`);
      }
      assert.equal(await remoteTip('cf'), before);
      let r = await s.api('PATCH', `/repos/alice/proj/pulls/${cf.number}`, {
        token: alice.token,
        body: { state: 'closed' },
      });
      assert.equal(r.status, 201, r.text);
      r = await s.api('POST', `/repos/alice/proj/pulls/${cf.number}/update`, { token: alice.token });
      assert.equal(r.status, 422, r.text);
    });

    it("updates a fork's head branch for its owner; others get 403", async () => {
      let r = await s.api('POST', '/repos/alice/proj/forks', { token: bob.token, body: {} });
      assert.equal(r.status, 202, r.text);
      r = await s.api<FilesJson>('POST', '/repos/bob/proj/contents', {
        token: bob.token,
        body: {
          new_branch: 'fix',
          files: [{ operation: 'create', path: 'fork.txt', content: b64('fork\n') }],
        },
      });
      assert.equal(r.status, 201, r.text);
      const forkHead = (r.body as FilesJson).commit.sha;
      const pr = await s.api<PR>('POST', '/repos/alice/proj/pulls', {
        token: bob.token,
        body: { head: 'bob:fix', base: 'main', title: 'from the fork' },
      });
      assert.equal(pr.status, 201, pr.text);
      r = await s.api<PR>('GET', '/repos/alice/proj/pulls/main/bob:fix', { token: dave.token });
      assert.equal(r.status, 200, r.text);
      const mainTip = await commitOn('main', 'after-fork.txt', 'x\n');
      r = await s.api('POST', `/repos/alice/proj/pulls/${pr.body.number}/update`, { token: dave.token });
      assert.equal(r.status, 403, r.text);
      r = await s.api('POST', `/repos/alice/proj/pulls/${pr.body.number}/update`, { token: bob.token });
      assert.equal(r.status, 200, r.text);
      const refs = await g.lsRemote(url(bob, 'bob', 'proj'));
      const tip = refs.get('refs/heads/fix')!;
      assert.notEqual(tip, forkHead);
      await g.git(['fetch', '--quiet', url(bob, 'bob', 'proj'), 'fix'], wt);
      const parents = (await g.git(['rev-list', '--parents', '-n', '1', tip], wt)).trim().split(' ').slice(1);
      assert.deepEqual(parents, [forkHead, mainTip]);
    });

    it('lists pinned pull requests (not pinned issues)', async () => {
      let r = await s.api<PR[]>('GET', '/repos/alice/proj/pulls/pinned', { token: bob.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, []);
      const issue = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
        token: alice.token,
        body: { title: 'an issue' },
      });
      for (const n of [issue.body.number, upd.number]) {
        const p = await s.api('POST', `/repos/alice/proj/issues/${n}/pin`, { token: alice.token });
        assert.equal(p.status, 204, p.text);
      }
      r = await s.api<PR[]>('GET', '/repos/alice/proj/pulls/pinned', { token: bob.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.map((p) => p.number),
        [upd.number],
      );
      r = await s.api('GET', '/repos/nobody/none/pulls/pinned', { token: bob.token });
      assert.equal(r.status, 404, r.text);
    });
  });
});
