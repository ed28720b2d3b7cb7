// The pure signature logic of src/signing/verify.ts: SSHSIG signatures made by ssh-keygen -Y sign
// (ed25519, RSA and ECDSA keys) verified, and refused when the message, the namespace or the
// signature bytes are changed; raw commit objects split into payload and signature.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  parseCommitObject,
  parseSshSignature,
  sshFingerprint,
  sshPublicKeyBlob,
  verifySshSignature,
} from '../../src/signing/verify.js';

const run = promisify(execFile);

describe('SSH signatures (SSHSIG)', () => {
  let dir: string;
  let n = 0;
  const message = Buffer.from('tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nhello\n');

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-sshsig-'));
    fs.writeFileSync(path.join(dir, 'msg'), message);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function sign(
    type: string,
    namespace = 'git',
  ): Promise<{ armored: string; pub: string; pubFile: string }> {
    const key = path.join(dir, `key-${type}-${namespace}-${++n}`);
    await run('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', key]);
    const sig = `${key}.sig`;
    await run('ssh-keygen', ['-Y', 'sign', '-n', namespace, '-f', key, path.join(dir, 'msg')]);
    fs.renameSync(path.join(dir, 'msg.sig'), sig);
    return {
      armored: fs.readFileSync(sig, 'utf8'),
      pub: fs.readFileSync(`${key}.pub`, 'utf8'),
      pubFile: `${key}.pub`,
    };
  }

  for (const type of ['ed25519', 'rsa', 'ecdsa']) {
    it(`verifies a ${type} signature and refuses altered ones`, async () => {
      const { armored, pub, pubFile } = await sign(type);
      const s = parseSshSignature(armored);
      assert.equal(s.namespace, 'git');
      assert.ok(['sha512', 'sha256'].includes(s.hashAlgorithm));
      // The key it carries is the signer's, fingerprinted as ssh-keygen -l does.
      assert.deepEqual(s.publicKey, sshPublicKeyBlob(pub));
      const keygenFp = (await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', pubFile])).stdout.split(' ')[1];
      assert.equal(sshFingerprint(s.publicKey), keygenFp);

      assert.equal(verifySshSignature(s, message), true);
      assert.equal(verifySshSignature(s, Buffer.concat([message, Buffer.from('x')])), false);
      assert.equal(verifySshSignature(s, message, 'file'), false);
      const tampered = { ...s, sig: Buffer.from(s.sig) };
      tampered.sig[tampered.sig.length - 5]! ^= 0x01;
      assert.equal(verifySshSignature(tampered, message), false);
      // Another key's signature over the same bytes does not pass as this key's.
      const other = parseSshSignature((await sign(type, 'git')).armored);
      assert.equal(
        verifySshSignature({ ...other, publicKey: s.publicKey, keyType: s.keyType }, message),
        false,
      );
    });
  }

  it('refuses a signature made for another namespace', async () => {
    const { armored } = await sign('ed25519', 'file');
    const s = parseSshSignature(armored);
    assert.equal(s.namespace, 'file');
    assert.equal(verifySshSignature(s, message), false);
    assert.equal(verifySshSignature(s, message, 'file'), true);
  });

  it('throws on malformed armor', () => {
    assert.throws(() => parseSshSignature('-----BEGIN PGP SIGNATURE-----\nabc\n-----END PGP SIGNATURE-----'));
    assert.throws(() =>
      parseSshSignature(
        `-----BEGIN SSH SIGNATURE-----\n${Buffer.from('SSHSIG\0\0\0\x01').toString('base64')}\n-----END SSH SIGNATURE-----`,
      ),
    );
  });
});

describe('raw commit objects', () => {
  it('splits the gpgsig header from the payload', () => {
    const raw = Buffer.from(
      'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n' +
        'author A U Thor <a@example.com> 1700000000 +0000\n' +
        'committer Cé Mitter <c@example.com> 1700000000 +0100\n' +
        'gpgsig -----BEGIN SSH SIGNATURE-----\n' +
        ' U1NIU0lH\n' +
        ' -----END SSH SIGNATURE-----\n' +
        '\n' +
        'message\n',
    );
    const p = parseCommitObject(raw);
    assert.equal(p.signature, '-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n');
    assert.equal(
      p.payload.toString('utf8'),
      'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n' +
        'author A U Thor <a@example.com> 1700000000 +0000\n' +
        'committer Cé Mitter <c@example.com> 1700000000 +0100\n' +
        '\nmessage\n',
    );
    assert.equal(p.committerName, 'Cé Mitter');
    assert.equal(p.committerEmail, 'c@example.com');
    const unsigned = parseCommitObject(Buffer.from('tree abc\ncommitter X <x@y> 1 +0000\n\nm\n'));
    assert.equal(unsigned.signature, '');
    assert.equal(unsigned.payload.toString(), 'tree abc\ncommitter X <x@y> 1 +0000\n\nm\n');
  });
});
