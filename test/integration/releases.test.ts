// Releases and release assets over HTTP: CRUD in Forgejo's shapes, the tag a release creates,
// drafts (hidden from readers, no tag until published), the latest stable release, assets uploaded
// as streamed multipart or raw bodies and downloaded byte for byte, permissions, and the quota
// usage of the repository's owner (an organization for its repositories), including what deleting,
// transferring and generated archives do to it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { startServer, type TestServer } from '../helpers/server.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface AttachmentJson {
  id: number;
  name: string;
  size: number;
  download_count: number;
  created_at: string;
  uuid: string;
  browser_download_url: string;
  type: string;
}

interface ReleaseJson {
  id: number;
  tag_name: string;
  target_commitish: string;
  name: string;
  body: string;
  url: string;
  html_url: string;
  tarball_url: string;
  zipball_url: string;
  upload_url: string;
  draft: boolean;
  prerelease: boolean;
  hide_archive_links: boolean;
  created_at: string;
  published_at: string;
  author: { login: string; id: number };
  assets: AttachmentJson[];
  archive_download_count: { zip: number; tar_gz: number };
}

interface QuotaJson {
  used: { size: { assets: { attachments: { issues: number; releases: number } } } };
}

interface QuotaAttachmentJson {
  name: string;
  size: number;
  api_url: string;
  contained_in: { api_url: string; html_url: string };
}

const RELEASE_KEYS = [
  'archive_download_count',
  'assets',
  'author',
  'body',
  'created_at',
  'draft',
  'hide_archive_links',
  'html_url',
  'id',
  'name',
  'prerelease',
  'published_at',
  'tag_name',
  'tarball_url',
  'target_commitish',
  'upload_url',
  'url',
  'zipball_url',
];

const ATTACHMENT_KEYS = [
  'browser_download_url',
  'created_at',
  'download_count',
  'id',
  'name',
  'size',
  'type',
  'uuid',
];

const MiB = 1024 * 1024;

