// The git data API over HTTP, checked against the real `git` client: commits pushed with git and
// their files and line counts as `git show` counts them; branches and tags made through the API
// and seen by `git ls-remote`/`git fetch`; files written through the contents API and fetched back;
// raw files byte for byte; archives that unpack to the repository's files; refs, trees and blobs;
// every endpoint on an empty repository; refs and paths that try to be options or leave the tree;
// and who may read and write.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface Msg {
  message: string;
}

interface PayloadCommitJson {
  id: string;
  message: string;
  url: string;
  author: { name: string; email: string; username: string };
  committer: { name: string; email: string; username: string };
  timestamp: string;
  verification: { verified: boolean; reason: string } | null;
}

interface BranchJson {
  name: string;
  commit: PayloadCommitJson;
  protected: boolean;
  user_can_push: boolean;
  user_can_merge: boolean;
  status_check_contexts: string[];
}

interface CommitJson {
  url: string;
  sha: string;
  created: string;
  html_url: string;
  commit: {
    url: string;
    message: string;
    author: { name: string; email: string; date: string };
    committer: { name: string; email: string; date: string };
    tree: { sha: string; url: string };
    verification: { verified: boolean; reason: string } | null;
  };
  author: { login: string } | null;
  committer: { login: string } | null;
  parents: Array<{ sha: string; url: string }>;
  files: Array<{ filename: string; status: string }> | null;
  stats: { total: number; additions: number; deletions: number } | null;
}

interface TagJson {
  name: string;
  message: string;
  id: string;
  commit: { sha: string; url: string; created: string };
  zipball_url: string;
  tarball_url: string;
}

interface AnnotatedTagJson {
  tag: string;
  sha: string;
  message: string;
  tagger: { name: string; email: string; date: string };
  object: { type: string; sha: string; url: string };
}

interface ContentsJson {
  name: string;
  path: string;
  sha: string;
  type: string;
  size: number;
  encoding: string | null;
  content: string | null;
  target: string | null;
  last_commit_sha: string;
  last_commit_when: string;
  url: string;
  html_url: string | null;
  git_url: string | null;
  download_url: string | null;
  submodule_git_url: string | null;
  _links: { self: string | null; git: string | null; html: string | null };
}

interface FileResponseJson {
  content: ContentsJson | null;
  commit: {
    sha: string;
    message: string;
    author: { name: string; email: string; date: string };
    committer: { name: string; email: string; date: string };
    parents: Array<{ sha: string }>;
    tree: { sha: string };
  };
  verification: { verified: boolean };
}

interface RefJson {
  ref: string;
  url: string;
  object: { type: string; sha: string; url: string };
}

interface TreeJson {
  sha: string;
  tree: Array<{ path: string; mode: string; type: string; size: number; sha: string; url: string }>;
  truncated: boolean;
  page: number;
  total_count: number;
}

interface BlobJson {
  sha: string;
  size: number;
  encoding: string;
  content: string | null;
}

