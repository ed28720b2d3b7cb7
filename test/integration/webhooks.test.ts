// Webhooks over HTTP: repository, organization, user and system hooks (/repos/{o}/{r}/hooks,
// /orgs/{org}/hooks, /user/hooks, /admin/hooks) in Forgejo's shapes, permissions, and deliveries
// to a local receiver: signed (X-Forgejo-Signature checked with the secret), with Forgejo's
// headers and payloads for push and create/delete (from pushes made with the real git client),
// repository, fork, issues (commit_id "" when closed by hand, the commit when closed by one),
// issue_comment and release events; branch filters, inactive hooks, form bodies, retries with
// back-off for a failing receiver and the delivery history; and deliveries still pending when a
// server stops being made by the next server on the same data.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { freePort, startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';
import { createContext } from '../../src/app/context.js';
import { buildServer } from '../../src/app/server.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface HookJson {
  id: number;
  type: string;
  branch_filter: string;
  url: string;
  config: Record<string, string>;
  events: string[];
  authorization_header: string;
  content_type: string;
  metadata: unknown;
  active: boolean;
  updated_at: string;
  created_at: string;
}

interface DeliveryJson {
  id: number;
  uuid: string;
  event: string;
  event_type: string;
  delivered: boolean;
  success: boolean;
  status_code: number | null;
  attempts: number;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  request: { url: string; http_method: string; headers: Record<string, string>; body: string };
  response: { status: number; headers: Record<string, string>; body: string } | null;
}

interface Msg {
  message: string;
}

