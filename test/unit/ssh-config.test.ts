// The SSH settings ([server] SSH_*, [ssh.minimum_key_sizes], [security] INTERNAL_TOKEN), the
// clone URLs they give, and reading keys (types, sizes, fingerprints, malformed input).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureInternalToken, loadConfig } from '../../src/config/config.js';
import { sshCloneUrl } from '../../src/repos/schemas.js';
import { KeyError, checkKeySize, parsePublicKey } from '../../src/ssh/keyparse.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-ssh-config-'));

/** An SSH string: uint32 length and the bytes. */
const str = (b: Buffer | string) => {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(buf.length);
  return Buffer.concat([len, buf]);
};

describe('SSH settings', () => {
  it('defaults: the server on 2222, clone URLs on the ROOT_URL host and the same port', () => {
    const c = loadConfig({ env: { ANVIL__SERVER__ROOT_URL: 'https://code.example.com/' }, cwd: tmp() });
    assert.equal(c.ssh.start, true);
    assert.equal(c.ssh.listenHost, '0.0.0.0');
    assert.equal(c.ssh.listenPort, 2222);
    assert.equal(c.ssh.port, 2222);
    assert.equal(c.ssh.domain, 'code.example.com');
    assert.equal(c.ssh.user, 'git');
    assert.deepEqual(c.ssh.minimumKeySizes, { ed25519: 256, ecdsa: 256, rsa: 3071, dsa: -1 });
    assert.equal(c.server.localRootUrl, 'http://127.0.0.1:3000/');
  });

  it('SSH_PORT and SSH_DOMAIN set what clone URLs show; port 22 gives the scp-like form', () => {
    const c = loadConfig({
      env: {
        ANVIL__SERVER__SSH_PORT: '22',
        ANVIL__SERVER__SSH_DOMAIN: 'git.example.com',
        ANVIL__SERVER__SSH_LISTEN_PORT: '0',
        ANVIL__SSH_0X2E_MINIMUM_KEY_SIZES__RSA: '2048',
      },
      cwd: tmp(),
    });
    assert.equal(c.ssh.listenPort, 0);
    assert.equal(c.ssh.minimumKeySizes.rsa, 2048);
    assert.equal(sshCloneUrl('alice/proj', c.ssh), 'git@git.example.com:alice/proj.git');
    assert.equal(
      sshCloneUrl('alice/proj', { user: 'git', domain: 'h', port: 2222 }),
      'ssh://git@h:2222/alice/proj.git',
    );
  });

  it('the internal token: configured, or made once by the server in the data directory (0600)', () => {
    const cwd = tmp();
    const env = { ANVIL__SERVER__APP_DATA_PATH: path.join(cwd, 'data') };
    const before = loadConfig({ env, cwd });
    assert.equal(before.security.internalToken, '');
    assert.ok(!fs.existsSync(path.join(cwd, 'data', 'internal_token')), 'reading writes nothing');
    ensureInternalToken(before);
    assert.ok(before.security.internalToken.length >= 32);
    const file = path.join(cwd, 'data', 'internal_token');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal(loadConfig({ env, cwd }).security.internalToken, before.security.internalToken);
    const configured = loadConfig({ env: { ...env, ANVIL__SECURITY__INTERNAL_TOKEN: 'set' }, cwd });
    assert.equal(configured.security.internalToken, 'set');
  });
});

describe('reading public keys', () => {
  const ed = crypto.generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
  const edBlob = Buffer.concat([str('ssh-ed25519'), str(Buffer.from(ed.x!, 'base64url'))]);
  const rsaBlob = (bits: number) => {
    const jwk = crypto
      .generateKeyPairSync('rsa', { modulusLength: bits })
      .publicKey.export({ format: 'jwk' });
    const n = Buffer.from(jwk.n!, 'base64url');
    return Buffer.concat([
      str('ssh-rsa'),
      str(Buffer.from(jwk.e!, 'base64url')),
      str(Buffer.concat([Buffer.from([0]), n])),
    ]);
  };

  it('ed25519: type, bits, the key without its comment, the SHA256 fingerprint', () => {
    const k = parsePublicKey(`ssh-ed25519 ${edBlob.toString('base64')} me@laptop`);
    assert.equal(k.type, 'ssh-ed25519');
    assert.equal(k.bits, 256);
    assert.equal(k.content, `ssh-ed25519 ${edBlob.toString('base64')}`);
    const digest = crypto.createHash('sha256').update(edBlob).digest('base64').replace(/=+$/, '');
    assert.equal(k.fingerprint, `SHA256:${digest}`);
  });

  it('RSA: the modulus size decides (3072 accepted, 1024 refused); RFC 4716 blocks are read', () => {
    const big = rsaBlob(3072);
    const k = checkKeySize(parsePublicKey(`ssh-rsa ${big.toString('base64')}`));
    assert.equal(k.bits, 3072);
    const block = [
      '---- BEGIN SSH2 PUBLIC KEY ----',
      'Comment: "a key"',
      ...(big.toString('base64').match(/.{1,70}/g) ?? []),
      '---- END SSH2 PUBLIC KEY ----',
    ].join('\n');
    assert.equal(parsePublicKey(block).fingerprint, k.fingerprint);
    const small = parsePublicKey(`ssh-rsa ${rsaBlob(1024).toString('base64')}`);
    assert.equal(small.bits, 1024);
    assert.throws(() => checkKeySize(small), /1024 bits; at least 3071/);
  });

  it('malformed keys are KeyErrors', () => {
    for (const bad of [
      '',
      'ssh-ed25519',
      'ssh-ed25519 ***',
      `ssh-rsa ${edBlob.toString('base64')}`,
      `ssh-ed25519 ${Buffer.concat([edBlob, Buffer.from([1])]).toString('base64')}`,
      `ssh-ed25519 ${edBlob.subarray(0, 30).toString('base64')}`,
      `a\nb`,
    ]) {
      assert.throws(() => parsePublicKey(bad), KeyError, JSON.stringify(bad));
    }
  });
});
