// OpenSSH mode: a real /usr/sbin/sshd, started here on a free port with its own configuration,
// asks `anvil keys` (AuthorizedKeysCommand, through a small wrapper) for the key and runs
// `anvil serv key-<id>` as the forced command, which asks the running server over its internal
// endpoints and runs git itself. Clone, push (recorded, with its event), refusals and the greeting.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CLI, freePort, runCli, startServer, type TestServer } from '../helpers/server.js';
import type { AnvilEvents } from '../../src/events/bus.js';
import { makeKey, run } from '../helpers/ssh.js';

interface U {
  name: string;
  token: string;
  id: number;
}

/** The ANVIL__SECTION__KEY settings of `env` as an INI file. */
function iniOf(env: NodeJS.ProcessEnv): string {
  const sections = new Map<string, string[]>();
  for (const [name, value] of Object.entries(env)) {
    const m = /^ANVIL__(.+)__([^_].*)$/.exec(name);
    if (!m || value === undefined) continue;
    const section = m[1]!.toLowerCase().replace(/_0x2e_/g, '.');
    if (!sections.has(section)) sections.set(section, []);
    sections.get(section)!.push(`${m[2]} = ${value}`);
  }
  return [...sections].map(([s, lines]) => `[${s}]\n${lines.join('\n')}\n`).join('\n');
}

