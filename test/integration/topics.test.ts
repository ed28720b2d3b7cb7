// Repository topics: list, replace, add and delete (repository administrators; readers read),
// Forgejo's name rule with its 422 body (invalidTopics), at most 25, the Repository JSON's
// `topics`, /topics/search with counts kept as repositories change (and deleted), and
// /repos/search?topic=true matching whole topics.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

describe('repository topics', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  let bob: { name: string; token: string };
  const topicsOf = async (full: string, token = alice.token) =>
    (await s.api<{ topics: string[] }>('GET', `/repos/${full}/topics`, { token })).body.topics;
  const search = async (q: string) =>
    (
      await s.api<{ topics: Array<{ topic_name: string; repo_count: number }> }>(
        'GET',
        `/topics/search?q=${q}`,
        {
          token: alice.token,
        },
      )
    ).body.topics;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const name of ['one', 'two', 'secret']) {
      await s.api('POST', '/user/repos', { token: alice.token, body: { name, private: name === 'secret' } });
    }
    await s.api('PUT', '/repos/alice/one/collaborators/bob', {
      token: alice.token,
      body: { permission: 'write' },
    });
  });
  after(() => s.close());

  it('replaces, adds and deletes topics, normalized and sorted', async () => {
    let r = await s.api('PUT', '/repos/alice/one/topics', {
      token: alice.token,
      body: { topics: ['Rust', ' cli ', 'web-app', 'cli'] },
    });
    assert.equal(r.status, 204, r.text);
    assert.deepEqual(await topicsOf('alice/one'), ['cli', 'rust', 'web-app']);
    assert.equal((await s.api('PUT', '/repos/alice/one/topics/v1.0', { token: alice.token })).status, 204);
    assert.equal((await s.api('DELETE', '/repos/alice/one/topics/rust', { token: alice.token })).status, 204);
    assert.deepEqual(await topicsOf('alice/one'), ['cli', 'v1.0', 'web-app']);
    const repo = await s.api<{ topics: string[] }>('GET', '/repos/alice/one', { token: bob.token });
    assert.deepEqual(repo.body.topics, ['cli', 'v1.0', 'web-app']);
    r = await s.api('PUT', '/repos/alice/two/topics', { token: alice.token, body: { topics: ['cli'] } });
    assert.equal(r.status, 204);
  });

  it("refuses bad topics with Forgejo's 422 body, and more than 25", async () => {
    const r = await s.api<{ message: string; invalidTopics: string[] }>('PUT', '/repos/alice/one/topics', {
      token: alice.token,
      body: { topics: ['ok', '-bad', 'has space', 'x'.repeat(36)] },
    });
    assert.equal(r.status, 422);
    assert.equal(r.body.message, 'invalid topics');
    assert.deepEqual(r.body.invalidTopics, ['-bad', 'has space', 'x'.repeat(36)]);
    const many = Array.from({ length: 26 }, (_, i) => `t${i}`);
    const r2 = await s.api<{ message: string }>('PUT', '/repos/alice/one/topics', {
      token: alice.token,
      body: { topics: many },
    });
    assert.equal(r2.status, 422);
    assert.match(r2.body.message, /maximum/);
    const r3 = await s.api('PUT', '/repos/alice/one/topics/Bad_Topic!', { token: alice.token });
    assert.equal(r3.status, 422);
    assert.deepEqual(await topicsOf('alice/one'), ['cli', 'v1.0', 'web-app']);
  });

  it('lets readers read and only administrators change', async () => {
    assert.equal((await s.api('PUT', '/repos/alice/one/topics/x', { token: bob.token })).status, 403);
    assert.equal((await s.api('GET', '/repos/alice/secret/topics', { token: bob.token })).status, 404);
    assert.equal((await s.api('PUT', '/repos/alice/secret/topics/x', { token: bob.token })).status, 404);
    assert.equal((await s.api('PUT', '/repos/alice/one/topics/x')).status, 401);
  });

  it('searches topics with counts that follow the repositories', async () => {
    assert.deepEqual(
      (await search('cl')).map((t) => [t.topic_name, t.repo_count]),
      [['cli', 2]],
    );
    assert.equal((await s.api('DELETE', '/repos/alice/two', { token: alice.token })).status, 204);
    assert.deepEqual(
      (await search('cli')).map((t) => [t.topic_name, t.repo_count]),
      [['cli', 1]],
    );
    await s.api('DELETE', '/repos/alice/one/topics/v1.0', { token: alice.token });
    assert.deepEqual(await search('v1'), []);
  });

  it('finds repositories by whole topic', async () => {
    const r = await s.api<{ data: Array<{ full_name: string }> }>('GET', '/repos/search?q=cli&topic=true', {
      token: bob.token,
    });
    assert.deepEqual(
      r.body.data.map((x) => x.full_name),
      ['alice/one'],
    );
    const part = await s.api<{ data: unknown[] }>('GET', '/repos/search?q=cl&topic=true', {
      token: bob.token,
    });
    assert.deepEqual(part.body.data, []);
  });
});
