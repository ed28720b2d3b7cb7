// Issue and comment attachments over HTTP: streamed multipart uploads and downloads, who may
// upload (writers of issues and the author, not other readers; outsiders of a private repository
// see nothing), the allowed types and size limit of [attachment], the `assets` of issues and
// comments, and the quota usage of the repository's owner: counted on upload, listed in
// /user/quota/attachments, given back when an attachment, comment or issue is deleted.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
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

interface QuotaAttachmentJson {
  name: string;
  size: number;
  api_url: string;
  contained_in: { api_url: string; html_url: string };
}

interface QuotaJson {
  used: { size: { assets: { attachments: { issues: number; releases: number } } } };
}

const MiB = 1024 * 1024;
/** The 8-byte PNG signature and an IHDR chunk: enough for a type sniffer to say image/png. */
const PNG = Buffer.concat([
  Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex'),
  Buffer.alloc(64),
]);

describe('issue and comment attachments', () => {
  let s: TestServer;
  let alice: User; // owner
  let bob: User; // reader
  let carol: User; // outsider of alice/secret, author of an issue in alice/proj
  let dave: User; // writer
  let issue1: number; // alice's issue in proj
  let issue2: number; // carol's issue in proj
  let bobComment: number; // bob's comment on issue 1
  let secretIssue: number;

  before(async () => {
    s = await startServer({ ANVIL__ATTACHMENT__MAX_SIZE: '2' });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    for (const [name, isPrivate] of [
      ['proj', false],
      ['secret', true],
    ] as const) {
      const r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, auto_init: true, private: isPrivate },
      });
      assert.equal(r.status, 201, r.text);
      for (const [u, permission] of [
        [bob, 'read'],
        [dave, 'write'],
      ] as const) {
        const c = await s.api('PUT', `/repos/alice/${name}/collaborators/${u.name}`, {
          token: alice.token,
          body: { permission },
        });
        assert.equal(c.status, 204, c.text);
      }
    }
    const issue = async (repo: string, token: string, title: string) => {
      const r = await s.api<{ number: number }>('POST', `/repos/alice/${repo}/issues`, {
        token,
        body: { title },
      });
      assert.equal(r.status, 201, r.text);
      return r.body.number;
    };
    issue1 = await issue('proj', alice.token, 'First');
    issue2 = await issue('proj', carol.token, 'By carol');
    secretIssue = await issue('secret', alice.token, 'Hidden');
    const c = await s.api<{ id: number }>('POST', `/repos/alice/proj/issues/${issue1}/comments`, {
      token: bob.token,
      body: { body: 'a comment by bob' },
    });
    assert.equal(c.status, 201, c.text);
    bobComment = c.body.id;
  });

  after(async () => {
    await s?.close();
  });

  async function upload(path: string, data: Buffer, filename: string, token?: string, query = '') {
    const form = new FormData();
    form.append('attachment', new Blob([data as Buffer<ArrayBuffer>]), filename);
    const res = await fetch(`${s.url}/api/v1${path}${query}`, {
      method: 'POST',
      headers: token ? { authorization: `token ${token}` } : {},
      body: form,
    });
    const text = await res.text();
    return { status: res.status, text, body: (text ? JSON.parse(text) : null) as AttachmentJson };
  }

  async function download(url: string, token?: string) {
    const res = await fetch(url, { headers: token ? { authorization: `token ${token}` } : {} });
    return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
  }

  const usage = async (token: string) => {
    const r = await s.api<QuotaJson>('GET', '/user/quota', { token });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.assets.attachments;
  };

  const issueAssets = (index: number) => `/repos/alice/proj/issues/${index}/assets`;
  const commentAssets = (id: number) => `/repos/alice/proj/issues/comments/${id}/assets`;

  it('uploads to an issue by a writer, counts it for the owner and serves it byte for byte', async () => {
    const data = crypto.randomBytes(MiB + 4321);
    const before = await usage(alice.token);
    const r = await upload(issueAssets(issue1), data, 'trace.log', dave.token);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.name, 'trace.log');
    assert.equal(r.body.size, data.length);
    assert.equal(r.body.type, 'attachment');
    assert.equal(r.body.browser_download_url, `${s.url}/attachments/${r.body.uuid}`);
    const now = await usage(alice.token);
    assert.equal(now.issues, before.issues + data.length);
    assert.equal(now.releases, before.releases);
    assert.equal((await usage(dave.token)).issues, 0, 'never the uploader');

    const got = await download(r.body.browser_download_url);
    assert.equal(got.status, 200);
    assert.ok(got.bytes.equals(data), 'byte for byte');
    const list = await s.api<AttachmentJson[]>('GET', issueAssets(issue1));
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((a) => a.id),
      [r.body.id],
    );
    const one = await s.api<AttachmentJson>('GET', `${issueAssets(issue1)}/${r.body.id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.download_count, 1);
    const issue = await s.api<{ assets: AttachmentJson[] }>('GET', `/repos/alice/proj/issues/${issue1}`);
    assert.deepEqual(
      issue.body.assets.map((a) => a.id),
      [r.body.id],
      'the issue shows it in its assets',
    );
  });

  it('lets the author of an issue upload, and refuses other readers (403)', async () => {
    const own = await upload(issueAssets(issue2), Buffer.from('by the author'), 'note.txt', carol.token);
    assert.equal(own.status, 201, own.text);
    const other = await upload(issueAssets(issue1), Buffer.from('x'), 'x.txt', carol.token);
    assert.equal(other.status, 403, other.text);
    const reader = await upload(issueAssets(issue1), Buffer.from('x'), 'x.txt', bob.token);
    assert.equal(reader.status, 403, reader.text);
    assert.equal((await upload(issueAssets(issue1), Buffer.from('x'), 'x.txt')).status, 401);
    assert.equal((await upload(issueAssets(9999), Buffer.from('x'), 'x.txt', alice.token)).status, 404);
    // Readers cannot rename or delete either.
    const id = own.body.id;
    assert.equal(
      (await s.api('PATCH', `${issueAssets(issue2)}/${id}`, { token: bob.token, body: { name: 'y.txt' } }))
        .status,
      403,
    );
    assert.equal((await s.api('DELETE', `${issueAssets(issue2)}/${id}`, { token: bob.token })).status, 403);
  });

  it('handles comment attachments: the poster and writers may upload', async () => {
    const mine = await upload(commentAssets(bobComment), Buffer.from('bob file'), 'bob.txt', bob.token);
    assert.equal(mine.status, 201, mine.text);
    const writer = await upload(commentAssets(bobComment), PNG, 'shot.png', dave.token);
    assert.equal(writer.status, 201, writer.text);
    assert.equal(
      (await upload(commentAssets(bobComment), Buffer.from('x'), 'x.txt', carol.token)).status,
      403,
    );
    assert.equal((await upload(commentAssets(999999), Buffer.from('x'), 'x.txt', alice.token)).status, 404);
    const list = await s.api<AttachmentJson[]>('GET', commentAssets(bobComment));
    assert.deepEqual(
      list.body.map((a) => a.name),
      ['bob.txt', 'shot.png'],
    );
    // Comment attachments are not the issue's own.
    const issueList = await s.api<AttachmentJson[]>('GET', issueAssets(issue1));
    assert.ok(issueList.body.every((a) => a.name !== 'bob.txt'));
    assert.equal((await s.api('GET', `${issueAssets(issue1)}/${mine.body.id}`)).status, 404);
    const comment = await s.api<{ assets: AttachmentJson[] }>(
      'GET',
      `/repos/alice/proj/issues/comments/${bobComment}`,
    );
    assert.deepEqual(
      comment.body.assets.map((a) => a.name),
      ['bob.txt', 'shot.png'],
    );
  });

  it('applies [attachment] ALLOWED_TYPES by extension or sniffed type (422), and MAX_SIZE (413)', async () => {
    const before = await usage(alice.token);
    const exe = await upload(issueAssets(issue1), Buffer.from('MZ\x90\x00binary'), 'tool.exe', alice.token);
    assert.equal(exe.status, 422, exe.text);
    assert.match(exe.body ? (exe.body as unknown as { message: string }).message : '', /not allowed/);
    const disguised = await upload(issueAssets(issue1), PNG, 'image.bin', alice.token);
    assert.equal(disguised.status, 422, 'neither .bin nor image/png is in the default list');
    const renamed = await upload(issueAssets(issue1), PNG, 'image.bin', alice.token, '?name=image.png');
    assert.equal(renamed.status, 201, renamed.text);
    assert.equal(renamed.body.name, 'image.png');
    const tooBig = await upload(issueAssets(issue1), Buffer.alloc(2 * MiB + 1, 65), 'big.txt', alice.token);
    assert.equal(tooBig.status, 413, tooBig.text);
    const raw = await fetch(`${s.url}/api/v1${issueAssets(issue1)}?name=raw.txt`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}`, 'content-type': 'application/octet-stream' },
      body: 'raw',
    });
    assert.equal(raw.status, 400, 'issue attachments are multipart only');
    const garbage = await fetch(`${s.url}/api/v1${issueAssets(issue1)}`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}`, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="attachment"; filename="a.txt"\r\n\r\nunterminated',
    });
    assert.equal(garbage.status, 400, await garbage.text());
    assert.equal((await usage(alice.token)).issues, before.issues + PNG.length);
    const rename = await s.api('PATCH', `${issueAssets(issue1)}/${renamed.body.id}`, {
      token: alice.token,
      body: { name: 'image.exe' },
    });
    assert.equal(rename.status, 422);
  });

  it('edits and deletes, giving the usage back', async () => {
    const r = await upload(issueAssets(issue1), Buffer.alloc(3000, 9), 'del.txt', dave.token);
    const before = await usage(alice.token);
    const edit = await s.api<AttachmentJson>('PATCH', `${issueAssets(issue1)}/${r.body.id}`, {
      token: dave.token,
      body: { name: 'renamed.txt' },
    });
    assert.equal(edit.status, 201, edit.text);
    assert.equal(edit.body.name, 'renamed.txt');
    assert.equal(
      (await s.api('DELETE', `${issueAssets(issue1)}/${r.body.id}`, { token: dave.token })).status,
      204,
    );
    assert.equal((await usage(alice.token)).issues, before.issues - 3000);
    assert.equal((await download(r.body.browser_download_url)).status, 404);
    assert.equal((await s.api('GET', `${issueAssets(issue1)}/${r.body.id}`)).status, 404);
  });

  it('hides private repositories from outsiders (404) and lets readers download', async () => {
    const r = await upload(
      `/repos/alice/secret/issues/${secretIssue}/assets`,
      Buffer.from('secret!'),
      's.txt',
      alice.token,
    );
    assert.equal(r.status, 201, r.text);
    for (const token of [carol.token, undefined]) {
      const opts = token ? { token } : {};
      assert.equal(
        (await s.api('GET', `/repos/alice/secret/issues/${secretIssue}/assets`, opts)).status,
        404,
      );
      assert.equal(
        (await s.api('GET', `/repos/alice/secret/issues/${secretIssue}/assets/${r.body.id}`, opts)).status,
        404,
      );
      assert.equal((await download(r.body.browser_download_url, token)).status, 404);
    }
    const up = await upload(
      `/repos/alice/secret/issues/${secretIssue}/assets`,
      Buffer.from('x'),
      'x.txt',
      carol.token,
    );
    assert.equal(up.status, 404);
    const asReader = await download(r.body.browser_download_url, bob.token);
    assert.equal(asReader.status, 200);
    assert.equal(asReader.bytes.toString(), 'secret!');
    assert.equal(
      (await upload(`/repos/alice/secret/issues/${secretIssue}/assets`, Buffer.from('x'), 'x.txt', bob.token))
        .status,
      403,
    );
  });

  it('lists them in /user/quota/attachments with links to their issue or comment', async () => {
    const r = await s.api<QuotaAttachmentJson[]>('GET', '/user/quota/attachments?limit=50', {
      token: alice.token,
    });
    assert.equal(r.status, 200, r.text);
    const api = `${s.url}/api/v1/repos/alice/proj`;
    const html = `${s.url}/alice/proj`;
    const onIssue = r.body.find((i) => i.name === 'trace.log');
    assert.ok(onIssue, r.text);
    assert.deepEqual(onIssue.contained_in, {
      api_url: `${api}/issues/${issue1}`,
      html_url: `${html}/issues/${issue1}`,
    });
    assert.match(onIssue.api_url, new RegExp(`^${api}/issues/${issue1}/assets/\\d+$`));
    const onComment = r.body.find((i) => i.name === 'bob.txt');
    assert.ok(onComment);
    assert.deepEqual(onComment.contained_in, {
      api_url: `${api}/issues/comments/${bobComment}`,
      html_url: `${html}/issues/${issue1}#issuecomment-${bobComment}`,
    });
    const byCarol = await s.api<QuotaAttachmentJson[]>('GET', '/user/quota/attachments', {
      token: carol.token,
    });
    assert.deepEqual(byCarol.body, [], "carol's upload counts for alice");
  });

  it('gives the usage back when a comment or an issue is deleted', async () => {
    const before = await usage(alice.token);
    const list = await s.api<AttachmentJson[]>('GET', commentAssets(bobComment));
    const commentBytes = list.body.reduce((n, a) => n + a.size, 0);
    assert.ok(commentBytes > 0);
    const del = await s.api('DELETE', `/repos/alice/proj/issues/comments/${bobComment}`, {
      token: alice.token,
    });
    assert.equal(del.status, 204, del.text);
    assert.equal((await usage(alice.token)).issues, before.issues - commentBytes);
    for (const a of list.body) assert.equal((await download(a.browser_download_url)).status, 404);

    const own = await s.api<AttachmentJson[]>('GET', issueAssets(issue1));
    const issueBytes = own.body.reduce((n, a) => n + a.size, 0);
    const gone = await s.api('DELETE', `/repos/alice/proj/issues/${issue1}`, { token: alice.token });
    assert.equal(gone.status, 204, gone.text);
    assert.equal((await usage(alice.token)).issues, before.issues - commentBytes - issueBytes);
    const drift = await s.ctx.quota.recalculate();
    assert.deepEqual(
      drift.filter((d) => d.subject.startsWith('size:assets:attachments')),
      [],
    );
  });
});
