// Operations: /api/healthz in Forgejo's shape (database, cache and storage checks; 424 when one
// fails), and /metrics: absent unless [metrics] ENABLED, behind [metrics] TOKEN, and in the
// Prometheus text format (parsed here with a parser of that format) with requests by route, git
// operations, background job runs, webhook deliveries, queue depths and Forgejo's counts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

interface Health {
  status: string;
  description: string;
  checks: Record<string, Array<{ status: string; time: string; output?: string }>>;
}

interface Sample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

/** The value of `name`'s sample whose labels include `labels` (0 when there is none). */
function valueOf(families: Family[], name: string, labels: Record<string, string> = {}): number {
  const f = families.find((x) => x.name === name);
  const m = f?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  return Number(m?.value ?? m?.count ?? 0);
}

describe('health check', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('answers pass with the database, cache and storage checks', async () => {
    const r = await fetch(`${s.url}/api/healthz`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/health\+json/);
    const h = (await r.json()) as Health;
    assert.equal(h.status, 'pass');
    assert.ok(h.description);
    assert.deepEqual(Object.keys(h.checks).sort(), ['cache:ping', 'database:ping', 'storage:ping']);
    for (const [name, [c]] of Object.entries(h.checks)) {
      assert.equal(c!.status, 'pass', name);
      assert.ok(!Number.isNaN(Date.parse(c!.time)), name);
      assert.equal(c!.output, undefined);
    }
  });

  it('answers 424 naming the failing check when storage cannot be written', async () => {
    const store = s.ctx.storage.lfs;
    const ping = store.ping.bind(store);
    store.ping = () => Promise.reject(new Error('the disk is gone'));
    try {
      const r = await fetch(`${s.url}/api/healthz`);
      assert.equal(r.status, 424);
      const h = (await r.json()) as Health;
      assert.equal(h.status, 'fail');
      assert.equal(h.checks['storage:ping']![0]!.status, 'fail');
      assert.match(h.checks['storage:ping']![0]!.output ?? '', /disk is gone/);
      assert.equal(h.checks['database:ping']![0]!.status, 'pass');
    } finally {
      store.ping = ping;
    }
    assert.equal((await fetch(`${s.url}/api/healthz`)).status, 200);
  });

  it('serves no /metrics while metrics are disabled', async () => {
    assert.equal((await fetch(`${s.url}/metrics`)).status, 404);
  });
});

describe('metrics', () => {
  let s: TestServer;
  let receiver: http.Server;
  let received = 0;
  const TOKEN = 'scrape-secret-1234';
  before(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    s = await startServer({
      ANVIL__METRICS__ENABLED: 'true',
      ANVIL__METRICS__TOKEN: TOKEN,
      ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
    });
    // Deliveries are started by `anvil web`; test servers start them when they need them.
    s.ctx.webhooks.start();
  });
  after(async () => {
    await s.close();
    receiver.close();
  });

  const scrape = async () => {
    const r = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await r.text();
    return Object.assign(parsePrometheusTextFormat(text) as Family[], { text });
  };

  it('asks for the token: none or a wrong one is 401', async () => {
    const none = await fetch(`${s.url}/metrics`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    const wrong = await fetch(`${s.url}/metrics`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    const basic = await fetch(`${s.url}/metrics`, { headers: { authorization: `token ${TOKEN}` } });
    assert.equal(basic.status, 401);
  });

  it('counts requests by route pattern and status, git operations, jobs and deliveries', async () => {
    const alice = await s.createUser('alice');
    const before = await scrape();
    const repo = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'metered', auto_init: true },
    });
    assert.equal(repo.status, 201);
    for (let i = 0; i < 3; i++)
      assert.equal((await s.api('GET', '/repos/alice/metered', { token: alice.token })).status, 200);
    assert.equal((await s.api('GET', '/repos/alice/nothing-here', { token: alice.token })).status, 404);
    const port = (receiver.address() as AddressInfo).port;
    const hook = await s.api('POST', '/repos/alice/metered/hooks', {
      token: alice.token,
      body: {
        type: 'gitea',
        config: { url: `http://127.0.0.1:${port}/hook`, content_type: 'json' },
        events: ['issues'],
        active: true,
      },
    });
    assert.equal(hook.status, 201);
    assert.equal(
      (await s.api('POST', '/repos/alice/metered/issues', { token: alice.token, body: { title: 'counted' } }))
        .status,
      201,
    );
    assert.ok(await waitFor(async () => received >= 1, 15_000, 25), 'the webhook was delivered');
    const git = new GitClient();
    const dir = path.join(git.home, 'clone');
    await git.git(['clone', '-q', repoUrl(s.url, 'alice', 'metered', ['alice', alice.token]), dir]);
    assert.ok(fs.existsSync(path.join(dir, 'README.md')));
    assert.equal((await s.api('POST', '/admin/cron/sweep_leftovers', { token: s.admin.token })).status, 204);
    await s.ctx.cron.running('sweep_leftovers');

    const after = await scrape();
    const route = { method: 'GET', route: '/api/v1/repos/:owner/:repo' };
    assert.equal(
      valueOf(after, 'anvil_http_requests_total', { ...route, status: '200' }) -
        valueOf(before, 'anvil_http_requests_total', { ...route, status: '200' }),
      3,
    );
    assert.ok(valueOf(after, 'anvil_http_requests_total', { ...route, status: '404' }) >= 1);
    // (The parser drops a histogram's labels and count: that line is read as text.)
    const count = new RegExp(
      `^anvil_http_request_duration_seconds_count\\{method="GET",route="/api/v1/repos/:owner/:repo"\\} (\\d+)$`,
      'm',
    ).exec(after.text);
    assert.ok(Number(count?.[1]) >= 4, 'the durations are observed');
    assert.ok(after.some((f) => f.name === 'anvil_http_request_duration_seconds' && f.type === 'HISTOGRAM'));
    // The URL's names never become labels: only patterns do.
    const routes = after
      .find((f) => f.name === 'anvil_http_requests_total')!
      .metrics.map((m) => m.labels?.['route'] ?? '');
    assert.ok(!routes.some((r) => r.includes('metered')), routes.join(', '));
    assert.ok(
      valueOf(after, 'anvil_git_operations_total', { service: 'upload-pack', transport: 'http' }) >= 1,
    );
    assert.ok(
      valueOf(after, 'anvil_background_job_runs_total', { job: 'sweep_leftovers', outcome: 'success' }) >= 1,
    );
    assert.ok(valueOf(after, 'anvil_webhook_deliveries_total', { outcome: 'success' }) >= 1);
    assert.equal(valueOf(after, 'anvil_queue_depth', { queue: 'actions' }), 0);
    assert.ok(
      after.some(
        (f) => f.name === 'anvil_queue_depth' && f.metrics.some((m) => m.labels?.['queue'] === 'webhook'),
      ),
    );
    assert.equal(valueOf(after, 'gitea_users'), 2, 'admin and alice');
    assert.equal(valueOf(after, 'gitea_repositories'), 1);
    assert.equal(valueOf(after, 'gitea_issues'), 1);
    assert.equal(valueOf(after, 'gitea_webhooks'), 1);
    assert.ok(valueOf(after, 'process_resident_memory_bytes') > 0, "Node's process metrics are there");
  });
});
