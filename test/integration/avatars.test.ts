// Avatar uploads: POST/DELETE /user/avatar, /orgs/{org}/avatar (owners) and
// /repos/{owner}/{repo}/avatar (administrators; hidden repositories 404). Each of PNG, JPEG, GIF
// and WebP is stored and served at `avatar_url` byte for byte with its type; deleting goes back to
// the identicon (a repository to no avatar); bad base64, not an image, too large and too wide fail
// naming `image`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startServer, type TestServer } from '../helpers/server.js';

/** Real 16x16 pictures (Python's test images). */
const IMAGES = {
  png: [
    'image/png',
    'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAAIGNIUk0AAHomAACAhAAA+gAAAIDoAAB1MAAA6mAAADqYAAAXcJy6UTwAAAHFUExURQAAAE6NwEqGujxxnjdolgAAAAAAAAAAAAAAAAAAAE6PxEyKv0iFtkN9rT10oTlsljZmkAAAAAAAAFKRxv3dSvnVPgAAADJghwAAAP3VNgAAADVokgAAAOzORQAAADZpkxsxRQAAAAAAAOLDRf3ZQQAAAEaBsjZnkQAAAPLhbv3pav3LG0N9rhwyS/Xjb/PBGkB1oz1zogAAAMKaEgAAAAAAAAAAAAAAAAAAAOjHPevFNOvCKuu+Ieu7GMabEgAAAAAAAAAAAAAAAAAAAAAAAAAAAP3eTgAAAAAAAAAAAAAAAPHQP/rTOf3SL/rHGcCXEgAAAAAAAAAAAAAAAAAAAAAAAEiDtER+rUB4p0yKvP///0V/r0F5qD50ojpvmzZplEmFt0aAsUJ7qj51oztwnTdqljhsl0+NwUuIu0R9rUB4pj1zoDltmf/iVVCPw0yJvEiEtT10of/eS//aQU2LvkaAsDtwnP/aQv/WN//TLUqHuUeBskN8qz92pf/XOP/PI//mYf/jV//fTf/bQv/TLv/PJP/rbP/nYf/bQ//XOf/MHDpwnP/nYv/jWP/fTv/TL//bRP/XOv/TMP/QJf/YOv/UMP/QJpJJAAIAAABWdFJOUwCv7feSCwMoQRV+oKGjp6qqSBi994IKtkPtJPdPiD22XExHa/dG96pOpvf311uzwm/3S3o0CCE8NaqpqampeSACCRMSLB73QBwFAUzM99h7Ox1CRTgf+DIQcQAAAAFiS0dEWgO7paIAAAD1SURBVBjTY2AAAkamsPAIZhZWNgYoiIyKjomNi2dnhQkkJCYlp6TGc3CCeVzcPLx8/AJp8fGCQiC+cHpGWGZWdk48UCBXRFSMIS+/IDqmMA7IF5coKpaUYihJKE1KLkuNlxaXkS2vqJRjqKquqZVXUBRU4lBWqausV2VQy8xS19DUamhsaq5radVWYtCJKdTVa2tvbOrobGnt0udgMDDsNmrr6e3r6Oxv7eoyNmEwNTO3APItraxtbG3tOOwZHBydnHv7JkycNLmLw8LFFeJ6twlTpk6L0nb3cPT0Agt4+/hO6/LzD3CGec400CJIKTgk1BTIBgBAYkJ/yC2b5QAAACV0RVh0ZGF0ZTpjcmVhdGUAMjAxNC0wMS0yNlQyMDo1OTozNyswMjowMPuaB3cAAAAldEVYdGRhdGU6bW9kaWZ5ADIwMTQtMDEtMjZUMjA6NTk6MDArMDI6MDDB74amAAAAAElFTkSuQmCC',
  ],
  jpeg: [
    'image/jpeg',
    '/9j/4AAQSkZJRgABAQEAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/2wBDAQMDAwQDBAgEBAgQCwkLEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBD/wAARCAAQABADASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAABwQF/8QAJBAAAQQBBAICAwAAAAAAAAAAAQIDBAYFBwgSExEiABQJMTL/xAAVAQEBAAAAAAAAAAAAAAAAAAAABv/EACMRAAECBQMFAAAAAAAAAAAAAAECEQMEBQYhABIxFRZhgeH/2gAMAwEAAhEDEQA/ABSm0mobc8HmExLUlRzzEWPkJWW+ulrsaUVAseUgslSlH9LKuPryIKuWPZdskzXmm3fX5m2nF4GlVxx/HOpx4ks51+MiU/Iaad7UcUo4tILoS4kqcWkezS0hO/HvuRp0rO6hWnWO1UisZVuFi4GFeyEpmGepa5S5SWVPuciFKRFLgSrwetnyPIB+Vb4N9mKhQMzo5po9XLdDs9d6ZVix2VEhiL9kuNPxw2gEKcDQ/rs8AuA8VAe0vdl7VOYn+27flGAUgmITjbhSmCg3BYlyeWDkMolvw4KOp1KM6iCNvngZHwetf//Z',
  ],
  gif: [
    'image/gif',
    'R0lGODlhEAAQAPU/AOu7GOu+IfPBGvrHGf3LG//MHOvCKv/PI//PJP/QJf/TLevFNOjHPf/TMP/UMP3VNvrTOf/XOfnVPv/YOuzORf/aQf/bRP/eS//fTv/iVf/jWP/nYvLhbvXjb/3pav/rbDJghzZmkDZnkTZpkzdoljdqljlsljpvmzpwnDtwnDxxnj1zoj50oj92pUB4pkJ7qkN8q0N9rUV/r0aAsUeBskiDtEiFtkqGukyJvEyKvEyKv0+NwVCPw1KRxv///wAAACH/C0ltYWdlTWFnaWNrB2dhbW1hPTAAIfkEBQAAPwAsAAAAABAAEAAABpvAn/C3u81iLRVpyBTmfLMXC1VqMm1RVqo0sv50thjLFDKVqszeDleTuVSn0fmXuUh+PB1N9oKP/iA/FxUPXzY0UipnIoEUhAo/hzAuXU0VEQoHP0cuIj8cHhsZGBUTCggEPzFSPx0fGxoYFhENCAUCQispP6+xpacFBVawGAwLBgEAAF6xsw0Jwl4/shEOCT6p0j8QzwUD2uBDQQA7',
  ],
  webp: [
    'image/webp',
    'UklGRqgBAABXRUJQVlA4WAoAAAAQAAAADwAADwAAQUxQSMMAAAABJ6KokSTleucYX+ffKpmImP90cY3gJjDi4Yt3MsjBEVyDKzDosHgVjnhRNcEIDAJPkqBqsFUZHNa2bUYvTsZ2PLbtd/uvKa4hov9J0f2PkPe6REkkGzolkTTzFG0Ox9PlFiD0CxS+kOGDtxoynjaCfx0pfk52CPuInrOR75lzRugygtv4zEiy90UwfSD9NheMITJWLaXWayO8XeOlWRXVnIGk2W6WdYoYMQ+KqixQNPowgt+6a1BSKbUtz+lUFAoBAAAAVlA4IL4AAACQAgCdASoQABAAAwA0JbACdDBPCIUMfAMdCCz96AD+/XSg/QKbH4r3Q3ycN/bSDK/T/zVo4u6nvclvG/SqxWOuup+XhN9BojvaW+Tv+MvxvX/hr/o/5Qns9LtmX/+qKdl/yWznhuasl7nkxvSTI4xf3Y85VSB/lU/8Ofj/b9JrA+ifvIOYZm2x1RP/dhfmsf5diuSfR7+z+r/+HR3zEo/+XM/B+vkYw73Pzx+ROaAB/ZoBSzEs3rzZe6qsAAAA',
  ],
} as const;