/** A valid 1x1 PNG image. */
function onePixelPng(): Buffer {
  const chunk = (type: string, body: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), body])));
    return Buffer.concat([len, Buffer.from(type), body, crc]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.from([0, 255, 0, 0]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('git data API', () => {
  let s: TestServer;
  let home: string;
  let work: string;
  let alice: User;
  let bob: User;
  let carol: User;
  let reader: User;
  let port: string;

  const gitEnv = () => ({
    PATH: process.env['PATH'],
    HOME: home,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    LANG: 'C',
  });

  /** Runs the system git on local data (never the server: it blocks); returns its output. */
  function git(cwd: string, args: string[]): string {
    return execFileSync('git', args, { cwd, env: gitEnv(), maxBuffer: 64 * 1024 * 1024 }).toString('utf8');
  }

  /** Runs the system git against the server (clone, fetch, push, ls-remote) without blocking it. */
  function net(cwd: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile('git', args, { cwd, env: gitEnv(), maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`git ${args.join(' ')}: ${err.message}\n${stderr}`));
        else resolve(stdout);
      });
    });
  }

  const cloneUrl = (u: User, repo: string) => `http://${u.name}:${u.password}@127.0.0.1:${port}/${repo}.git`;

  /** A fresh clone of `repo` (by `who`, alice by default) with alice as the commit author. */
  async function clone(repo: string, who: User = alice): Promise<string> {
    const dir = fs.mkdtempSync(path.join(work, 'clone-'));
    await net(work, ['clone', '-q', cloneUrl(who, repo), dir]);
    git(dir, ['config', 'user.name', 'Alice Liddell']);
    git(dir, ['config', 'user.email', 'alice@example.com']);
    return dir;
  }

  const write = (dir: string, file: string, content: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  };

  const commitAll = (dir: string, message: string) => {
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-q', '-m', message]);
    return git(dir, ['rev-parse', 'HEAD']).trim();
  };

  const api = <T>(method: string, p: string, opts: Parameters<TestServer['api']>[2] = {}) =>
    s.api<T>(method, p, opts) as Promise<Reply<T>>;

  async function createRepo(name: string, opts: { autoInit?: boolean; private?: boolean } = {}) {
    const r = await api('POST', '/user/repos', {
      token: alice.token,
      body: { name, auto_init: opts.autoInit ?? false, private: opts.private ?? false },
    });
    assert.equal(r.status, 201, r.text);
  }

  const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

  before(async () => {
    s = await startServer();
    port = new URL(s.url).port;
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-gitdata-home-'));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-gitdata-work-'));
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    reader = await s.createUser('reader', { scopes: ['read:repository'] });
    // alice's account e-mail is what her commits carry, so commits resolve to her account.
    await createRepo('pub', { autoInit: true });
    await createRepo('priv', { autoInit: true, private: true });
    await createRepo('empty');
    await createRepo('empty2');
    await createRepo('files', { autoInit: true });
    for (const repo of ['pub', 'priv', 'files']) {
      const r = await api('PUT', `/repos/alice/${repo}/collaborators/bob`, {
        token: alice.token,
        body: { permission: 'read' },
      });
      assert.equal(r.status, 204, r.text);
    }
    const w = await api('PUT', '/repos/alice/files/collaborators/reader', {
      token: alice.token,
      body: { permission: 'write' },
    });
    assert.equal(w.status, 204, w.text);
  });

  after(async () => {
    await s?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  describe('commits pushed with git', () => {
    let dir: string;
    let shas: string[];
    let merge: string;
    let root: string;

    before(async () => {
      dir = await clone('alice/pub');
      root = git(dir, ['rev-parse', 'HEAD']).trim();
      write(dir, 'src/a.txt', 'one\ntwo\nthree\n');
      write(dir, 'src/b.txt', 'bee\n');
      // Binary for git whatever the random bytes: a NUL byte within the first 8000.
      const binary = (n: number) => Buffer.concat([Buffer.from([0]), crypto.randomBytes(n - 1)]);
      write(dir, 'bin/blob.bin', binary(300));
      write(dir, 'with space.txt', 'spaced\n');
      commitAll(dir, 'add files');
      write(dir, 'src/a.txt', 'one\n2\nthree\nfour\n');
      fs.rmSync(path.join(dir, 'src/b.txt'));
      commitAll(dir, 'modify and delete');
      git(dir, ['mv', 'with space.txt', 'renamed file.txt']);
      write(dir, 'bin/blob.bin', binary(200));
      commitAll(dir, 'rename a file\n\nwith a body line');
      git(dir, ['checkout', '-q', '-b', 'feature/x']);
      write(dir, 'feature.txt', 'f1\nf2\n');
      commitAll(dir, 'feature work');
      git(dir, ['checkout', '-q', 'main']);
      write(dir, 'main-only.txt', 'm\n');
      commitAll(dir, 'main work');
      git(dir, ['merge', '-q', '--no-ff', '-m', 'merge feature', 'feature/x']);
      // Authored by someone without an account, committed by alice.
      git(dir, ['commit', '-q', '--amend', '--no-edit', '--author=Nobody <nobody@elsewhere.test>']);
      merge = git(dir, ['rev-parse', 'HEAD']).trim();
      await net(dir, ['push', '-q', 'origin', 'main', 'feature/x']);
      shas = git(dir, ['log', '--format=%H', 'main']).trim().split('\n');
    });

    /** What `git show` says a commit changed: statuses without renames, numstat with them. */
    function gitShow(sha: string) {
      const statuses = git(dir, [
        'show',
        '--format=',
        '--name-status',
        '--no-renames',
        '--diff-merges=first-parent',
        '-z',
        sha,
      ])
        .split('\0')
        .filter(Boolean);
      const files: Array<{ filename: string; status: string }> = [];
      for (let i = 0; i < statuses.length; i += 2) {
        const letter = statuses[i]!.trim();
        const status = { A: 'added', D: 'removed', M: 'modified' }[letter] ?? letter;
        files.push({ filename: statuses[i + 1]!, status });
      }
      files.sort((a, b) => (a.filename < b.filename ? -1 : 1));
      let additions = 0;
      let deletions = 0;
      for (const line of git(dir, [
        'show',
        '--format=',
        '--numstat',
        '-M',
        '--diff-merges=first-parent',
        sha,
      ]).split('\n')) {
        const [a, d] = line.split('\t');
        if (a && a !== '-') additions += Number(a);
        if (d && d !== '-') deletions += Number(d);
      }
      return { files, stats: { total: additions + deletions, additions, deletions } };
    }

    it('lists every commit with the files and line counts git show reports', async () => {
      const r = await api<CommitJson[]>('GET', '/repos/alice/pub/commits?limit=50', { token: alice.token });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(
        r.body.map((c) => c.sha),
        shas,
      );
      assert.equal(r.headers.get('x-total-count'), String(shas.length));
      assert.equal(r.headers.get('x-hasmore'), 'false');
      for (const c of r.body) {
        const expected = gitShow(c.sha);
        assert.deepEqual(c.files, expected.files, `files of ${c.commit.message}`);
        assert.deepEqual(c.stats, expected.stats, `stats of ${c.commit.message}`);
        assert.equal(c.commit.message, git(dir, ['log', '-1', '--format=%B', c.sha]).replace(/\n$/, ''));
        assert.deepEqual(
          c.parents.map((p) => p.sha),
          git(dir, ['log', '-1', '--format=%P', c.sha]).trim().split(' ').filter(Boolean),
        );
        assert.equal(c.commit.tree.sha, git(dir, ['rev-parse', `${c.sha}^{tree}`]).trim());
        assert.equal(c.url, `${s.url}/api/v1/repos/alice/pub/git/commits/${c.sha}`);
        assert.equal(c.html_url, `${s.url}/alice/pub/commit/${c.sha}`);
        assert.deepEqual(c.commit.verification, {
          verified: false,
          reason: 'gpg.error.not_signed_commit',
          signature: '',
          signer: null,
          payload: '',
        });
      }
      // The rename shows as the old path removed and the new one added; binary files count no lines.
      const rename = r.body.find((c) => c.commit.message.startsWith('rename a file'))!;
      assert.deepEqual(rename.files, [
        { filename: 'bin/blob.bin', status: 'modified' },
        { filename: 'renamed file.txt', status: 'added' },
        { filename: 'with space.txt', status: 'removed' },
      ]);
      assert.deepEqual(rename.stats, { total: 0, additions: 0, deletions: 0 });
      const modify = r.body.find((c) => c.commit.message === 'modify and delete\n')!;
      assert.deepEqual(modify.stats, { total: 4, additions: 2, deletions: 2 });
      // The merge is counted against its first parent: what the feature branch brought.
      const m = r.body.find((c) => c.sha === merge)!;
      assert.deepEqual(m.files, [{ filename: 'feature.txt', status: 'added' }]);
      assert.deepEqual(m.stats, { total: 2, additions: 2, deletions: 0 });
      // Authors resolve to accounts by e-mail; an unknown e-mail has none.
      assert.equal(r.body.find((c) => c.sha === shas[1])!.author?.login, 'alice');
      assert.equal(m.author, null);
      assert.equal(m.commit.author.email, 'nobody@elsewhere.test');
      assert.equal(m.committer?.login, 'alice');
      assert.match(m.commit.author.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
    });

    it('pages with X-Total-Count, X-HasMore and Link, page after page as git log', async () => {
      const p1 = await api<CommitJson[]>('GET', '/repos/alice/pub/commits?limit=2&page=1', {
        token: alice.token,
      });
      const p2 = await api<CommitJson[]>('GET', '/repos/alice/pub/commits?limit=2&page=2', {
        token: alice.token,
      });
      const last = Math.ceil(shas.length / 2);
      const pl = await api<CommitJson[]>('GET', `/repos/alice/pub/commits?limit=2&page=${last}`, {
        token: alice.token,
      });
      assert.deepEqual(
        [...p1.body, ...p2.body].map((c) => c.sha),
        shas.slice(0, 4),
      );
      assert.equal(p1.headers.get('x-hasmore'), 'true');
      assert.equal(p1.headers.get('x-total-count'), String(shas.length));
      assert.equal(p1.headers.get('x-pagecount'), String(last));
      assert.match(p1.headers.get('link') ?? '', /rel="next"/);
      assert.equal(pl.headers.get('x-hasmore'), 'false');
      assert.deepEqual(
        pl.body.map((c) => c.sha),
        shas.slice((last - 1) * 2),
      );
    });

    it('filters by sha, path and not; stat and files can be left out', async () => {
      const feature = git(dir, ['rev-parse', 'feature/x']).trim();
      const bySha = await api<CommitJson[]>('GET', '/repos/alice/pub/commits?sha=feature/x', {
        token: alice.token,
      });
      assert.equal(bySha.status, 200);
      assert.deepEqual(
        bySha.body.map((c) => c.sha),
        git(dir, ['log', '--format=%H', feature]).trim().split('\n'),
      );
      const byPath = await api<CommitJson[]>('GET', '/repos/alice/pub/commits?path=src/a.txt', {
        token: alice.token,
      });
      assert.equal(byPath.status, 200);
      assert.deepEqual(
        byPath.body.map((c) => c.sha),
        git(dir, ['log', '--format=%H', '--', 'src/a.txt']).trim().split('\n'),
      );
      assert.equal(byPath.headers.get('x-total-count'), '2');
      const not = await api<CommitJson[]>('GET', `/repos/alice/pub/commits?sha=main&not=${feature}`, {
        token: alice.token,
      });
      assert.deepEqual(
        not.body.map((c) => c.sha),
        git(dir, ['log', '--format=%H', 'main', `^${feature}`])
          .trim()
          .split('\n'),
      );
      const bare = await api<CommitJson[]>(
        'GET',
        '/repos/alice/pub/commits?stat=false&files=false&verification=false',
        {
          token: alice.token,
        },
      );
      assert.equal(bare.status, 200);
      assert.equal(bare.body[0]!.stats, null);
      assert.equal(bare.body[0]!.files, null);
      assert.equal(bare.body[0]!.commit.verification, null);
      const nothing = await api<Msg>('GET', '/repos/alice/pub/commits?path=no/such/file', {
        token: alice.token,
      });
      assert.equal(nothing.status, 404);
      const unknown = await api<Msg>('GET', '/repos/alice/pub/commits?sha=no-such-branch', {
        token: alice.token,
      });
      assert.equal(unknown.status, 404);
      const badNot = await api<Msg>('GET', '/repos/alice/pub/commits?not=nope', { token: alice.token });
      assert.equal(badNot.status, 404);
    });

    it('gets one commit by sha, abbreviated sha or branch, with files and stats', async () => {
      for (const ref of [merge, merge.slice(0, 10), 'main']) {
        const r = await api<CommitJson>('GET', `/repos/alice/pub/git/commits/${ref}`, { token: alice.token });
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.sha, merge);
        assert.deepEqual(r.body.files, gitShow(merge).files);
        assert.deepEqual(r.body.stats, gitShow(merge).stats);
      }
      const first = await api<CommitJson>('GET', `/repos/alice/pub/git/commits/${root}`, {
        token: alice.token,
      });
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.parents, []);
      assert.deepEqual(first.body.files, gitShow(root).files);
      assert.deepEqual(first.body.stats, gitShow(root).stats);
      const missing = await api<Msg>('GET', `/repos/alice/pub/git/commits/${'f'.repeat(40)}`, {
        token: alice.token,
      });
      assert.equal(missing.status, 404);
      const bad = await api<Msg>('GET', '/repos/alice/pub/git/commits/--output=x', { token: alice.token });
      assert.equal(bad.status, 422);
      assert.match(bad.body.message, /no valid ref or sha/);
    });

    it('lists branches from git with their commits, and gets one whose name has a slash', async () => {
      const r = await api<BranchJson[]>('GET', '/repos/alice/pub/branches', { token: alice.token });
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.map((b) => b.name).sort(), ['feature/x', 'main']);
      assert.equal(r.headers.get('x-total-count'), '2');
      const main = r.body.find((b) => b.name === 'main')!;
      assert.equal(main.commit.id, merge);
      assert.equal(main.commit.message, 'merge feature\n');
      assert.equal(main.commit.url, `${s.url}/alice/pub/commit/${merge}`);
      assert.equal(main.commit.author.username, '');
      assert.equal(main.commit.committer.username, 'alice');
      assert.equal(main.user_can_push, true);
      assert.equal(main.protected, false);
      const one = await api<BranchJson>('GET', '/repos/alice/pub/branches/feature/x', { token: alice.token });
      assert.equal(one.status, 200);
      assert.equal(one.body.name, 'feature/x');
      assert.equal(one.body.commit.id, git(dir, ['rev-parse', 'feature/x']).trim());
      const paged = await api<BranchJson[]>('GET', '/repos/alice/pub/branches?limit=1&page=2', {
        token: alice.token,
      });
      assert.equal(paged.body.length, 1);
      assert.equal(paged.headers.get('x-total-count'), '2');
      const asReader = await api<BranchJson>('GET', '/repos/alice/pub/branches/main', { token: bob.token });
      assert.equal(asReader.body.user_can_push, false);
      const anon = await api<BranchJson>('GET', '/repos/alice/pub/branches/main');
      assert.equal(anon.status, 200);
      assert.equal(anon.body.user_can_push, false);
      const missing = await api<Msg>('GET', '/repos/alice/pub/branches/nope', { token: alice.token });
      assert.equal(missing.status, 404);
    });
  });

  describe('branches and tags through the API', () => {
    let dir: string;
    let head: string;

    before(async () => {
      dir = await clone('alice/pub');
      head = git(dir, ['rev-parse', 'HEAD']).trim();
    });

    const remote = async () =>
      new Map(
        (await net(dir, ['ls-remote', 'origin']))
          .trim()
          .split('\n')
          .map((l) => l.split('\t').reverse() as [string, string]),
      );

    it('creates a branch from the default branch, a branch or a ref; git sees it', async () => {
      const pushes: Array<{ updates: Array<{ ref: string }> }> = [];
      s.ctx.events.on('push', (p) => {
        pushes.push(p);
      });
      const a = await api<BranchJson>('POST', '/repos/alice/pub/branches', {
        token: alice.token,
        body: { new_branch_name: 'from-default' },
      });
      assert.equal(a.status, 201, a.text);
      assert.equal(a.body.name, 'from-default');
      assert.equal(a.body.commit.id, head);
      const parent = git(dir, ['rev-parse', 'HEAD~1']).trim();
      const b = await api<BranchJson>('POST', '/repos/alice/pub/branches', {
        token: alice.token,
        body: { new_branch_name: 'nested/from-ref', old_ref_name: parent },
      });
      assert.equal(b.status, 201, b.text);
      assert.equal(b.body.commit.id, parent);
      const c = await api<BranchJson>('POST', '/repos/alice/pub/branches', {
        token: alice.token,
        body: { new_branch_name: 'from-branch', old_branch_name: 'feature/x' },
      });
      assert.equal(c.status, 201, c.text);
      assert.equal(c.body.commit.id, git(dir, ['rev-parse', 'origin/feature/x']).trim());
      const refs = await remote();
      assert.equal(refs.get('refs/heads/from-default'), head);
      assert.equal(refs.get('refs/heads/nested/from-ref'), parent);
      // Recorded like a push: the branch record and the push event.
      const row = await s.ctx.db
        .selectFrom('branch')
        .innerJoin('repository', 'repository.id', 'branch.repo_id')
        .select(['branch.commit_id'])
        .where('repository.lower_name', '=', 'pub')
        .where('branch.name', '=', 'nested/from-ref')
        .executeTakeFirst();
      assert.equal(row?.commit_id, parent);
      assert.ok(pushes.some((p) => p.updates.some((u) => u.ref === 'refs/heads/from-default')));
    });

    it('refuses existing, clashing, invalid and unknown names', async () => {
      const post = (body: unknown) =>
        api<Msg>('POST', '/repos/alice/pub/branches', { token: alice.token, body });
      const exists = await post({ new_branch_name: 'main' });
      assert.equal(exists.status, 409);
      assert.equal(exists.body.message, 'The branch already exists.');
      const clash = await post({ new_branch_name: 'feature' });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.message, 'The branch with the same name already exists.');
      const underFile = await post({ new_branch_name: 'main/sub' });
      assert.equal(underFile.status, 409);
      const invalidName = await post({ new_branch_name: '-x' });
      assert.equal(invalidName.status, 422);
      const dots = await post({ new_branch_name: 'a..b' });
      assert.equal(dots.status, 422);
      const noOldBranch = await post({ new_branch_name: 'x1', old_branch_name: 'nope' });
      assert.equal(noOldBranch.status, 404);
      assert.equal(noOldBranch.body.message, 'The old branch does not exist');
      const noOldRef = await post({ new_branch_name: 'x2', old_ref_name: 'f'.repeat(40) });
      assert.equal(noOldRef.status, 404);
      const optionRef = await post({ new_branch_name: 'x3', old_ref_name: '--upload-pack=touch /tmp/x' });
      assert.equal(optionRef.status, 422);
      const missingName = await post({ old_branch_name: 'main' });
      assert.equal(missingName.status, 422);
      assert.equal(missingName.body.message, '[NewBranchName]: Required');
      const tagged = await api<TagJson>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'same-as-tag' },
      });
      assert.equal(tagged.status, 201);
      const sameAsTag = await post({ new_branch_name: 'same-as-tag' });
      assert.equal(sameAsTag.status, 409);
      assert.equal(sameAsTag.body.message, 'The branch with the same tag already exists.');
      assert.ok(!(await remote()).has('refs/heads/x1'));
    });

    it('deletes branches, but not the default one', async () => {
      const del = await api('DELETE', '/repos/alice/pub/branches/nested/from-ref', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      assert.equal(del.text, '');
      assert.ok(!(await remote()).has('refs/heads/nested/from-ref'));
      const row = await s.ctx.db
        .selectFrom('branch')
        .select('name')
        .where('name', '=', 'nested/from-ref')
        .executeTakeFirst();
      assert.equal(row, undefined);
      const again = await api<Msg>('DELETE', '/repos/alice/pub/branches/nested/from-ref', {
        token: alice.token,
      });
      assert.equal(again.status, 404);
      const main = await api<Msg>('DELETE', '/repos/alice/pub/branches/main', { token: alice.token });
      assert.equal(main.status, 403);
      assert.equal(main.body.message, 'can not delete default branch');
      assert.ok((await remote()).has('refs/heads/main'));
    });

    it('creates lightweight and annotated tags that git fetches', async () => {
      const light = await api<TagJson>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'v1.0', target: 'main' },
      });
      assert.equal(light.status, 201, light.text);
      assert.equal(light.body.name, 'v1.0');
      assert.equal(light.body.id, head);
      assert.equal(light.body.commit.sha, head);
      assert.equal(light.body.message, git(dir, ['log', '-1', '--format=%B', head]).replace(/\n\n$/, '\n'));
      assert.equal(light.body.zipball_url, `${s.url}/alice/pub/archive/v1.0.zip`);
      assert.equal(light.body.tarball_url, `${s.url}/alice/pub/archive/v1.0.tar.gz`);
      const parent = git(dir, ['rev-parse', 'HEAD~1']).trim();
      const annotated = await api<TagJson>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'release/v2', target: parent, message: 'Release two\n\nNotes.' },
      });
      assert.equal(annotated.status, 201, annotated.text);
      assert.notEqual(annotated.body.id, parent);
      assert.equal(annotated.body.commit.sha, parent);
      assert.equal(annotated.body.message, 'Release two\n\nNotes.\n');
      await net(dir, ['fetch', '-q', '--tags', 'origin']);
      assert.equal(git(dir, ['cat-file', '-t', 'release/v2']).trim(), 'tag');
      assert.equal(git(dir, ['rev-parse', 'release/v2']).trim(), annotated.body.id);
      assert.equal(git(dir, ['rev-parse', 'release/v2^{commit}']).trim(), parent);
      assert.equal(git(dir, ['cat-file', '-t', 'v1.0']).trim(), 'commit');
      assert.equal(
        git(dir, ['for-each-ref', '--format=%(taggeremail)', 'refs/tags/release/v2']).trim(),
        '<alice@example.com>',
      );

      const obj = await api<AnnotatedTagJson>('GET', `/repos/alice/pub/git/tags/${annotated.body.id}`, {
        token: alice.token,
      });
      assert.equal(obj.status, 200, obj.text);
      assert.equal(obj.body.tag, 'release/v2');
      assert.equal(obj.body.sha, annotated.body.id);
      assert.equal(obj.body.message, 'Release two\n\nNotes.\n');
      assert.equal(obj.body.tagger.email, 'alice@example.com');
      assert.deepEqual(obj.body.object, {
        type: 'commit',
        sha: parent,
        url: `${s.url}/api/v1/repos/alice/pub/git/commits/${parent}`,
      });
      const notATag = await api<Msg>('GET', `/repos/alice/pub/git/tags/${parent}`, { token: alice.token });
      assert.equal(notATag.status, 400);
      const noObject = await api<Msg>('GET', `/repos/alice/pub/git/tags/${'e'.repeat(40)}`, {
        token: alice.token,
      });
      assert.equal(noObject.status, 404);
      const badSha = await api<Msg>('GET', '/repos/alice/pub/git/tags/not-hex', { token: alice.token });
      assert.equal(badSha.status, 422);

      const one = await api<TagJson>('GET', '/repos/alice/pub/tags/release/v2', { token: alice.token });
      assert.equal(one.status, 200);
      assert.equal(one.body.id, annotated.body.id);
      const list = await api<TagJson[]>('GET', '/repos/alice/pub/tags', { token: alice.token });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.map((t) => t.name).sort(), ['release/v2', 'same-as-tag', 'v1.0']);
      assert.equal(list.headers.get('x-total-count'), '3');
      const page = await api<TagJson[]>('GET', '/repos/alice/pub/tags?limit=2&page=2', {
        token: alice.token,
      });
      assert.equal(page.body.length, 1);
    });

    it('refuses existing tags, unknown targets and bad names; deletes tags', async () => {
      const dup = await api<Msg>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'v1.0' },
      });
      assert.equal(dup.status, 409);
      const target = await api<Msg>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'v9', target: 'no-such-branch' },
      });
      assert.equal(target.status, 404);
      const bad = await api<Msg>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'a b' },
      });
      assert.equal(bad.status, 422);
      const option = await api<Msg>('POST', '/repos/alice/pub/tags', {
        token: alice.token,
        body: { tag_name: 'v9', target: '--output=/tmp/x' },
      });
      assert.equal(option.status, 422);
      const missing = await api<Msg>('GET', '/repos/alice/pub/tags/nope', { token: alice.token });
      assert.equal(missing.status, 404);

      const del = await api('DELETE', '/repos/alice/pub/tags/release/v2', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      assert.ok(!(await remote()).has('refs/tags/release/v2'));
      const again = await api<Msg>('DELETE', '/repos/alice/pub/tags/release/v2', { token: alice.token });
      assert.equal(again.status, 404);
    });

    it('asks branch protection and refuses what it refuses', async () => {
      const original = s.ctx.protection.refusalFor.bind(s.ctx.protection);
      const asked: string[] = [];
      s.ctx.protection.refusalFor = async (_repo, _pusher, updates) => {
        asked.push(...updates.map((u) => u.ref));
        return 'branch is protected';
      };
      try {
        const create = await api<Msg>('POST', '/repos/alice/pub/branches', {
          token: alice.token,
          body: { new_branch_name: 'guarded' },
        });
        assert.equal(create.status, 403);
        assert.equal(create.body.message, 'branch is protected');
        const del = await api<Msg>('DELETE', '/repos/alice/pub/branches/from-default', {
          token: alice.token,
        });
        assert.equal(del.status, 403);
        const file = await api<Msg>('POST', '/repos/alice/pub/contents/guarded.txt', {
          token: alice.token,
          body: { content: b64('x') },
        });
        assert.equal(file.status, 403);
        const tag = await api<Msg>('POST', '/repos/alice/pub/tags', {
          token: alice.token,
          body: { tag_name: 'g1' },
        });
        assert.equal(tag.status, 422);
        assert.deepEqual(asked, [
          'refs/heads/guarded',
          'refs/heads/from-default',
          'refs/heads/main',
          'refs/tags/g1',
        ]);
      } finally {
        s.ctx.protection.refusalFor = original;
      }
      const refs = await remote();
      assert.ok(!refs.has('refs/heads/guarded'));
      assert.ok(refs.has('refs/heads/from-default'));
      assert.equal(refs.get('refs/heads/main'), head);
      assert.ok(!refs.has('refs/tags/g1'));
    });
  });

  describe('contents', () => {
    let dir: string;
    const bytes = crypto.randomBytes(5000);
    const png = onePixelPng();

    before(async () => {
      dir = await clone('alice/files');
      write(dir, 'docs/guide.md', '# Guide\n\nRead me.\n');
      write(dir, 'docs/deep/nested.txt', 'nested\n');
      write(dir, 'data.bin', bytes);
      write(dir, 'image.png', png);
      write(dir, 'run.sh', '#!/bin/sh\necho hi\n');
      fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
      fs.symlinkSync('docs/guide.md', path.join(dir, 'link.md'));
      commitAll(dir, 'content');
      write(dir, 'docs/guide.md', '# Guide\n\nRead me twice.\n');
      commitAll(dir, 'edit guide');
      await net(dir, ['push', '-q', 'origin', 'main']);
    });

    const blobSha = (ref: string, p: string) => git(dir, ['rev-parse', `${ref}:${p}`]).trim();
    const lastCommit = (p: string) => git(dir, ['log', '-1', '--format=%H', 'HEAD', '--', p]).trim();

    it('lists the root and a directory, and reads a file with its content', async () => {
      const root = await api<ContentsJson[]>('GET', '/repos/alice/files/contents', { token: alice.token });
      assert.equal(root.status, 200, root.text);
      const byName = new Map(root.body.map((e) => [e.name, e]));
      assert.deepEqual([...byName.keys()].sort(), [
        'README.md',
        'data.bin',
        'docs',
        'image.png',
        'link.md',
        'run.sh',
      ]);
      assert.equal(byName.get('docs')!.type, 'dir');
      assert.equal(byName.get('docs')!.size, 0);
      assert.equal(byName.get('run.sh')!.type, 'file');
      assert.equal(byName.get('link.md')!.type, 'symlink');
      assert.equal(byName.get('link.md')!.target, 'docs/guide.md');
      for (const e of root.body) {
        assert.equal(e.sha, blobSha('HEAD', e.name), e.name);
        assert.equal(e.last_commit_sha, lastCommit(e.name), e.name);
        assert.equal(e.content, null);
        assert.equal(e.encoding, null);
      }
      assert.equal(byName.get('data.bin')!.size, bytes.length);
      assert.equal(byName.get('data.bin')!.download_url, `${s.url}/alice/files/raw/branch/main/data.bin`);
      assert.equal(byName.get('docs')!.download_url, null);

      const docs = await api<ContentsJson[]>('GET', '/repos/alice/files/contents/docs', {
        token: alice.token,
      });
      assert.equal(docs.status, 200);
      assert.deepEqual(
        docs.body.map((e) => [e.path, e.type]),
        [
          ['docs/deep', 'dir'],
          ['docs/guide.md', 'file'],
        ],
      );
      assert.equal(docs.body[1]!.last_commit_sha, lastCommit('docs/guide.md'));
      assert.equal(docs.body[0]!.last_commit_sha, lastCommit('docs/deep'));

      const file = await api<ContentsJson>('GET', '/repos/alice/files/contents/data.bin', {
        token: alice.token,
      });
      assert.equal(file.status, 200);
      assert.equal(file.body.type, 'file');
      assert.equal(file.body.encoding, 'base64');
      assert.deepEqual(Buffer.from(file.body.content!, 'base64'), bytes);
      assert.equal(file.body.sha, blobSha('HEAD', 'data.bin'));
      assert.equal(file.body.url, `${s.url}/api/v1/repos/alice/files/contents/data.bin?ref=main`);
      assert.equal(file.body.git_url, `${s.url}/api/v1/repos/alice/files/git/blobs/${file.body.sha}`);
      assert.equal(file.body.html_url, `${s.url}/alice/files/src/branch/main/data.bin`);
      assert.deepEqual(file.body._links, {
        self: file.body.url,
        git: file.body.git_url,
        html: file.body.html_url,
      });
      assert.match(file.body.last_commit_when, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);

      const link = await api<ContentsJson>('GET', '/repos/alice/files/contents/link.md', {
        token: alice.token,
      });
      assert.equal(link.body.type, 'symlink');
      assert.equal(link.body.target, 'docs/guide.md');
      assert.equal(link.body.content, null);
    });

    it('reads at a branch, a tag and a commit; refuses unknown refs, paths and tricks', async () => {
      const first = git(dir, ['rev-parse', 'HEAD~1']).trim();
      const tag = await api('POST', '/repos/alice/files/tags', {
        token: alice.token,
        body: { tag_name: 'old', target: first },
      });
      assert.equal(tag.status, 201);
      for (const ref of ['old', first, first.slice(0, 8)]) {
        const r = await api<ContentsJson>('GET', `/repos/alice/files/contents/docs/guide.md?ref=${ref}`, {
          token: alice.token,
        });
        assert.equal(r.status, 200, r.text);
        assert.equal(Buffer.from(r.body.content!, 'base64').toString(), '# Guide\n\nRead me.\n');
        assert.equal(r.body.last_commit_sha, first);
      }
      const byTag = await api<ContentsJson>('GET', '/repos/alice/files/contents/docs/guide.md?ref=old', {
        token: alice.token,
      });
      assert.equal(byTag.body.html_url, `${s.url}/alice/files/src/tag/old/docs/guide.md`);
      const bySha = await api<ContentsJson>(
        `GET`,
        `/repos/alice/files/contents/docs/guide.md?ref=${first.slice(0, 8)}`,
        {
          token: alice.token,
        },
      );
      assert.equal(bySha.body.download_url, `${s.url}/alice/files/raw/commit/${first}/docs/guide.md`);

      const missing = await api<Msg>('GET', '/repos/alice/files/contents/nope.txt', { token: alice.token });
      assert.equal(missing.status, 404);
      const noRef = await api<Msg>('GET', '/repos/alice/files/contents/README.md?ref=nope', {
        token: alice.token,
      });
      assert.equal(noRef.status, 404);
      for (const ref of [
        '--upload-pack=touch%20/tmp/pwned',
        '../../etc',
        'main:README.md',
        'HEAD@%7B1%7D',
        'a%20b',
      ]) {
        const r = await api<Msg>('GET', `/repos/alice/files/contents/README.md?ref=${ref}`, {
          token: alice.token,
        });
        assert.equal(r.status, 422, `${ref}: ${r.text}`);
      }
      const traversal = await api<Msg>(
        'GET',
        '/repos/alice/files/contents/docs%2F..%2F..%2F..%2Fetc%2Fpasswd',
        {
          token: alice.token,
        },
      );
      assert.equal(traversal.status, 422);
      const dotgit = await api<Msg>('GET', '/repos/alice/files/contents/.git/config', { token: alice.token });
      assert.equal(dotgit.status, 422);
    });

    it('creates, updates, moves and deletes files as commits git fetches', async () => {
      const before = git(dir, ['rev-parse', 'HEAD']).trim();
      const created = await api<FileResponseJson>('POST', '/repos/alice/files/contents/new/dir/hello.txt', {
        token: alice.token,
        body: { content: b64('hello\n') },
      });
      assert.equal(created.status, 201, created.text);
      const c1 = created.body.commit.sha;
      assert.equal(created.body.commit.message, 'Add new/dir/hello.txt\n');
      assert.deepEqual(
        created.body.commit.parents.map((p) => p.sha),
        [before],
      );
      assert.equal(created.body.commit.author.email, 'alice@example.com');
      assert.equal(created.body.content!.path, 'new/dir/hello.txt');
      assert.equal(created.body.content!.name, 'hello.txt');
      assert.equal(created.body.content!.last_commit_sha, c1);
      assert.equal(Buffer.from(created.body.content!.content!, 'base64').toString(), 'hello\n');
      assert.equal(created.body.verification.verified, false);
      await net(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
      assert.equal(git(dir, ['rev-parse', 'HEAD']).trim(), c1);
      assert.equal(fs.readFileSync(path.join(dir, 'new/dir/hello.txt'), 'utf8'), 'hello\n');
      assert.equal(created.body.content!.sha, blobSha('HEAD', 'new/dir/hello.txt'));
      assert.equal(created.body.commit.tree.sha, git(dir, ['rev-parse', 'HEAD^{tree}']).trim());

      const exists = await api<Msg>('POST', '/repos/alice/files/contents/new/dir/hello.txt', {
        token: alice.token,
        body: { content: b64('again') },
      });
      assert.equal(exists.status, 422);
      assert.match(exists.body.message, /already exists/);
      const underFile = await api<Msg>('POST', '/repos/alice/files/contents/README.md/inner.txt', {
        token: alice.token,
        body: { content: b64('x') },
      });
      assert.equal(underFile.status, 422);
      const onDir = await api<Msg>('POST', '/repos/alice/files/contents/docs', {
        token: alice.token,
        body: { content: b64('x') },
      });
      assert.equal(onDir.status, 422);

      const sha = created.body.content!.sha;
      const stale = await api<Msg>('PUT', '/repos/alice/files/contents/new/dir/hello.txt', {
        token: alice.token,
        body: { content: b64('changed\n'), sha: 'a'.repeat(40) },
      });
      assert.equal(stale.status, 409);
      assert.match(stale.body.message, /sha does not match/);
      const noSha = await api<Msg>('PUT', '/repos/alice/files/contents/new/dir/hello.txt', {
        token: alice.token,
        body: { content: b64('changed\n') },
      });
      assert.equal(noSha.status, 422);
      assert.equal(noSha.body.message, '[Sha]: Required');
      const updated = await api<FileResponseJson>('PUT', '/repos/alice/files/contents/new/dir/hello.txt', {
        token: alice.token,
        body: {
          content: b64('changed\n'),
          sha,
          message: 'custom message',
          author: { name: 'Ann Author', email: 'ann@example.org' },
          committer: { name: 'Cy Committer', email: 'cy@example.org' },
          dates: { author: '2020-01-02T03:04:05Z', committer: '2021-02-03T04:05:06+02:00' },
          signoff: true,
        },
      });
      assert.equal(updated.status, 200, updated.text);
      await net(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
      assert.equal(
        git(dir, ['log', '-1', '--format=%an|%ae|%at|%cn|%ce|%ct|%B']).trim(),
        `Ann Author|ann@example.org|${Date.parse('2020-01-02T03:04:05Z') / 1000}|Cy Committer|cy@example.org|${
          Date.parse('2021-02-03T04:05:06+02:00') / 1000
        }|custom message\n\nSigned-off-by: Cy Committer <cy@example.org>`,
      );
      assert.equal(updated.body.commit.committer.date, '2021-02-03T04:05:06+02:00');
      assert.equal(fs.readFileSync(path.join(dir, 'new/dir/hello.txt'), 'utf8'), 'changed\n');

      // Executable bits survive an update.
      const run = await api<FileResponseJson>('PUT', '/repos/alice/files/contents/run.sh', {
        token: alice.token,
        body: { content: b64('#!/bin/sh\necho bye\n'), sha: blobSha('HEAD', 'run.sh') },
      });
      assert.equal(run.status, 200, run.text);
      await net(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
      assert.match(git(dir, ['ls-tree', 'HEAD', 'run.sh']), /^100755 /);

      const moved = await api<FileResponseJson>('PUT', '/repos/alice/files/contents/moved/hello.txt', {
        token: alice.token,
        body: {
          content: b64('moved\n'),
          sha: blobSha('HEAD', 'new/dir/hello.txt'),
          from_path: 'new/dir/hello.txt',
        },
      });
      assert.equal(moved.status, 200, moved.text);
      await net(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
      assert.ok(!fs.existsSync(path.join(dir, 'new/dir/hello.txt')));
      assert.equal(fs.readFileSync(path.join(dir, 'moved/hello.txt'), 'utf8'), 'moved\n');

      const staleDelete = await api<Msg>('DELETE', '/repos/alice/files/contents/moved/hello.txt', {
        token: alice.token,
        body: { sha: 'b'.repeat(40) },
      });
      assert.equal(staleDelete.status, 400);
      const noFile = await api<Msg>('DELETE', '/repos/alice/files/contents/not/there.txt', {
        token: alice.token,
        body: { sha: 'b'.repeat(40) },
      });
      assert.equal(noFile.status, 404);
      const deleted = await api<FileResponseJson>('DELETE', '/repos/alice/files/contents/moved/hello.txt', {
        token: alice.token,
        body: { sha: blobSha('HEAD', 'moved/hello.txt') },
      });
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.content, null);
      assert.equal(deleted.body.commit.message, 'Delete moved/hello.txt\n');
      await net(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
      assert.ok(!fs.existsSync(path.join(dir, 'moved')));
      assert.equal(git(dir, ['rev-parse', 'HEAD']).trim(), deleted.body.commit.sha);
    });

    it('writes to a new branch, refuses unknown branches, bad content and stale writes', async () => {
      const onBranch = await api<FileResponseJson>('POST', '/repos/alice/files/contents/side.txt', {
        token: alice.token,
        body: { content: b64('side\n'), new_branch: 'side/branch' },
      });
      assert.equal(onBranch.status, 201, onBranch.text);
      await net(dir, ['fetch', '-q', 'origin']);
      assert.equal(git(dir, ['rev-parse', 'origin/side/branch']).trim(), onBranch.body.commit.sha);
      assert.equal(git(dir, ['show', 'origin/side/branch:side.txt']), 'side\n');
      assert.equal(
        git(dir, ['rev-parse', 'origin/side/branch~1']).trim(),
        git(dir, ['rev-parse', 'origin/main']).trim(),
      );
      const branchRow = await s.ctx.db
        .selectFrom('branch')
        .select('commit_id')
        .where('name', '=', 'side/branch')
        .executeTakeFirst();
      assert.equal(branchRow?.commit_id, onBranch.body.commit.sha);
      const again = await api<Msg>('POST', '/repos/alice/files/contents/side2.txt', {
        token: alice.token,
        body: { content: b64('x'), new_branch: 'side/branch' },
      });
      assert.equal(again.status, 422);
      const onSide = await api<FileResponseJson>('POST', '/repos/alice/files/contents/side2.txt', {
        token: alice.token,
        body: { content: b64('x'), branch: 'side/branch' },
      });
      assert.equal(onSide.status, 201);
      assert.deepEqual(
        onSide.body.commit.parents.map((p) => p.sha),
        [onBranch.body.commit.sha],
      );
      const noBranch = await api<Msg>('POST', '/repos/alice/files/contents/x.txt', {
        token: alice.token,
        body: { content: b64('x'), branch: 'no-such-branch' },
      });
      assert.equal(noBranch.status, 404);
      const badBranch = await api<Msg>('POST', '/repos/alice/files/contents/x.txt', {
        token: alice.token,
        body: { content: b64('x'), new_branch: '--force' },
      });
      assert.equal(badBranch.status, 422);
      const badContent = await api<Msg>('POST', '/repos/alice/files/contents/x.txt', {
        token: alice.token,
        body: { content: 'not base64!' },
      });
      assert.equal(badContent.status, 422);
      const numberContent = await api<Msg>('POST', '/repos/alice/files/contents/x.txt', {
        token: alice.token,
        body: { content: 12 },
      });
      assert.equal(numberContent.status, 422);
      const badPath = await api<Msg>('POST', '/repos/alice/files/contents/a%2F..%2F..%2Fx.txt', {
        token: alice.token,
        body: { content: b64('x') },
      });
      assert.equal(badPath.status, 422);
      const badDate = await api<Msg>('POST', '/repos/alice/files/contents/x.txt', {
        token: alice.token,
        body: { content: b64('x'), dates: { author: 'yesterday' } },
      });
      assert.equal(badDate.status, 422);

      // Two writers with the same base: one wins, the other is told the file changed.
      await net(dir, ['pull', '-q', '--ff-only', 'origin', 'main']);
      const sha = blobSha('HEAD', 'README.md');
      const race = await Promise.all(
        ['one', 'two'].map((v) =>
          api<Msg>('PUT', '/repos/alice/files/contents/README.md', {
            token: alice.token,
            body: { content: b64(v), sha },
          }),
        ),
      );
      assert.deepEqual(race.map((r) => r.status).sort(), [200, 409]);
    });

    it('serves raw files byte for byte with a content type, by ref or ref prefix', async () => {
      const raw = await fetch(`${s.url}/api/v1/repos/alice/files/raw/data.bin`);
      assert.equal(raw.status, 200);
      assert.deepEqual(Buffer.from(await raw.arrayBuffer()), bytes);
      assert.equal(raw.headers.get('content-type'), 'application/octet-stream');
      assert.equal(raw.headers.get('content-length'), String(bytes.length));
      const etag = raw.headers.get('etag');
      assert.equal(etag, `"${blobSha('origin/main', 'data.bin')}"`);
      const cached = await fetch(`${s.url}/api/v1/repos/alice/files/raw/data.bin`, {
        headers: { 'if-none-match': etag! },
      });
      assert.equal(cached.status, 304);
      const image = await fetch(`${s.url}/api/v1/repos/alice/files/raw/image.png`);
      assert.equal(image.headers.get('content-type'), 'image/png');
      assert.deepEqual(Buffer.from(await image.arrayBuffer()), png);
      const text = await fetch(`${s.url}/api/v1/repos/alice/files/raw/docs/guide.md?ref=old`);
      assert.equal(text.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(text.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(await text.text(), '# Guide\n\nRead me.\n');
      const legacy = await fetch(`${s.url}/api/v1/repos/alice/files/raw/side/branch/side.txt`);
      assert.equal(legacy.status, 200);
      assert.equal(await legacy.text(), 'side\n');
      const media = await fetch(`${s.url}/api/v1/repos/alice/files/media/data.bin`);
      assert.equal(media.status, 200);
      assert.deepEqual(Buffer.from(await media.arrayBuffer()), bytes);
      for (const p of ['docs', 'nope.bin', 'raw/data.bin?ref=nope']) {
        const r = await fetch(`${s.url}/api/v1/repos/alice/files/raw/${p}`);
        assert.equal(r.status, 404, p);
        await r.arrayBuffer();
      }
      const trick = await fetch(`${s.url}/api/v1/repos/alice/files/raw/data.bin?ref=--output=/tmp/x`);
      assert.equal(trick.status, 422);
      await trick.arrayBuffer();
    });

    it('streams archives that unpack to the files of the commit', async () => {
      await net(dir, ['fetch', '-q', 'origin']);
      const files = git(dir, ['ls-tree', '-r', '--name-only', 'origin/main']).trim().split('\n');
      const zip = await fetch(`${s.url}/api/v1/repos/alice/files/archive/main.zip`);
      assert.equal(zip.status, 200);
      assert.equal(zip.headers.get('content-type'), 'application/zip');
      assert.equal(zip.headers.get('content-disposition'), 'attachment; filename="files-main.zip"');
      const zipFile = path.join(work, 'a.zip');
      fs.writeFileSync(zipFile, Buffer.from(await zip.arrayBuffer()));
      const listed = execFileSync('unzip', ['-Z1', zipFile])
        .toString()
        .trim()
        .split('\n')
        .filter((l) => !l.endsWith('/'));
      assert.deepEqual(listed.sort(), files.map((f) => `files/${f}`).sort());
      const unzipped = execFileSync('unzip', ['-p', zipFile, 'files/data.bin']);
      assert.deepEqual(unzipped, bytes);

      const tgz = await fetch(`${s.url}/api/v1/repos/alice/files/archive/side/branch.tar.gz`);
      assert.equal(tgz.status, 200);
      assert.equal(tgz.headers.get('content-type'), 'application/gzip');
      assert.equal(tgz.headers.get('content-disposition'), 'attachment; filename="files-side-branch.tar.gz"');
      const tgzFile = path.join(work, 'a.tar.gz');
      fs.writeFileSync(tgzFile, Buffer.from(await tgz.arrayBuffer()));
      const entries = execFileSync('tar', ['tzf', tgzFile])
        .toString()
        .trim()
        .split('\n')
        .filter((l) => !l.endsWith('/'));
      const sideFiles = git(dir, ['ls-tree', '-r', '--name-only', 'origin/side/branch']).trim().split('\n');
      assert.deepEqual(entries.sort(), sideFiles.map((f) => `files/${f}`).sort());

      const byTag = await fetch(`${s.url}/api/v1/repos/alice/files/archive/old.zip`);
      assert.equal(byTag.status, 200);
      await byTag.arrayBuffer();
      const format = await api<Msg>('GET', '/repos/alice/files/archive/main.rar', { token: alice.token });
      assert.equal(format.status, 400);
      const unknown = await api<Msg>('GET', '/repos/alice/files/archive/nope.zip', { token: alice.token });
      assert.equal(unknown.status, 404);
      const option = await api<Msg>('GET', '/repos/alice/files/archive/--remote=x.zip', {
        token: alice.token,
      });
      assert.equal(option.status, 422);
    });

    it('lists refs, trees and blobs as git has them', async () => {
      await net(dir, ['fetch', '-q', '--tags', 'origin']);
      const lsRemote = (await net(dir, ['ls-remote', 'origin']))
        .trim()
        .split('\n')
        .map((l) => l.split('\t'))
        .filter(([, ref]) => ref !== 'HEAD' && !ref!.endsWith('^{}'));
      const all = await api<RefJson[]>('GET', '/repos/alice/files/git/refs', { token: alice.token });
      assert.equal(all.status, 200);
      assert.deepEqual(all.body.map((r) => [r.object.sha, r.ref]).sort(), lsRemote.sort());
      const heads = await api<RefJson[]>('GET', '/repos/alice/files/git/refs/heads', { token: alice.token });
      assert.ok(Array.isArray(heads.body));
      assert.deepEqual(heads.body.map((r) => r.ref).sort(), ['refs/heads/main', 'refs/heads/side/branch']);
      const main = await api<RefJson>('GET', '/repos/alice/files/git/refs/heads/main', {
        token: alice.token,
      });
      assert.equal(main.status, 200);
      assert.equal(main.body.ref, 'refs/heads/main');
      assert.equal(main.body.object.type, 'commit');
      assert.equal(
        main.body.object.url,
        `${s.url}/api/v1/repos/alice/files/git/commits/${main.body.object.sha}`,
      );
      const tag = await api<RefJson>('GET', '/repos/alice/files/git/refs/tags/old', { token: alice.token });
      assert.equal(tag.body.object.type, 'commit');
      const none = await api<Msg>('GET', '/repos/alice/files/git/refs/heads/nope', { token: alice.token });
      assert.equal(none.status, 404);

      const commit = git(dir, ['rev-parse', 'origin/main']).trim();
      const top = await api<TreeJson>('GET', `/repos/alice/files/git/trees/${commit}`, {
        token: alice.token,
      });
      assert.equal(top.status, 200, top.text);
      assert.equal(top.body.sha, git(dir, ['rev-parse', 'origin/main^{tree}']).trim());
      const expectTop = git(dir, ['ls-tree', '-l', 'origin/main'])
        .trim()
        .split('\n')
        .map((l) => {
          const [meta, p] = l.split('\t');
          const [mode, type, sha, size] = meta!.split(/ +/);
          return { path: p, mode, type, sha, size: size === '-' ? 0 : Number(size) };
        });
      assert.deepEqual(
        top.body.tree.map(({ path: p, mode, type, sha, size }) => ({ path: p, mode, type, sha, size })),
        expectTop,
      );
      assert.equal(top.body.truncated, false);
      const recursive = await api<TreeJson>('GET', `/repos/alice/files/git/trees/main?recursive=true`, {
        token: alice.token,
      });
      const expectAll = git(dir, ['ls-tree', '-r', '-t', '--name-only', 'origin/main']).trim().split('\n');
      assert.deepEqual(
        recursive.body.tree.map((e) => e.path),
        expectAll,
      );
      assert.equal(recursive.body.total_count, expectAll.length);
      const paged = await api<TreeJson>(
        'GET',
        `/repos/alice/files/git/trees/main?recursive=true&per_page=3&page=2`,
        {
          token: alice.token,
        },
      );
      assert.deepEqual(
        paged.body.tree.map((e) => e.path),
        expectAll.slice(3, 6),
      );
      assert.equal(paged.body.truncated, true);
      assert.equal(paged.body.page, 2);
      const treeMissing = await api<Msg>('GET', `/repos/alice/files/git/trees/${'c'.repeat(40)}`, {
        token: alice.token,
      });
      assert.equal(treeMissing.status, 404);
      const treeBad = await api<Msg>('GET', '/repos/alice/files/git/trees/--all', { token: alice.token });
      assert.equal(treeBad.status, 422);

      const blobId = blobSha('origin/main', 'data.bin');
      const blob = await api<BlobJson>('GET', `/repos/alice/files/git/blobs/${blobId}`, {
        token: alice.token,
      });
      assert.equal(blob.status, 200);
      assert.equal(blob.body.sha, blobId);
      assert.equal(blob.body.size, bytes.length);
      assert.equal(blob.body.encoding, 'base64');
      assert.deepEqual(Buffer.from(blob.body.content!, 'base64'), bytes);
      const notBlob = await api<Msg>('GET', `/repos/alice/files/git/blobs/${commit}`, { token: alice.token });
      assert.equal(notBlob.status, 404);
      const blobBad = await api<Msg>('GET', '/repos/alice/files/git/blobs/HEAD', { token: alice.token });
      assert.equal(blobBad.status, 422);
    });
  });

  describe('an empty repository', () => {
    it('answers every read cleanly: empty lists, 404s, and 409 for the commit list', async () => {
      const t = { token: alice.token };
      const lists = ['branches', 'tags', 'contents', 'contents/any/path', 'git/refs'];
      for (const p of lists) {
        const r = await api<unknown[]>('GET', `/repos/alice/empty/${p}`, t);
        assert.equal(r.status, 200, `${p}: ${r.text}`);
        assert.deepEqual(r.body, [], p);
      }
      const commits = await api<Msg>('GET', '/repos/alice/empty/commits', t);
      assert.equal(commits.status, 409);
      assert.equal(commits.body.message, 'Git Repository is empty.');
      const missing = [
        'branches/main',
        'tags/v1',
        'git/commits/main',
        `git/commits/${'a'.repeat(40)}`,
        'raw/README.md',
        'media/README.md',
        'archive/main.zip',
        'archive/main.tar.gz',
        'git/refs/heads',
        'git/refs/heads/main',
        'git/trees/main',
        `git/trees/${'a'.repeat(40)}`,
        `git/blobs/${'a'.repeat(40)}`,
        `git/tags/${'a'.repeat(40)}`,
      ];
      for (const p of missing) {
        const r = await api<Msg>('GET', `/repos/alice/empty/${p}`, t);
        assert.equal(r.status, 404, `${p}: ${r.text}`);
        assert.equal(typeof r.body.message, 'string', p);
      }
      const branch = await api<Msg>('POST', '/repos/alice/empty/branches', {
        ...t,
        body: { new_branch_name: 'x' },
      });
      assert.equal(branch.status, 404);
      assert.equal(branch.body.message, 'Git Repository is empty.');
      const delBranch = await api<Msg>('DELETE', '/repos/alice/empty/branches/main', t);
      assert.equal(delBranch.status, 404);
      const tag = await api<Msg>('POST', '/repos/alice/empty/tags', { ...t, body: { tag_name: 'v1' } });
      assert.equal(tag.status, 404);
      const delTag = await api<Msg>('DELETE', '/repos/alice/empty/tags/v1', t);
      assert.equal(delTag.status, 404);
      const update = await api<Msg>('PUT', '/repos/alice/empty/contents/a.txt', {
        ...t,
        body: { content: b64('x'), sha: 'a'.repeat(40) },
      });
      assert.equal(update.status, 422);
      const del = await api<Msg>('DELETE', '/repos/alice/empty/contents/a.txt', {
        ...t,
        body: { sha: 'a'.repeat(40) },
      });
      assert.equal(del.status, 404);
    });

    it('gets its first commit from the contents API, on the default branch or a new one', async () => {
      const created = await api<FileResponseJson>('POST', '/repos/alice/empty/contents/README.md', {
        token: alice.token,
        body: { content: b64('# first\n') },
      });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.commit.parents, []);
      const repo = await api<{ empty: boolean; default_branch: string }>('GET', '/repos/alice/empty', {
        token: alice.token,
      });
      assert.equal(repo.body.empty, false);
      assert.equal(repo.body.default_branch, 'main');
      const dir = await clone('alice/empty');
      assert.equal(git(dir, ['rev-parse', 'HEAD']).trim(), created.body.commit.sha);
      assert.equal(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'), '# first\n');
      const commits = await api<CommitJson[]>('GET', '/repos/alice/empty/commits', { token: alice.token });
      assert.equal(commits.status, 200);
      assert.deepEqual(commits.body[0]!.files, [{ filename: 'README.md', status: 'added' }]);

      const other = await api<FileResponseJson>('POST', '/repos/alice/empty2/contents/a.txt', {
        token: alice.token,
        body: { content: b64('a\n'), new_branch: 'develop' },
      });
      assert.equal(other.status, 201, other.text);
      const repo2 = await api<{ empty: boolean; default_branch: string }>('GET', '/repos/alice/empty2', {
        token: alice.token,
      });
      assert.equal(repo2.body.empty, false);
      assert.equal(repo2.body.default_branch, 'develop');
      const branches = await api<BranchJson[]>('GET', '/repos/alice/empty2/branches', { token: alice.token });
      assert.deepEqual(
        branches.body.map((b) => b.name),
        ['develop'],
      );
    });
  });

  it('answers odd names, refs and paths with a 4xx, never a 500', async () => {
    const odd = [
      '%00',
      '%FF',
      '..',
      '.git',
      'a%0Ab',
      '-',
      '--all',
      '@',
      'x'.repeat(2000),
      '%5C',
      'a:b',
      '*',
      'HEAD~1',
      'main%5E',
    ];
    const seen = new Set<number>();
    for (const o of odd) {
      for (const p of [
        `branches/${o}`,
        `tags/${o}`,
        `git/commits/${o}`,
        `contents/${o}`,
        `contents/README.md?ref=${o}`,
        `raw/${o}`,
        `raw/README.md?ref=${o}`,
        `archive/${o}.zip`,
        `git/refs/${o}`,
        `git/trees/${o}`,
        `git/blobs/${o}`,
        `git/tags/${o}`,
        `commits?sha=${o}`,
        `commits?path=${o}`,
        `commits?not=${o}`,
      ]) {
        const r = await api('GET', `/repos/alice/pub/${p}`, { token: alice.token });
        assert.ok(r.status >= 400 && r.status < 500, `${p}: ${r.status} ${r.text.slice(0, 200)}`);
        seen.add(r.status);
      }
    }
    // A 2000-character sha is within the router's maxParamLength (4096): it reads as not found or invalid.
    assert.deepEqual([...seen].sort(), [400, 404, 422]);
  });

  describe('LFS files', () => {
    it('serves the LFS object from /media and the pointer from /raw', async () => {
      await createRepo('lfs', { autoInit: true });
      await net(home, ['lfs', 'install']);
      const dir = await clone('alice/lfs');
      await net(dir, ['lfs', 'track', '*.dat']);
      const object = crypto.randomBytes(70_000);
      write(dir, 'assets/big.dat', object);
      commitAll(dir, 'add an LFS file');
      await net(dir, ['push', '-q', 'origin', 'main']);
      const media = await fetch(`${s.url}/api/v1/repos/alice/lfs/media/assets/big.dat`);
      assert.equal(media.status, 200);
      assert.equal(media.headers.get('content-length'), String(object.length));
      assert.equal(
        media.headers.get('etag'),
        `"${crypto.createHash('sha256').update(object).digest('hex')}"`,
      );
      assert.deepEqual(Buffer.from(await media.arrayBuffer()), object);
      const raw = await fetch(`${s.url}/api/v1/repos/alice/lfs/raw/assets/big.dat`);
      assert.equal(raw.status, 200);
      assert.match(
        await raw.text(),
        /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:[0-9a-f]{64}\nsize 70000\n$/,
      );
    });
  });

  it('describes its endpoints in the OpenAPI document', async () => {
    const doc = await api<{ paths: Record<string, Record<string, unknown>> }>('GET', '/swagger.v1.json');
    assert.equal(doc.status, 200);
    const paths = Object.keys(doc.body.paths);
    for (const p of [
      '/repos/{owner}/{repo}/branches',
      '/repos/{owner}/{repo}/commits',
      '/repos/{owner}/{repo}/git/commits/{sha}',
      '/repos/{owner}/{repo}/git/trees/{sha}',
      '/repos/{owner}/{repo}/git/blobs/{sha}',
      '/repos/{owner}/{repo}/git/tags/{sha}',
      '/repos/{owner}/{repo}/contents',
    ]) {
      assert.ok(
        paths.some((k) => k.replace('/api/v1', '') === p),
        p,
      );
    }
    const contents = Object.entries(doc.body.paths).find(([k]) =>
      k.endsWith('/repos/{owner}/{repo}/contents/{filepath}'),
    );
    assert.ok(contents, 'contents/{filepath} is described');
    assert.deepEqual(Object.keys(contents[1]).sort(), ['delete', 'get', 'post', 'put']);
  });

  describe('who may read and write', () => {
    it('lets anyone read a public repository and only those who may see a private one', async () => {
      for (const p of [
        'branches',
        'tags',
        'commits',
        'contents',
        'contents/README.md',
        'git/refs',
        'branches/main',
      ]) {
        const anon = await api('GET', `/repos/alice/pub/${p}`);
        assert.equal(anon.status, 200, `${p}: ${anon.text}`);
        const hidden = await api<Msg>('GET', `/repos/alice/priv/${p}`);
        assert.equal(hidden.status, 404, p);
        const outsider = await api<Msg>('GET', `/repos/alice/priv/${p}`, { token: carol.token });
        assert.equal(outsider.status, 404, p);
        const collaborator = await api('GET', `/repos/alice/priv/${p}`, { token: bob.token });
        assert.equal(collaborator.status, 200, p);
      }
      const raw = await fetch(`${s.url}/api/v1/repos/alice/priv/raw/README.md`);
      assert.equal(raw.status, 404);
      await raw.arrayBuffer();
      const archive = await fetch(`${s.url}/api/v1/repos/alice/priv/archive/main.zip`);
      assert.equal(archive.status, 404);
      await archive.arrayBuffer();
    });

    it('refuses writes to readers (403), anonymous callers (401) and read-only tokens (403)', async () => {
      const writes: Array<[string, string, unknown]> = [
        ['POST', '/repos/alice/pub/branches', { new_branch_name: 'by-bob' }],
        ['DELETE', '/repos/alice/pub/branches/from-default', undefined],
        ['POST', '/repos/alice/pub/tags', { tag_name: 'by-bob' }],
        ['DELETE', '/repos/alice/pub/tags/v1.0', undefined],
        ['POST', '/repos/alice/pub/contents/by-bob.txt', { content: b64('x') }],
        ['PUT', '/repos/alice/pub/contents/README.md', { content: b64('x'), sha: 'a'.repeat(40) }],
        ['DELETE', '/repos/alice/pub/contents/README.md', { sha: 'a'.repeat(40) }],
      ];
      for (const [method, p, body] of writes) {
        const asReader = await api<Msg>(method, p, { token: bob.token, body });
        assert.equal(asReader.status, 403, `${method} ${p}: ${asReader.text}`);
        const anon = await api<Msg>(method, p, { body });
        assert.equal(anon.status, 401, `${method} ${p}`);
        const outsider = await api<Msg>(method, p.replace('/pub/', '/priv/'), { token: carol.token, body });
        assert.equal(outsider.status, 404, `${method} ${p}`);
      }
      // A write collaborator whose token only reads.
      const scoped = await api<Msg>('POST', '/repos/alice/files/branches', {
        token: reader.token,
        body: { new_branch_name: 'scoped' },
      });
      assert.equal(scoped.status, 403);
      const withPassword = await api<BranchJson>('POST', '/repos/alice/files/branches', {
        basic: [reader.name, reader.password],
        body: { new_branch_name: 'by-writer' },
      });
      assert.equal(withPassword.status, 201, withPassword.text);
      const branches = await api<BranchJson[]>('GET', '/repos/alice/pub/branches', { token: alice.token });
      assert.ok(!branches.body.some((b) => b.name === 'by-bob'));
    });
  });
});
