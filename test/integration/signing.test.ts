// GPG keys (/user/gpg_keys, the token flow of /user/gpg_key_token and /user/gpg_key_verify,
// /users/{u}/gpg_keys) and the verification of signed commits: commits signed with Debian's gpg by
// a registered key read as verified (signer, payload, signature), an unknown signer and an unsigned
// commit do not; SSH-signed commits (git's gpg.format=ssh); the instance's signing key
// ([repository.signing]) served as /signing-key.gpg or /signing-key.ssh and signing the merges
// Anvil makes, or 404 when it is not configured. Bad input and permission denials.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

const run = promisify(execFile);

interface GpgKeyJson {
  id: number;
  key_id: string;
  primary_key_id: string;
  public_key: string;
  emails: Array<{ email: string; verified: boolean }>;
  subkeys: GpgKeyJson[];
  verified: boolean;
  can_sign: boolean;
  can_certify: boolean;
  created_at: string;
  expires_at: string;
}
interface Verification {
  verified: boolean;
  reason: string;
  signature: string;
  payload: string;
  signer: { name: string; email: string; username: string } | null;
}
interface CommitJson {
  sha: string;
  commit: { verification: Verification | null };
}
type User = { name: string; password: string; token: string; id: number };

/** gpg in its own home, no agent prompts (keys without passphrase). */
async function gpg(home: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'gpg',
      ['--batch', '--no-tty', ...args],
      { env: { PATH: process.env['PATH'], GNUPGHOME: home } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`gpg ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
    // gpg may exit before reading its input (key generation reads none).
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input ?? '');
  });
}

/** A new ed25519 signing key for `uid`; its long key id. */
async function genKey(home: string, uid: string): Promise<string> {
  await gpg(home, ['--passphrase', '', '--quick-gen-key', uid, 'ed25519', 'sign', 'never']);
  const out = await gpg(home, ['--with-colons', '--list-keys', `=${uid}`]);
  return out
    .split('\n')
    .find((l) => l.startsWith('pub:'))!
    .split(':')[4]!;
}

function gnupgHome(): string {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gpg-'));
  fs.chmodSync(home, 0o700);
  return home;
}

/** git with a GNUPGHOME, committing as alice. */
class SigningGit extends GitClient {
  constructor(readonly gnupg: string) {
    super();
  }
  override env(): NodeJS.ProcessEnv {
    return {
      ...super.env(),
      GNUPGHOME: this.gnupg,
      GIT_AUTHOR_NAME: 'Alice',
      GIT_AUTHOR_EMAIL: 'alice@example.com',
      GIT_COMMITTER_NAME: 'Alice',
      GIT_COMMITTER_EMAIL: 'alice@example.com',
    };
  }
  /** A commit of `file`, signed by `sign` (git -c options) when given; its id. */
  async signedCommit(dir: string, file: string, sign?: string[]): Promise<string> {
    fs.writeFileSync(path.join(dir, file), `${file}\n`);
    await this.git(['add', file], dir);
    await this.git([...(sign ?? []), 'commit', '--quiet', ...(sign ? ['-S'] : []), '-m', `add ${file}`], dir);
    return (await this.git(['rev-parse', 'HEAD'], dir)).trim();
  }
}

const gpgSign = (keyId: string) => ['-c', 'gpg.program=gpg', '-c', `user.signingkey=${keyId}`];
const sshSign = (keyFile: string) => ['-c', 'gpg.format=ssh', '-c', `user.signingkey=${keyFile}`];

describe('GPG keys and commit signatures', () => {
  let s: TestServer;
  let g: SigningGit;
  let home: string;
  let alice: User;
  let bob: User;
  let wt: string;
  const ids: Record<string, string> = {};
  const armored: Record<string, string> = {};
  const commits: Record<string, string> = {};
  let sshKeyFile: string;

  const verificationOf = async (sha: string) => {
    const r = await s.api<CommitJson>('GET', `/repos/alice/signed/git/commits/${sha}`, {
      token: alice.token,
    });
    assert.equal(r.status, 200, r.text);
    return r.body.commit.verification!;
  };
  const payloadOf = async (sha: string) => {
    const raw = await g.git(['cat-file', 'commit', sha], wt);
    return raw.replace(/^gpgsig [^\n]*\n( [^\n]*\n)*/m, '');
  };

  before(async () => {
    home = gnupgHome();
    s = await startServer();
    g = new SigningGit(home);
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const [name, uid] of [
      ['alice', 'Alice <alice@example.com>'],
      ['eve', 'Eve <eve@example.org>'],
      ['work', 'Alice at work <alice@elsewhere.example>'],
      ['bob', 'Bob <bob@example.com>'],
    ] as const) {
      ids[name] = await genKey(home, uid);
      armored[name] = await gpg(home, ['--armor', '--export', ids[name]!]);
    }
    sshKeyFile = path.join(home, 'id_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice', '-f', sshKeyFile]);
    const r = await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'signed' } });
    assert.equal(r.status, 201, r.text);
    wt = await g.workTree();
    commits['unsigned'] = await g.signedCommit(wt, 'a.txt');
    commits['alice'] = await g.signedCommit(wt, 'b.txt', gpgSign(ids['alice']!));
    commits['eve'] = await g.signedCommit(wt, 'c.txt', gpgSign(ids['eve']!));
    commits['work'] = await g.signedCommit(wt, 'd.txt', gpgSign(ids['work']!));
    commits['ssh'] = await g.signedCommit(wt, 'e.txt', sshSign(sshKeyFile));
    await g.git(
      ['push', '--quiet', repoUrl(s.url, 'alice', 'signed', [alice.name, alice.password]), 'main'],
      wt,
    );
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  it('unsigned and unknown signers are not verified before any key is registered', async () => {
    assert.deepEqual(await verificationOf(commits['unsigned']!), {
      verified: false,
      reason: 'gpg.error.not_signed_commit',
      signature: '',
      signer: null,
      payload: '',
    });
    const v = await verificationOf(commits['alice']!);
    assert.equal(v.verified, false);
    assert.equal(v.reason, 'gpg.error.no_gpg_keys_found');
    assert.match(v.signature, /^-----BEGIN PGP SIGNATURE-----\n[\s\S]+-----END PGP SIGNATURE-----\n$/);
    assert.equal(v.payload, await payloadOf(commits['alice']!));
    assert.equal(v.signer, null);
  });

  it('adds a key whose user ID is an activated address: 201 in Forgejo shape, listed, got', async () => {
    const r = await s.api<GpgKeyJson>('POST', '/user/gpg_keys', {
      token: alice.token,
      body: { armored_public_key: armored['alice'] },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.key_id, ids['alice']);
    assert.equal(r.body.primary_key_id, '');
    assert.deepEqual(r.body.emails, [{ email: 'alice@example.com', verified: true }]);
    assert.equal(r.body.verified, false);
    assert.equal(r.body.can_sign, true);
    assert.equal(r.body.can_certify, true);
    assert.equal(r.body.expires_at, '0001-01-01T00:00:00Z');
    assert.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(r.body.public_key.length > 20);
    assert.deepEqual(r.body.subkeys, []);

    const list = await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: alice.token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((k) => k.key_id),
      [ids['alice']],
    );
    assert.equal(list.headers.get('x-total-count'), '1');
    const one = await s.api<GpgKeyJson>('GET', `/user/gpg_keys/${r.body.id}`, { token: alice.token });
    assert.deepEqual(one.body, r.body);
    const pub = await s.api<GpgKeyJson[]>('GET', '/users/alice/gpg_keys');
    assert.equal(pub.status, 200);
    assert.deepEqual(
      pub.body.map((k) => k.id),
      [r.body.id],
    );
  });

  it('a commit signed by the registered key is verified, in the commit and in the commit list', async () => {
    const v = await verificationOf(commits['alice']!);
    assert.equal(v.verified, true, v.reason);
    assert.equal(v.reason, `alice / ${ids['alice']}`);
    assert.deepEqual(v.signer, { name: 'alice', email: 'alice@example.com', username: '' });
    assert.equal(v.payload, await payloadOf(commits['alice']!));
    assert.match(v.signature, /^-----BEGIN PGP SIGNATURE-----/);

    const list = await s.api<CommitJson[]>('GET', '/repos/alice/signed/commits?limit=50', {
      token: alice.token,
    });
    assert.equal(list.status, 200);
    const bySha = new Map(list.body.map((c) => [c.sha, c.commit.verification!]));
    assert.equal(bySha.get(commits['alice']!)!.verified, true);
    assert.equal(bySha.get(commits['unsigned']!)!.reason, 'gpg.error.not_signed_commit');
    // An unknown signer: a key nobody registered.
    assert.equal(bySha.get(commits['eve']!)!.verified, false);
    assert.equal(bySha.get(commits['eve']!)!.reason, 'gpg.error.no_gpg_keys_found');
    assert.equal(bySha.get(commits['eve']!)!.signer, null);
    // An SSH signature by a key no account has.
    assert.equal(bySha.get(commits['ssh']!)!.verified, false);
    assert.equal(bySha.get(commits['ssh']!)!.reason, 'gpg.error.no_gpg_keys_found');
    assert.match(bySha.get(commits['ssh']!)!.signature, /^-----BEGIN SSH SIGNATURE-----/);
    // A signature by a registered key over other bytes: a probable bad signature.
    const raw = await g.git(['cat-file', 'commit', commits['alice']!], wt);
    const file = path.join(g.home, 'forged');
    fs.writeFileSync(file, raw.replace('add b.txt', 'add b.txt, changed'));
    const forged = (await g.git(['hash-object', '-t', 'commit', '-w', file], wt)).trim();
    const url = repoUrl(s.url, 'alice', 'signed', [alice.name, alice.password]);
    await g.git(['push', '--quiet', url, `${forged}:refs/heads/forged`], wt);
    const bad = await verificationOf(forged);
    assert.equal(bad.verified, false);
    assert.equal(bad.reason, 'gpg.error.probable_bad_signature');
    assert.equal(bad.signer, null);
    // verification=false leaves it out.
    const without = await s.api<CommitJson[]>('GET', '/repos/alice/signed/commits?verification=false', {
      token: alice.token,
    });
    assert.equal(without.body[0]!.commit.verification, null);
    // The branch's head commit carries it too.
    const branch = await s.api<{ commit: { id: string; verification: Verification } }>(
      'GET',
      '/repos/alice/signed/branches/main',
      { token: alice.token },
    );
    assert.equal(branch.body.commit.id, commits['ssh']);
    assert.equal(branch.body.commit.verification.reason, 'gpg.error.no_gpg_keys_found');
  });

  it('a key without an address of the user needs the signed token; the signed token verifies it', async () => {
    const miss = await s.api<{ message: string }>('POST', '/user/gpg_keys', {
      token: alice.token,
      body: { armored_public_key: armored['work'] },
    });
    assert.equal(miss.status, 404, miss.text);
    const tokenReply = await s.api<string>('GET', '/user/gpg_key_token', { token: alice.token });
    assert.equal(tokenReply.status, 200);
    assert.match(tokenReply.headers.get('content-type') ?? '', /^text\/plain/);
    const token = tokenReply.text;
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.ok(miss.body.message.includes(token));

    // A signature of something else, or by another key, is refused.
    const wrong = await gpg(home, ['--armor', '--detach-sign', '-u', ids['work']!], 'not the token');
    const byEve = await gpg(home, ['--armor', '--detach-sign', '-u', ids['eve']!], token);
    for (const sig of [wrong, byEve, 'garbage']) {
      const r = await s.api('POST', '/user/gpg_keys', {
        token: alice.token,
        body: { armored_public_key: armored['work'], armored_signature: sig },
      });
      assert.equal(r.status, 422, r.text);
    }
    assert.equal((await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: alice.token })).body.length, 1);

    const sig = await gpg(home, ['--armor', '--detach-sign', '-u', ids['work']!], token);
    const r = await s.api<GpgKeyJson>('POST', '/user/gpg_keys', {
      token: alice.token,
      body: { armored_public_key: armored['work'], armored_signature: sig },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.verified, true);
    assert.deepEqual(r.body.emails, []);
    // A verified key vouches for the committer's activated address.
    const v = await verificationOf(commits['work']!);
    assert.equal(v.verified, true, v.reason);
    assert.equal(v.reason, `alice / ${ids['work']}`);

    // /user/gpg_key_verify: the same proof for a key already added.
    const bobKey = await s.api<GpgKeyJson>('POST', '/user/gpg_keys', {
      token: bob.token,
      body: { armored_public_key: armored['bob'] },
    });
    assert.equal(bobKey.status, 201, bobKey.text);
    assert.equal(bobKey.body.verified, false);
    const bobToken = (await s.api<string>('GET', '/user/gpg_key_token', { token: bob.token })).text;
    assert.notEqual(bobToken, token);
    const bad = await s.api('POST', '/user/gpg_key_verify', {
      token: bob.token,
      body: {
        key_id: ids['bob'],
        armored_signature: await gpg(home, ['--armor', '--detach-sign', '-u', ids['bob']!], token),
      },
    });
    assert.equal(bad.status, 422, bad.text);
    const unknown = await s.api('POST', '/user/gpg_key_verify', {
      token: bob.token,
      body: { key_id: ids['alice'], armored_signature: 'x' },
    });
    assert.equal(unknown.status, 404, unknown.text);
    const good = await s.api<GpgKeyJson>('POST', '/user/gpg_key_verify', {
      token: bob.token,
      body: {
        key_id: ids['bob'],
        armored_signature: await gpg(home, ['--armor', '--detach-sign', '-u', ids['bob']!], bobToken),
      },
    });
    assert.equal(good.status, 201, good.text);
    assert.equal(good.body.verified, true);
    assert.equal(good.body.id, bobKey.body.id);
  });

  it('bad input: malformed, private and duplicate keys are 422, nothing written', async () => {
    const secret = await gpg(home, ['--armor', '--export-secret-keys', ids['eve']!]);
    for (const [body, part] of [
      [{ armored_public_key: 'not a key' }, /^\[ArmoredPublicKey\]: failed to parse/],
      [
        { armored_public_key: armored['alice']!.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!') },
        /ArmoredPublicKey/,
      ],
      [{ armored_public_key: secret }, /a private key/],
      [{}, /armored_public_key|ArmoredPublicKey/i],
    ] as const) {
      const r = await s.api<{ message: string }>('POST', '/user/gpg_keys', { token: alice.token, body });
      assert.equal(r.status, 422, r.text);
      assert.match(r.body.message, part);
    }
    const dup = await s.api<{ message: string }>('POST', '/user/gpg_keys', {
      token: bob.token,
      body: { armored_public_key: armored['alice'] },
    });
    assert.equal(dup.status, 422, dup.text);
    assert.equal(dup.body.message, 'A key with the same id already exists');
    assert.equal((await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: alice.token })).body.length, 2);
    assert.equal((await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: bob.token })).body.length, 1);
  });

  it("permissions: someone else's key is 404, private users' keys are hidden, scopes apply", async () => {
    const bobKey = (await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: bob.token })).body[0]!;
    assert.equal((await s.api('GET', `/user/gpg_keys/${bobKey.id}`, { token: alice.token })).status, 404);
    assert.equal((await s.api('DELETE', `/user/gpg_keys/${bobKey.id}`, { token: alice.token })).status, 404);
    assert.equal((await s.api('DELETE', '/user/gpg_keys/99999', { token: alice.token })).status, 404);
    assert.equal((await s.api('GET', '/user/gpg_keys/nope', { token: alice.token })).status, 422);
    assert.equal((await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: bob.token })).body.length, 1);

    assert.equal((await s.api('GET', '/user/gpg_keys')).status, 401);
    assert.equal((await s.api('GET', '/user/gpg_key_token')).status, 401);
    const readOnly = await s.api<{ sha1: string }>('POST', '/users/bob/tokens', {
      basic: [bob.name, bob.password],
      body: { name: 'ro', scopes: ['read:user'] },
    });
    assert.equal(readOnly.status, 201);
    assert.equal((await s.api('GET', '/user/gpg_keys', { token: readOnly.body.sha1 })).status, 200);
    const denied = await s.api('POST', '/user/gpg_keys', {
      token: readOnly.body.sha1,
      body: { armored_public_key: armored['eve'] },
    });
    assert.equal(denied.status, 403, denied.text);
    assert.equal(
      (await s.api('DELETE', `/user/gpg_keys/${bobKey.id}`, { token: readOnly.body.sha1 })).status,
      403,
    );
    const repoOnly = await s.api<{ sha1: string }>('POST', '/users/bob/tokens', {
      basic: [bob.name, bob.password],
      body: { name: 'repo', scopes: ['read:repository'] },
    });
    assert.equal((await s.api('GET', '/user/gpg_keys', { token: repoOnly.body.sha1 })).status, 403);

    // A private user's keys: to themselves and administrators only.
    const p = await s.api('PATCH', '/admin/users/bob', {
      token: s.admin.token,
      body: { visibility: 'private' },
    });
    assert.equal(p.status, 200, p.text);
    assert.equal((await s.api('GET', '/users/bob/gpg_keys')).status, 404);
    assert.equal((await s.api('GET', '/users/bob/gpg_keys', { token: bob.token })).status, 200);
    assert.equal((await s.api('GET', '/users/bob/gpg_keys', { token: s.admin.token })).status, 200);
    assert.equal((await s.api('GET', '/users/nobody/gpg_keys')).status, 404);
    // Organizations have none; a private one is hidden like a private user.
    const org = await s.api('POST', '/orgs', {
      token: alice.token,
      body: { username: 'hidden-org', visibility: 'private' },
    });
    assert.equal(org.status, 201, org.text);
    const orgKeys = await s.api<GpgKeyJson[]>('GET', '/users/hidden-org/gpg_keys', { token: alice.token });
    assert.equal(orgKeys.status, 200, orgKeys.text);
    assert.deepEqual(orgKeys.body, []);
    assert.equal((await s.api('GET', '/users/hidden-org/gpg_keys')).status, 404);
  });

  it('deleting a key takes the verification away', async () => {
    const keys = (await s.api<GpgKeyJson[]>('GET', '/user/gpg_keys', { token: alice.token })).body;
    const mine = keys.find((k) => k.key_id === ids['alice'])!;
    assert.equal((await verificationOf(commits['alice']!)).verified, true);
    assert.equal((await s.api('DELETE', `/user/gpg_keys/${mine.id}`, { token: alice.token })).status, 204);
    assert.equal((await s.api('GET', `/user/gpg_keys/${mine.id}`, { token: alice.token })).status, 404);
    const v = await verificationOf(commits['alice']!);
    assert.equal(v.verified, false);
    assert.equal(v.reason, 'gpg.error.no_gpg_keys_found');
  });

  it('without [repository.signing] the signing-key endpoints are 404', async () => {
    assert.equal((await s.api('GET', '/signing-key.gpg')).status, 404);
    assert.equal((await s.api('GET', '/signing-key.ssh')).status, 404);
    assert.equal(
      (await s.api('GET', '/repos/alice/signed/signing-key.gpg', { token: alice.token })).status,
      404,
    );
  });

  it('an SSH signature is checked against the SshKeyLookup the ssh domain provides (a stand-in here)', async () => {
    const { sshFingerprint, sshPublicKeyBlob } = await import('../../src/signing/verify.js');
    const fp = sshFingerprint(sshPublicKeyBlob(fs.readFileSync(`${sshKeyFile}.pub`, 'utf8'))!);
    const owner = { id: bob.id };
    const wired = s.ctx.signing.sshKeys;
    s.ctx.signing.sshKeys = {
      byFingerprint: async (f) => (f === fp ? { userId: owner.id, fingerprint: f } : undefined),
    };
    try {
      // The key is bob's: it does not vouch for alice's commit.
      s.ctx.signing.keysChanged();
      assert.equal((await verificationOf(commits['ssh']!)).reason, 'gpg.error.no_gpg_keys_found');
      owner.id = alice.id;
      s.ctx.signing.keysChanged();
      const v = await verificationOf(commits['ssh']!);
      assert.equal(v.verified, true, v.reason);
      assert.equal(v.reason, `alice / ${fp}`);
      assert.deepEqual(v.signer, { name: 'alice', email: 'alice@example.com', username: '' });
      assert.equal(v.payload, await payloadOf(commits['ssh']!));
      assert.match(v.signature, /^-----BEGIN SSH SIGNATURE-----/);
      // GPG-signed and unsigned commits are not its business.
      assert.equal((await verificationOf(commits['eve']!)).verified, false);
    } finally {
      s.ctx.signing.sshKeys = wired;
      s.ctx.signing.keysChanged();
    }
  });

  it('a commit signed with an SSH key of the committer is verified', async () => {
    // The commit's verification was read (and cached) before: the ssh domain must call
    // SigningService.keysChanged() when keys are added, or this waits out the cache's minute.
    const pub = fs.readFileSync(`${sshKeyFile}.pub`, 'utf8');
    const r = await s.api('POST', '/user/keys', {
      token: alice.token,
      body: { title: 'laptop', key: pub },
    });
    assert.equal(r.status, 201, r.text);
    const v = await verificationOf(commits['ssh']!);
    assert.equal(v.verified, true, v.reason);
    assert.match(v.reason, /^alice \/ SHA256:/);
    assert.deepEqual(v.signer, { name: 'alice', email: 'alice@example.com', username: '' });
    assert.equal(v.payload, await payloadOf(commits['ssh']!));
  });
});

describe('the instance signing merges ([repository.signing])', () => {
  for (const format of ['openpgp', 'ssh'] as const) {
    describe(format, () => {
      let s: TestServer;
      let g: SigningGit;
      let home: string;
      let alice: User;
      let key: string;
      let publicKey: string;

      before(async () => {
        home = gnupgHome();
        if (format === 'openpgp') {
          key = await genKey(home, 'Anvil Signer <signer@example.com>');
          publicKey = await gpg(home, ['--armor', '--export', key]);
        } else {
          key = path.join(home, 'signing_key');
          await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'anvil', '-f', key]);
          publicKey = fs.readFileSync(`${key}.pub`, 'utf8').split(' ').slice(0, 2).join(' ') + '\n';
        }
        s = await startServer({
          ANVIL__REPOSITORY_0X2E_SIGNING__SIGNING_KEY: key,
          ANVIL__REPOSITORY_0X2E_SIGNING__SIGNING_NAME: 'Anvil Signer',
          ANVIL__REPOSITORY_0X2E_SIGNING__SIGNING_EMAIL: 'signer@example.com',
          ANVIL__REPOSITORY_0X2E_SIGNING__FORMAT: format,
          ANVIL__REPOSITORY_0X2E_SIGNING__GNUPGHOME: home,
          ANVIL__REPOSITORY_0X2E_SIGNING__MERGES: 'always',
        });
        g = new SigningGit(home);
        alice = await s.createUser('alice');
        const r = await s.api('POST', '/user/repos', {
          token: alice.token,
          body: { name: 'r', auto_init: true },
        });
        assert.equal(r.status, 201, r.text);
      });

      after(async () => {
        await s?.ctx.pulls.idle();
        await s?.close();
        g?.cleanup();
        if (home) fs.rmSync(home, { recursive: true, force: true });
      });

      it('serves the public key, and signs a merge it makes, which reads as verified', async () => {
        const gpgKey = await s.api('GET', '/signing-key.gpg');
        const sshKey = await s.api('GET', '/signing-key.ssh');
        const repoKey = await s.api('GET', '/repos/alice/r/signing-key.gpg', { token: alice.token });
        if (format === 'openpgp') {
          assert.equal(gpgKey.status, 200);
          assert.equal(gpgKey.text, publicKey);
          assert.equal(repoKey.status, 200);
          assert.equal(repoKey.text, publicKey);
          assert.equal(sshKey.status, 404);
        } else {
          assert.equal(sshKey.status, 200);
          assert.equal(sshKey.text, publicKey);
          assert.equal(gpgKey.status, 404);
          assert.equal(repoKey.status, 404);
        }
        assert.equal(
          (await s.api('GET', '/repos/alice/nope/signing-key.gpg', { token: alice.token })).status,
          404,
        );

        const wt = path.join(await g.workTree(), 'r');
        await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'r', [alice.name, alice.password]), wt]);
        await g.git(['checkout', '--quiet', '-b', 'feat'], wt);
        await g.signedCommit(wt, 'f.txt');
        await g.git(['push', '--quiet', 'origin', 'feat'], wt);
        const pr = await s.api<{ number: number }>('POST', '/repos/alice/r/pulls', {
          token: alice.token,
          body: { head: 'feat', base: 'main', title: 'feature' },
        });
        assert.equal(pr.status, 201, pr.text);
        const m = await s.api('POST', `/repos/alice/r/pulls/${pr.body.number}/merge`, {
          token: alice.token,
          body: { Do: 'merge' },
        });
        assert.equal(m.status, 200, m.text);
        const branch = await s.api<{ commit: { id: string; verification: Verification } }>(
          'GET',
          '/repos/alice/r/branches/main',
          { token: alice.token },
        );
        const v = branch.body.commit.verification;
        assert.equal(v.verified, true, v.reason);
        assert.deepEqual(v.signer, { name: 'Anvil Signer', email: 'signer@example.com', username: '' });
        assert.match(
          v.reason,
          format === 'openpgp' ? new RegExp(`^Anvil Signer / ${key}$`) : /^Anvil Signer \/ SHA256:/,
        );
        assert.match(v.signature, format === 'openpgp' ? /BEGIN PGP SIGNATURE/ : /BEGIN SSH SIGNATURE/);
        // git itself agrees the merge commit is signed (and by whom, for gpg).
        await g.git(['fetch', '--quiet', 'origin'], wt);
        const raw = await g.git(['cat-file', 'commit', 'origin/main'], wt);
        assert.match(raw, /^gpgsig /m);
        assert.match(raw, /^committer Anvil Signer <signer@example\.com>/m);
        if (format === 'openpgp') await g.git(['verify-commit', 'origin/main'], wt);
      });

      it('MERGES never, and pubkey for a merger without a GPG key, leave the merge unsigned', async () => {
        const wt = path.join(await g.workTree(), 'r');
        await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'r', [alice.name, alice.password]), wt]);
        const settings = s.ctx.config.repository.signing;
        try {
          for (const rule of ['never', 'pubkey']) {
            settings.merges = [rule];
            await g.git(['checkout', '--quiet', '-B', `b-${rule}`, 'origin/main'], wt);
            await g.signedCommit(wt, `${rule}.txt`);
            await g.git(['push', '--quiet', 'origin', `b-${rule}`], wt);
            const pr = await s.api<{ number: number }>('POST', '/repos/alice/r/pulls', {
              token: alice.token,
              body: { head: `b-${rule}`, base: 'main', title: rule },
            });
            assert.equal(pr.status, 201, pr.text);
            const m = await s.api('POST', `/repos/alice/r/pulls/${pr.body.number}/merge`, {
              token: alice.token,
              body: { Do: 'merge' },
            });
            assert.equal(m.status, 200, m.text);
            const branch = await s.api<{ commit: { id: string; verification: Verification } }>(
              'GET',
              '/repos/alice/r/branches/main',
              { token: alice.token },
            );
            assert.equal(branch.body.commit.verification.reason, 'gpg.error.not_signed_commit', rule);
            await g.git(['fetch', '--quiet', 'origin'], wt);
            assert.doesNotMatch(await g.git(['cat-file', 'commit', 'origin/main'], wt), /^gpgsig /m);
          }
        } finally {
          settings.merges = ['always'];
        }
      });
    });
  }
});
