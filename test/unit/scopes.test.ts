// Access token scopes: parsing, Forgejo's normalized stored form, and checking.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import {
  ALL_SCOPES,
  SCOPE_CATEGORIES,
  hasScope,
  normalizeScopes,
  parseScopes,
  storedScopes,
} from '../../src/tokens/scopes.js';

function assertBadScope(input: string | string[], name: string): void {
  assert.throws(
    () => parseScopes(input),
    (err: unknown) => {
      assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
      assert.equal(err.kind, 'bad_request');
      assert.ok(err.message.includes(name), `"${err.message}" names ${name}`);
      return true;
    },
  );
}

describe('parseScopes and hasScope', () => {
  it('all grants read and write on every category, not public-only', () => {
    const s = parseScopes('all');
    assert.equal(s.publicOnly, false);
    for (const c of SCOPE_CATEGORIES) {
      assert.ok(hasScope(s, c, 'read'), `read:${c}`);
      assert.ok(hasScope(s, c, 'write'), `write:${c}`);
    }
    assert.deepEqual(ALL_SCOPES, s);
  });

  it('write implies read; read does not imply write', () => {
    const w = parseScopes('write:repository');
    assert.ok(hasScope(w, 'repository', 'read'));
    assert.ok(hasScope(w, 'repository', 'write'));
    const r = parseScopes('read:repository');
    assert.ok(hasScope(r, 'repository', 'read'));
    assert.ok(!hasScope(r, 'repository', 'write'));
  });

  it('grants nothing outside the named categories', () => {
    const s = parseScopes(['read:user', 'write:issue']);
    assert.ok(hasScope(s, 'user', 'read'));
    assert.ok(hasScope(s, 'issue', 'write'));
    for (const c of SCOPE_CATEGORIES.filter((c) => c !== 'user' && c !== 'issue')) {
      assert.ok(!hasScope(s, c, 'read'), `no read:${c}`);
    }
    assert.ok(!hasScope(parseScopes('public-only'), 'user', 'read'), 'public-only alone grants nothing');
  });

  it('accepts a comma-separated string or a list, ignoring blanks and spaces', () => {
    assert.deepEqual(
      parseScopes(' read:user , ,write:issue '),
      parseScopes(['read:user', ' write:issue', '']),
    );
  });

  it('a lower level never lowers a higher one', () => {
    assert.ok(hasScope(parseScopes('write:user,read:user'), 'user', 'write'));
    assert.ok(hasScope(parseScopes('all,read:user'), 'user', 'write'));
  });

  it('rejects unknown scopes with a bad_request naming them', () => {
    assertBadScope('read:nothing', 'read:nothing');
    assertBadScope('read:user,delete:user', 'delete:user');
    assertBadScope(['write:'], 'write:');
    assertBadScope('READ:USER', 'READ:USER');
    assertBadScope('sudo', 'sudo');
    assertBadScope('user', 'user');
    assertBadScope('read:repository:extra', 'read:repository:extra');
    assertBadScope('All', 'All');
  });
});

describe('normalizeScopes', () => {
  it('keeps the highest level of each category once', () => {
    assert.equal(normalizeScopes('read:user,write:user'), 'write:user');
    assert.equal(normalizeScopes('write:user,read:user'), 'write:user');
    assert.equal(normalizeScopes('read:user,read:user'), 'read:user');
    assert.equal(normalizeScopes(['all', 'all']), 'all');
  });

  it('orders categories as Forgejo does, whatever the input order', () => {
    assert.equal(
      normalizeScopes('read:user,write:repository,read:issue,read:admin,write:activitypub'),
      'write:activitypub,read:admin,read:issue,write:repository,read:user',
    );
    assert.equal(
      normalizeScopes('read:package,read:organization,read:notification,read:misc'),
      'read:misc,read:notification,read:organization,read:package',
    );
  });

  it('writes every write:* as all', () => {
    const every = SCOPE_CATEGORIES.map((c) => `write:${c}`);
    assert.equal(normalizeScopes(every), 'all');
    assert.equal(normalizeScopes([...every].reverse().join(',')), 'all');
    assert.equal(normalizeScopes([...every, 'read:user']), 'all');
    const allButOne = every.filter((s) => s !== 'write:misc');
    assert.equal(normalizeScopes(allButOne), allButOne.join(','), 'not all without every category');
    assert.equal(normalizeScopes([...allButOne, 'read:misc']).includes('all'), false);
  });

  it('puts public-only first', () => {
    assert.equal(normalizeScopes('read:user,public-only'), 'public-only,read:user');
    assert.equal(normalizeScopes('all,public-only'), 'public-only,all');
    assert.equal(normalizeScopes('public-only,public-only,read:issue'), 'public-only,read:issue');
    assert.equal(normalizeScopes('public-only'), 'public-only');
  });

  it("refuses a list that grants nothing, whose stored form '' would mean all", () => {
    for (const input of ['', ' , ', [], [''], ['  ', '']]) {
      assert.throws(
        () => normalizeScopes(input),
        (err: unknown) =>
          err instanceof AppError && err.kind === 'bad_request' && /must have a scope/.test(err.message),
        JSON.stringify(input),
      );
    }
  });

  it('is idempotent', () => {
    for (const s of ['all', 'public-only,all', 'read:user', 'write:activitypub,read:admin,write:user']) {
      assert.equal(normalizeScopes(normalizeScopes(s)), normalizeScopes(s));
    }
  });

  it('round-trips through parseScopes', () => {
    const s = 'public-only,read:admin,write:organization,read:repository';
    assert.deepEqual(parseScopes(normalizeScopes(s)), parseScopes(s));
  });
});

describe('storedScopes', () => {
  it("reads '' (a token from before scopes) as all", () => {
    const s = storedScopes('');
    assert.deepEqual(s, ALL_SCOPES);
    assert.ok(hasScope(s, 'admin', 'write'));
    assert.equal(s.publicOnly, false);
  });

  it('reads a stored list as parseScopes does', () => {
    const s = storedScopes('public-only,read:user');
    assert.equal(s.publicOnly, true);
    assert.ok(hasScope(s, 'user', 'read'));
    assert.ok(!hasScope(s, 'user', 'write'));
    assert.deepEqual(storedScopes('all'), ALL_SCOPES);
  });
});
