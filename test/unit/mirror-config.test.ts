// Go durations for mirror intervals, the configuration keys of forks, migrations and mirrors, and
// the encryption of stored secrets.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatGoDuration, parseGoDuration } from '../../src/mirrors/duration.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { SecretBox } from '../../src/auth/secrets.js';

describe('Go durations', () => {
  it('parses what Go parses, in whole seconds', () => {
    const cases: Array<[string, number]> = [
      ['0', 0],
      ['0s', 0],
      ['10m', 600],
      ['8h0m0s', 28800],
      ['1h30m', 5400],
      ['1.5h', 5400],
      ['90s', 90],
      ['1500ms', 1],
      ['+5m', 300],
      [' 2h ', 7200],
    ];
    for (const [text, seconds] of cases) assert.equal(parseGoDuration(text), seconds, text);
  });

  it('refuses what Go refuses, and negative durations', () => {
    for (const text of ['', 'abc', '10', '5 m', '-5m', '1d', 'h', '1h-5m']) {
      assert.equal(parseGoDuration(text), null, text);
    }
  });

  it('prints as Go prints a Duration', () => {
    assert.equal(formatGoDuration(0), '0s');
    assert.equal(formatGoDuration(45), '45s');
    assert.equal(formatGoDuration(600), '10m0s');
    assert.equal(formatGoDuration(28800), '8h0m0s');
    assert.equal(formatGoDuration(5430), '1h30m30s');
  });
});

describe('configuration keys', () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-config-'));
  const load = (env: Record<string, string>) => loadConfig({ env, cwd });
  after(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('has Forgejo defaults', () => {
    const c = load({});
    assert.equal(c.repository.maxCreationLimit, -1);
    assert.equal(c.repository.allowForkWithoutMaximumLimit, true);
    assert.deepEqual(c.migrations, { allowedDomains: [], blockedDomains: [], allowLocalNetworks: false });
    assert.deepEqual(c.mirror, { enabled: true, defaultInterval: 8 * 3600, minInterval: 600 });
  });

  it('reads the keys from the environment', () => {
    const c = load({
      ANVIL__REPOSITORY__MAX_CREATION_LIMIT: '5',
      ANVIL__REPOSITORY__ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT: 'false',
      ANVIL__MIGRATIONS__ALLOWED_DOMAINS: 'github.com, *.example.org',
      ANVIL__MIGRATIONS__BLOCKED_DOMAINS: '10.0.0.0/8',
      ANVIL__MIGRATIONS__ALLOW_LOCALNETWORKS: 'true',
      ANVIL__MIRROR__DEFAULT_INTERVAL: '1h',
      ANVIL__MIRROR__MIN_INTERVAL: '5m',
    });
    assert.equal(c.repository.maxCreationLimit, 5);
    assert.equal(c.repository.allowForkWithoutMaximumLimit, false);
    assert.deepEqual(c.migrations, {
      allowedDomains: ['github.com', '*.example.org'],
      blockedDomains: ['10.0.0.0/8'],
      allowLocalNetworks: true,
    });
    assert.equal(c.mirror.defaultInterval, 3600);
    assert.equal(c.mirror.minInterval, 300);
  });

  it('stops on invalid values, naming the key', () => {
    assert.throws(
      () => load({ ANVIL__REPOSITORY__MAX_CREATION_LIMIT: '-2' }),
      (e: Error) => {
        return e instanceof ConfigError && /MAX_CREATION_LIMIT/.test(e.message);
      },
    );
    assert.throws(
      () => load({ ANVIL__MIRROR__MIN_INTERVAL: 'soon' }),
      (e: Error) => {
        return e instanceof ConfigError && /\[mirror\] MIN_INTERVAL: "soon"/.test(e.message);
      },
    );
    assert.throws(() => load({ ANVIL__MIGRATIONS__ALLOW_LOCALNETWORKS: 'maybe' }), ConfigError);
  });
});

describe('SecretBox', () => {
  it('round-trips, never repeats a ciphertext, and hides the plain text', () => {
    const box = new SecretBox('key', 'mirror-credentials');
    const a = box.encrypt('hunter2-secret');
    const b = box.encrypt('hunter2-secret');
    assert.notEqual(a, b);
    assert.match(a, /^v1:[\w-]+$/);
    assert.ok(!a.includes('hunter2'));
    assert.equal(box.decrypt(a), 'hunter2-secret');
    assert.equal(box.decrypt(box.encrypt('')), '');
  });

  it('refuses another key, another purpose and altered values', () => {
    const sealed = new SecretBox('key', 'mirror-credentials').encrypt('secret');
    assert.throws(() => new SecretBox('other', 'mirror-credentials').decrypt(sealed));
    assert.throws(() => new SecretBox('key', 'actions-secrets').decrypt(sealed));
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    raw.writeUInt8(raw.readUInt8(raw.length - 1) ^ 1, raw.length - 1);
    assert.throws(() =>
      new SecretBox('key', 'mirror-credentials').decrypt(`v1:${raw.toString('base64url')}`),
    );
    assert.throws(() => new SecretBox('key', 'mirror-credentials').decrypt('v2:abc'));
    assert.throws(() => new SecretBox('key', 'mirror-credentials').decrypt('v1:'));
  });

  it('needs a secret key', () => {
    assert.throws(() => new SecretBox('', 'mirror-credentials'), /SECRET_KEY/);
  });
});