describe('releases', () => {
  let s: TestServer;
  let alice: User;
  let bob: User; // reader of alice/proj
  let carol: User; // outsider
  let dave: User; // writer of alice/proj
  let erin: User; // member of the acme organization (write team)
  let aliceRead: string; // alice's read-only token

  before(async () => {
    s = await startServer({ ANVIL__ATTACHMENT__MAX_SIZE: '4' });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    erin = await s.createUser('erin');
    const t = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
      basic: [alice.name, alice.password],
      body: { name: 'read-only', scopes: ['read:repository', 'read:user'] },
    });
    aliceRead = t.body.sha1;
    for (const [name, isPrivate] of [
      ['proj', false],
      ['secret', true],
      ['empty', false],
    ] as const) {
      const r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, auto_init: name !== 'empty', private: isPrivate },
      });
      assert.equal(r.status, 201, r.text);
    }
    for (const repo of ['proj', 'secret']) {
      for (const [u, permission] of [
        [bob, 'read'],
        [dave, 'write'],
      ] as const) {
        const r = await s.api('PUT', `/repos/alice/${repo}/collaborators/${u.name}`, {
          token: alice.token,
          body: { permission },
        });
        assert.equal(r.status, 204, r.text);
      }
    }
  });

  after(async () => {
    await s?.close();
  });

  const create = (owner: string, repo: string, body: Record<string, unknown>, token = alice.token) =>
    s.api<ReleaseJson>('POST', `/repos/${owner}/${repo}/releases`, { token, body });

  /** The commit a ref of a repository points to, read with git from its directory. */
  async function refOid(owner: string, repo: string, ref: string): Promise<string | null> {
    const row = await s.ctx.repos.getById(
      (await s.api<{ id: number }>('GET', `/repos/${owner}/${repo}`, { token: s.admin.token })).body.id,
    );
    try {
      return execFileSync('git', [
        '--git-dir',
        s.ctx.repos.pathOf(row!),
        'rev-parse',
        '--verify',
        '-q',
        `${ref}^{commit}`,
      ])
        .toString()
        .trim();
    } catch {
      return null;
    }
  }

  /** Uploads `data` as the multipart field `attachment`. */
  async function upload(
    path: string,
    data: Buffer,
    filename: string,
    token: string | undefined,
    extra: Record<string, string> = {},
  ) {
    const form = new FormData();
    form.append('attachment', new Blob([data as Buffer<ArrayBuffer>]), filename);
    for (const [k, v] of Object.entries(extra)) form.append(k, v);
    const res = await fetch(`${s.url}/api/v1${path}`, {
      method: 'POST',
      headers: token ? { authorization: `token ${token}` } : {},
      body: form,
    });
    const text = await res.text();
    return { status: res.status, text, body: (text ? JSON.parse(text) : null) as AttachmentJson };
  }

  async function download(url: string, token?: string) {
    const res = await fetch(url, { headers: token ? { authorization: `token ${token}` } : {} });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  const quotaOf = async (token: string, org?: string) => {
    const r = await s.api<QuotaJson>('GET', org ? `/orgs/${org}/quota` : '/user/quota', { token });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.assets.attachments;
  };

  describe('CRUD', () => {
    it('creates a release and its tag at the default branch, in Forgejo shape', async () => {
      const head = await refOid('alice', 'proj', 'refs/heads/main');
      assert.ok(head);
      assert.equal(await refOid('alice', 'proj', 'refs/tags/v1.0'), null);
      const r = await create('alice', 'proj', { tag_name: 'v1.0', name: 'First', body: 'notes' });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), RELEASE_KEYS);
      assert.equal(r.body.tag_name, 'v1.0');
      assert.equal(r.body.name, 'First');
      assert.equal(r.body.body, 'notes');
      assert.equal(r.body.target_commitish, 'main');
      assert.equal(r.body.draft, false);
      assert.equal(r.body.prerelease, false);
      assert.equal(r.body.author.login, 'alice');
      assert.deepEqual(r.body.assets, []);
      assert.equal(r.body.url, `${s.url}/api/v1/repos/alice/proj/releases/${r.body.id}`);
      assert.equal(r.body.upload_url, `${r.body.url}/assets`);
      assert.equal(r.body.html_url, `${s.url}/alice/proj/releases/tag/v1.0`);
      assert.equal(r.body.tarball_url, `${s.url}/alice/proj/archive/v1.0.tar.gz`);
      assert.equal(r.body.zipball_url, `${s.url}/alice/proj/archive/v1.0.zip`);
      assert.deepEqual(r.body.archive_download_count, { zip: 0, tar_gz: 0 });
      assert.equal(await refOid('alice', 'proj', 'refs/tags/v1.0'), head);
      // The repository counts its published releases; a draft does not count.
      const counter = async () =>
        (await s.api<{ release_counter: number }>('GET', '/repos/alice/proj', { token: alice.token })).body
          .release_counter;
      assert.equal(await counter(), 1);
      const draft = await create('alice', 'proj', { tag_name: 'v1.0-draft', name: 'Draft', draft: true });
      assert.equal(draft.status, 201, draft.text);
      assert.equal(await counter(), 1);
      assert.equal(
        (await s.api('DELETE', `/repos/alice/proj/releases/${draft.body.id}`, { token: alice.token })).status,
        204,
      );
    });

    it('reads a release by id and by tag, lists and edits it', async () => {
      const rel = (await create('alice', 'proj', { tag_name: 'v1.1', name: 'One one' })).body;
      const byId = await s.api<ReleaseJson>('GET', `/repos/alice/proj/releases/${rel.id}`);
      assert.equal(byId.status, 200);
      assert.equal(byId.body.name, 'One one');
      const byTag = await s.api<ReleaseJson>('GET', '/repos/alice/proj/releases/tags/V1.1');
      assert.equal(byTag.status, 200, 'tags are compared without case');
      assert.equal(byTag.body.id, rel.id);

      const edited = await s.api<ReleaseJson>('PATCH', `/repos/alice/proj/releases/${rel.id}`, {
        token: dave.token,
        body: { name: 'Renamed', body: 'new notes', prerelease: true },
      });
      assert.equal(edited.status, 200, edited.text);
      assert.equal(edited.body.name, 'Renamed');
      assert.equal(edited.body.body, 'new notes');
      assert.equal(edited.body.prerelease, true);
      assert.equal(edited.body.tag_name, 'v1.1');
      // Empty strings change nothing, as in Forgejo.
      const same = await s.api<ReleaseJson>('PATCH', `/repos/alice/proj/releases/${rel.id}`, {
        token: alice.token,
        body: { name: '', body: '' },
      });
      assert.equal(same.body.name, 'Renamed');

      const list = await s.api<ReleaseJson[]>('GET', '/repos/alice/proj/releases');
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.map((r) => r.tag_name),
        ['v1.1', 'v1.0'],
        'newest first',
      );
      assert.equal(list.headers.get('x-total-count'), '2');
      const pre = await s.api<ReleaseJson[]>('GET', '/repos/alice/proj/releases?pre-release=true');
      assert.deepEqual(
        pre.body.map((r) => r.tag_name),
        ['v1.1'],
      );
      const stable = await s.api<ReleaseJson[]>('GET', '/repos/alice/proj/releases?pre-release=false');
      assert.deepEqual(
        stable.body.map((r) => r.tag_name),
        ['v1.0'],
      );
      const paged = await s.api<ReleaseJson[]>('GET', '/repos/alice/proj/releases?limit=1&page=2');
      assert.deepEqual(
        paged.body.map((r) => r.tag_name),
        ['v1.0'],
      );
      assert.match(paged.headers.get('link') ?? '', /rel="first"/);
      const search = await s.api<ReleaseJson[]>('GET', '/repos/alice/proj/releases?q=renamed');
      assert.deepEqual(
        search.body.map((r) => r.tag_name),
        ['v1.1'],
      );
    });

    it('refuses a second release for a tag, bad names, unknown targets and empty repositories', async () => {
      const dup = await create('alice', 'proj', { tag_name: 'V1.0' });
      assert.equal(dup.status, 409, dup.text);
      assert.equal((await create('alice', 'proj', { tag_name: 'bad..name' })).status, 422);
      assert.equal((await create('alice', 'proj', { tag_name: '' })).status, 422);
      const target = await create('alice', 'proj', { tag_name: 'v9', target_commitish: 'no-such-branch' });
      assert.equal(target.status, 404, target.text);
      assert.equal(await refOid('alice', 'proj', 'refs/tags/v9'), null);
      const empty = await create('alice', 'empty', { tag_name: 'v1' });
      assert.equal(empty.status, 422, empty.text);
      const edit = await s.api('PATCH', '/repos/alice/proj/releases/999999', {
        token: alice.token,
        body: {},
      });
      assert.equal(edit.status, 404);
    });

    it('creates the tag at a given commit and uses an existing tag as it is', async () => {
      const head = (await refOid('alice', 'proj', 'refs/heads/main'))!;
      const r = await create('alice', 'proj', { tag_name: 'at-sha', target_commitish: head });
      assert.equal(r.status, 201, r.text);
      assert.equal(await refOid('alice', 'proj', 'refs/tags/at-sha'), head);
      // Deleting the release keeps the tag; a new release reuses it.
      const del = await s.api('DELETE', `/repos/alice/proj/releases/${r.body.id}`, { token: alice.token });
      assert.equal(del.status, 204);
      assert.equal((await s.api('GET', `/repos/alice/proj/releases/${r.body.id}`)).status, 404);
      assert.equal(await refOid('alice', 'proj', 'refs/tags/at-sha'), head);
      const again = await create('alice', 'proj', { tag_name: 'at-sha', target_commitish: 'no-such-branch' });
      assert.equal(again.status, 201, again.text);
      const byTag = await s.api('DELETE', '/repos/alice/proj/releases/tags/at-sha', { token: alice.token });
      assert.equal(byTag.status, 204);
      assert.equal((await s.api('GET', '/repos/alice/proj/releases/tags/at-sha')).status, 404);
      assert.equal(
        (await s.api('DELETE', '/repos/alice/proj/releases/tags/at-sha', { token: alice.token })).status,
        404,
      );
    });

    it('handles tags with slashes', async () => {
      const r = await create('alice', 'proj', { tag_name: 'release/2.0' });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.html_url, `${s.url}/alice/proj/releases/tag/release/2.0`);
      const got = await s.api<ReleaseJson>('GET', '/repos/alice/proj/releases/tags/release%2F2.0');
      assert.equal(got.status, 200);
      const raw = await s.api<ReleaseJson>('GET', '/repos/alice/proj/releases/tags/release/2.0');
      assert.equal(raw.body.id, r.body.id);
      assert.equal(
        (await s.api('DELETE', `/repos/alice/proj/releases/${r.body.id}`, { token: alice.token })).status,
        204,
      );
    });
  });

  describe('latest', () => {
    it('is the newest release that is neither draft nor pre-release; 404 when there is none', async () => {
      const r = await s.api('POST', '/user/repos', {
        token: carol.token,
        body: { name: 'lat', auto_init: true },
      });
      assert.equal(r.status, 201);
      const none = await s.api<{ message: string }>('GET', '/repos/carol/lat/releases/latest');
      assert.equal(none.status, 404);
      assert.ok(none.body.message);
      const stable = (await create('carol', 'lat', { tag_name: 'v1' }, carol.token)).body;
      await create('carol', 'lat', { tag_name: 'v2-rc', prerelease: true }, carol.token);
      const draft = (await create('carol', 'lat', { tag_name: 'v3', draft: true }, carol.token)).body;
      const latest = await s.api<ReleaseJson>('GET', '/repos/carol/lat/releases/latest');
      assert.equal(latest.status, 200);
      assert.equal(latest.body.id, stable.id);
      // Publishing the draft makes it the latest.
      const pub = await s.api<ReleaseJson>('PATCH', `/repos/carol/lat/releases/${draft.id}`, {
        token: carol.token,
        body: { draft: false },
      });
      assert.equal(pub.status, 200, pub.text);
      const now = await s.api<ReleaseJson>('GET', '/repos/carol/lat/releases/latest');
      assert.equal(now.body.id, draft.id);
    });
  });

  describe('drafts', () => {
    let draft: ReleaseJson;

    before(async () => {
      const r = await create('alice', 'proj', { tag_name: 'v5-draft', name: 'Draft', draft: true });
      assert.equal(r.status, 201, r.text);
      draft = r.body;
    });

    it('creates no tag until published', async () => {
      assert.equal(draft.draft, true);
      assert.equal(await refOid('alice', 'proj', 'refs/tags/v5-draft'), null);
    });

    it('are visible to writers only', async () => {
      const tags = async (token?: string, q = '') =>
        (
          await s.api<ReleaseJson[]>('GET', `/repos/alice/proj/releases${q}`, token ? { token } : {})
        ).body.map((r) => r.tag_name);
      assert.ok(!(await tags()).includes('v5-draft'), 'anonymous');
      assert.ok(!(await tags(bob.token)).includes('v5-draft'), 'reader');
      assert.ok(!(await tags(aliceRead)).includes('v5-draft'), 'owner with a read-only token');
      assert.ok((await tags(dave.token)).includes('v5-draft'), 'writer');
      assert.deepEqual(await tags(alice.token, '?draft=true'), ['v5-draft']);
      assert.deepEqual(await tags(undefined, '?draft=true'), []);
      assert.ok(!(await tags(alice.token, '?draft=false')).includes('v5-draft'));
      for (const token of [undefined, bob.token, aliceRead]) {
        const opts = token ? { token } : {};
        assert.equal((await s.api('GET', `/repos/alice/proj/releases/${draft.id}`, opts)).status, 404);
        assert.equal((await s.api('GET', '/repos/alice/proj/releases/tags/v5-draft', opts)).status, 404);
        assert.equal((await s.api('GET', `/repos/alice/proj/releases/${draft.id}/assets`, opts)).status, 404);
      }
      assert.equal(
        (await s.api('GET', `/repos/alice/proj/releases/${draft.id}`, { token: dave.token })).status,
        200,
      );
    });

    it('gets its tag when published', async () => {
      const r = await s.api<ReleaseJson>('PATCH', `/repos/alice/proj/releases/${draft.id}`, {
        token: alice.token,
        body: { draft: false },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.draft, false);
      assert.equal(
        await refOid('alice', 'proj', 'refs/tags/v5-draft'),
        await refOid('alice', 'proj', 'refs/heads/main'),
      );
      assert.equal((await s.api('GET', `/repos/alice/proj/releases/${draft.id}`)).status, 200);
    });
  });

  describe('permissions', () => {
    it('lets readers read and refuses them changes (403); outsiders of a private repository get 404', async () => {
      const rel = (await create('alice', 'secret', { tag_name: 'v1' })).body;
      assert.ok(rel.id);
      assert.equal((await create('alice', 'proj', { tag_name: 'by-bob' }, bob.token)).status, 403);
      assert.equal(
        (
          await s.api('PATCH', `/repos/alice/secret/releases/${rel.id}`, {
            token: bob.token,
            body: { name: 'x' },
          })
        ).status,
        403,
      );
      assert.equal(
        (await s.api('DELETE', `/repos/alice/secret/releases/${rel.id}`, { token: bob.token })).status,
        403,
      );
      assert.equal(
        (await s.api('GET', `/repos/alice/secret/releases/${rel.id}`, { token: bob.token })).status,
        200,
      );
      for (const token of [carol.token, undefined]) {
        const opts = token ? { token } : {};
        assert.equal((await s.api('GET', '/repos/alice/secret/releases', opts)).status, 404);
        assert.equal((await s.api('GET', `/repos/alice/secret/releases/${rel.id}`, opts)).status, 404);
        assert.equal((await s.api('GET', '/repos/alice/secret/releases/latest', opts)).status, 404);
      }
      assert.equal((await create('alice', 'secret', { tag_name: 'v2' }, carol.token)).status, 404);
      assert.equal((await create('alice', 'proj', { tag_name: 'anon' }, '')).status, 401);
    });
  });

  describe('assets', () => {
    let rel: ReleaseJson;
    const big = crypto.randomBytes(3 * MiB + 12345);

    before(async () => {
      rel = (await create('alice', 'proj', { tag_name: 'v7', name: 'With assets' })).body;
    });

    it('uploads a multipart file of a few MB and serves it back byte for byte', async () => {
      const before = await quotaOf(alice.token);
      const up = await upload(`/repos/alice/proj/releases/${rel.id}/assets`, big, 'build.bin', dave.token);
      assert.equal(up.status, 201, up.text);
      assert.deepEqual(Object.keys(up.body).sort(), ATTACHMENT_KEYS);
      assert.equal(up.body.name, 'build.bin');
      assert.equal(up.body.size, big.length);
      assert.equal(up.body.type, 'attachment');
      assert.equal(up.body.download_count, 0);
      assert.equal(up.body.browser_download_url, `${s.url}/attachments/${up.body.uuid}`);
      // Counted for alice, the repository's owner, not dave who uploaded.
      assert.equal((await quotaOf(alice.token)).releases, before.releases + big.length);
      assert.equal((await quotaOf(dave.token)).releases, 0);

      const got = await download(up.body.browser_download_url);
      assert.equal(got.status, 200);
      assert.equal(got.bytes.length, big.length);
      assert.ok(got.bytes.equals(big), 'byte for byte');
      assert.match(got.headers.get('content-disposition') ?? '', /attachment; filename="build.bin"/);
      const part = await fetch(up.body.browser_download_url, { headers: { range: 'bytes=10-19' } });
      assert.equal(part.status, 206);
      assert.ok(Buffer.from(await part.arrayBuffer()).equals(big.subarray(10, 20)));

      const one = await s.api<AttachmentJson>(
        'GET',
        `/repos/alice/proj/releases/${rel.id}/assets/${up.body.id}`,
      );
      assert.equal(one.status, 200);
      assert.equal(one.body.download_count, 2);
      const withAssets = await s.api<ReleaseJson>('GET', `/repos/alice/proj/releases/${rel.id}`);
      assert.deepEqual(
        withAssets.body.assets.map((a) => a.id),
        [up.body.id],
      );
    });

    it('takes a name from the query, a raw body and an external link', async () => {
      const named = await upload(
        `/repos/alice/proj/releases/${rel.id}/assets?name=renamed.txt`,
        Buffer.from('hi'),
        'x.txt',
        alice.token,
      );
      assert.equal(named.status, 201, named.text);
      assert.equal(named.body.name, 'renamed.txt');

      const raw = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.id}/assets?name=stream.bin`, {
        method: 'POST',
        headers: { authorization: `token ${alice.token}`, 'content-type': 'application/octet-stream' },
        body: Buffer.from('raw bytes'),
      });
      assert.equal(raw.status, 201);
      const rawJson = (await raw.json()) as AttachmentJson;
      assert.equal(rawJson.size, 9);
      assert.equal((await download(rawJson.browser_download_url)).bytes.toString(), 'raw bytes');

      const noName = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.id}/assets`, {
        method: 'POST',
        headers: { authorization: `token ${alice.token}`, 'content-type': 'application/octet-stream' },
        body: Buffer.from('raw bytes'),
      });
      assert.equal(noName.status, 400);

      const form = new FormData();
      form.append('external_url', 'https://example.com/file.zip');
      const ext = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.id}/assets?name=file.zip`, {
        method: 'POST',
        headers: { authorization: `token ${alice.token}` },
        body: form,
      });
      assert.equal(ext.status, 201);
      const extJson = (await ext.json()) as AttachmentJson;
      assert.equal(extJson.type, 'external');
      assert.equal(extJson.browser_download_url, 'https://example.com/file.zip');
      assert.equal(extJson.size, 0);

      const both = await upload(
        `/repos/alice/proj/releases/${rel.id}/assets`,
        Buffer.from('x'),
        'x.txt',
        alice.token,
        {
          external_url: 'https://example.com/y',
        },
      );
      assert.equal(both.status, 400);
      const badScheme = new FormData();
      badScheme.append('external_url', 'ftp://example.com/file.zip');
      const bad = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.id}/assets?name=f`, {
        method: 'POST',
        headers: { authorization: `token ${alice.token}` },
        body: badScheme,
      });
      assert.equal(bad.status, 400);
      const nothing = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.id}/assets`, {
        method: 'POST',
        headers: { authorization: `token ${alice.token}` },
        body: new FormData(),
      });
      assert.equal(nothing.status, 400);

      const list = await s.api<AttachmentJson[]>('GET', `/repos/alice/proj/releases/${rel.id}/assets`);
      assert.deepEqual(
        list.body.map((a) => a.name),
        ['build.bin', 'file.zip', 'renamed.txt', 'stream.bin'],
        'by name',
      );
    });

    it('edits and deletes assets, giving the usage back', async () => {
      const up = await upload(
        `/repos/alice/proj/releases/${rel.id}/assets`,
        Buffer.alloc(1000, 7),
        'a.bin',
        alice.token,
      );
      const before = await quotaOf(alice.token);
      const edit = await s.api<AttachmentJson>(
        'PATCH',
        `/repos/alice/proj/releases/${rel.id}/assets/${up.body.id}`,
        {
          token: alice.token,
          body: { name: 'b.bin' },
        },
      );
      assert.equal(edit.status, 201, edit.text);
      assert.equal(edit.body.name, 'b.bin');
      const notExternal = await s.api('PATCH', `/repos/alice/proj/releases/${rel.id}/assets/${up.body.id}`, {
        token: alice.token,
        body: { browser_download_url: 'https://example.com/z' },
      });
      assert.equal(notExternal.status, 400);
      const del = await s.api('DELETE', `/repos/alice/proj/releases/${rel.id}/assets/${up.body.id}`, {
        token: alice.token,
      });
      assert.equal(del.status, 204);
      assert.equal((await quotaOf(alice.token)).releases, before.releases - 1000);
      assert.equal((await download(up.body.browser_download_url)).status, 404);
      // An asset is found only under its own release.
      const other = (await create('alice', 'proj', { tag_name: 'v7.1' })).body;
      const list = await s.api<AttachmentJson[]>('GET', `/repos/alice/proj/releases/${rel.id}/assets`);
      const first = list.body[0]!;
      assert.equal(
        (await s.api('GET', `/repos/alice/proj/releases/${other.id}/assets/${first.id}`)).status,
        404,
      );
    });

    it('refuses readers (403) and outsiders of private repositories (404)', async () => {
      const r = await upload(
        `/repos/alice/proj/releases/${rel.id}/assets`,
        Buffer.from('x'),
        'x.txt',
        bob.token,
      );
      assert.equal(r.status, 403, r.text);
      assert.equal(
        (await upload(`/repos/alice/proj/releases/${rel.id}/assets`, Buffer.from('x'), 'x.txt', undefined))
          .status,
        401,
      );
      const secret = (
        await s.api<ReleaseJson[]>('GET', '/repos/alice/secret/releases', { token: alice.token })
      ).body[0]!;
      const up = await upload(
        `/repos/alice/secret/releases/${secret.id}/assets`,
        Buffer.from('private'),
        'p.txt',
        alice.token,
      );
      assert.equal(up.status, 201, up.text);
      assert.equal(
        (
          await upload(
            `/repos/alice/secret/releases/${secret.id}/assets`,
            Buffer.from('x'),
            'x.txt',
            carol.token,
          )
        ).status,
        404,
      );
      assert.equal(
        (await s.api('GET', `/repos/alice/secret/releases/${secret.id}/assets`, { token: carol.token }))
          .status,
        404,
      );
      assert.equal((await download(up.body.browser_download_url)).status, 404, 'anonymous');
      assert.equal((await download(up.body.browser_download_url, carol.token)).status, 404, 'outsider');
      const asReader = await download(up.body.browser_download_url, bob.token);
      assert.equal(asReader.status, 200);
      assert.equal(asReader.bytes.toString(), 'private');
    });

    it('answers 413 for a file over [attachment] MAX_SIZE and keeps nothing', async () => {
      const before = await quotaOf(alice.token);
      const count = (await s.api<AttachmentJson[]>('GET', `/repos/alice/proj/releases/${rel.id}/assets`)).body
        .length;
      const tooBig = crypto.randomBytes(4 * MiB + 1);
      const r = await upload(`/repos/alice/proj/releases/${rel.id}/assets`, tooBig, 'huge.bin', alice.token);
      assert.equal(r.status, 413, r.text);
      const raw = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${rel.id}/assets?name=huge.bin`, {
        method: 'POST',
        headers: { authorization: `token ${alice.token}`, 'content-type': 'application/octet-stream' },
        body: tooBig,
      });
      assert.equal(raw.status, 413);
      assert.deepEqual(await quotaOf(alice.token), before);
      assert.equal(
        (await s.api<AttachmentJson[]>('GET', `/repos/alice/proj/releases/${rel.id}/assets`)).body.length,
        count,
      );
      // Exactly at the limit is fine.
      const atLimit = await upload(
        `/repos/alice/proj/releases/${rel.id}/assets`,
        Buffer.alloc(4 * MiB, 1),
        'max.bin',
        alice.token,
      );
      assert.equal(atLimit.status, 201, atLimit.text);
      await s.api('DELETE', `/repos/alice/proj/releases/${rel.id}/assets/${atLimit.body.id}`, {
        token: alice.token,
      });
    });

    it('lists the attachments counted against the owner in /user/quota/attachments', async () => {
      const r = await s.api<QuotaAttachmentJson[]>('GET', '/user/quota/attachments?limit=50', {
        token: alice.token,
      });
      assert.equal(r.status, 200, r.text);
      const item = r.body.find((i) => i.name === 'build.bin');
      assert.ok(item, r.text);
      assert.equal(item.size, big.length);
      const api = `${s.url}/api/v1/repos/alice/proj/releases/${rel.id}`;
      assert.equal(item.contained_in.api_url, api);
      assert.equal(item.contained_in.html_url, `${s.url}/alice/proj/releases/tag/v7`);
      assert.match(item.api_url, new RegExp(`^${api}/assets/\\d+$`));
      assert.equal(Number(r.headers.get('x-total-count')), r.body.length);
      const dave_ = await s.api<QuotaAttachmentJson[]>('GET', '/user/quota/attachments', {
        token: dave.token,
      });
      assert.deepEqual(dave_.body, []);
    });

    it('does not count generated archives', async () => {
      const before = await quotaOf(alice.token);
      const archive = await fetch(`${s.url}/api/v1/repos/alice/proj/archive/v7.tar.gz`);
      assert.equal(archive.status, 200);
      assert.ok((await archive.arrayBuffer()).byteLength > 0);
      assert.deepEqual(await quotaOf(alice.token), before);
      const rels = await s.api<ReleaseJson>('GET', `/repos/alice/proj/releases/${rel.id}`);
      assert.ok(rels.body.assets.every((a) => !a.name.endsWith('.tar.gz')));
    });

    it('gives the usage back when a release with assets is deleted', async () => {
      const r = (await create('alice', 'proj', { tag_name: 'v8' })).body;
      const before = await quotaOf(alice.token);
      await upload(
        `/repos/alice/proj/releases/${r.id}/assets`,
        Buffer.alloc(2048, 1),
        'one.bin',
        alice.token,
      );
      await upload(
        `/repos/alice/proj/releases/${r.id}/assets`,
        Buffer.alloc(4096, 2),
        'two.bin',
        alice.token,
      );
      assert.equal((await quotaOf(alice.token)).releases, before.releases + 6144);
      assert.equal(
        (await s.api('DELETE', `/repos/alice/proj/releases/${r.id}`, { token: alice.token })).status,
        204,
      );
      assert.deepEqual(await quotaOf(alice.token), before);
    });
  });

  describe('quota', () => {
    it('refuses uploads (413) once the owner is over a release attachment limit', async () => {
      const g = await s.api('POST', '/admin/quota/groups', {
        token: s.admin.token,
        body: {
          name: 'tiny',
          rules: [{ name: 'tiny-releases', limit: 100, subjects: ['size:assets:attachments:releases'] }],
        },
      });
      assert.equal(g.status, 201, g.text);
      assert.equal(
        (await s.api('PUT', '/admin/quota/groups/tiny/users/carol', { token: s.admin.token })).status,
        204,
      );
      const rel = (await create('carol', 'lat', { tag_name: 'q1' }, carol.token)).body;
      const path = `/repos/carol/lat/releases/${rel.id}/assets`;
      const first = await upload(path, Buffer.alloc(1000, 1), 'a.bin', carol.token);
      assert.equal(first.status, 201, 'within quota before the upload');
      const second = await upload(path, Buffer.alloc(10, 1), 'b.bin', carol.token);
      assert.equal(second.status, 413, second.text);
      assert.match(second.text, /quota exceeded/);
      assert.equal((await quotaOf(carol.token)).releases, 1000);
      // Issue attachments are another subject: not limited by this rule.
      const check = await s.api<boolean>('GET', '/user/quota/check?subject=size:assets:attachments:issues', {
        token: carol.token,
      });
      assert.equal(check.body, true);
    });
  });

  describe('organizations, transfer and repository deletion', () => {
    it('counts assets uploaded by a member against the organization, and moves or drops usage with the repository', async () => {
      assert.equal(
        (await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } })).status,
        201,
      );
      const team = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
        token: alice.token,
        body: {
          name: 'devs',
          permission: 'write',
          includes_all_repositories: true,
          units: ['repo.code', 'repo.releases', 'repo.issues'],
        },
      });
      assert.equal(team.status, 201, JSON.stringify(team.body));
      assert.equal(
        (await s.api('PUT', `/teams/${team.body.id}/members/erin`, { token: alice.token })).status,
        204,
      );
      const repo = await s.api('POST', '/orgs/acme/repos', {
        token: alice.token,
        body: { name: 'tool', auto_init: true },
      });
      assert.equal(repo.status, 201, repo.text);

      const rel = await create('acme', 'tool', { tag_name: 'v1' }, erin.token);
      assert.equal(rel.status, 201, rel.text);
      const data = crypto.randomBytes(100_000);
      const up = await upload(
        `/repos/acme/tool/releases/${rel.body.id}/assets`,
        data,
        'tool.tgz',
        erin.token,
      );
      assert.equal(up.status, 201, up.text);
      assert.equal((await quotaOf(erin.token, 'acme')).releases, data.length);
      assert.equal((await quotaOf(erin.token)).releases, 0);
      const items = await s.api<QuotaAttachmentJson[]>('GET', '/orgs/acme/quota/attachments', {
        token: erin.token,
      });
      assert.deepEqual(
        items.body.map((i) => i.name),
        ['tool.tgz'],
      );

      // Transfer to carol: the usage moves with the repository.
      const aliceBefore = await quotaOf(alice.token);
      const t = await s.api('POST', '/repos/acme/tool/transfer', {
        token: alice.token,
        body: { new_owner: 'alice' },
      });
      assert.equal(t.status, 202, t.text);
      assert.equal((await quotaOf(alice.token, 'acme')).releases, 0);
      assert.equal((await quotaOf(alice.token)).releases, aliceBefore.releases + data.length);

      // Deleting the repository gives it back and removes the files.
      const del = await s.api('DELETE', '/repos/alice/tool', { token: alice.token });
      assert.equal(del.status, 204, del.text);
      assert.deepEqual(await quotaOf(alice.token), aliceBefore);
      assert.equal((await download(up.body.browser_download_url, alice.token)).status, 404);
      assert.equal(
        await s.ctx.storage.attachments.stat(`${up.body.uuid[0]}/${up.body.uuid[1]}/${up.body.uuid}`),
        undefined,
      );

      const drift = await s.ctx.quota.recalculate();
      assert.deepEqual(
        drift.filter((d) => d.subject.startsWith('size:assets:attachments')),
        [],
        'stored usage matches the attachments',
      );
    });
  });
});