/** A PNG header claiming `width` x `height` pixels. */
function pngOf(width: number, height: number): string {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  b[24] = 8;
  b[25] = 6;
  return b.toString('base64');
}

describe('avatars', () => {
  let s: TestServer;
  let alice: { name: string; token: string; id: number };
  let bob: { name: string; token: string; id: number };

  const fetchUrl = async (url: string) => {
    const res = await fetch(url);
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  };
  const me = async (token: string) =>
    (await s.api<{ avatar_url: string }>('GET', '/user', { token })).body.avatar_url;

  before(async () => {
    s = await startServer({
      ANVIL__PICTURE__AVATAR_MAX_FILE_SIZE: '4096',
      ANVIL__PICTURE__AVATAR_MAX_WIDTH: '1000',
    });
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'pub' } });
    await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'secret', private: true } });
  });
  after(() => s.close());

  it('stores each format and serves exactly its bytes with its type at avatar_url', async () => {
    assert.equal(await me(alice.token), `${s.url}/avatars/${alice.id}`);
    for (const [format, [type, image]] of Object.entries(IMAGES)) {
      const r = await s.api('POST', '/user/avatar', { token: alice.token, body: { image } });
      assert.equal(r.status, 204, `${format}: ${r.text}`);
      const url = await me(alice.token);
      assert.match(url, new RegExp(`^${s.url}/avatars/[0-9a-f]{64}$`), format);
      const got = await fetchUrl(url);
      assert.equal(got.status, 200, format);
      assert.equal(got.headers.get('content-type'), type, format);
      assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
      assert.match(got.headers.get('cache-control') ?? '', /immutable/);
      assert.deepEqual(got.body, Buffer.from(image, 'base64'), format);
      // Other users see it too.
      const other = await s.api<{ avatar_url: string }>('GET', '/users/alice', { token: bob.token });
      assert.equal(other.body.avatar_url, url);
    }
  });

  it('deleting goes back to the identicon', async () => {
    const r = await s.api('DELETE', '/user/avatar', { token: alice.token });
    assert.equal(r.status, 204, r.text);
    const url = await me(alice.token);
    assert.equal(url, `${s.url}/avatars/${alice.id}`);
    const got = await fetchUrl(url);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'image/svg+xml');
    assert.equal((await s.api('DELETE', '/user/avatar', { token: alice.token })).status, 204);
  });

  it('refuses bad base64, what is not an image, too large and too wide, naming image', async () => {
    const cases: Array<[string, string, number]> = [
      ['bad base64', 'not base64!!', 422],
      ['empty', '', 422],
      ['not an image', Buffer.from('hello, this is text, not a picture').toString('base64'), 422],
      ['too wide', pngOf(1001, 10), 422],
      [
        'too large',
        Buffer.concat([Buffer.from(IMAGES.png[1], 'base64'), Buffer.alloc(5000)]).toString('base64'),
        413,
      ],
    ];
    for (const [what, image, status] of cases) {
      const r = await s.api<{ message: string }>('POST', '/user/avatar', {
        token: alice.token,
        body: { image },
      });
      assert.equal(r.status, status, `${what}: ${r.text}`);
      assert.match(r.body.message, /\[Image\]/, what);
    }
    const r = await s.api('POST', '/user/avatar', { token: alice.token, body: {} });
    assert.equal(r.status, 422, r.text);
    assert.match(r.text, /image/i);
    assert.equal(await me(alice.token), `${s.url}/avatars/${alice.id}`);
    // Neither a token-less caller.
    assert.equal((await s.api('POST', '/user/avatar', { body: { image: IMAGES.png[1] } })).status, 401);
  });

  it('organization avatars: owners only', async () => {
    const body = { image: IMAGES.gif[1] };
    assert.equal((await s.api('POST', '/orgs/acme/avatar', { token: bob.token, body })).status, 403);
    assert.equal((await s.api('DELETE', '/orgs/acme/avatar', { token: bob.token })).status, 403);
    assert.equal((await s.api('POST', '/orgs/nope/avatar', { token: alice.token, body })).status, 404);
    const r = await s.api('POST', '/orgs/acme/avatar', { token: alice.token, body });
    assert.equal(r.status, 204, r.text);
    const org = await s.api<{ avatar_url: string; id: number }>('GET', '/orgs/acme', { token: bob.token });
    const got = await fetchUrl(org.body.avatar_url);
    assert.equal(got.headers.get('content-type'), 'image/gif');
    assert.deepEqual(got.body, Buffer.from(IMAGES.gif[1], 'base64'));
    assert.equal((await s.api('DELETE', '/orgs/acme/avatar', { token: alice.token })).status, 204);
    const after = await s.api<{ avatar_url: string }>('GET', '/orgs/acme', { token: bob.token });
    assert.equal(after.body.avatar_url, `${s.url}/avatars/${org.body.id}`);
  });

  it('repository avatars: administrators only, hidden repositories 404', async () => {
    const body = { image: IMAGES.webp[1] };
    const repoUrl = async () =>
      (await s.api<{ avatar_url: string }>('GET', '/repos/alice/pub', { token: bob.token })).body.avatar_url;
    assert.equal(await repoUrl(), '');
    assert.equal((await s.api('POST', '/repos/alice/pub/avatar', { token: bob.token, body })).status, 403);
    assert.equal((await s.api('DELETE', '/repos/alice/pub/avatar', { token: bob.token })).status, 403);
    assert.equal((await s.api('POST', '/repos/alice/secret/avatar', { token: bob.token, body })).status, 404);
    assert.equal((await s.api('DELETE', '/repos/alice/secret/avatar', { token: bob.token })).status, 404);
    let r = await s.api('POST', '/repos/alice/pub/avatar', { token: alice.token, body });
    assert.equal(r.status, 204, r.text);
    const url = await repoUrl();
    assert.match(url, /\/repo-avatars\/[0-9a-f]{64}$/);
    const got = await fetchUrl(url);
    assert.equal(got.headers.get('content-type'), 'image/webp');
    assert.deepEqual(got.body, Buffer.from(IMAGES.webp[1], 'base64'));
    r = await s.api('POST', '/repos/alice/pub/avatar', { token: alice.token, body: { image: 'AAAA' } });
    assert.equal(r.status, 422, r.text);
    assert.equal((await s.api('DELETE', '/repos/alice/pub/avatar', { token: alice.token })).status, 204);
    assert.equal(await repoUrl(), '');
  });

  it('the sweep removes avatars nothing shows any more and keeps shown ones', async () => {
    const png = IMAGES.png[1];
    const jpeg = IMAGES.jpeg[1];
    // bob and the repository share one picture; alice's is replaced.
    for (const [path, image, token] of [
      ['/user/avatar', png, bob.token],
      ['/repos/alice/pub/avatar', png, alice.token],
      ['/user/avatar', jpeg, alice.token],
      ['/user/avatar', png, alice.token],
    ] as const) {
      assert.equal((await s.api('POST', path, { token, body: { image } })).status, 204);
    }
    assert.equal((await s.api('DELETE', '/user/avatar', { token: bob.token })).status, 204);
    const report = await s.ctx.sweeper.sweep({ graceMs: 0, now: Date.now() + 1000 });
    const removed = report.orphans.filter((o) => o.store === 'avatars').map((o) => o.key);
    const hash = (b64: string) =>
      crypto.createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex');
    assert.ok(removed.includes(hash(jpeg)), JSON.stringify(removed));
    assert.ok(!removed.includes(hash(png)));
    const url = await me(alice.token);
    assert.equal((await fetchUrl(url)).status, 200);
    assert.equal((await fetchUrl(`${s.url}/avatars/${hash(jpeg)}`)).status, 404);
    await s.api('DELETE', '/repos/alice/pub/avatar', { token: alice.token });
    await s.api('DELETE', '/user/avatar', { token: alice.token });
  });

  it('unknown avatars are 404', async () => {
    assert.equal((await fetchUrl(`${s.url}/avatars/${'0'.repeat(64)}`)).status, 404);
    assert.equal((await fetchUrl(`${s.url}/repo-avatars/${'0'.repeat(64)}`)).status, 404);
    assert.equal((await fetchUrl(`${s.url}/avatars/..%2F..%2Fapp.ini`)).status, 404);
    assert.equal((await fetchUrl(`${s.url}/repo-avatars/12`)).status, 404);
  });
});
