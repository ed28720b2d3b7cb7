// The chat and build webhook types (discord, dingtalk, telegram, msteams, feishu, wechatwork,
// packagist, sourcehut_builds): made through the API with Forgejo's config keys and through the
// settings forms with Forgejo's field names, test deliveries to a local receiver in each type's
// shape (Discord embeds, a Teams MessageCard, Telegram HTML, a SourceHut build of the repository's
// manifest with the access token as a bearer token and no Forgejo headers), bad input refused
// beside the field, and the admin hooks list's menus and delete button.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/git.js';
import { WebClient } from '../helpers/web.js';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Hook {
  id: number;
  type: string;
  url: string;
  config: Record<string, string>;
  metadata: J | null;
  content_type: string;
  authorization_header: string;
}

const NEW_TYPES = [
  'discord',
  'dingtalk',
  'telegram',
  'msteams',
  'feishu',
  'wechatwork',
  'packagist',
  'sourcehut_builds',
];

describe('webhook types', () => {
  let s: TestServer;
  let receiver: http.Server;
  let base = '';
  const received: Received[] = [];
  let owner: { name: string; password: string; token: string };
  let headSha = '';

  const at = async (path: string, n = 1): Promise<Received[]> => {
    const ok = await waitFor(async () => received.filter((r) => r.path === path).length >= n, 15_000, 25);
    assert.ok(ok, `a delivery at ${path}`);
    return received.filter((r) => r.path === path);
  };
  const signedIn = async (u: { name: string; password: string }) => {
    const c = new WebClient(s.url);
    assert.equal((await c.signIn(u.name, u.password)).status, 303);
    return c;
  };

  before(async () => {
    s = await startServer({ ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback' });
    s.ctx.webhooks.start();
    receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({
          path: (req.url ?? '').split('?')[0]!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    owner = await s.createUser('typist');
    const repo = await s.api('POST', '/user/repos', {
      token: owner.token,
      body: { name: 'chat', auto_init: true },
    });
    assert.equal(repo.status, 201, repo.text);
    const manifest = 'image: alpine/edge\ntasks:\n  - hello: echo hello\n';
    const file = await s.api<{ commit: { sha: string } }>('POST', '/repos/typist/chat/contents/.build.yml', {
      token: owner.token,
      body: { content: Buffer.from(manifest).toString('base64'), message: 'Add the build manifest' },
    });
    assert.equal(file.status, 201, file.text);
    headSha = file.body.commit.sha;
  });
  after(async () => {
    await new Promise((r) => receiver.close(r));
    await s.close();
  });

  it('makes a hook of each type through the API and sends test deliveries in its shape', async () => {
    const config: Record<string, Record<string, string>> = {
      discord: { username: 'forge-bot', icon_url: 'https://icons.test/bot.png' },
      dingtalk: {},
      telegram: { bot_token: '123:abc', chat_id: '-100', thread_id: '' },
      msteams: {},
      feishu: {},
      wechatwork: {},
      packagist: { username: 'pkg', api_token: 'tok', package_url: 'https://packagist.org/packages/a/b' },
      sourcehut_builds: {
        manifest_path: '.build.yml',
        visibility: 'PUBLIC',
        secrets: 'true',
        access_token: 'srht',
      },
    };
    const hooks = new Map<string, Hook>();
    for (const type of NEW_TYPES) {
      const r = await s.api<Hook>('POST', '/repos/typist/chat/hooks', {
        token: owner.token,
        body: {
          type,
          active: true,
          config: { url: `${base}/${type}`, content_type: 'json', ...config[type] },
        },
      });
      assert.equal(r.status, 201, `${type}: ${r.text}`);
      assert.equal(r.body.type, type);
      assert.equal(r.body.url, `${base}/${type}`);
      assert.equal(r.body.content_type, 'json');
      hooks.set(type, r.body);
    }
    assert.deepEqual(hooks.get('discord')!.metadata, {
      username: 'forge-bot',
      icon_url: 'https://icons.test/bot.png',
    });
    assert.equal(hooks.get('discord')!.config['username'], 'forge-bot');
    assert.deepEqual(hooks.get('telegram')!.metadata, {
      bot_token: '123:abc',
      chat_id: '-100',
      thread_id: '',
    });
    assert.equal(hooks.get('msteams')!.metadata, null);
    assert.deepEqual(hooks.get('sourcehut_builds')!.metadata, {
      manifest_path: '.build.yml',
      visibility: 'PUBLIC',
      secrets: true,
    });
    assert.equal(hooks.get('sourcehut_builds')!.authorization_header, 'Bearer srht');

    for (const h of hooks.values()) {
      const t = await s.api('POST', `/repos/typist/chat/hooks/${h.id}/tests`, { token: owner.token });
      assert.equal(t.status, 204, t.text);
    }
    const one = async (type: string) => {
      const [r] = await at(`/${type}`);
      assert.equal(r!.headers['content-type'], 'application/json');
      return { r: r!, b: JSON.parse(r!.body) as J };
    };

    const discord = await one('discord');
    assert.equal(discord.b['username'], 'forge-bot');
    assert.equal(discord.b['avatar_url'], 'https://icons.test/bot.png');
    assert.equal(discord.b['embeds'][0].title, '[typist/chat:main] 1 new commit');
    assert.equal(discord.r.headers['x-forgejo-event'], 'push');

    const teams = await one('msteams');
    assert.equal(teams.b['@type'], 'MessageCard');
    assert.equal(teams.b['sections'][0].facts[0].value, 'typist/chat');

    const telegram = await one('telegram');
    assert.equal(telegram.b['parse_mode'], 'HTML');
    assert.match(
      telegram.b['text'],
      /^\[typist\/chat:main\] 1 new commit\n\[<a href="[^"]+">[0-9a-f]{7}<\/a>\] Add the build manifest/,
    );

    assert.equal((await one('dingtalk')).b['msgtype'], 'actionCard');
    assert.equal((await one('feishu')).b['msg_type'], 'text');
    assert.equal((await one('wechatwork')).b['msgtype'], 'markdown');

    const packagist = await one('packagist');
    assert.deepEqual(packagist.b, { repository: { url: 'https://packagist.org/packages/a/b' } });
    assert.equal(packagist.r.headers['x-forgejo-event'], undefined, 'no Forgejo headers');

    const build = await one('sourcehut_builds');
    assert.equal(build.r.headers['authorization'], 'Bearer srht');
    assert.equal(build.r.headers['x-forgejo-event'], undefined);
    assert.match(build.b['query'], /submit\(/);
    const v = build.b['variables'];
    assert.deepEqual(v.tags, ['typist/chat', 'branch/main', '.build.yml']);
    assert.equal(v.visibility, 'PUBLIC');
    assert.equal(v.secrets, true);
    assert.match(v.manifest, new RegExp(`/typist/chat\\.git#${headSha}`));
    assert.match(v.manifest, /GIT_REF: refs\/heads\/main/);

    // The history records the bearer token masked (once the delivery is recorded: the receiver
    // can see the request before the server has written down the response).
    type Delivery = { delivered: boolean; request: { headers: Record<string, string> } };
    let d: Delivery[] = [];
    const recorded = await waitFor(async () => {
      d = (
        await s.api<Delivery[]>(
          'GET',
          `/repos/typist/chat/hooks/${hooks.get('sourcehut_builds')!.id}/deliveries`,
          { token: owner.token },
        )
      ).body;
      return d[0]?.delivered === true;
    });
    assert.ok(recorded, JSON.stringify(d));
    assert.equal(d[0]!.request.headers['Authorization'], 'Bearer ******');
  });

  it('makes the telegram and packagist URLs from their credentials and refuses bad settings', async () => {
    const tg = await s.api<Hook>('POST', '/repos/typist/chat/hooks', {
      token: owner.token,
      body: { type: 'telegram', config: { bot_token: '42:xyz', chat_id: '@room', thread_id: '9' } },
    });
    assert.equal(tg.status, 201, tg.text);
    assert.equal(
      tg.body.url,
      'https://api.telegram.org/bot42:xyz/sendMessage?chat_id=%40room&message_thread_id=9',
    );
    const edited = await s.api<Hook>('PATCH', `/repos/typist/chat/hooks/${tg.body.id}`, {
      token: owner.token,
      body: { config: { chat_id: '7' } },
    });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(
      edited.body.url,
      'https://api.telegram.org/bot42:xyz/sendMessage?chat_id=7&message_thread_id=9',
    );
    const pk = await s.api<Hook>('POST', '/repos/typist/chat/hooks', {
      token: owner.token,
      body: {
        type: 'packagist',
        config: { username: 'me', api_token: 's3', package_url: 'https://packagist.org/packages/x/y' },
      },
    });
    assert.equal(pk.status, 201, pk.text);
    assert.equal(pk.body.url, 'https://packagist.org/api/update-package?username=me&apiToken=s3');

    for (const [body, message] of [
      [{ type: 'telegram', config: { chat_id: '1' } }, /Missing config option: bot_token/],
      [{ type: 'discord', config: { content_type: 'json' } }, /Missing config option: url/],
      [{ type: 'discord', config: { url: `${base}/x`, icon_url: 'nope' } }, /Invalid icon_url/],
      [
        { type: 'packagist', config: { username: 'u', api_token: 't', package_url: 'x' } },
        /Invalid package_url/,
      ],
      [{ type: 'sourcehut_builds', config: { url: `${base}/x`, visibility: 'open' } }, /Invalid visibility/],
      [
        { type: 'sourcehut_builds', config: { url: `${base}/x`, manifest_path: '../x' } },
        /Invalid manifest_path/,
      ],
    ] as const) {
      const r = await s.api<{ message: string }>('POST', '/repos/typist/chat/hooks', {
        token: owner.token,
        body,
      });
      assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.message, message);
    }
  });

  it('offers every type on the settings pages and makes each through its form', async () => {
    const c = await signedIn(owner);
    const list = await c.get('/typist/chat/settings/hooks');
    assert.equal(list.status, 200);
    for (const type of NEW_TYPES) {
      assert.match(list.text, new RegExp(`href="/typist/chat/settings/hooks/${type}/new"`));
    }
    const common = { events: 'push_only', branch_filter: '', active: 'on' };
    const forms: Record<string, Record<string, string>> = {
      discord: { payload_url: `${base}/form-discord`, username: 'bot', icon_url: '' },
      dingtalk: { payload_url: `${base}/form-dingtalk` },
      telegram: { bot_token: '1:t', chat_id: '2', thread_id: '' },
      msteams: { payload_url: `${base}/form-msteams` },
      feishu: { payload_url: `${base}/form-feishu` },
      wechatwork: { payload_url: `${base}/form-wechatwork` },
      packagist: { username: 'me', api_token: 'tk', package_url: 'https://packagist.org/packages/q/r' },
      sourcehut_builds: {
        payload_url: `${base}/form-builds`,
        manifest_path: '.build.yml',
        visibility: 'UNLISTED',
        access_token: 'tok',
      },
    };
    const made = new Map<string, number>();
    for (const type of NEW_TYPES) {
      const page = await c.get(`/typist/chat/settings/hooks/${type}/new`);
      assert.equal(page.status, 200, type);
      for (const name of Object.keys(forms[type]!))
        assert.match(page.text, new RegExp(`name="${name}"`), `${type} ${name}`);
      const r = await c.post(`/typist/chat/settings/hooks/${type}/new`, { ...common, ...forms[type] });
      assert.equal(r.status, 303, `${type}: ${r.text.slice(0, 400)}`);
      const id = Number(/\/settings\/hooks\/(\d+)$/.exec(r.location!)![1]);
      made.set(type, id);
      const h = await s.api<Hook>('GET', `/repos/typist/chat/hooks/${id}`, { token: owner.token });
      assert.equal(h.body.type, type);
    }
    const hook = (type: string) =>
      s.api<Hook>('GET', `/repos/typist/chat/hooks/${made.get(type)}`, { token: owner.token });
    assert.equal(
      (await hook('telegram')).body.url,
      'https://api.telegram.org/bot1:t/sendMessage?chat_id=2&message_thread_id=',
    );
    assert.deepEqual((await hook('packagist')).body.metadata, {
      username: 'me',
      api_token: 'tk',
      package_url: 'https://packagist.org/packages/q/r',
    });
    const builds = (await hook('sourcehut_builds')).body;
    assert.deepEqual(builds.metadata, {
      manifest_path: '.build.yml',
      visibility: 'UNLISTED',
      secrets: false,
    });
    assert.equal(builds.authorization_header, 'Bearer tok');

    // The edit page shows the settings; changing the chat id makes a new URL.
    const edit = await c.get(`/typist/chat/settings/hooks/${made.get('telegram')}`);
    assert.match(edit.text, /name="bot_token"[^>]*value="1:t"|value="1:t"[^>]*name="bot_token"/);
    const saved = await c.post(`/typist/chat/settings/hooks/${made.get('telegram')}`, {
      ...common,
      ...forms['telegram'],
      chat_id: '3',
    });
    assert.equal(saved.status, 303, saved.text.slice(0, 400));
    assert.match((await hook('telegram')).body.url, /chat_id=3&/);

    // The test delivery button of a form-made hook.
    await c.get(`/typist/chat/settings/hooks/${made.get('discord')}`);
    const test = await c.post(`/typist/chat/settings/hooks/${made.get('discord')}/test`, {});
    assert.equal(test.status, 303);
    const [got] = await at('/form-discord');
    assert.equal((JSON.parse(got!.body) as J)['embeds'][0].author.name, 'typist');
  });

  it('refuses bad form input beside the field and keeps what was typed', async () => {
    const c = await signedIn(owner);
    const cases: Array<[string, Record<string, string>, string]> = [
      ['telegram', { bot_token: '', chat_id: '5' }, 'bot_token'],
      ['discord', { payload_url: `${base}/d`, username: '' }, 'username'],
      ['packagist', { username: 'u', api_token: 't', package_url: 'not a url' }, 'package_url'],
      [
        'sourcehut_builds',
        { payload_url: `${base}/b`, manifest_path: '/abs', visibility: 'PUBLIC', access_token: 't' },
        'manifest_path',
      ],
      [
        'sourcehut_builds',
        { payload_url: `${base}/b`, manifest_path: '.build.yml', visibility: 'PUBLIC' },
        'access_token',
      ],
      ['msteams', { payload_url: 'ftp://x' }, 'payload_url'],
    ];
    const before = await s.api<unknown[]>('GET', '/repos/typist/chat/hooks', { token: owner.token });
    for (const [type, form, field] of cases) {
      await c.get(`/typist/chat/settings/hooks/${type}/new`);
      const r = await c.post(`/typist/chat/settings/hooks/${type}/new`, { events: 'push_only', ...form });
      assert.equal(r.status, 422, `${type} ${field}`);
      assert.match(r.text, new RegExp(`id="f-${field}-error"`), `${type}: the error beside ${field}`);
    }
    const kept = await c.post('/typist/chat/settings/hooks/telegram/new', {
      events: 'push_only',
      chat_id: 'kept-id',
    });
    assert.match(kept.text, /value="kept-id"/);
    const after = await s.api<unknown[]>('GET', '/repos/typist/chat/hooks', { token: owner.token });
    assert.equal(after.body.length, before.body.length, 'nothing was made');
  });

  it('lists the site hooks with an add menu of every type and a delete button', async () => {
    const made = await s.api<Hook>('POST', '/admin/hooks', {
      token: s.admin.token,
      body: { type: 'msteams', config: { url: `${base}/site`, is_system_webhook: 'true' } },
    });
    assert.equal(made.status, 201, made.text);
    const admin = await signedIn(s.admin);
    const page = await admin.get('/admin/hooks');
    assert.equal(page.status, 200);
    for (const kind of ['default', 'system']) {
      for (const type of NEW_TYPES)
        assert.match(page.text, new RegExp(`href="/admin/${kind}-hooks/${type}/new"`));
    }
    assert.match(
      page.text,
      new RegExp(`action="/admin/system-hooks/${made.body.id}/delete"[^>]*data-confirm=`),
    );
    assert.equal((await admin.get('/admin/system-hooks/sourcehut_builds/new')).status, 200);
    const gone = await admin.post(`/admin/system-hooks/${made.body.id}/delete`, {});
    assert.equal(gone.status, 303);
    assert.equal(gone.location, '/admin/hooks');
    const left = await s.api<Hook[]>('GET', '/admin/hooks', { token: s.admin.token });
    assert.ok(!left.body.some((h) => h.id === made.body.id));
    const other = await signedIn(owner);
    await other.get('/');
    assert.equal((await other.post(`/admin/system-hooks/${made.body.id}/delete`, {})).status, 403);
  });
});