async function waitForPort(port: number, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`sshd did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('git over SSH through OpenSSH (anvil keys, anvil serv)', () => {
  let s: TestServer;
  let dir: string;
  let home: string;
  let sshd: ChildProcess;
  let sshdLog = '';
  let port: number;
  let alice: U;
  let bob: U;
  const keys: Record<string, { file: string; pub: string; fingerprint: string }> = {};
  let repoId = 0;
  const user = os.userInfo().username;

  function git(args: string[], key: string, opts: { cwd?: string } = {}) {
    return run('git', args, {
      cwd: opts.cwd ?? home,
      env: {
        PATH: process.env['PATH'],
        HOME: home,
        LANG: 'C',
        GIT_TERMINAL_PROMPT: '0',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_SSH_COMMAND:
          `ssh -i ${keys[key]!.file} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no ` +
          `-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes -p ${port}`,
        GIT_AUTHOR_NAME: 'Tester',
        GIT_AUTHOR_EMAIL: 'tester@example.com',
        GIT_COMMITTER_NAME: 'Tester',
        GIT_COMMITTER_EMAIL: 'tester@example.com',
      },
    });
  }

  async function ok(args: string[], key: string, opts: { cwd?: string } = {}) {
    const r = await git(args, key, opts);
    assert.equal(r.code, 0, `git ${args.join(' ')} failed: ${r.stderr}\nsshd: ${sshdLog.slice(-2000)}`);
    return r;
  }

  const url = (full: string) => `ssh://${user}@127.0.0.1:${port}/${full}.git`;

  before(async () => {
    s = await startServer({ ANVIL__SECURITY__INTERNAL_TOKEN: crypto.randomBytes(24).toString('hex') });
    // sshd wants the command and every directory above it owned by root and not writable by
    // others: not under /tmp.
    dir = fs.mkdtempSync(path.join(os.homedir(), '.anvil-sshd-'));
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-openssh-'));
    const config = path.join(s.dataDir, 'app.ini');
    fs.writeFileSync(config, iniOf(s.env));
    const wrapper = path.join(dir, 'anvil-keys');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${process.execPath} ${CLI} keys --config ${config} "$@"\n`, {
      mode: 0o755,
    });
    const hostKey = path.join(dir, 'host_ed25519');
    assert.equal((await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey])).code, 0);
    port = await freePort();
    const sshdConfig = path.join(dir, 'sshd_config');
    fs.writeFileSync(
      sshdConfig,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        'AuthorizedKeysFile none',
        `AuthorizedKeysCommand ${wrapper} -e ${user} -u %u -t %t -k %k`,
        `AuthorizedKeysCommandUser ${user}`,
        'StrictModes no',
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'AcceptEnv GIT_PROTOCOL',
        'LogLevel VERBOSE',
        '',
      ].join('\n'),
    );
    fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', sshdConfig], { stdio: ['ignore', 'pipe', 'pipe'] });
    sshd.stderr!.on('data', (d: Buffer) => (sshdLog = (sshdLog + d.toString()).slice(-20_000)));
    await waitForPort(port);

    const a = await s.createUser('alice');
    const b = await s.createUser('bob');
    alice = a;
    bob = b;
    await Promise.all(
      ['alice', 'bob', 'ro', 'stranger'].map(async (n) => (keys[n] = await makeKey(home, n))),
    );
    for (const u of [alice, bob]) {
      const r = await s.api('POST', '/user/keys', {
        token: u.token,
        body: { title: 'k', key: keys[u.name]!.pub },
      });
      assert.equal(r.status, 201, r.text);
    }
    const repo = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', private: true, auto_init: true },
    });
    assert.equal(repo.status, 201, repo.text);
    repoId = repo.body.id;
    const dk = await s.api('POST', '/repos/alice/proj/keys', {
      token: alice.token,
      body: { title: 'ro', key: keys['ro']!.pub, read_only: true },
    });
    assert.equal(dk.status, 201, dk.text);
  });

  after(async () => {
    if (sshd && sshd.exitCode === null) {
      const exited = new Promise((resolve) => sshd.once('exit', resolve));
      sshd.kill();
      await exited;
    }
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('anvil keys prints the forced command for a known key, nothing for others', async () => {
    const b64 = keys['alice']!.pub.split(' ')[1]!;
    const known = await runCli(s, ['keys', '-e', 'git', '-u', 'git', '-t', 'ssh-ed25519', '-k', b64]);
    assert.equal(known.code, 0, known.stderr);
    assert.match(
      known.stdout,
      /^command=".* serv key-\d+ .*",no-port-forwarding,.*restrict ssh-ed25519 \S+\n$/,
    );
    const dk = await runCli(s, ['keys', '-e', 'git', '-u', 'git', '-k', keys['ro']!.pub.split(' ')[1]!]);
    assert.match(dk.stdout, / serv deploy-\d+ /);
    const unknown = await runCli(s, [
      'keys',
      '-e',
      'git',
      '-u',
      'git',
      '-k',
      keys['stranger']!.pub.split(' ')[1]!,
    ]);
    assert.equal(unknown.stdout, '');
    const otherUser = await runCli(s, ['keys', '-e', 'git', '-u', 'postgres', '-k', b64]);
    assert.equal(otherUser.stdout, '');
  });

  it('the internal endpoints need the internal token', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${s.config.security.internalToken}x`]) {
      for (const p of ['serv', 'push-done']) {
        const r = await fetch(`${s.url}/api/internal/ssh/${p}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
          body: JSON.stringify({ key: 'key-1', command: "git-upload-pack 'alice/proj.git'", pushId: 'x' }),
        });
        assert.equal(r.status, 401, `${p} with ${authorization}`);
      }
    }
    const good = await fetch(`${s.url}/api/internal/ssh/serv`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${s.config.security.internalToken}`,
      },
      body: JSON.stringify({ key: 'key-999999', command: "git-upload-pack 'alice/proj.git'" }),
    });
    assert.deepEqual(await good.json(), { ok: false, message: 'the key is not known to Anvil' });
  });

  it('clones and pushes through sshd; the push is recorded and fires the event', async () => {
    const work = path.join(home, 'clone');
    await ok(['clone', '-q', url('alice/proj'), work], 'alice');
    assert.ok(fs.existsSync(path.join(work, 'README.md')));
    fs.writeFileSync(path.join(work, 'x.txt'), 'x\n');
    await ok(['add', 'x.txt'], 'alice', { cwd: work });
    await ok(['commit', '-q', '-m', 'x'], 'alice', { cwd: work });
    const sha = (await ok(['rev-parse', 'HEAD'], 'alice', { cwd: work })).stdout.trim();
    const pushed = new Promise<AnvilEvents['push']>((resolve) => {
      s.ctx.events.on('push', (e) => {
        if (e.repoId === repoId) resolve(e);
      });
    });
    await ok(['push', '-q', 'origin', 'HEAD:refs/heads/via-sshd'], 'alice', { cwd: work });
    const branch = await s.api<{ commit: { id: string } }>('GET', '/repos/alice/proj/branches/via-sshd', {
      token: alice.token,
    });
    assert.equal(branch.status, 200, branch.text);
    assert.equal(branch.body.commit.id, sha);
    assert.equal((await pushed).pusherId, alice.id);

    // Protocol v2 passes through sshd (AcceptEnv GIT_PROTOCOL).
    const v2 = await run('git', ['-c', 'protocol.version=2', 'ls-remote', url('alice/proj')], {
      env: {
        PATH: process.env['PATH'],
        HOME: home,
        GIT_TRACE_PACKET: '1',
        GIT_SSH_COMMAND: `ssh -i ${keys['alice']!.file} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o SetEnv=GIT_PROTOCOL=version=2 -p ${port}`,
      },
    });
    assert.equal(v2.code, 0, v2.stderr);
    assert.match(v2.stdout, /refs\/heads\/via-sshd/);
  });

  it('refuses a read-only deploy key on push, a repository without access, and an unknown key', async () => {
    const work = path.join(home, 'ro-clone');
    await ok(['clone', '-q', url('alice/proj'), work], 'ro');
    fs.writeFileSync(path.join(work, 'y.txt'), 'y\n');
    await ok(['add', 'y.txt'], 'ro', { cwd: work });
    await ok(['commit', '-q', '-m', 'y'], 'ro', { cwd: work });
    const push = await git(['push', 'origin', 'HEAD:refs/heads/by-ro'], 'ro', { cwd: work });
    assert.notEqual(push.code, 0);
    assert.match(push.stderr, /deploy key .* is read-only/);

    const hidden = await git(['ls-remote', url('alice/proj')], 'bob');
    assert.notEqual(hidden.code, 0);
    assert.match(hidden.stderr, /alice\/proj does not exist or you do not have access/);
    const missing = await git(['ls-remote', url('alice/none')], 'alice');
    assert.match(missing.stderr, /alice\/none does not exist/);

    const stranger = await git(['ls-remote', url('alice/proj')], 'stranger');
    assert.notEqual(stranger.code, 0);
    assert.match(stranger.stderr, /Permission denied \(publickey\)/);
  });

  it('greets the user by name when there is no command', async () => {
    const r = await run(
      'ssh',
      [
        '-T',
        '-i',
        keys['bob']!.file,
        '-o',
        'IdentitiesOnly=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-p',
        String(port),
        `${user}@127.0.0.1`,
      ],
      { env: { ...process.env, HOME: home } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Hi there, bob!/);
  });
});
