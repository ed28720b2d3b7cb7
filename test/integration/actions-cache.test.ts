// The actions cache (actions/cache's v1 protocol at /api/actions_cache/): reserve, chunks in
// parallel and out of order, commit, exact and prefix lookups, versions, refs, tokens, eviction.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.js';
import { mintRuntimeToken } from '../../src/actions/runtime-token.js';

describe('actions cache', () => {
  let s: TestServer;
  let repoId: number;
  let otherRepoId: number;
  let runNumber = 0;
  const base = () => `${s.url}/api/actions_cache/_apis/artifactcache`;

  /** A run of `ref` in the repository (a row, as a push would make) and its job's runtime token. */
  async function job(repo: number, ref: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const run = await s.ctx.db
      .insertInto('action_run')
      .values({
        repo_id: repo,
        run_number: ++runNumber,
        workflow_id: 'ci.yml',
        workflow_path: '.forgejo/workflows/ci.yml',
        title: 't',
        trigger_user_id: 1,
        ref,
        commit_sha: '0'.repeat(40),
        event: 'push',
        event_payload: '{}',
        status: 'running',
        created_unix: now,
        updated_unix: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return mintRuntimeToken({
      secretKey: s.config.security.secretKey,
      repoId: repo,
      runId: run.id,
      jobId: run.id * 10,
      ttlSeconds: 3600,
    });
  }

  const call = (
    token: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    fetch(`${base()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/json;api-version=6.0-preview.1',
        ...(body !== undefined && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body:
        body === undefined ? undefined : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
    });

  /** Saves `data` as `key`/`version` in 3 chunks sent in parallel, last first. */
  async function save(token: string, key: string, version: string, data: Buffer): Promise<number> {
    const r = await call(token, 'POST', '/caches', { key, version, cacheSize: data.length });
    assert.equal(r.status, 200, await r.clone().text());
    const { cacheId } = (await r.json()) as { cacheId: number };
    const third = Math.ceil(data.length / 3);
    const parts = [2, 1, 0]
      .map((i) => [i * third, Math.min(data.length, (i + 1) * third) - 1] as const)
      .filter(([a, b]) => b >= a);
    const sent = await Promise.all(
      parts.map(([a, b]) =>
        call(token, 'PATCH', `/caches/${cacheId}`, data.subarray(a, b + 1), {
          'content-type': 'application/octet-stream',
          'content-range': `bytes ${a}-${b}/*`,
        }),
      ),
    );
    for (const p of sent) assert.equal(p.status, 204, await p.text());
    const c = await call(token, 'POST', `/caches/${cacheId}`, { size: data.length });
    assert.equal(c.status, 204, await c.text());
    return cacheId;
  }

  const lookup = async (token: string, keys: string, version: string) => {
    const r = await call(token, 'GET', `/cache?keys=${encodeURIComponent(keys)}&version=${version}`);
    if (r.status === 204) return undefined;
    assert.equal(r.status, 200, await r.clone().text());
    return (await r.json()) as { cacheKey: string; archiveLocation: string };
  };

  before(async () => {
    s = await startServer({ ANVIL__ACTIONS__ENABLED: 'true', ANVIL__ACTIONS__CACHE_MAX_SIZE: '1' });
    const alice = await s.createUser('alice');
    const r = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj', private: true, auto_init: true, default_branch: 'main' },
    });
    assert.equal(r.status, 201, r.text);
    repoId = r.body.id;
    const o = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'other' },
    });
    otherRepoId = o.body.id;
  });

  after(async () => {
    await s?.close();
  });

  const data = crypto.randomBytes(300_001);

  it('saves an entry from chunks sent in parallel and out of order, and downloads it (with Range)', async () => {
    const t = await job(repoId, 'refs/heads/main');
    await save(t, 'deps-linux-abc', 'v1', data);
    const hit = await lookup(t, 'deps-linux-abc', 'v1');
    assert.equal(hit?.cacheKey, 'deps-linux-abc');
    const d = await fetch(hit.archiveLocation);
    assert.equal(d.status, 200);
    assert.ok(Buffer.from(await d.arrayBuffer()).equals(data));
    const part = await fetch(hit.archiveLocation, { headers: { range: 'bytes=10-19' } });
    assert.equal(part.status, 206);
    assert.ok(Buffer.from(await part.arrayBuffer()).equals(data.subarray(10, 20)));
    // One character of the signature changed (to one it is not already).
    const tampered = await fetch(
      hit.archiveLocation.replace(/sig=(.)/, (_, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`),
    );
    assert.equal(tampered.status, 401);
  });

  it('finds by exact key first, then by prefix (newest first); another version misses', async () => {
    const t = await job(repoId, 'refs/heads/main');
    await save(t, 'deps-linux-abd', 'v1', Buffer.from('newer'));
    assert.equal((await lookup(t, 'deps-linux-abc', 'v1'))?.cacheKey, 'deps-linux-abc');
    assert.equal((await lookup(t, 'deps-linux-zzz,deps-linux-', 'v1'))?.cacheKey, 'deps-linux-abd');
    assert.equal(await lookup(t, 'deps-linux-abc', 'v2'), undefined);
    assert.equal(await lookup(t, 'nothing', 'v1'), undefined);
  });

  it('refuses a second reservation of a key, a short commit and bad input', async () => {
    const t = await job(repoId, 'refs/heads/main');
    const again = await call(t, 'POST', '/caches', { key: 'deps-linux-abc', version: 'v1', cacheSize: 1 });
    assert.equal(again.status, 409);
    const r = await call(t, 'POST', '/caches', { key: 'partial', version: 'v1', cacheSize: 10 });
    const { cacheId } = (await r.json()) as { cacheId: number };
    const p = await call(t, 'PATCH', `/caches/${cacheId}`, Buffer.from('12345'), {
      'content-type': 'application/octet-stream',
      'content-range': 'bytes 5-9/*',
    });
    assert.equal(p.status, 204);
    assert.equal((await call(t, 'POST', `/caches/${cacheId}`, { size: 10 })).status, 400);
    const badRange = await call(t, 'PATCH', `/caches/${cacheId}`, Buffer.from('1'), {
      'content-type': 'application/octet-stream',
      'content-range': 'nonsense',
    });
    assert.equal(badRange.status, 400);
    assert.equal((await call(t, 'POST', '/caches', { version: 'v1' })).status, 400);
    assert.equal(
      (await call(t, 'POST', '/caches', { key: 'big', version: 'v1', cacheSize: 2 ** 30 })).status,
      400,
    );
  });

  it('keeps repositories apart and refuses a bad token', async () => {
    const other = await job(otherRepoId, 'refs/heads/main');
    assert.equal(await lookup(other, 'deps-linux-abc', 'v1'), undefined);
    const mine = await job(repoId, 'refs/heads/main');
    const r = await call(mine, 'POST', '/caches', { key: 'x', version: 'v1' });
    const { cacheId } = (await r.json()) as { cacheId: number };
    const p = await call(other, 'PATCH', `/caches/${cacheId}`, Buffer.from('1'), {
      'content-type': 'application/octet-stream',
      'content-range': 'bytes 0-0/*',
    });
    assert.equal(p.status, 404);
    assert.equal((await call(other, 'POST', `/caches/${cacheId}`, { size: 0 })).status, 404);
    assert.equal((await call('not-a-token', 'GET', '/cache?keys=a&version=v1')).status, 401);
    const none = await fetch(`${base()}/cache?keys=a&version=v1`);
    assert.equal(none.status, 401);
  });

  it('scopes by ref: a branch reads its own and the default branch, the default branch not the branch', async () => {
    const feature = await job(repoId, 'refs/heads/feature');
    await save(feature, 'feat-only', 'v1', Buffer.from('f'));
    assert.equal((await lookup(feature, 'feat-only', 'v1'))?.cacheKey, 'feat-only');
    assert.equal((await lookup(feature, 'deps-linux-abc', 'v1'))?.cacheKey, 'deps-linux-abc');
    const main = await job(repoId, 'refs/heads/main');
    assert.equal(await lookup(main, 'feat-only', 'v1'), undefined);
    const otherBranch = await job(repoId, 'refs/heads/other');
    assert.equal(await lookup(otherBranch, 'feat-only', 'v1'), undefined);
    // The same key on a branch is its own entry.
    await save(feature, 'deps-linux-abc', 'v1', Buffer.from('feature copy'));
    const hit = await lookup(feature, 'deps-linux-abc', 'v1');
    assert.equal(
      Buffer.from(await (await fetch(hit!.archiveLocation)).arrayBuffer()).toString(),
      'feature copy',
    );
  });

  it('evicts entries over the size limit (least recently used first) and unused ones, by the task', async () => {
    const t = await job(repoId, 'refs/heads/main');
    // CACHE_MAX_SIZE is 1 MiB here: four entries of 300 kB and more are over it.
    await save(t, 'big-1', 'v1', crypto.randomBytes(400_000));
    await save(t, 'big-2', 'v1', crypto.randomBytes(400_000));
    await s.ctx.db
      .updateTable('action_cache')
      .set({ used_unix: 1 })
      .where('cache_key', '=', 'deps-linux-abc')
      .execute();
    const removed = await s.ctx.actionsCache.evict();
    assert.ok(removed >= 1);
    assert.equal(await lookup(t, 'deps-linux-abc', 'v1'), undefined);
    assert.equal((await lookup(t, 'big-2', 'v1'))?.cacheKey, 'big-2');
    const total = await s.ctx.db
      .selectFrom('action_cache')
      .select((eb) => eb.fn.sum<number>('size').as('n'))
      .where('repo_id', '=', repoId)
      .where('status', '=', 'committed')
      .executeTakeFirstOrThrow();
    assert.ok(Number(total.n) <= 1024 * 1024);
    // Entries unused for longer than CACHE_RETENTION_DAYS go too.
    await s.ctx.db
      .updateTable('action_cache')
      .set({ used_unix: 1 })
      .where('cache_key', '=', 'big-2')
      .execute();
    await s.ctx.actionsCache.evict();
    assert.equal(await lookup(t, 'big-2', 'v1'), undefined);
  });
});