type Payload = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Received {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A local HTTP server that records what it receives; each path can be told which status to answer. */
class Receiver {
  readonly received: Received[] = [];
  readonly status = new Map<string, number>();
  private server: http.Server | undefined;
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const p = (req.url ?? '').split('?')[0]!;
        this.received.push({
          path: p,
          method: req.method ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        const status = this.status.get(p) ?? 200;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status === 200 ? 'ok' : `failure ${status}`);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  url(p: string): string {
    return `http://127.0.0.1:${this.port}${p}`;
  }

  at(p: string): Received[] {
    return this.received.filter((r) => r.path === p);
  }

  /** Waits until `p` has received `n` requests (matching `pred`); returns them. */
  async wait(
    p: string,
    n = 1,
    pred: (r: Received) => boolean = () => true,
    ms = 15_000,
  ): Promise<Received[]> {
    const ok = await waitFor(async () => this.at(p).filter(pred).length >= n, ms, 25);
    const got = this.at(p).filter(pred);
    assert.ok(ok, `expected ${n} deliveries at ${p}, got ${got.length}`);
    return got;
  }
}

const json = (r: Received): Payload => JSON.parse(r.body) as Payload;
const ofType = (t: string) => (r: Received) => r.headers['x-forgejo-event-type'] === t;
const hmac = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const HOOK_KEYS = [
  'active',
  'authorization_header',
  'branch_filter',
  'config',
  'content_type',
  'created_at',
  'events',
  'id',
  'metadata',
  'type',
  'updated_at',
  'url',
];

const SETTINGS = {
  ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
  ANVIL__WEBHOOK__RETRY_DELAY: '1s',
  ANVIL__WEBHOOK__MAX_ATTEMPTS: '3',
};

describe('webhooks', () => {
  let s: TestServer;
  let rx: Receiver;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let carol: User;
  let dave: User;

  const createHook = (base: string, body: Record<string, unknown>, token = alice.token) =>
    s.api<HookJson & Msg>('POST', `${base}/hooks`, { token, body });
  const hookOn = async (
    base: string,
    p: string,
    extra: Record<string, unknown> = {},
    token = alice.token,
  ) => {
    const r = await createHook(
      base,
      {
        type: 'forgejo',
        config: { url: rx.url(p), content_type: 'json', secret: 'sekrit' },
        active: true,
        ...extra,
      },
      token,
    );
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const clone = async (owner: string, repo: string, who: User) => {
    const dir = path.join(g.home, `${owner}-${repo}-${crypto.randomBytes(3).toString('hex')}`);
    await g.git(['clone', '--quiet', repoUrl(s.url, owner, repo, [who.name, who.password]), dir]);
    return dir;
  };

  before(async () => {
    rx = new Receiver();
    await rx.start();
    s = await startServer(SETTINGS);
    s.ctx.webhooks.start();
    g = new GitClient();
    [alice, bob, carol, dave] = (await Promise.all(
      ['alice', 'bob', 'carol', 'dave'].map((n) => s.createUser(n)),
    )) as [User, User, User, User];
    for (const [name, isPrivate] of [
      ['app', false],
      ['secret', true],
    ] as const) {
      const r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, auto_init: true, private: isPrivate },
      });
      assert.equal(r.status, 201, r.text);
    }
    const c = await s.api('PUT', '/repos/alice/app/collaborators/carol', {
      token: alice.token,
      body: { permission: 'write' },
    });
    assert.equal(c.status, 204, c.text);
    const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    assert.equal(org.status, 201, org.text);
    const team = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: {
        name: 'devs',
        permission: 'write',
        units: ['repo.code', 'repo.issues'],
        includes_all_repositories: true,
      },
    });
    assert.equal(team.status, 201, team.text);
    assert.equal(
      (await s.api('PUT', `/teams/${team.body.id}/members/dave`, { token: alice.token })).status,
      204,
    );
  });

  after(async () => {
    await s?.close();
    await rx?.stop();
    g?.cleanup();
  });

  describe('managing hooks', () => {
    let hook: HookJson;

    it('POST /repos/{owner}/{repo}/hooks creates a hook: 201 Hook, the secret never shown', async () => {
      const r = await createHook('/repos/alice/app', {
        type: 'forgejo',
        config: { url: rx.url('/crud'), content_type: 'json', secret: 'do-not-show' },
        authorization_header: 'Bearer abc',
      });
      assert.equal(r.status, 201, r.text);
      hook = r.body;
      assert.deepEqual(Object.keys(hook).sort(), HOOK_KEYS);
      assert.equal(hook.type, 'forgejo');
      assert.equal(hook.url, rx.url('/crud'));
      assert.equal(hook.config['url'], rx.url('/crud'));
      assert.equal(hook.config['content_type'], 'json');
      assert.equal(hook.content_type, 'json');
      assert.deepEqual(hook.events, ['push']);
      assert.equal(hook.active, false);
      assert.equal(hook.branch_filter, '');
      assert.equal(hook.authorization_header, 'Bearer abc');
      assert.equal(hook.metadata, null);
      assert.match(hook.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.doesNotMatch(r.text, /do-not-show/);
      const stored = await s.ctx.db
        .selectFrom('webhook')
        .select(['secret'])
        .where('id', '=', hook.id)
        .executeTakeFirstOrThrow();
      assert.doesNotMatch(stored.secret, /do-not-show/);
    });

    it('events: families, the event types a Hook lists, "*" for everything', async () => {
      const r = await createHook('/repos/alice/app', {
        type: 'gitea',
        config: { url: rx.url('/crud2'), content_type: 'form' },
        events: ['issues', 'Create', 'pull_request_review_approved'],
        branch_filter: '{main,release/*}',
        active: true,
      });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body.events, [
        'create',
        'issues',
        'issue_assign',
        'issue_label',
        'issue_milestone',
        'issue_comment',
        'pull_request_review_approved',
        'pull_request_review_rejected',
        'pull_request_review_comment',
      ]);
      assert.equal(r.body.branch_filter, '{main,release/*}');
      assert.equal(r.body.content_type, 'form');
      const all = await createHook('/repos/alice/app', {
        type: 'forgejo',
        config: { url: rx.url('/crud3'), content_type: 'json' },
        events: ['*'],
      });
      assert.equal(all.status, 201, all.text);
      assert.ok(all.body.events.includes('release') && all.body.events.includes('repository'));
      for (const id of [r.body.id, all.body.id]) {
        assert.equal(
          (await s.api('DELETE', `/repos/alice/app/hooks/${id}`, { token: alice.token })).status,
          204,
        );
      }
    });

    it('GET lists (X-Total-Count) and gets a hook', async () => {
      const list = await s.api<HookJson[]>('GET', '/repos/alice/app/hooks', { token: alice.token });
      assert.equal(list.status, 200, list.text);
      assert.equal(list.headers.get('x-total-count'), '1');
      assert.deepEqual(list.body, [hook]);
      const one = await s.api<HookJson>('GET', `/repos/alice/app/hooks/${hook.id}`, { token: alice.token });
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, hook);
      assert.equal((await s.api('GET', '/repos/alice/app/hooks/999999', { token: alice.token })).status, 404);
    });

    it('PATCH changes what it is given and leaves the rest', async () => {
      const r = await s.api<HookJson>('PATCH', `/repos/alice/app/hooks/${hook.id}`, {
        token: alice.token,
        body: { active: true, events: ['push', 'release'], config: { content_type: 'form' } },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.active, true);
      assert.deepEqual(r.body.events, ['push', 'release']);
      assert.equal(r.body.content_type, 'form');
      assert.equal(r.body.url, rx.url('/crud'));
      assert.equal(r.body.authorization_header, 'Bearer abc');
      const back = await s.api<HookJson>('PATCH', `/repos/alice/app/hooks/${hook.id}`, {
        token: alice.token,
        body: { active: false, authorization_header: '' },
      });
      assert.equal(back.body.active, false);
      assert.deepEqual(back.body.events, ['push', 'release']);
      assert.equal(back.body.authorization_header, '');
    });

    it('refuses bad input with a 4xx naming the problem', async () => {
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ type: 'bark', config: { url: rx.url('/x'), content_type: 'json' } }, 422, /Invalid hook type/],
        [{ type: 'forgejo', config: { content_type: 'json' } }, 422, /Missing config option: url/],
        [{ type: 'forgejo', config: { url: rx.url('/x') } }, 422, /Missing config option: content_type/],
        [
          { type: 'forgejo', config: { url: rx.url('/x'), content_type: 'xml' } },
          422,
          /Invalid content type/,
        ],
        [
          { type: 'forgejo', config: { url: 'ftp://example.com/x', content_type: 'json' } },
          422,
          /Invalid url/,
        ],
        [{ type: 'forgejo', config: { url: 'not a url', content_type: 'json' } }, 422, /Invalid url/],
        [
          { type: 'forgejo', config: { url: rx.url('/x'), content_type: 'json', http_method: 'DELETE' } },
          422,
          /Invalid http method/,
        ],
        [
          { type: 'forgejo', config: { url: rx.url('/x'), content_type: 'json' }, events: ['pushh'] },
          422,
          /Unknown event: pushh/,
        ],
        [
          { type: 'forgejo', config: { url: rx.url('/x'), content_type: 'json' }, branch_filter: '[' },
          422,
          /BranchFilter/,
        ],
        [
          {
            type: 'forgejo',
            config: { url: rx.url('/x'), content_type: 'json' },
            authorization_header: 'a\r\nX: y',
          },
          422,
          /AuthorizationHeader/,
        ],
        [
          { type: 'slack', config: { url: rx.url('/x'), content_type: 'json' } },
          422,
          /Missing config option: channel/,
        ],
        [
          { type: 'slack', config: { url: rx.url('/x'), content_type: 'json', channel: '#' } },
          400,
          /slack channel/,
        ],
        [{ type: 'forgejo' }, 422, /Config/],
        [{ type: 'forgejo', config: { url: 1 } }, 422, /Url/],
      ];
      for (const [body, status, message] of cases) {
        const r = await createHook('/repos/alice/app', body);
        assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
        assert.match(r.body.message, message);
      }
      const patch = await s.api<Msg>('PATCH', `/repos/alice/app/hooks/${hook.id}`, {
        token: alice.token,
        body: { config: { url: 'javascript:alert(1)' } },
      });
      assert.equal(patch.status, 422);
      assert.match(patch.body.message, /Invalid url/);
    });

    it('permissions: 401 without credentials, 404 to outsiders of a private repository, 403 to writers', async () => {
      assert.equal((await s.api('GET', '/repos/alice/app/hooks')).status, 401);
      assert.equal((await s.api('GET', '/repos/alice/secret/hooks', { token: bob.token })).status, 404);
      assert.equal((await s.api('GET', '/repos/alice/app/hooks', { token: bob.token })).status, 403);
      assert.equal((await s.api('GET', '/repos/alice/app/hooks', { token: carol.token })).status, 403);
      assert.equal(
        (await s.api('GET', `/repos/alice/app/hooks/${hook.id}`, { token: carol.token })).status,
        403,
      );
      const create = await createHook(
        '/repos/alice/app',
        { type: 'forgejo', config: { url: rx.url('/x'), content_type: 'json' } },
        carol.token,
      );
      assert.equal(create.status, 403);
      assert.equal(
        (await s.api('DELETE', `/repos/alice/app/hooks/${hook.id}`, { token: carol.token })).status,
        403,
      );
      assert.equal(
        (await s.api('POST', `/repos/alice/app/hooks/${hook.id}/tests`, { token: carol.token })).status,
        403,
      );
      // A site administrator manages every repository's hooks.
      assert.equal((await s.api('GET', '/repos/alice/secret/hooks', { token: s.admin.token })).status, 200);
      // A read-only token cannot create.
      const ro = await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: [alice.name, alice.password],
        body: { name: 'ro', scopes: ['read:repository'] },
      });
      const denied = await createHook(
        '/repos/alice/app',
        { type: 'forgejo', config: { url: rx.url('/x'), content_type: 'json' } },
        ro.body.sha1,
      );
      assert.equal(denied.status, 403);
      // Organization hooks: owners only; system hooks: site administrators only.
      assert.equal((await s.api('GET', '/orgs/acme/hooks', { token: dave.token })).status, 403);
      assert.equal((await s.api('GET', '/orgs/acme/hooks', { token: alice.token })).status, 200);
      assert.equal((await s.api('GET', '/orgs/nope/hooks', { token: alice.token })).status, 404);
      assert.equal((await s.api('GET', '/admin/hooks', { token: alice.token })).status, 403);
      assert.equal((await s.api('GET', '/admin/hooks', { token: s.admin.token })).status, 200);
      // A hook of one repository is not reachable through another.
      const r = await s.api('GET', `/repos/alice/secret/hooks/${hook.id}`, { token: alice.token });
      assert.equal(r.status, 404);
    });

    it('DELETE removes a hook', async () => {
      assert.equal(
        (await s.api('DELETE', `/repos/alice/app/hooks/${hook.id}`, { token: alice.token })).status,
        204,
      );
      assert.equal(
        (await s.api('GET', `/repos/alice/app/hooks/${hook.id}`, { token: alice.token })).status,
        404,
      );
      assert.equal(
        (await s.api('DELETE', `/repos/alice/app/hooks/${hook.id}`, { token: alice.token })).status,
        404,
      );
    });

    it('hooks go with their repository and their organization', async () => {
      for (const [owner, token] of [
        ['alice', alice.token],
        ['acme', alice.token],
      ] as const) {
        const base = owner === 'alice' ? '/user/repos' : '/orgs/acme/repos';
        assert.equal((await s.api('POST', base, { token, body: { name: 'doomed' } })).status, 201);
        await hookOn(`/repos/${owner}/doomed`, '/doomed');
      }
      const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'doomed-org' } });
      assert.equal(org.status, 201, org.text);
      const orgHook = await hookOn('/orgs/doomed-org', '/doomed');
      const count = async () =>
        Number(
          (
            await s.ctx.db
              .selectFrom('webhook')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('url', '=', rx.url('/doomed'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      assert.equal(await count(), 3);
      for (const owner of ['alice', 'acme']) {
        assert.equal((await s.api('DELETE', `/repos/${owner}/doomed`, { token: alice.token })).status, 204);
      }
      assert.equal(await count(), 1);
      assert.equal((await s.api('DELETE', '/orgs/doomed-org', { token: alice.token })).status, 204);
      assert.equal(await count(), 0);
      assert.ok(orgHook.id > 0);
    });
  });

  describe('deliveries', () => {
    it('a push with the real git client: push and create events, signed, with the commits', async () => {
      await hookOn('/repos/alice/app', '/git', { events: ['push', 'create', 'delete'] });
      const wt = await clone('alice', 'app', alice);
      const before = (await g.git(['rev-parse', 'HEAD'], wt)).trim();
      const c1 = await g.commit(wt, 'src/one.txt', 'one\n', 'add one');
      await g.git(['rm', '--quiet', 'README.md'], wt);
      const c2 = await g.commit(wt, 'src/one.txt', 'one, changed\n', 'change one\n\nand remove the readme');
      await g.git(['push', '--quiet', 'origin', 'main'], wt);

      const [d] = await rx.wait('/git', 1, ofType('push'));
      assert.equal(d!.method, 'POST');
      assert.equal(d!.headers['content-type'], 'application/json');
      assert.match(String(d!.headers['user-agent']), /^Anvil-Webhook\//);
      for (const prefix of ['x-forgejo', 'x-gitea', 'x-gogs']) {
        assert.equal(d!.headers[`${prefix}-event`], 'push');
        assert.equal(d!.headers[`${prefix}-event-type`], 'push');
        assert.equal(d!.headers[`${prefix}-signature`], hmac('sekrit', d!.body));
        assert.match(String(d!.headers[`${prefix}-delivery`]), /^[0-9a-f-]{36}$/);
      }
      assert.equal(d!.headers['x-github-event'], 'push');
      assert.equal(d!.headers['x-github-delivery'], d!.headers['x-forgejo-delivery']);
      assert.equal(d!.headers['x-hub-signature-256'], `sha256=${hmac('sekrit', d!.body)}`);
      assert.equal(
        d!.headers['x-hub-signature'],
        `sha1=${crypto.createHmac('sha1', 'sekrit').update(d!.body).digest('hex')}`,
      );

      const p = json(d!);
      assert.equal(p['ref'], 'refs/heads/main');
      assert.equal(p['before'], before);
      assert.equal(p['after'], c2);
      assert.equal(p['compare_url'], `${s.url}/alice/app/compare/${before}...${c2}`);
      assert.equal(p['total_commits'], 2);
      assert.deepEqual(
        p['commits'].map((c: Payload) => c['id']),
        [c2, c1],
      );
      const [second, first] = p['commits'] as Payload[];
      assert.deepEqual([first!['added'], first!['removed'], first!['modified']], [['src/one.txt'], [], []]);
      assert.deepEqual(
        [second!['added'], second!['removed'], second!['modified']],
        [[], ['README.md'], ['src/one.txt']],
      );
      assert.equal(second!['message'], 'change one\n\nand remove the readme\n');
      assert.equal(second!['url'], `${s.url}/alice/app/commit/${c2}`);
      assert.deepEqual(second!['author'], { name: 'Tester', email: 'tester@example.com', username: '' });
      assert.match(second!['timestamp'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-Z]/);
      assert.equal(p['head_commit']['id'], c2);
      assert.equal(p['repository']['full_name'], 'alice/app');
      assert.equal(p['repository']['permissions']['admin'], true);
      assert.equal(p['pusher']['login'], 'alice');
      assert.equal(p['sender']['login'], 'alice');

      // A new branch: a create event and a push event with the commits no other branch has.
      await g.git(['checkout', '--quiet', '-b', 'feature/x'], wt);
      const c3 = await g.commit(wt, 'f.txt', 'f\n', 'feature work');
      await g.git(['push', '--quiet', 'origin', 'feature/x'], wt);
      const [create] = await rx.wait('/git', 1, ofType('create'));
      assert.equal(create!.headers['x-forgejo-event'], 'create');
      assert.deepEqual((({ sha, ref, ref_type }) => ({ sha, ref, ref_type }))(json(create!)), {
        sha: c3,
        ref: 'feature/x',
        ref_type: 'branch',
      });
      const pushes = await rx.wait('/git', 2, ofType('push'));
      const branchPush = json(pushes[1]!);
      assert.equal(branchPush['ref'], 'refs/heads/feature/x');
      assert.equal(branchPush['before'], '0000000000000000000000000000000000000000');
      assert.equal(branchPush['compare_url'], '');
      assert.deepEqual(
        branchPush['commits'].map((c: Payload) => c['id']),
        [c3],
      );

      // Deleting the branch: a delete event and no push event.
      await g.git(['push', '--quiet', 'origin', '--delete', 'feature/x'], wt);
      const [del] = await rx.wait('/git', 1, ofType('delete'));
      assert.deepEqual((({ ref, ref_type, pusher_type }) => ({ ref, ref_type, pusher_type }))(json(del!)), {
        ref: 'feature/x',
        ref_type: 'branch',
        pusher_type: 'user',
      });
      // A tag: create and push events (the tag's push carries its commit as head_commit).
      await g.git(['tag', 'v1.0', c2], wt);
      await g.git(['push', '--quiet', 'origin', 'v1.0'], wt);
      const tagCreate = await rx.wait('/git', 2, ofType('create'));
      assert.deepEqual((({ ref, ref_type }) => ({ ref, ref_type }))(json(tagCreate[1]!)), {
        ref: 'v1.0',
        ref_type: 'tag',
      });
      const tagPush = json((await rx.wait('/git', 3, ofType('push')))[2]!);
      assert.equal(tagPush['ref'], 'refs/tags/v1.0');
      assert.deepEqual(tagPush['commits'], []);
      assert.equal(tagPush['head_commit']['id'], c2);
      assert.equal(rx.at('/git').filter(ofType('push')).length, 3);
    });

    it('branch filter: only matching branches (a * crosses "/"); tags are not filtered', async () => {
      await hookOn('/repos/alice/app', '/filtered', {
        events: ['push', 'create'],
        branch_filter: 'release*',
      });
      const wt = await clone('alice', 'app', alice);
      await g.commit(wt, 'a.txt', 'a\n');
      await g.git(['push', '--quiet', 'origin', 'main'], wt);
      await g.git(['checkout', '--quiet', '-b', 'release/2.0'], wt);
      await g.commit(wt, 'b.txt', 'b\n');
      await g.git(['push', '--quiet', 'origin', 'release/2.0'], wt);
      await g.git(['tag', 'v2.0'], wt);
      await g.git(['push', '--quiet', 'origin', 'v2.0'], wt);
      await rx.wait('/filtered', 4);
      await sleep(300);
      const got = rx.at('/filtered').map((r) => `${r.headers['x-forgejo-event']} ${json(r)['ref']}`);
      assert.deepEqual(got.sort(), [
        'create release/2.0',
        'create v2.0',
        'push refs/heads/release/2.0',
        'push refs/tags/v2.0',
      ]);
    });

    it('an inactive hook does not fire; one not choosing the event does not either', async () => {
      await hookOn('/repos/alice/app', '/inactive', { events: ['push'], active: false });
      await hookOn('/repos/alice/app', '/issues-only', { events: ['issues'] });
      await hookOn('/repos/alice/app', '/active', { events: ['push'] });
      const wt = await clone('alice', 'app', alice);
      await g.commit(wt, 'c.txt', 'c\n');
      await g.git(['push', '--quiet', 'origin', 'main'], wt);
      await rx.wait('/active');
      await sleep(500);
      assert.equal(rx.at('/inactive').length, 0);
      assert.equal(rx.at('/issues-only').length, 0);
    });

    it('a system hook fires for a repository nobody subscribed; a default hook is copied into new ones', async () => {
      const sys = await hookOn(
        '/admin',
        '/system',
        { events: ['repository'], is_system_webhook: true },
        s.admin.token,
      );
      assert.equal(sys.config['is_system_webhook'], 'true');
      const def = await hookOn('/admin', '/default', { events: ['repository', 'push'] }, s.admin.token);
      assert.equal(def.config['is_system_webhook'], 'false');
      const list = await s.api<HookJson[]>('GET', '/admin/hooks', { token: s.admin.token });
      assert.deepEqual(
        list.body.map((h) => h.id),
        [sys.id, def.id],
      );
      const r = await s.api('POST', '/user/repos', {
        token: bob.token,
        body: { name: 'lonely', private: true },
      });
      assert.equal(r.status, 201, r.text);
      const [d] = await rx.wait('/system');
      assert.equal(d!.headers['x-forgejo-event'], 'repository');
      const p = json(d!);
      assert.equal(p['action'], 'created');
      assert.equal(p['repository']['full_name'], 'bob/lonely');
      assert.equal(p['organization']['login'], 'bob');
      assert.equal(p['sender']['login'], 'bob');
      // The default hook became bob/lonely's own (and so got the created event too).
      const own = await s.api<HookJson[]>('GET', '/repos/bob/lonely/hooks', { token: bob.token });
      assert.equal(own.body.length, 1);
      assert.equal(own.body[0]!.url, rx.url('/default'));
      assert.notEqual(own.body[0]!.id, def.id);
      await rx.wait('/default');
      // Deleting it: the system hook hears of it (the repository's own hooks are gone with it).
      assert.equal((await s.api('DELETE', '/repos/bob/lonely', { token: bob.token })).status, 204);
      const [gone] = await rx.wait('/system', 1, (x) => json(x)['action'] === 'deleted');
      assert.equal(json(gone!)['repository']['full_name'], 'bob/lonely');
      for (const h of [sys, def]) {
        assert.equal((await s.api('DELETE', `/admin/hooks/${h.id}`, { token: s.admin.token })).status, 204);
      }
    });

    it('an organization hook fires for every repository of the organization', async () => {
      const hook = await hookOn('/orgs/acme', '/org', { events: ['repository', 'issues', 'push'] });
      const list = await s.api<HookJson[]>('GET', '/orgs/acme/hooks', { token: alice.token });
      assert.deepEqual(
        list.body.map((h) => h.id),
        [hook.id],
      );
      assert.equal(
        (
          await s.api('POST', '/orgs/acme/repos', {
            token: alice.token,
            body: { name: 'tools', auto_init: true },
          })
        ).status,
        201,
      );
      const [created] = await rx.wait('/org', 1, ofType('repository'));
      assert.equal(json(created!)['repository']['full_name'], 'acme/tools');
      assert.equal(json(created!)['organization']['login'], 'acme');
      // A member with write access pushes.
      const wt = await clone('acme', 'tools', dave);
      await g.commit(wt, 'x.txt', 'x\n');
      await g.git(['push', '--quiet', 'origin', 'main'], wt);
      const [push] = await rx.wait('/org', 1, ofType('push'));
      assert.equal(json(push!)['pusher']['login'], 'dave');
      assert.equal(json(push!)['repository']['full_name'], 'acme/tools');
      // Not for other owners' repositories.
      const before = rx.at('/org').length;
      assert.equal(
        (await s.api('POST', '/repos/alice/app/issues', { token: alice.token, body: { title: 'x' } })).status,
        201,
      );
      await sleep(300);
      assert.equal(rx.at('/org').length, before);
    });

    it('a user hook fires for all their repositories', async () => {
      await hookOn('/user', '/user', { events: ['issues'] }, bob.token);
      assert.equal(
        (await s.api('POST', '/user/repos', { token: bob.token, body: { name: 'b1' } })).status,
        201,
      );
      assert.equal(
        (await s.api('POST', '/repos/bob/b1/issues', { token: bob.token, body: { title: 'hello' } })).status,
        201,
      );
      const [d] = await rx.wait('/user');
      assert.equal(json(d!)['repository']['full_name'], 'bob/b1');
      const list = await s.api<HookJson[]>('GET', '/user/hooks', { token: bob.token });
      assert.equal(list.body.length, 1);
      assert.equal((await s.api<HookJson[]>('GET', '/user/hooks', { token: alice.token })).body.length, 0);
    });

    it('issues: opened, edited, closed and reopened by hand (commit_id ""), closed by a commit (its id)', async () => {
      await hookOn('/repos/alice/app', '/issues', { events: ['issues'] });
      const r = await s.api<{ number: number }>('POST', '/repos/alice/app/issues', {
        token: alice.token,
        body: { title: 'Broken', body: 'it is' },
      });
      assert.equal(r.status, 201, r.text);
      const n = r.body.number;
      const [opened] = await rx.wait('/issues');
      assert.equal(opened!.headers['x-forgejo-event'], 'issues');
      assert.equal(opened!.headers['x-forgejo-event-type'], 'issues');
      const o = json(opened!);
      assert.equal(o['action'], 'opened');
      assert.equal(o['number'], n);
      assert.equal(o['issue']['title'], 'Broken');
      assert.equal(o['issue']['body'], 'it is');
      assert.equal(o['issue']['state'], 'open');
      assert.equal(o['repository']['full_name'], 'alice/app');
      assert.equal(o['sender']['login'], 'alice');
      assert.equal(o['commit_id'], '');
      assert.equal('changes' in o, false);

      await s.api('PATCH', `/repos/alice/app/issues/${n}`, {
        token: alice.token,
        body: { title: 'Very broken' },
      });
      const [edited] = await rx.wait('/issues', 1, (x) => json(x)['action'] === 'edited');
      assert.deepEqual(json(edited!)['changes'], { title: { from: 'Broken' } });

      await s.api('PATCH', `/repos/alice/app/issues/${n}`, { token: alice.token, body: { state: 'closed' } });
      const [closed] = await rx.wait('/issues', 1, (x) => json(x)['action'] === 'closed');
      assert.equal(json(closed!)['commit_id'], '');
      assert.equal(json(closed!)['issue']['state'], 'closed');
      assert.ok(Object.hasOwn(json(closed!), 'commit_id'));

      await s.api('PATCH', `/repos/alice/app/issues/${n}`, { token: alice.token, body: { state: 'open' } });
      const [reopened] = await rx.wait('/issues', 1, (x) => json(x)['action'] === 'reopened');
      assert.equal(json(reopened!)['commit_id'], '');

      const repo = (await s.ctx.repos.getById(
        (await s.api<{ id: number }>('GET', '/repos/alice/app', { token: alice.token })).body.id,
      ))!;
      const user = (await s.ctx.users.getByName('alice'))!;
      const sha = (
        await s.api<{ commit: { id: string } }>('GET', '/repos/alice/app/branches/main', {
          token: alice.token,
        })
      ).body.commit.id;
      await s.ctx.issues.closeByCommit(repo, n, user, sha);
      const closedBy = await rx.wait('/issues', 2, (x) => json(x)['action'] === 'closed');
      assert.equal(json(closedBy[1]!)['commit_id'], sha);
    });

    it('issue labels, assignees and comments', async () => {
      await hookOn('/repos/alice/app', '/issue-more', {
        events: ['issue_label', 'issue_assign', 'issue_comment'],
      });
      const issue = await s.api<{ number: number }>('POST', '/repos/alice/app/issues', {
        token: alice.token,
        body: { title: 'More' },
      });
      const n = issue.body.number;
      const label = await s.api<{ id: number }>('POST', '/repos/alice/app/labels', {
        token: alice.token,
        body: { name: 'bug', color: '#ff0000' },
      });
      assert.equal(label.status, 201, label.text);
      await s.api('POST', `/repos/alice/app/issues/${n}/labels`, {
        token: alice.token,
        body: { labels: [label.body.id] },
      });
      const [labelled] = await rx.wait('/issue-more', 1, ofType('issue_label'));
      assert.equal(labelled!.headers['x-forgejo-event'], 'issues');
      assert.equal(json(labelled!)['action'], 'label_updated');
      assert.deepEqual(
        json(labelled!)['issue']['labels'].map((l: Payload) => l['name']),
        ['bug'],
      );
      await s.api('DELETE', `/repos/alice/app/issues/${n}/labels`, { token: alice.token });
      const cleared = await rx.wait('/issue-more', 2, ofType('issue_label'));
      assert.equal(json(cleared[1]!)['action'], 'label_cleared');

      await s.api('PATCH', `/repos/alice/app/issues/${n}`, {
        token: alice.token,
        body: { assignees: ['carol'] },
      });
      const [assigned] = await rx.wait('/issue-more', 1, ofType('issue_assign'));
      assert.equal(json(assigned!)['action'], 'assigned');
      assert.equal(json(assigned!)['issue']['assignee']['login'], 'carol');

      const c = await s.api<{ id: number }>('POST', `/repos/alice/app/issues/${n}/comments`, {
        token: bob.token,
        body: { body: 'me too' },
      });
      assert.equal(c.status, 201, c.text);
      const [commented] = await rx.wait('/issue-more', 1, ofType('issue_comment'));
      assert.equal(commented!.headers['x-forgejo-event'], 'issue_comment');
      const cp = json(commented!);
      assert.equal(cp['action'], 'created');
      assert.equal(cp['comment']['id'], c.body.id);
      assert.equal(cp['comment']['body'], 'me too');
      assert.equal(cp['comment']['user']['login'], 'bob');
      assert.equal(cp['issue']['number'], n);
      assert.equal(cp['is_pull'], false);
      assert.equal(cp['sender']['login'], 'bob');

      await s.api('PATCH', `/repos/alice/app/issues/comments/${c.body.id}`, {
        token: bob.token,
        body: { body: 'me three' },
      });
      const [edited] = await rx.wait(
        '/issue-more',
        1,
        (x) => ofType('issue_comment')(x) && json(x)['action'] === 'edited',
      );
      assert.deepEqual(json(edited!)['changes'], { body: { from: 'me too' } });
      assert.equal(json(edited!)['comment']['body'], 'me three');

      await s.api('DELETE', `/repos/alice/app/issues/comments/${c.body.id}`, { token: bob.token });
      const [deleted] = await rx.wait(
        '/issue-more',
        1,
        (x) => ofType('issue_comment')(x) && json(x)['action'] === 'deleted',
      );
      assert.equal(json(deleted!)['comment']['id'], c.body.id);
    });

    it('releases: published, updated, deleted', async () => {
      await hookOn('/repos/alice/app', '/release', { events: ['release'] });
      const r = await s.api<{ id: number }>('POST', '/repos/alice/app/releases', {
        token: alice.token,
        body: { tag_name: 'v3.0', name: 'Three' },
      });
      assert.equal(r.status, 201, r.text);
      const [pub] = await rx.wait('/release');
      assert.equal(pub!.headers['x-forgejo-event'], 'release');
      const p = json(pub!);
      assert.equal(p['action'], 'published');
      assert.equal(p['release']['tag_name'], 'v3.0');
      assert.equal(p['release']['name'], 'Three');
      assert.equal(p['repository']['full_name'], 'alice/app');
      await s.api('PATCH', `/repos/alice/app/releases/${r.body.id}`, {
        token: alice.token,
        body: { name: 'Three!' },
      });
      await s.api('DELETE', `/repos/alice/app/releases/${r.body.id}`, { token: alice.token });
      const all = await rx.wait('/release', 3);
      assert.deepEqual(
        all.map((x) => json(x)['action']),
        ['published', 'updated', 'deleted'],
      );
    });

    it('issue milestones: milestoned and demilestoned', async () => {
      await hookOn('/repos/alice/app', '/milestone', { events: ['issue_milestone'] });
      const m = await s.api<{ id: number }>('POST', '/repos/alice/app/milestones', {
        token: alice.token,
        body: { title: 'v1' },
      });
      assert.equal(m.status, 201, m.text);
      const issue = await s.api<{ number: number }>('POST', '/repos/alice/app/issues', {
        token: alice.token,
        body: { title: 'Planned' },
      });
      const n = issue.body.number;
      await s.api('PATCH', `/repos/alice/app/issues/${n}`, {
        token: alice.token,
        body: { milestone: m.body.id },
      });
      const [set] = await rx.wait('/milestone', 1, ofType('issue_milestone'));
      assert.equal(set!.headers['x-forgejo-event'], 'issues');
      assert.equal(json(set!)['action'], 'milestoned');
      assert.equal(json(set!)['issue']['milestone']['title'], 'v1');
      await s.api('PATCH', `/repos/alice/app/issues/${n}`, { token: alice.token, body: { milestone: 0 } });
      const both = await rx.wait('/milestone', 2);
      assert.equal(json(both[1]!)['action'], 'demilestoned');
    });

    it('slack and matrix hooks get a message describing the event', async () => {
      const slack = await createHook('/repos/alice/app', {
        type: 'slack',
        config: { url: rx.url('/slack'), content_type: 'json', channel: '#dev', username: 'anvil' },
        events: ['issues'],
        active: true,
      });
      assert.equal(slack.status, 201, slack.text);
      assert.deepEqual(slack.body.metadata, { channel: '#dev', username: 'anvil', icon_url: '', color: '' });
      assert.equal(slack.body.config['channel'], '#dev');
      const matrix = await createHook('/repos/alice/app', {
        type: 'matrix',
        config: {
          url: rx.url('/matrix/_matrix/client/v3/rooms/!room/send/m.room.message'),
          content_type: 'json',
        },
        authorization_header: 'Bearer mx-token',
        events: ['issues'],
        active: true,
      });
      assert.equal(matrix.status, 201, matrix.text);
      assert.equal(matrix.body.config['http_method'], 'PUT');
      const r = await s.api('POST', '/repos/alice/app/issues', {
        token: alice.token,
        body: { title: 'Chat <me>' },
      });
      assert.equal(r.status, 201);
      const [sd] = await rx.wait('/slack');
      const sp = json(sd!);
      assert.equal(sp['channel'], '#dev');
      assert.equal(sp['username'], 'anvil');
      assert.match(sp['text'], /\[alice\/app\]/);
      assert.match(
        sp['text'],
        /Issue opened: <http:[^|]+\/alice\/app\/issues\/\d+\|#\d+ Chat &lt;me&gt;> by alice/,
      );
      const got = await waitFor(async () => rx.received.some((x) => x.path.startsWith('/matrix/')));
      assert.ok(got);
      const md = rx.received.find((x) => x.path.startsWith('/matrix/'))!;
      assert.equal(md.method, 'PUT');
      assert.match(md.path, /\/send\/m\.room\.message\/[0-9a-f]{40}$/);
      assert.equal(md.headers['authorization'], 'Bearer mx-token');
      const mp = json(md);
      assert.equal(mp['msgtype'], 'm.notice');
      assert.equal(mp['format'], 'org.matrix.custom.html');
      assert.match(mp['body'], /Issue opened: #\d+ Chat <me> by alice/);
      assert.match(mp['formatted_body'], /<a href="http:[^"]+">#\d+ Chat &lt;me&gt;<\/a>/);
    });

    it('fork: the forked repository hears of the fork', async () => {
      await hookOn('/repos/alice/app', '/fork', { events: ['fork'] });
      const r = await s.api('POST', '/repos/alice/app/forks', { token: bob.token, body: {} });
      assert.equal(r.status, 202, r.text);
      const [d] = await rx.wait('/fork');
      assert.equal(d!.headers['x-forgejo-event'], 'fork');
      const p = json(d!);
      assert.equal(p['forkee']['full_name'], 'alice/app');
      assert.equal(p['repository']['full_name'], 'bob/app');
      assert.equal(p['repository']['fork'], true);
      assert.equal(p['sender']['login'], 'bob');
    });

    it('a form hook gets payload=<json>, signed over the payload; GET puts it in the query', async () => {
      const form = await hookOn('/repos/alice/app', '/form', {
        config: { url: rx.url('/form'), content_type: 'form', secret: 'form-secret' },
      });
      await s.api('POST', `/repos/alice/app/hooks/${form.id}/tests`, { token: alice.token });
      const [d] = await rx.wait('/form');
      assert.equal(d!.headers['content-type'], 'application/x-www-form-urlencoded');
      const payload = new URLSearchParams(d!.body).get('payload')!;
      assert.equal(d!.headers['x-forgejo-signature'], hmac('form-secret', payload));
      assert.equal(JSON.parse(payload)['repository']['full_name'], 'alice/app');

      const get = await hookOn('/repos/alice/app', '/get', {
        config: { url: `${rx.url('/get')}?token=abc`, content_type: 'json', http_method: 'GET' },
      });
      await s.api('POST', `/repos/alice/app/hooks/${get.id}/tests`, { token: alice.token });
      const [gd] = await rx.wait('/get');
      assert.equal(gd!.method, 'GET');
      assert.equal(gd!.body, '');
      assert.equal(gd!.headers['x-forgejo-event'], 'push');
    });

    it('POST .../tests sends a push payload with the latest commit (or the ref given), whatever the events', async () => {
      const hook = await hookOn('/repos/alice/app', '/test', {
        events: ['issues'],
        authorization_header: 'token xyz',
      });
      const head = (
        await s.api<{ commit: { id: string } }>('GET', '/repos/alice/app/branches/main', {
          token: alice.token,
        })
      ).body.commit.id;
      const r = await s.api('POST', `/repos/alice/app/hooks/${hook.id}/tests`, { token: alice.token });
      assert.equal(r.status, 204, r.text);
      const [d] = await rx.wait('/test');
      assert.equal(d!.headers['x-forgejo-event'], 'push');
      assert.equal(d!.headers['authorization'], 'token xyz');
      const p = json(d!);
      assert.equal(p['ref'], 'refs/heads/main');
      assert.equal(p['after'], head);
      assert.equal(p['head_commit']['id'], head);
      assert.equal(p['commits'].length, 1);
      assert.equal(p['total_commits'], 1);
      const tag = await s.api('POST', `/repos/alice/app/hooks/${hook.id}/tests?ref=v1.0`, {
        token: alice.token,
      });
      assert.equal(tag.status, 204);
      const second = json((await rx.wait('/test', 2))[1]!);
      assert.equal(second['ref'], 'refs/tags/v1.0');
      assert.equal(
        (await s.api('POST', `/repos/alice/app/hooks/${hook.id}/tests?ref=nope`, { token: alice.token }))
          .status,
        404,
      );
      assert.equal(
        (await s.api('POST', '/repos/alice/app/hooks/999999/tests', { token: alice.token })).status,
        404,
      );

      // The history shows it: the request as sent (the Authorization header masked) and the response.
      // (Once both are recorded: the receiver can see a request before the server writes down the response.)
      const history = () =>
        s.api<DeliveryJson[]>('GET', `/repos/alice/app/hooks/${hook.id}/deliveries`, { token: alice.token });
      await waitFor(async () => (await history()).body.every((x) => x.delivered));
      const h = await history();
      assert.equal(h.status, 200, h.text);
      assert.equal(h.headers.get('x-total-count'), '2');
      const last = h.body[1]!;
      assert.equal(last.uuid, d!.headers['x-forgejo-delivery']);
      assert.equal(last.event, 'push');
      assert.equal(last.event_type, 'push');
      assert.equal(last.delivered, true);
      assert.equal(last.success, true);
      assert.equal(last.status_code, 200);
      assert.equal(last.attempts, 1);
      assert.equal(last.next_attempt_at, null);
      assert.equal(last.request.url, rx.url('/test'));
      assert.equal(last.request.http_method, 'POST');
      assert.equal(last.request.headers['Authorization'], '******');
      assert.equal(last.request.headers['X-Forgejo-Signature'], d!.headers['x-forgejo-signature']);
      assert.equal(last.request.body, d!.body);
      assert.equal(last.response!.status, 200);
      assert.equal(last.response!.body, 'ok');
      assert.equal(
        (await s.api('GET', `/repos/alice/app/hooks/${hook.id}/deliveries`, { token: carol.token })).status,
        403,
      );
    });

    it('a failing receiver: retried with back-off up to the limit, every attempt in the history', async () => {
      rx.status.set('/failing', 500);
      const hook = await hookOn('/repos/alice/app', '/failing');
      await s.api('POST', `/repos/alice/app/hooks/${hook.id}/tests`, { token: alice.token });
      const tries = await rx.wait('/failing', 3, () => true, 20_000);
      // MAX_ATTEMPTS=3, RETRY_DELAY=1s: the second attempt ~1 s after the first, the third ~2 s after it.
      assert.ok(tries[1]!.at - tries[0]!.at >= 900, `first retry after ${tries[1]!.at - tries[0]!.at} ms`);
      assert.ok(tries[2]!.at - tries[1]!.at >= 1900, `second retry after ${tries[2]!.at - tries[1]!.at} ms`);
      assert.equal(new Set(tries.map((t) => t.headers['x-forgejo-delivery'])).size, 1);
      let d: DeliveryJson | undefined;
      await waitFor(async () => {
        const h = await s.api<DeliveryJson[]>('GET', `/repos/alice/app/hooks/${hook.id}/deliveries`, {
          token: alice.token,
        });
        d = h.body[0];
        return d?.delivered === true;
      });
      assert.equal(d!.success, false);
      assert.equal(d!.attempts, 3);
      assert.equal(d!.status_code, 500);
      assert.equal(d!.response!.body, 'failure 500');
      assert.equal(d!.next_attempt_at, null);
      await sleep(1500);
      assert.equal(rx.at('/failing').length, 3, 'no attempt after the last');
    });

    it('a refused address is not retried', async () => {
      const hook = await hookOn('/repos/alice/app', '/x', {
        config: { url: 'http://10.255.255.1:9/x', content_type: 'json' },
      });
      await s.api('POST', `/repos/alice/app/hooks/${hook.id}/tests`, { token: alice.token });
      let d: DeliveryJson | undefined;
      assert.ok(
        await waitFor(async () => {
          const h = await s.api<DeliveryJson[]>('GET', `/repos/alice/app/hooks/${hook.id}/deliveries`, {
            token: alice.token,
          });
          d = h.body[0];
          return d?.delivered === true;
        }),
      );
      assert.equal(d!.success, false);
      assert.equal(d!.attempts, 1);
      assert.equal(d!.status_code, null);
      assert.match(d!.response!.body, /ALLOWED_HOST_LIST/);
    });
  });
});

