// Git over SSH with the real OpenSSH client against Anvil's built-in SSH server: clone, push (the
// push shows in the API and fires the push event), branch protection, deploy keys (read-only and
// read-write, one repository), unknown keys and repositories, no access, the greeting, protocol v2
// and `git lfs` on an SSH remote. Then the keys API: CRUD, 422s, permissions and /{username}.keys.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeKey, run } from '../helpers/ssh.js';
import { startSshServer, type RunningSshServer } from '../../src/ssh/server.js';
import type { AnvilEvents } from '../../src/events/bus.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface KeyJson {
  id: number;
  key: string;
  title: string;
  fingerprint: string;
  key_type: string;
  read_only: boolean;
  url: string;
  created_at: string;
  user?: { login: string };
}

interface DeployKeyJson {
  id: number;
  key_id: number;
  key: string;
  title: string;
  fingerprint: string;
  read_only: boolean;
  repository?: { full_name: string };
}

describe('git over SSH (built-in server)', () => {
  let s: TestServer;
  let sshd: RunningSshServer;
  let home: string;
  let alice: U;
  let bob: U;
  let carol: U;
  const keys: Record<string, { file: string; pub: string; fingerprint: string }> = {};
  let repoId = 0;

  /** git over SSH with `key`; HOME is a scratch directory. */
  function git(args: string[], key: string, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    const sshCommand =
      `ssh -i ${keys[key]!.file} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no ` +
      `-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes -p ${sshd.port}`;
    return run('git', args, {
      cwd: opts.cwd ?? home,
      env: {
        PATH: process.env['PATH'],
        HOME: home,
        LANG: 'C',
        GIT_TERMINAL_PROMPT: '0',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_SSH_COMMAND: sshCommand,
        GIT_AUTHOR_NAME: 'Tester',
        GIT_AUTHOR_EMAIL: 'tester@example.com',
        GIT_COMMITTER_NAME: 'Tester',
        GIT_COMMITTER_EMAIL: 'tester@example.com',
        ...opts.env,
      },
    });
  }

  async function ok(args: string[], key: string, opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    const r = await git(args, key, opts);
    assert.equal(r.code, 0, `git ${args.join(' ')} failed: ${r.stderr}`);
    return r;
  }

  const url = (full: string) => `ssh://git@127.0.0.1:${sshd.port}/${full}.git`;
  const scpUrl = (full: string) => `git@127.0.0.1:${full}.git`;

  let dirs = 0;
  const fresh = (label: string) => path.join(home, `${label}-${++dirs}`);

  async function commit(dir: string, file: string, content: string): Promise<string> {
    fs.writeFileSync(path.join(dir, file), content);
    await ok(['add', file], 'alice', { cwd: dir });
    await ok(['commit', '-q', '-m', `change ${file}`], 'alice', { cwd: dir });
    return (await ok(['rev-parse', 'HEAD'], 'alice', { cwd: dir })).stdout.trim();
  }

  before(async () => {
    s = await startServer();
    sshd = await startSshServer(s.ctx, { host: '127.0.0.1', port: 0 });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-ssh-'));
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await Promise.all(
      ['alice', 'bob', 'carol', 'ro', 'rw', 'stranger'].map(async (n) => {
        keys[n] = await makeKey(home, n);
      }),
    );
    for (const u of [alice, bob, carol]) {
      const r = await s.api('POST', '/user/keys', {
        token: u.token,
        body: { title: `${u.name}'s laptop`, key: keys[u.name]!.pub },
      });
      assert.equal(r.status, 201, r.text);
    }
    const repo = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', private: true, auto_init: true },
    });
    assert.equal(repo.status, 201, repo.text);
    repoId = repo.body.id;
    const collab = await s.api('PUT', '/repos/alice/proj/collaborators/carol', {
      token: alice.token,
      body: { permission: 'read' },
    });
    assert.equal(collab.status, 204, collab.text);
    for (const [n, readOnly] of [
      ['ro', true],
      ['rw', false],
    ] as const) {
      const r = await s.api('POST', '/repos/alice/proj/keys', {
        token: alice.token,
        body: { title: n, key: keys[n]!.pub, read_only: readOnly },
      });
      assert.equal(r.status, 201, r.text);
    }
    const other = await s.api('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'other', private: true, auto_init: true },
    });
    assert.equal(other.status, 201, other.text);
  });

  after(async () => {
    await sshd?.close();
    await s?.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('host keys are made once under APP_DATA_PATH/ssh and kept', async () => {
    const dir = path.join(s.dataDir, 'ssh');
    const ed = fs.readFileSync(path.join(dir, 'ssh_host_ed25519_key'), 'utf8');
    assert.match(ed, /BEGIN OPENSSH PRIVATE KEY/);
    assert.ok(fs.existsSync(path.join(dir, 'ssh_host_rsa_key')));
    const again = await startSshServer(s.ctx, { host: '127.0.0.1', port: 0 });
    await again.close();
    assert.equal(fs.readFileSync(path.join(dir, 'ssh_host_ed25519_key'), 'utf8'), ed);
  });

  it('clones with both URL forms, pushes, and the push shows in the API and fires the event', async () => {
    const dir = fresh('clone');
    await ok(['clone', '-q', url('alice/proj'), dir], 'alice');
    assert.ok(fs.existsSync(path.join(dir, 'README.md')));
    // scp-like form, with the port from the ssh command.
    const scp = fresh('scp');
    await ok(['clone', '-q', scpUrl('alice/proj'), scp], 'alice');
    assert.ok(fs.existsSync(path.join(scp, 'README.md')));

    const pushed = new Promise<AnvilEvents['push']>((resolve) => {
      s.ctx.events.on('push', (e) => {
        if (e.repoId === repoId) resolve(e);
      });
    });
    const sha = await commit(dir, 'b.txt', 'b\n');
    await ok(['push', '-q', 'origin', 'HEAD:main', 'HEAD:refs/heads/feature'], 'alice', { cwd: dir });
    // As soon as the push returns, the API shows it.
    const branch = await s.api<{ commit: { id: string } }>('GET', '/repos/alice/proj/branches/feature', {
      token: alice.token,
    });
    assert.equal(branch.status, 200, branch.text);
    assert.equal(branch.body.commit.id, sha);
    const e = await pushed;
    assert.equal(e.pusherId, alice.id);
    assert.ok(e.updates.some((u) => u.ref === 'refs/heads/feature' && u.newOid === sha));
  });

  it("clones and pushes a repository's wiki ({repo}.wiki.git): pages made through the API and through git", async () => {
    // Nothing to clone before the first page.
    const none = await git(['clone', '-q', url('alice/proj.wiki'), fresh('nowiki')], 'alice');
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /wiki does not exist yet/);
    const page = await s.api('POST', '/repos/alice/proj/wiki/new', {
      token: alice.token,
      body: { title: 'Home', content_base64: Buffer.from('# Welcome').toString('base64') },
    });
    assert.equal(page.status, 201, page.text);
    const dir = fresh('wiki');
    await ok(['clone', '-q', url('alice/proj.wiki'), dir], 'alice');
    assert.equal(fs.readFileSync(path.join(dir, 'Home.md'), 'utf8'), '# Welcome');
    await commit(dir, 'Over-SSH.md', 'written over ssh');
    await ok(['push', '-q', 'origin', 'HEAD'], 'alice', { cwd: dir });
    const pushed = await s.api<{ title: string; content_base64: string }>(
      'GET',
      '/repos/alice/proj/wiki/page/Over%20SSH',
      { token: alice.token },
    );
    assert.equal(pushed.status, 200, pushed.text);
    assert.equal(Buffer.from(pushed.body.content_base64, 'base64').toString(), 'written over ssh');
    // A reader (carol) clones the wiki but may not push to it; a stranger does not see it.
    const carolDir = fresh('wiki-carol');
    await ok(['clone', '-q', url('alice/proj.wiki'), carolDir], 'carol');
    await commit(carolDir, 'Nope.md', 'no');
    const refused = await git(['push', '-q', 'origin', 'HEAD'], 'carol', { cwd: carolDir });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /no write access/);
    const hidden = await git(['clone', '-q', url('alice/proj.wiki'), fresh('wiki-bob')], 'bob');
    assert.notEqual(hidden.code, 0);
    assert.match(hidden.stderr, /does not exist or you do not have access/);
  });

  it('passes protocol v2 through', async () => {
    const r = await ok(['-c', 'protocol.version=2', 'ls-remote', url('alice/proj')], 'alice', {
      env: { GIT_TRACE_PACKET: '1' },
    });
    assert.match(r.stderr, /version 2/);
    assert.match(r.stdout, /refs\/heads\/main/);
  });

  it('refuses a push to a protected branch with the rule named', async () => {
    const rule = await s.api('POST', '/repos/alice/proj/branch_protections', {
      token: alice.token,
      body: { rule_name: 'main', enable_push: false },
    });
    assert.equal(rule.status, 201, rule.text);
    const dir = fresh('prot');
    await ok(['clone', '-q', url('alice/proj'), dir], 'alice');
    await commit(dir, 'c.txt', 'c\n');
    const r = await git(['push', 'origin', 'HEAD:main'], 'alice', { cwd: dir });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /protected/i);
    assert.match(r.stderr, /pre-receive hook declined/);
    const del = await s.api('DELETE', '/repos/alice/proj/branch_protections/main', { token: alice.token });
    assert.equal(del.status, 204, del.text);
  });

  it('deploy keys: read-only fetches but may not push; read-write pushes to its repository only', async () => {
    const dir = fresh('deploy');
    await ok(['clone', '-q', url('alice/proj'), dir], 'ro');
    await commit(dir, 'd.txt', 'd\n');
    const refused = await git(['push', 'origin', 'HEAD:refs/heads/by-ro'], 'ro', { cwd: dir });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /deploy key .* is read-only/);
    assert.equal(
      (await s.api('GET', '/repos/alice/proj/branches/by-ro', { token: alice.token })).status,
      404,
    );
    await ok(['push', '-q', url('alice/proj'), 'HEAD:refs/heads/by-rw'], 'rw', { cwd: dir });
    assert.equal(
      (await s.api('GET', '/repos/alice/proj/branches/by-rw', { token: alice.token })).status,
      200,
    );
    // Another repository of the same owner: the deploy key opens nothing there.
    const other = await git(['ls-remote', url('alice/other')], 'rw');
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /does not exist or you do not have access/);
  });

  it('refuses an unknown key, an unknown repository and a repository without access, without hanging', async () => {
    const stranger = await git(['ls-remote', url('alice/proj')], 'stranger');
    assert.notEqual(stranger.code, 0);
    assert.match(stranger.stderr, /Permission denied \(publickey\)/);

    const missing = await git(['ls-remote', url('alice/nothing')], 'alice');
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /alice\/nothing does not exist or you do not have access/);

    // bob cannot see alice's private repository: the same answer as a missing one.
    const hidden = await git(['ls-remote', url('alice/proj')], 'bob');
    assert.notEqual(hidden.code, 0);
    assert.match(hidden.stderr, /alice\/proj does not exist or you do not have access/);

    // carol reads but may not push.
    const dir = fresh('carol');
    await ok(['clone', '-q', url('alice/proj'), dir], 'carol');
    await commit(dir, 'e.txt', 'e\n');
    const push = await git(['push', 'origin', 'HEAD:refs/heads/by-carol'], 'carol', { cwd: dir });
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /carol has no write access to alice\/proj/);

    // Paths that are not owner/repo.
    const odd = await git(['ls-remote', `ssh://git@127.0.0.1:${sshd.port}/../../etc/passwd`], 'alice');
    assert.notEqual(odd.code, 0);
    assert.match(odd.stderr, /is not a repository path/);
  });

  it('greets the user by name without a command, and refuses other commands', async () => {
    const base = ['-i', keys['alice']!.file, '-o', 'IdentitiesOnly=yes', '-o', 'StrictHostKeyChecking=no'];
    const opts = [
      ...base,
      '-o',
      'UserKnownHostsFile=/dev/null',
      '-o',
      'LogLevel=ERROR',
      '-o',
      'BatchMode=yes',
    ];
    const greet = await run('ssh', [...opts, '-T', '-p', String(sshd.port), 'git@127.0.0.1'], {
      env: { ...process.env, HOME: home },
    });
    assert.equal(greet.code, 0, greet.stderr);
    assert.match(
      greet.stdout,
      /Hi there, alice! You've successfully authenticated with the key named alice's laptop/,
    );
    const shell = await run('ssh', [...opts, '-p', String(sshd.port), 'git@127.0.0.1', 'cat /etc/passwd'], {
      env: { ...process.env, HOME: home },
    });
    assert.equal(shell.code, 1);
    assert.match(shell.stderr, /does not run "cat" over SSH/);
    assert.doesNotMatch(shell.stdout, /root:/);
    // Another user name than git's is refused.
    const other = await run('ssh', [...opts, '-T', '-p', String(sshd.port), 'root@127.0.0.1'], {
      env: { ...process.env, HOME: home },
    });
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /Permission denied/);
  });

  it('ssh_url of a repository points at the SSH server', async () => {
    const r = await s.api<{ ssh_url: string }>('GET', '/repos/alice/proj', { token: alice.token });
    assert.equal(r.status, 200);
    assert.equal(r.body.ssh_url, `ssh://git@127.0.0.1:${s.config.ssh.port}/alice/proj.git`);
  });

  it('git lfs pushes and pulls on an SSH remote (git-lfs-authenticate)', async () => {
    const auth = await run(
      'ssh',
      [
        '-i',
        keys['alice']!.file,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-p',
        String(sshd.port),
        'git@127.0.0.1',
        'git-lfs-authenticate alice/proj.git download',
      ],
      { env: { ...process.env, HOME: home } },
    );
    assert.equal(auth.code, 0, auth.stderr);
    const answer = JSON.parse(auth.stdout) as {
      href: string;
      header: { Authorization: string };
      expires_in: number;
    };
    assert.equal(answer.href, `${s.url}/alice/proj.git/info/lfs`);
    assert.ok(answer.expires_in > 0);
    // The token opens the LFS endpoints of this repository for reading only.
    const batch = (op: string, repo = 'proj') =>
      fetch(`${s.url}/alice/${repo}.git/info/lfs/objects/batch`, {
        method: 'POST',
        headers: {
          authorization: answer.header.Authorization,
          accept: 'application/vnd.git-lfs+json',
          'content-type': 'application/vnd.git-lfs+json',
        },
        body: JSON.stringify({ operation: op, objects: [{ oid: 'a'.repeat(64), size: 1 }] }),
      });
    assert.equal((await batch('download')).status, 200);
    assert.equal((await batch('upload')).status, 403);
    assert.notEqual((await batch('download', 'other')).status, 200);
    // A forged token is not accepted.
    const forged = answer.header.Authorization.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const r = await fetch(`${s.url}/alice/proj.git/info/lfs/objects/batch`, {
      method: 'POST',
      headers: { authorization: forged, 'content-type': 'application/vnd.git-lfs+json' },
      body: JSON.stringify({ operation: 'download', objects: [] }),
    });
    assert.equal(r.status, 401);
    // Read-only users get no upload token.
    const carolUp = await run(
      'ssh',
      [
        '-i',
        keys['carol']!.file,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-p',
        String(sshd.port),
        'git@127.0.0.1',
        'git-lfs-authenticate alice/proj.git upload',
      ],
      { env: { ...process.env, HOME: home } },
    );
    assert.equal(carolUp.code, 1);
    assert.match(carolUp.stderr, /no write access/);

    // The real git lfs client, over SSH.
    const dir = fresh('lfs');
    await ok(['clone', '-q', url('alice/proj'), dir], 'alice');
    // The smudge and clean filters, in the scratch HOME's global configuration.
    await ok(['lfs', 'install', '--skip-repo'], 'alice');
    await ok(['lfs', 'track', '*.bin'], 'alice', { cwd: dir });
    const blob = Buffer.alloc(200_000, 7).toString('latin1');
    fs.writeFileSync(path.join(dir, 'big.bin'), blob, 'latin1');
    await ok(['add', '.gitattributes', 'big.bin'], 'alice', { cwd: dir });
    await ok(['commit', '-q', '-m', 'lfs'], 'alice', { cwd: dir });
    const push = await ok(['push', 'origin', 'HEAD:refs/heads/lfs'], 'alice', { cwd: dir });
    assert.doesNotMatch(push.stderr, /error/i);
    const lfsList = await s.api<unknown[]>('GET', '/repos/alice/proj/media/big.bin?ref=lfs', {
      token: alice.token,
    });
    assert.equal(lfsList.status, 200, lfsList.text);
    assert.equal(lfsList.text.length, 200_000);

    const pulled = fresh('lfs-pull');
    await ok(['clone', '-q', '-b', 'lfs', url('alice/proj'), pulled], 'alice');
    const got = fs.readFileSync(path.join(pulled, 'big.bin'), 'latin1');
    assert.ok(got === blob, `big.bin was not smudged: ${got.slice(0, 80)}`);
  });
});

