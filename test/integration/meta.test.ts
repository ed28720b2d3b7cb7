import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startServer, type TestServer } from '../helpers/server.js';

describe('server metadata, errors and the API description', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('GET /version reads as a recent Forgejo to clients, with Anvil in the build metadata', async () => {
    const r = await s.api<{ version: string }>('GET', '/version');
    assert.equal(r.status, 200);
    const v = r.body.version;
    // Semantic Versioning 2.0.0 (what Renovate's semver and Go's version parsers accept).
    const SEMVER =
      /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;
    const m = SEMVER.exec(v);
    assert.ok(m, `${v} is semver`);
    // Forgejo's form: its own version, then `+gitea-<the Gitea API level>` (what Renovate's gitea
    // platform, the Gitea SDKs and others look for); Renovate's forgejo platform needs >= 10.
    assert.ok(Number(m[1]) >= 11, v);
    assert.match(v, /^\d+\.\d+\.\d+\+gitea-1\.22\.0(?![\d.])/);
    assert.deepEqual(/\+gitea-(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1), ['1', '22', '0']);
    // Anvil's own version stays visible.
    const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    assert.ok(v.endsWith(`anvil-${pkg.version}`), v);
    // Forgejo's own version endpoint answers the same string, without credentials.
    const forgejo = await s.api<{ version: string }>('GET', '/api/forgejo/v1/version');
    assert.equal(forgejo.status, 200, forgejo.text);
    assert.deepEqual(forgejo.body, { version: v });
  });

  it('GET /settings/api reports the paging settings', async () => {
    const r = await s.api<Record<string, number>>('GET', '/settings/api');
    assert.equal(r.status, 200);
    assert.equal(r.body['default_paging_num'], 30);
    assert.equal(r.body['max_response_items'], 50);
  });

  it('GET /settings/repository and /settings/ui answer with their shapes', async () => {
    const repo = await s.api<Record<string, boolean>>('GET', '/settings/repository');
    assert.equal(repo.status, 200);
    assert.equal(repo.body['http_git_disabled'], false);
    assert.equal(repo.body['lfs_disabled'], false);
    const ui = await s.api<{ allowed_reactions: string[] }>('GET', '/settings/ui');
    assert.equal(ui.status, 200);
    assert.ok(ui.body.allowed_reactions.includes('+1'));
  });

  it('lists gitignore and license templates, and 404s unknown ones', async () => {
    const list = await s.api<string[]>('GET', '/gitignore/templates');
    assert.equal(list.status, 200);
    assert.ok(list.body.includes('Node'));
    const node = await s.api<{ name: string; source: string }>('GET', '/gitignore/templates/Node');
    assert.equal(node.status, 200);
    assert.match(node.body.source, /node_modules/);
    assert.equal((await s.api('GET', '/gitignore/templates/NoSuch')).status, 404);
    const licenses = await s.api<Array<{ key: string; url: string }>>('GET', '/licenses');
    assert.equal(licenses.status, 200);
    assert.ok(licenses.body.some((l) => l.key === 'MIT' && l.url.endsWith('/api/v1/licenses/MIT')));
    const mit = await s.api<{ body: string }>('GET', '/licenses/MIT');
    assert.equal(mit.status, 200);
    assert.match(mit.body.body, /Permission is hereby granted/);
    assert.equal((await s.api('GET', '/licenses/NoSuch')).status, 404);
  });

  it('serves the OpenAPI document and a browsable page', async () => {
    const doc = await s.api<{ openapi: string; paths: Record<string, unknown> }>('GET', '/swagger.v1.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.0.3');
    assert.ok(doc.body.paths['/admin/users'], 'paths are relative to /api/v1');
    assert.ok(doc.body.paths['/users/{username}']);
    const page = await fetch(`${s.url}/api/swagger`, { redirect: 'follow' });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /swagger/i);
  });

  it('answers unknown routes with 404 in Forgejo shape', async () => {
    const r = await s.api<{ message: string; url: string }>('GET', '/no/such/route');
    assert.equal(r.status, 404);
    assert.equal(typeof r.body.message, 'string');
    assert.equal(r.body.url, `${s.url}/api/swagger`);
  });

  it('answers malformed JSON with 400', async () => {
    const r = await s.api<{ message: string }>('POST', '/admin/users', {
      token: s.admin.token,
      raw: '{"username": ',
    });
    assert.equal(r.status, 400);
    assert.equal(typeof r.body.message, 'string');
  });

  it('answers validation failures with 422 naming the field', async () => {
    const r = await s.api<{ message: string }>('POST', '/admin/users', {
      token: s.admin.token,
      body: { email: 'x@example.com', password: 'pw123456' },
    });
    assert.equal(r.status, 422);
    assert.match(r.body.message, /Username/);
  });
});
