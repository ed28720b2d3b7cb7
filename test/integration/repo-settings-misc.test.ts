// Small reads clients make: /settings/attachment (from [attachment]) and
// /repos/{owner}/{repo}/new_pin_allowed (Forgejo's three pins each for issues and pull requests).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

describe('attachment settings and pin allowance', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  before(async () => {
    s = await startServer({ ANVIL__ATTACHMENT__MAX_SIZE: '8', ANVIL__ATTACHMENT__MAX_FILES: '3' });
    alice = await s.createUser('alice');
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'r' } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'hidden', private: true } });
  });
  after(() => s.close());

  it('answers the attachment settings', async () => {
    const r = await s.api<Record<string, unknown>>('GET', '/settings/attachment');
    assert.equal(r.status, 200);
    assert.equal(r.body['enabled'], true);
    assert.equal(r.body['max_size'], 8);
    assert.equal(r.body['max_files'], 3);
    assert.equal(typeof r.body['allowed_types'], 'string');
  });

  it('allows new pins until three are pinned', async () => {
    const allowed = () =>
      s.api<{ issues: boolean; pull_requests: boolean }>('GET', '/repos/alice/r/new_pin_allowed', {
        token: alice.token,
      });
    assert.deepEqual((await allowed()).body, { issues: true, pull_requests: true });
    for (let i = 1; i <= 3; i++) {
      await s.api('POST', '/repos/alice/r/issues', { token: alice.token, body: { title: `i${i}` } });
      assert.equal(
        (await s.api('POST', `/repos/alice/r/issues/${i}/pin`, { token: alice.token })).status,
        204,
      );
    }
    assert.deepEqual((await allowed()).body, { issues: false, pull_requests: true });
    assert.equal((await s.api('GET', '/repos/alice/hidden/new_pin_allowed')).status, 404);
  });
});