describe('SSH keys API', () => {
  let s: TestServer;
  let dir: string;
  let alice: U;
  let bob: U;
  let carol: U;
  const k: Record<string, { file: string; pub: string; fingerprint: string }> = {};

  before(async () => {
    s = await startServer();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-keys-'));
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    const specs: Array<[string, 'ed25519' | 'rsa' | 'ecdsa', number?]> = [
      ['ed', 'ed25519'],
      ['ed2', 'ed25519'],
      ['ecdsa', 'ecdsa', 384],
      ['rsa', 'rsa', 3072],
      ['small', 'rsa', 1024],
      ['deploy', 'ed25519'],
      ['admin', 'ed25519'],
    ];
    await Promise.all(specs.map(async ([n, t, b]) => (k[n] = await makeKey(dir, n, t, b))));
    const r = await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'r', private: true } });
    assert.equal(r.status, 201, r.text);
    const c = await s.api('PUT', '/repos/alice/r/collaborators/carol', {
      token: alice.token,
      body: { permission: 'read' },
    });
    assert.equal(c.status, 204, c.text);
  });

  after(async () => {
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const add = (token: string, key: string, title = 'laptop') =>
    s.api<KeyJson>('POST', '/user/keys', { token, body: { title, key } });

  it('adds ed25519, ECDSA and RSA keys with their SHA256 fingerprints, lists, gets and deletes them', async () => {
    const ed = await add(alice.token, k['ed']!.pub);
    assert.equal(ed.status, 201, ed.text);
    assert.equal(ed.body.fingerprint, k['ed']!.fingerprint);
    assert.equal(ed.body.key, k['ed']!.pub.split(' ').slice(0, 2).join(' '));
    assert.equal(ed.body.title, 'laptop');
    assert.equal(ed.body.key_type, 'user');
    assert.equal(ed.body.read_only, false);
    assert.equal(ed.body.user?.login, 'alice');
    assert.equal(ed.body.url, `${s.url}/api/v1/user/keys/${ed.body.id}`);
    for (const n of ['ecdsa', 'rsa']) {
      const r = await add(alice.token, k[n]!.pub, n);
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.fingerprint, k[n]!.fingerprint);
    }
    const list = await s.api<KeyJson[]>('GET', '/user/keys', { token: alice.token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((x) => x.title),
      ['laptop', 'ecdsa', 'rsa'],
    );
    assert.equal(list.headers.get('x-total-count'), '3');
    const byFp = await s.api<KeyJson[]>(
      'GET',
      `/user/keys?fingerprint=${encodeURIComponent(k['rsa']!.fingerprint)}`,
      { token: alice.token },
    );
    assert.deepEqual(
      byFp.body.map((x) => x.title),
      ['rsa'],
    );
    const one = await s.api<KeyJson>('GET', `/user/keys/${ed.body.id}`, { token: alice.token });
    assert.equal(one.status, 200);
    assert.equal(one.body.fingerprint, k['ed']!.fingerprint);
    // Another user's key is not found through /user/keys.
    assert.equal((await s.api('GET', `/user/keys/${ed.body.id}`, { token: bob.token })).status, 404);
    assert.equal((await s.api('DELETE', `/user/keys/${ed.body.id}`, { token: bob.token })).status, 404);

    // Anyone sees a user's public keys, in the API and as /{username}.keys.
    const theirs = await s.api<KeyJson[]>('GET', '/users/alice/keys');
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.length, 3);
    assert.equal((await s.api('GET', '/users/nobody/keys')).status, 404);
    const text = await fetch(`${s.url}/alice.keys`);
    assert.equal(text.status, 200);
    assert.match(text.headers.get('content-type') ?? '', /^text\/plain/);
    const lines = (await text.text()).trim().split('\n');
    assert.equal(lines.length, 3);
    assert.equal(lines[0], k['ed']!.pub.split(' ').slice(0, 2).join(' '));
    assert.equal((await fetch(`${s.url}/nobody.keys`)).status, 404);
    assert.equal(await (await fetch(`${s.url}/bob.keys`)).text(), '');

    const del = await s.api('DELETE', `/user/keys/${ed.body.id}`, { token: alice.token });
    assert.equal(del.status, 204);
    assert.equal((await s.api('GET', `/user/keys/${ed.body.id}`, { token: alice.token })).status, 404);
    assert.equal((await s.api('DELETE', `/user/keys/${ed.body.id}`, { token: alice.token })).status, 404);
  });

  it('refuses malformed, too small and duplicate keys with 422 naming the problem', async () => {
    const small = await add(bob.token, k['small']!.pub);
    assert.equal(small.status, 422, small.text);
    assert.match(small.text, /rsa key is 1024 bits; at least 3071/);
    const [type, data] = k['ed2']!.pub.split(' ') as [string, string];
    const cases: Array<[string, RegExp]> = [
      ['', /key: the key is empty|key/],
      ['hello', /must be "type base64/],
      [`${type} !!!notbase64`, /not base64/],
      [`ssh-rsa ${data}`, /says it is ssh-rsa but its data is ssh-ed25519/],
      [`${type} ${data.slice(0, 40)}`, /truncated|32 bytes/],
      [`ssh-foo ${Buffer.from('\0\0\0\x07ssh-foo').toString('base64')}`, /unsupported key type/],
    ];
    for (const [key, message] of cases) {
      const r = await add(bob.token, key);
      assert.equal(r.status, 422, `${key}: ${r.text}`);
      assert.match((r.body as unknown as { message: string }).message, message);
    }
    const first = await add(bob.token, k['ed2']!.pub);
    assert.equal(first.status, 201, first.text);
    // Twice, by the same user or another, even with another comment: 422.
    const again = await add(bob.token, `${type} ${data} other-comment`);
    assert.equal(again.status, 422);
    assert.match(again.text, /already been added/);
    assert.equal((await add(carol.token, k['ed2']!.pub)).status, 422);
    const untitled = await add(carol.token, k['admin']!.pub, '  ');
    assert.equal(untitled.status, 422);
    assert.match(untitled.text, /title/);
  });

  it('needs the user scope: read to list, write to add', async () => {
    const readOnly = await s.api<{ sha1: string }>('POST', '/users/carol/tokens', {
      basic: [carol.name, carol.password],
      body: { name: 'ro', scopes: ['read:user'] },
    });
    const repoOnly = await s.api<{ sha1: string }>('POST', '/users/carol/tokens', {
      basic: [carol.name, carol.password],
      body: { name: 'repo', scopes: ['write:repository'] },
    });
    assert.equal((await s.api('GET', '/user/keys', { token: readOnly.body.sha1 })).status, 200);
    assert.equal((await add(readOnly.body.sha1, k['admin']!.pub)).status, 403);
    assert.equal((await s.api('GET', '/user/keys', { token: repoOnly.body.sha1 })).status, 403);
    assert.equal((await s.api('GET', '/user/keys')).status, 401);
  });

  it('administrators add and delete keys for a user; others may not', async () => {
    const denied = await s.api('POST', '/admin/users/carol/keys', {
      token: bob.token,
      body: { title: 'x', key: k['admin']!.pub },
    });
    assert.equal(denied.status, 403);
    const r = await s.api<KeyJson>('POST', '/admin/users/carol/keys', {
      token: s.admin.token,
      body: { title: 'given', key: k['admin']!.pub },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.user?.login, 'carol');
    assert.equal(
      (
        await s.api('POST', '/admin/users/nobody/keys', {
          token: s.admin.token,
          body: { title: 'x', key: k['deploy']!.pub },
        })
      ).status,
      404,
    );
    assert.equal(
      (await s.api('DELETE', `/admin/users/carol/keys/${r.body.id}`, { token: bob.token })).status,
      403,
    );
    assert.equal(
      (await s.api('DELETE', `/admin/users/bob/keys/${r.body.id}`, { token: s.admin.token })).status,
      404,
    );
    assert.equal(
      (await s.api('DELETE', `/admin/users/carol/keys/${r.body.id}`, { token: s.admin.token })).status,
      204,
    );
    assert.equal((await s.api<KeyJson[]>('GET', '/users/carol/keys')).body.length, 0);
  });

  it('deploy keys: repository administrators only; read-only or read-write; unique per repository', async () => {
    const body = { title: 'ci', key: k['deploy']!.pub, read_only: true };
    assert.equal((await s.api('POST', '/repos/alice/r/keys', { token: bob.token, body })).status, 404);
    assert.equal((await s.api('POST', '/repos/alice/r/keys', { token: carol.token, body })).status, 403);
    assert.equal((await s.api('GET', '/repos/alice/r/keys', { token: carol.token })).status, 403);
    const r = await s.api<DeployKeyJson>('POST', '/repos/alice/r/keys', { token: alice.token, body });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.read_only, true);
    assert.equal(r.body.fingerprint, k['deploy']!.fingerprint);
    assert.equal(r.body.key_id, r.body.id);
    assert.equal(r.body.repository?.full_name, 'alice/r');
    const dup = await s.api('POST', '/repos/alice/r/keys', { token: alice.token, body });
    assert.equal(dup.status, 422);
    // A user's key cannot be a deploy key, nor the reverse.
    const userKey = await s.api('POST', '/repos/alice/r/keys', {
      token: alice.token,
      body: { title: 'mine', key: k['rsa']!.pub },
    });
    assert.equal(userKey.status, 422);
    assert.equal((await add(bob.token, k['deploy']!.pub)).status, 422);
    const small = await s.api('POST', '/repos/alice/r/keys', {
      token: alice.token,
      body: { title: 'small', key: k['small']!.pub },
    });
    assert.equal(small.status, 422);

    const list = await s.api<DeployKeyJson[]>('GET', '/repos/alice/r/keys', { token: alice.token });
    assert.equal(list.status, 200);
    assert.equal(list.body.length, 1);
    const filtered = await s.api<DeployKeyJson[]>('GET', `/repos/alice/r/keys?key_id=${r.body.id + 1000}`, {
      token: alice.token,
    });
    assert.equal(filtered.body.length, 0);
    const one = await s.api<DeployKeyJson>('GET', `/repos/alice/r/keys/${r.body.id}`, { token: alice.token });
    assert.equal(one.status, 200);
    assert.equal((await s.api('GET', '/repos/alice/r/keys/999999', { token: alice.token })).status, 404);
    assert.equal(
      (await s.api('DELETE', `/repos/alice/r/keys/${r.body.id}`, { token: carol.token })).status,
      403,
    );
    assert.equal(
      (await s.api('DELETE', `/repos/alice/r/keys/${r.body.id}`, { token: alice.token })).status,
      204,
    );
    assert.equal(
      (await s.api('GET', `/repos/alice/r/keys/${r.body.id}`, { token: alice.token })).status,
      404,
    );
  });

  it('deleting a repository removes its deploy keys; deleting a user removes their keys', async () => {
    const repo = await s.api('POST', '/user/repos', { token: bob.token, body: { name: 'gone' } });
    assert.equal(repo.status, 201, repo.text);
    const dk = await s.api('POST', '/repos/bob/gone/keys', {
      token: bob.token,
      body: { title: 'd', key: k['deploy']!.pub },
    });
    assert.equal(dk.status, 201, dk.text);
    assert.equal((await s.ctx.sshKeys.byFingerprint(k['deploy']!.fingerprint)).deploy.length, 1);
    assert.equal((await s.api('DELETE', '/repos/bob/gone', { token: bob.token })).status, 204);
    assert.equal((await s.ctx.sshKeys.byFingerprint(k['deploy']!.fingerprint)).deploy.length, 0);

    assert.ok((await s.ctx.sshKeys.byFingerprint(k['ed2']!.fingerprint)).user);
    assert.equal((await s.api('DELETE', '/admin/users/bob', { token: s.admin.token })).status, 204);
    assert.equal((await s.ctx.sshKeys.byFingerprint(k['ed2']!.fingerprint)).user, undefined);
    // The key is free again.
    assert.equal((await add(carol.token, k['ed2']!.pub)).status, 201);
  });
});
