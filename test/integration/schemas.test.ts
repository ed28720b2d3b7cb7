// Validators and serializers compile lazily, on a route's first request (src/http/validation.ts):
// this proves that every route's schemas compile, so no route fails on its first use.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileAll, schemaErrors } from '../../src/http/validation.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('route schemas', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('all compile', () => {
    const started = performance.now();
    assert.doesNotThrow(() => compileAll());
    console.log(
      `compiled every pending validator and serializer in ${(performance.now() - started).toFixed(0)} ms`,
    );
    // Nothing is left pending afterwards.
    assert.doesNotThrow(() => compileAll());
  });

  it('are all valid JSON Schema (the check the validators skip at run time)', () => {
    compileAll();
    assert.deepEqual(schemaErrors(), []);
  });

  it('a lazily compiled validator still answers 422 naming the field', async () => {
    const r = await s.api<{ message: string }>('POST', '/admin/users', {
      token: s.admin.token,
      body: { username: 'x1', email: 'x1@example.com', password: 'password-1', must_change_password: 'yes' },
    });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /^\[MustChangePassword\]: /);
  });
});
