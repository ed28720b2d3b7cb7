// Package cleanup and the core's limits: the cleanup rule API (validation, permissions, one rule
// per type), a rule's dry-run preview equal to what the job then removes (quota going down with
// it), the job's removal of leftovers (unreferenced blobs and unfinished uploads only once older
// than OLDER_THAN, empty packages), [packages] LIMIT_TOTAL_OWNER_SIZE / LIMIT_TOTAL_OWNER_COUNT /
// LIMIT_SIZE_GENERIC (403, administrators exempt), and an account purge taking its packages along.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { loadConfig, ConfigError } from '../../src/config/config.js';
import { nowUnix } from '../../src/db/database.js';

interface Rule {
  id: number;
  type: string;
  enabled: boolean;
  keep_count: number;
  keep_pattern: string;
  remove_days: number;
  remove_pattern: string;
  match_full_name: boolean;
}

const put = (url: string, body: string | Buffer, token: string) =>
  fetch(url, {
    method: 'PUT',
    body: body as string | Buffer<ArrayBuffer>,
    headers: { authorization: `token ${token}` },
  });

describe('package cleanup', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  let bob: { name: string; token: string };
  const gen = (owner: string, rest: string) => `${s.url}/api/packages/${owner}/generic/${rest}`;
  const used = async (owner: string, token: string) =>
    (
      await s.api<{ used: { size: { assets: { packages: { all: number } } } } }>(
        'GET',
        owner === 'user' ? '/user/quota' : `/orgs/${owner}/quota`,
        { token },
      )
    ).body.used.size.assets.packages.all;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
  });
  after(async () => s.close());

  it('manages rules with validation and permissions', async () => {
    const base = '/packages/alice/-/rules';
    const made = await s.api<Rule>('POST', base, {
      token: alice.token,
      body: { type: 'generic', keep_count: 2, remove_pattern: '1\\.0\\..*' },
    });
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(
      { ...made.body, id: 0 },
      {
        ...made.body,
        id: 0,
        type: 'generic',
        enabled: true,
        keep_count: 2,
        keep_pattern: '',
        remove_days: 0,
        match_full_name: false,
      },
    );
    const dup = await s.api('POST', base, { token: alice.token, body: { type: 'generic' } });
    assert.equal(dup.status, 409);
    const badRegex = await s.api<{ message: string }>('POST', base, {
      token: alice.token,
      body: { type: 'npm', keep_pattern: '(unclosed' },
    });
    assert.equal(badRegex.status, 422);
    assert.match(badRegex.body.message, /KeepPattern/);
    assert.equal((await s.api('POST', base, { token: alice.token, body: { type: 'bower' } })).status, 422);
    assert.equal(
      (await s.api('POST', base, { token: alice.token, body: { type: 'npm', keep_count: -1 } })).status,
      422,
    );

    const list = await s.api<Rule[]>('GET', base, { token: alice.token });
    assert.deepEqual(
      list.body.map((r) => r.type),
      ['generic'],
    );
    const edited = await s.api<Rule>('PATCH', `${base}/${made.body.id}`, {
      token: alice.token,
      body: { enabled: false },
    });
    assert.equal(edited.body.enabled, false);
    assert.equal(edited.body.keep_count, 2, 'fields not given stay');
    assert.equal((await s.api('GET', `${base}/999999`, { token: alice.token })).status, 404);

    // Others may not see or change them; administrators may.
    assert.equal((await s.api('GET', base, { token: bob.token })).status, 403);
    assert.equal(
      (await s.api('PATCH', `${base}/${made.body.id}`, { token: bob.token, body: { enabled: true } })).status,
      403,
    );
    assert.equal((await s.api('GET', base)).status, 401);
    assert.equal((await s.api('GET', base, { token: s.admin.token })).status, 200);
    const ro = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: ['alice', 'alice-password-1'],
      body: { name: 'ro-pkg', scopes: ['read:package'] },
    });
    assert.equal((await s.api('POST', base, { token: ro.body.sha1, body: { type: 'npm' } })).status, 403);
    assert.equal((await s.api('GET', base, { token: ro.body.sha1 })).status, 200);

    // In an organization, its owners manage the rules; plain members do not.
    await s.api('POST', '/orgs', { token: alice.token, body: { username: 'cleanorg' } });
    const team = await s.api<{ id: number }>('POST', '/orgs/cleanorg/teams', {
      token: alice.token,
      body: { name: 'members', permission: 'write', units: ['repo.packages'] },
    });
    await s.api('PUT', `/teams/${team.body.id}/members/bob`, { token: alice.token });
    assert.equal(
      (await s.api('POST', '/packages/cleanorg/-/rules', { token: bob.token, body: { type: 'npm' } })).status,
      403,
    );
    assert.equal(
      (await s.api('POST', '/packages/cleanorg/-/rules', { token: alice.token, body: { type: 'npm' } }))
        .status,
      201,
    );

    assert.equal((await s.api('DELETE', `${base}/${made.body.id}`, { token: alice.token })).status, 204);
    assert.equal((await s.api('GET', `${base}/${made.body.id}`, { token: alice.token })).status, 404);
  });

  it('previews what a rule removes, and the job removes exactly that', async () => {
    for (const v of ['1.0.0', '1.0.1', '1.0.2', '1.0.3', '1.0.4', '2.0.0']) {
      assert.equal(
        (await put(gen('alice', `tool/${v}/tool.bin`), Buffer.alloc(100, v.charCodeAt(4)), alice.token))
          .status,
        201,
      );
    }
    assert.equal((await put(gen('alice', 'other/0.1/o.bin'), Buffer.alloc(10, 7), alice.token)).status, 201);
    // 1.0.0 and 1.0.1 are old; the rest are new.
    const old = nowUnix() - 40 * 86400;
    await s.ctx.db
      .updateTable('package_version')
      .set({ created_unix: old })
      .where('version', 'in', ['1.0.0', '1.0.1'])
      .execute();
    const before = await used('user', alice.token);
    assert.equal(before, 610);

    const rule = await s.api<Rule>('POST', '/packages/alice/-/rules', {
      token: alice.token,
      body: { type: 'generic', keep_count: 1, keep_pattern: '1\\.0\\.3', remove_pattern: '1\\.0\\..*' },
    });
    assert.equal(rule.status, 201, rule.text);
    const preview = await s.api<Array<{ name: string; version: string }>>(
      'GET',
      `/packages/alice/-/rules/${rule.body.id}/preview`,
      {
        token: alice.token,
      },
    );
    assert.equal(preview.status, 200, preview.text);
    const doomed = preview.body.map((p) => `${p.name}@${p.version}`).sort();
    // 2.0.0 is the newest kept; 1.0.3 kept by pattern; other@0.1 is the newest of its package.
    assert.deepEqual(doomed, ['tool@1.0.0', 'tool@1.0.1', 'tool@1.0.2', 'tool@1.0.4']);

    // With remove_days, only the old ones.
    await s.api('PATCH', `/packages/alice/-/rules/${rule.body.id}`, {
      token: alice.token,
      body: { remove_days: 30 },
    });
    const older = await s.api<Array<{ version: string }>>(
      'GET',
      `/packages/alice/-/rules/${rule.body.id}/preview`,
      { token: alice.token },
    );
    assert.deepEqual(older.body.map((p) => p.version).sort(), ['1.0.0', '1.0.1']);
    // match_full_name: the patterns see name/version.
    await s.api('PATCH', `/packages/alice/-/rules/${rule.body.id}`, {
      token: alice.token,
      body: { remove_days: 0, match_full_name: true, remove_pattern: 'tool/1\\.0\\.[01]' },
    });
    const full = await s.api<Array<{ version: string }>>(
      'GET',
      `/packages/alice/-/rules/${rule.body.id}/preview`,
      { token: alice.token },
    );
    assert.deepEqual(full.body.map((p) => p.version).sort(), ['1.0.0', '1.0.1']);

    const report = await s.ctx.packageCleanup.run();
    assert.equal(report.versions, 2);
    const left = await s.api<Array<{ name: string; version: string }>>(
      'GET',
      '/packages/alice?type=generic',
      { token: alice.token },
    );
    assert.deepEqual(left.body.map((p) => `${p.name}@${p.version}`).sort(), [
      'other@0.1',
      'tool@1.0.2',
      'tool@1.0.3',
      'tool@1.0.4',
      'tool@2.0.0',
    ]);
    assert.equal(await used('user', alice.token), before - 200, 'the removed files no longer count');
    // A disabled rule does nothing.
    await s.api('PATCH', `/packages/alice/-/rules/${rule.body.id}`, {
      token: alice.token,
      body: { enabled: false, remove_pattern: '' },
    });
    assert.equal((await s.ctx.packageCleanup.run()).versions, 0);
  });

  it('removes leftovers only once older than OLDER_THAN, and never a blob a file names', async () => {
    const blobs = s.ctx.storage.packages;
    const { Readable } = await import('node:stream');
    const orphan = async (content: string, age: number) => {
      const sha = crypto.createHash('sha256').update(content).digest('hex');
      const key = `${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`;
      await blobs.put(key, Readable.from([Buffer.from(content)]));
      await s.ctx.db
        .insertInto('package_blob')
        .values({
          size: content.length,
          hash_md5: 'x',
          hash_sha1: 'x',
          hash_sha256: sha,
          hash_sha512: 'x',
          created_unix: nowUnix() - age,
        })
        .execute();
      return { sha, key };
    };
    const stale = await orphan('stale leftover', 2 * 86400);
    const fresh = await orphan('fresh leftover', 60);
    // A referenced blob, however old, stays.
    await put(gen('alice', 'kept/1.0/k.bin'), 'kept content', alice.token);
    const keptSha = crypto.createHash('sha256').update('kept content').digest('hex');
    await s.ctx.db
      .updateTable('package_blob')
      .set({ created_unix: nowUnix() - 5 * 86400 })
      .where('hash_sha256', '=', keptSha)
      .execute();
    // An unfinished upload: old and new.
    await blobs.put('tmp/old-upload', Readable.from([Buffer.from('partial')]));
    const tmpFile = path.join(s.dataDir, 'packages', 'tmp', 'old-upload');
    if (fs.existsSync(tmpFile)) {
      const t = new Date(Date.now() - 2 * 86400_000);
      fs.utimesSync(tmpFile, t, t);
    }
    await blobs.put('tmp/new-upload', Readable.from([Buffer.from('partial')]));
    // An empty package (a version deletion interrupted before the package went).
    await s.ctx.db
      .insertInto('package')
      .values({
        owner_id: 2,
        type: 'generic',
        name: 'ghost',
        lower_name: 'ghost',
        created_unix: nowUnix() - 2 * 86400,
      })
      .execute();

    const report = await s.ctx.packageCleanup.run();
    assert.equal(report.blobs, 1);
    assert.equal(report.packages, 1);
    assert.equal(report.uploads, 1);
    assert.ok(!(await blobs.stat(stale.key)));
    assert.ok(await blobs.stat(fresh.key), 'younger than OLDER_THAN: kept');
    assert.ok(
      await s.ctx.db
        .selectFrom('package_blob')
        .select('id')
        .where('hash_sha256', '=', keptSha)
        .executeTakeFirst(),
    );
    const dl = await fetch(gen('alice', 'kept/1.0/k.bin'), {
      headers: { authorization: `token ${alice.token}` },
    });
    assert.equal(await dl.text(), 'kept content');
    assert.ok(!(await blobs.stat('tmp/old-upload')));
    assert.ok(await blobs.stat('tmp/new-upload'));
    assert.equal(
      await s.ctx.db.selectFrom('package').select('id').where('name', '=', 'ghost').executeTakeFirst(),
      undefined,
    );
  });

  it('refuses schedules it cannot run', () => {
    const cwd = fs.mkdtempSync(path.join(s.dataDir, 'cfg-'));
    const bad = () => loadConfig({ env: { ANVIL__CRON_0X2E_CLEANUP_PACKAGES__SCHEDULE: '0 3 * * *' }, cwd });
    assert.throws(bad, (err: unknown) => err instanceof ConfigError && /SCHEDULE/.test(err.message));
    const ok = loadConfig({
      env: {
        ANVIL__CRON_0X2E_CLEANUP_PACKAGES__SCHEDULE: '@every 2h',
        ANVIL__CRON_0X2E_CLEANUP_PACKAGES__OLDER_THAN: '1h',
      },
      cwd,
    });
    assert.deepEqual(ok.cron.cleanupPackages.schedule, { every: 7200 });
    assert.equal(ok.cron.cleanupPackages.olderThan, 3600);
  });
});

