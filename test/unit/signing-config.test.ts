// [repository.signing] as loadConfig reads it: Forgejo's `default` and `none` mean no signing, an
// SSH key path resolves against the working directory, MERGES accepts Forgejo's rule names only,
// FORMAT only openpgp or ssh, and the section reads from app.ini as from the environment.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-signing-config-'));
  dirs.push(d);
  return d;
};
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const env = (keys: Record<string, string>) =>
  Object.fromEntries(Object.entries(keys).map(([k, v]) => [`ANVIL__REPOSITORY_0X2E_SIGNING__${k}`, v]));

describe('[repository.signing]', () => {
  it('does not sign by default, nor with default or none', () => {
    const cwd = tmp();
    for (const e of [{}, env({ SIGNING_KEY: 'default' }), env({ SIGNING_KEY: 'NONE' })]) {
      const s = loadConfig({ env: e, cwd }).repository.signing;
      assert.equal(s.signingKey, '');
      assert.equal(s.format, 'openpgp');
      assert.deepEqual(s.merges, ['always']);
    }
  });

  it('reads a GPG key id, an SSH key path (resolved), the signer, the rules and GNUPGHOME', () => {
    const cwd = tmp();
    let s = loadConfig({
      env: env({
        SIGNING_KEY: 'ABCDEF0123456789',
        SIGNING_NAME: 'Anvil',
        SIGNING_EMAIL: 'anvil@example.com',
        MERGES: 'pubkey, twofa',
        GNUPGHOME: 'gpg',
      }),
      cwd,
    }).repository.signing;
    assert.deepEqual(s, {
      signingKey: 'ABCDEF0123456789',
      name: 'Anvil',
      email: 'anvil@example.com',
      format: 'openpgp',
      merges: ['pubkey', 'twofa'],
      gnupgHome: path.join(cwd, 'gpg'),
    });
    fs.writeFileSync(
      path.join(cwd, 'app.ini'),
      '[repository.signing]\nFORMAT = ssh\nSIGNING_KEY = keys/signing\nMERGES = never\n',
    );
    s = loadConfig({ configPath: 'app.ini', env: {}, cwd }).repository.signing;
    assert.equal(s.format, 'ssh');
    assert.equal(s.signingKey, path.join(cwd, 'keys', 'signing'));
    assert.deepEqual(s.merges, ['never']);
  });

  it('stops on an unknown FORMAT or MERGES rule, naming the key', () => {
    const cwd = tmp();
    for (const [e, key] of [
      [env({ FORMAT: 'x509' }), /\[repository\.signing\] FORMAT/],
      [env({ MERGES: 'always, sometimes' }), /\[repository\.signing\] MERGES: "sometimes"/],
    ] as const) {
      assert.throws(
        () => loadConfig({ env: e, cwd }),
        (err: unknown) => err instanceof ConfigError && key.test(err.message),
      );
    }
  });
});