describe('webhook deliveries across a restart', () => {
  it('deliveries pending when a server stops are made by the next server on the same data', async () => {
    const s = await startServer({
      ...SETTINGS,
      ANVIL__WEBHOOK__RETRY_DELAY: '1s',
      ANVIL__WEBHOOK__MAX_ATTEMPTS: '5',
    });
    const rx = new Receiver();
    const port = await freePort();
    let app2: Awaited<ReturnType<typeof buildServer>> | undefined;
    let ctx2: Awaited<ReturnType<typeof createContext>> | undefined;
    try {
      s.ctx.webhooks.start();
      const alice = await s.createUser('alice');
      assert.equal(
        (await s.api('POST', '/user/repos', { token: alice.token, body: { name: 'app', auto_init: true } }))
          .status,
        201,
      );
      // The receiver is down: the first attempts fail.
      const hook = await s.api<HookJson>('POST', '/repos/alice/app/hooks', {
        token: alice.token,
        body: {
          type: 'forgejo',
          config: { url: `http://127.0.0.1:${port}/later`, content_type: 'json', secret: 's' },
          events: ['issues'],
          active: true,
        },
      });
      assert.equal(hook.status, 201, hook.text);
      for (const title of ['one', 'two']) {
        assert.equal(
          (await s.api('POST', '/repos/alice/app/issues', { token: alice.token, body: { title } })).status,
          201,
        );
      }
      const pending = async (db: typeof s.ctx.db) =>
        db
          .selectFrom('hook_task')
          .select(['attempts', 'is_delivered'])
          .where('hook_id', '=', hook.body.id)
          .execute();
      assert.ok(await waitFor(async () => (await pending(s.ctx.db)).every((t) => t.attempts >= 1)));

      // Stop this server (its worker and database), bring the receiver up, start another one.
      await s.app.close();
      await s.ctx.close();
      Object.assign(s.ctx, { close: async () => undefined });
      Object.assign(s.app, { close: async () => undefined });
      await rx.start(port);
      ctx2 = await createContext(s.config, pino({ level: 'silent' }));
      assert.equal((await pending(ctx2.db)).filter((t) => t.is_delivered === 0).length, 2);
      app2 = await buildServer(ctx2);
      ctx2.webhooks.start();
      const got = await rx.wait('/later', 2);
      assert.deepEqual(got.map((r) => JSON.parse(r.body)['issue']['title']).sort(), ['one', 'two']);
      for (const r of got) assert.equal(r.headers['x-forgejo-signature'], hmac('s', r.body));
      const rows = await waitFor(async () => (await pending(ctx2!.db)).every((t) => t.is_delivered === 1));
      assert.ok(rows);
    } finally {
      await app2?.close();
      await ctx2?.close();
      await rx.stop();
      await s.close();
    }
  });
});