describe('package limits and account purge', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({
      ANVIL__PACKAGES__LIMIT_TOTAL_OWNER_SIZE: '250',
      ANVIL__PACKAGES__LIMIT_TOTAL_OWNER_COUNT: '3',
      ANVIL__PACKAGES__LIMIT_SIZE_GENERIC: '200',
    });
  });
  after(async () => s.close());
  const gen = (owner: string, rest: string) => `${s.url}/api/packages/${owner}/generic/${rest}`;

  it('answers 403 over LIMIT_SIZE_GENERIC, LIMIT_TOTAL_OWNER_SIZE and LIMIT_TOTAL_OWNER_COUNT, administrators exempt', async () => {
    const u = await s.createUser('limited');
    assert.equal((await put(gen('limited', 'a/1/big.bin'), Buffer.alloc(201), u.token)).status, 403);
    assert.equal((await put(gen('limited', 'a/1/ok.bin'), Buffer.alloc(200), u.token)).status, 201);
    assert.equal(
      (await put(gen('limited', 'a/2/more.bin'), Buffer.alloc(100), u.token)).status,
      403,
      'over the owner total',
    );
    assert.equal((await put(gen('limited', 'a/2/small.bin'), Buffer.alloc(10), u.token)).status, 201);
    assert.equal((await put(gen('limited', 'a/3/small.bin'), Buffer.alloc(10), u.token)).status, 201);
    assert.equal(
      (await put(gen('limited', 'a/4/small.bin'), Buffer.alloc(1), u.token)).status,
      403,
      'over the version count',
    );
    assert.equal((await put(gen('limited', 'a/4/big.bin'), Buffer.alloc(500), s.admin.token)).status, 201);
  });

  it('purges an account with its packages, blobs and quota', async () => {
    const u = await s.createUser('leaving');
    const content = crypto.randomBytes(50);
    const sha = crypto.createHash('sha256').update(content).digest('hex');
    assert.equal((await put(gen('leaving', 'gone/1/f.bin'), content, u.token)).status, 201);
    const r = await s.api('DELETE', '/admin/users/leaving?purge=true', { token: s.admin.token });
    assert.equal(r.status, 204, r.text);
    assert.equal(
      await s.ctx.db.selectFrom('package').select('id').where('name', '=', 'gone').executeTakeFirst(),
      undefined,
    );
    assert.equal(
      await s.ctx.db
        .selectFrom('package_blob')
        .select('id')
        .where('hash_sha256', '=', sha)
        .executeTakeFirst(),
      undefined,
    );
    assert.ok(!(await s.ctx.storage.packages.stat(`${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`)));
  });
});
