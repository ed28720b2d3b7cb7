// Which names a user or organization may take.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { ACTIONS_BOT_NAME, checkOwnerName, isReservedName } from '../../src/users/names.js';

function assertInvalid(name: string, reason: RegExp, field?: string, label = '[Username]'): void {
  assert.throws(
    () => (field === undefined ? checkOwnerName(name) : checkOwnerName(name, field)),
    (err: unknown) => {
      assert.ok(err instanceof AppError, `expected an AppError for ${JSON.stringify(name)}`);
      assert.equal(err.kind, 'invalid', `kind for ${JSON.stringify(name)}`);
      assert.ok(err.message.startsWith(`${label}: `), `"${err.message}" names the field ${label}`);
      assert.match(err.message, reason);
      return true;
    },
    `${JSON.stringify(name)} should be refused`,
  );
}

describe('checkOwnerName', () => {
  it('accepts ordinary names', () => {
    for (const name of [
      'alice',
      'a',
      'a.b-c_d',
      'A1',
      '1',
      'Bob-Smith',
      'x_y',
      'a'.repeat(40),
      'git',
      'adminx',
    ]) {
      assert.doesNotThrow(() => checkOwnerName(name), name);
    }
  });

  it('rejects reserved names, case-insensitively', () => {
    for (const name of [
      'api',
      'admin',
      'assets',
      'user',
      'org',
      'repo',
      'ghost',
      ACTIONS_BOT_NAME,
      'anvil-actions',
      'API',
      'Admin',
      'GHOST',
      'Anvil-Actions',
      'explore',
      'login',
      'swagger.v1.json',
      'forgejo-actions',
      'gitea-actions',
    ]) {
      assertInvalid(name, /reserved/);
      assert.ok(isReservedName(name), name);
    }
  });

  it('rejects names with a reserved suffix', () => {
    for (const name of [
      'alice.git',
      'alice.rss',
      'alice.atom',
      'alice.keys',
      'alice.gpg',
      'alice.png',
      'alice.wiki',
      'Alice.GIT',
    ]) {
      assertInvalid(name, /reserved/);
    }
    assert.doesNotThrow(() => checkOwnerName('alice.github'));
    assert.doesNotThrow(() => checkOwnerName('gitalice'));
  });

  it('rejects bad characters', () => {
    for (const name of ['a b', 'a/b', 'a@b', 'ä', 'alice!', 'a+b', 'a:b', 'a\tb', 'ａbc', 'a~b', 'ab\n']) {
      assertInvalid(name, /invalid/);
    }
  });

  it('rejects leading, trailing and doubled special characters', () => {
    for (const name of [
      '-alice',
      '.alice',
      '_alice',
      'alice-',
      'alice.',
      'alice_',
      'a--b',
      'a..b',
      'a__b',
      'a.-b',
      'a-_b',
      '-',
      '_',
    ]) {
      assertInvalid(name, /invalid/);
    }
  });

  it('rejects names longer than 40 characters', () => {
    assertInvalid('a'.repeat(41), /40/);
    assertInvalid(`${'ab'.repeat(30)}`, /40/);
  });

  it('rejects the empty name as required', () => {
    assertInvalid('', /Required/);
  });

  it('names the field it is given', () => {
    assertInvalid('api', /reserved/, 'org_name', '[OrgName]');
    assertInvalid('-x', /invalid/, 'username', '[Username]');
    assertInvalid('a'.repeat(41), /40/, 'new_name', '[NewName]');
  });

  it('quotes the refused name in the message', () => {
    assertInvalid('bad name', /\[name: bad name\]/);
    assertInvalid('Admin', /\[name: Admin\]/);
  });
});
