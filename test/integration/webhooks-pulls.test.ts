// Pull request webhooks over HTTP with the real git client: Forgejo's PullRequestPayload for
// pull_request (opened, edited with changes, closed, reopened, merged as closed + merged: true),
// pull_request_label, pull_request_assign, pull_request_milestone, pull_request_review_request,
// pull_request_review_approved and pull_request_sync (a push to the head branch), signed and with
// Forgejo's headers, delivered to a local receiver; exactly one delivery per change whichever
// endpoint (/pulls or /issues) made it, the pull_request JSON the same as GET /pulls/{index}
// answers, and nothing for a hook that chose only `issues`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl, waitFor } from '../helpers/git.js';

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

type Payload = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server that records the deliveries it receives (answering 200). */
class Receiver {
  readonly received: Received[] = [];
  private server: http.Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({
          path: (req.url ?? '').split('?')[0]!,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  url(p: string): string {
    return `http://127.0.0.1:${this.port}${p}`;
  }

  at(p: string): Received[] {
    return this.received.filter((r) => r.path === p);
  }

  /** Waits for a delivery at `p` with event type `type` and action `action`; returns the last one. */
  async one(p: string, type: string, action: string, pred: (body: Payload) => boolean = () => true) {
    const match = (r: Received) =>
      r.headers['x-forgejo-event-type'] === type && json(r)['action'] === action && pred(json(r));
    const ok = await waitFor(async () => this.at(p).some(match), 15_000, 25);
    assert.ok(ok, `no ${type}/${action} delivery at ${p}`);
    const hits = this.at(p).filter(match);
    return { r: hits[hits.length - 1]!, body: json(hits[hits.length - 1]!) };
  }
}

const SECRET = 'pr-sekrit';
const json = (r: Received): Payload => JSON.parse(r.body) as Payload;
const hmac = (body: string) => crypto.createHmac('sha256', SECRET).update(body).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('pull request webhooks', () => {
  let s: TestServer;
  let rx: Receiver;
  let g: GitClient;
  let alice: User;
  let bob: User;
  let wt: string;
  let issuesHookId = 0;
  let n = 0;

  const api = <T = Payload>(method: string, p: string, body?: unknown, who: User = alice) =>
    s.api<T>(method, p, { token: who.token, ...(body === undefined ? {} : { body }) });

  const hook = async (p: string, events: string[]) => {
    const r = await api<{ id: number }>('POST', '/repos/alice/proj/hooks', {
      type: 'forgejo',
      config: { url: rx.url(p), content_type: 'json', secret: SECRET },
      events,
      active: true,
    });
    assert.equal(r.status, 201, r.text);
    return r.body.id;
  };

  /** Checks what every delivery carries: Forgejo's headers, the signature and the common fields. */
  const common = (got: { r: Received; body: Payload }, type: string, event: string, sender = 'alice') => {
    const h = got.r.headers;
    assert.equal(h['x-forgejo-event-type'], type);
    assert.equal(h['x-forgejo-event'], event);
    assert.equal(h['x-gitea-event'], event);
    assert.equal(h['x-gitea-event-type'], type);
    assert.equal(h['x-forgejo-signature'], hmac(got.r.body));
    assert.equal(h['x-gitea-signature'], hmac(got.r.body));
    assert.equal(h['content-type'], 'application/json');
    const p = got.body;
    assert.equal(p['number'], n);
    assert.equal(p['pull_request']['number'], n);
    assert.equal(p['pull_request']['head']['ref'], 'feat');
    assert.equal(p['repository']['full_name'], 'alice/proj');
    assert.equal(p['sender']['login'], sender);
    assert.equal(typeof p['commit_id'], 'string');
    assert.ok('requested_reviewer' in p && 'review' in p, 'PullRequestPayload keys');
    assert.equal('issue' in p, false);
  };

  const push = async (file: string, content: string) => {
    const tip = await g.commit(wt, file, content, `change ${file}`);
    await g.git(['push', '--quiet', 'origin', 'feat'], wt);
    return tip;
  };

  before(async () => {
    rx = new Receiver();
    await rx.start();
    s = await startServer({
      ANVIL__WEBHOOK__ALLOWED_HOST_LIST: 'loopback',
      ANVIL__WEBHOOK__RETRY_DELAY: '1s',
    });
    s.ctx.webhooks.start();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    const r = await api('POST', '/user/repos', { name: 'proj', auto_init: true });
    assert.equal(r.status, 201, r.text);
    const c = await api('PUT', '/repos/alice/proj/collaborators/bob', { permission: 'write' });
    assert.equal(c.status, 204, c.text);
    await hook('/all', ['pull_request']);
    await hook('/sync', ['pull_request_sync']);
    issuesHookId = await hook('/issues', ['issues']);
    wt = path.join(await g.workTree(), 'proj');
    await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'proj', [alice.name, alice.password]), wt]);
    await g.git(['checkout', '--quiet', '-b', 'feat'], wt);
    await push('feature.txt', 'one\n');
    await g.git(['push', '--quiet', 'origin', 'origin/main:refs/heads/dev'], wt);
  });

  after(async () => {
    await s?.ctx.pulls.idle();
    await s?.close();
    await rx?.stop();
    g?.cleanup();
  });

  it('opened: the pull_request is what GET /pulls/{index} answers', async () => {
    const created = await api<Payload>('POST', '/repos/alice/proj/pulls', {
      head: 'feat',
      base: 'main',
      title: 'Add a feature',
      body: 'Please merge',
    });
    assert.equal(created.status, 201, created.text);
    n = created.body['number'] as number;
    const got = await rx.one('/all', 'pull_request', 'opened');
    common(got, 'pull_request', 'pull_request');
    const pr = got.body['pull_request'];
    assert.equal(pr['title'], 'Add a feature');
    assert.equal(pr['body'], 'Please merge');
    assert.equal(pr['state'], 'open');
    assert.equal(pr['merged'], false);
    assert.equal(pr['base']['ref'], 'main');
    assert.equal(got.body['commit_id'], '');
    assert.equal(got.body['requested_reviewer'], null);
    assert.equal(got.body['review'], null);
    assert.equal('changes' in got.body, false);
    // One builder: the payload's pull_request is the API's PullRequest (as an anonymous caller sees it).
    const get = await s.api<Payload>('GET', `/repos/alice/proj/pulls/${n}`);
    assert.equal(get.status, 200, get.text);
    assert.deepEqual(pr, get.body);
    assert.deepEqual(Object.keys(got.body), [
      'action',
      'number',
      'pull_request',
      'requested_reviewer',
      'repository',
      'sender',
      'commit_id',
      'review',
    ]);
  });

  it('edited: changes.title.from (title through PATCH /pulls), changes.ref.from (base branch)', async () => {
    const r = await api('PATCH', `/repos/alice/proj/pulls/${n}`, { title: 'A better feature' });
    assert.equal(r.status, 201, r.text);
    const got = await rx.one('/all', 'pull_request', 'edited', (p) => !!p['changes']?.['title']);
    common(got, 'pull_request', 'pull_request');
    assert.deepEqual(got.body['changes'], { title: { from: 'Add a feature' } });
    assert.equal(got.body['pull_request']['title'], 'A better feature');

    const toDev = await api('PATCH', `/repos/alice/proj/pulls/${n}`, { base: 'dev' });
    assert.equal(toDev.status, 201, toDev.text);
    const retargeted = await rx.one('/all', 'pull_request', 'edited', (p) => !!p['changes']?.['ref']);
    assert.deepEqual(retargeted.body['changes'], { ref: { from: 'main' } });
    assert.equal(retargeted.body['pull_request']['base']['ref'], 'dev');
    const back = await api('PATCH', `/repos/alice/proj/pulls/${n}`, { base: 'main' });
    assert.equal(back.status, 201, back.text);
    await rx.one('/all', 'pull_request', 'edited', (p) => p['changes']?.['ref']?.['from'] === 'dev');
  });

  it('labels (through the issue endpoints): pull_request_label label_updated, label_cleared', async () => {
    const label = await api<{ id: number }>('POST', '/repos/alice/proj/labels', {
      name: 'feature',
      color: '#00ff00',
    });
    assert.equal(label.status, 201, label.text);
    const r = await api('POST', `/repos/alice/proj/issues/${n}/labels`, { labels: [label.body.id] });
    assert.equal(r.status, 200, r.text);
    const got = await rx.one('/all', 'pull_request_label', 'label_updated');
    common(got, 'pull_request_label', 'pull_request');
    assert.deepEqual(
      got.body['pull_request']['labels'].map((l: Payload) => l['name']),
      ['feature'],
    );
    const d = await api('DELETE', `/repos/alice/proj/issues/${n}/labels`);
    assert.equal(d.status, 204, d.text);
    const cleared = await rx.one('/all', 'pull_request_label', 'label_cleared');
    assert.deepEqual(cleared.body['pull_request']['labels'], []);
  });

  it('assignees and milestone: pull_request_assign assigned, pull_request_milestone milestoned', async () => {
    const r = await api('PATCH', `/repos/alice/proj/pulls/${n}`, { assignees: ['bob'] });
    assert.equal(r.status, 201, r.text);
    const got = await rx.one('/all', 'pull_request_assign', 'assigned');
    common(got, 'pull_request_assign', 'pull_request');
    assert.equal(got.body['pull_request']['assignee']['login'], 'bob');

    const ms = await api<{ id: number }>('POST', '/repos/alice/proj/milestones', { title: 'v1' });
    assert.equal(ms.status, 201, ms.text);
    const m = await api('PATCH', `/repos/alice/proj/issues/${n}`, { milestone: ms.body.id });
    assert.equal(m.status, 201, m.text);
    const milestoned = await rx.one('/all', 'pull_request_milestone', 'milestoned');
    common(milestoned, 'pull_request_milestone', 'pull_request');
    assert.equal(milestoned.body['pull_request']['milestone']['id'], ms.body.id);
  });

  it('reviews: review_requested with requested_reviewer, approved with review {type, content}', async () => {
    const rq = await api('POST', `/repos/alice/proj/pulls/${n}/requested_reviewers`, { reviewers: ['bob'] });
    assert.equal(rq.status, 201, rq.text);
    const requested = await rx.one('/all', 'pull_request_review_request', 'review_requested');
    common(requested, 'pull_request_review_request', 'pull_request');
    assert.equal(requested.body['requested_reviewer']['login'], 'bob');
    assert.deepEqual(
      requested.body['pull_request']['requested_reviewers'].map((u: Payload) => u['login']),
      ['bob'],
    );

    const r = await api(
      'POST',
      `/repos/alice/proj/pulls/${n}/reviews`,
      { event: 'APPROVED', body: 'LGTM' },
      bob,
    );
    assert.equal(r.status, 200, r.text);
    const got = await rx.one('/all', 'pull_request_review_approved', 'reviewed');
    common(got, 'pull_request_review_approved', 'pull_request_approved', 'bob');
    assert.deepEqual(got.body['review'], { type: 'pull_request_review_approved', content: 'LGTM' });
    assert.equal(got.body['requested_reviewer'], null);
  });

  it('synchronized: a push to the head branch (pull_request_sync, also to a hook choosing only it)', async () => {
    const tip = await push('feature.txt', 'one\ntwo\n');
    const got = await rx.one('/all', 'pull_request_sync', 'synchronized');
    common(got, 'pull_request_sync', 'pull_request');
    assert.equal(got.body['pull_request']['head']['sha'], tip);
    const only = await rx.one('/sync', 'pull_request_sync', 'synchronized');
    assert.equal(only.body['pull_request']['head']['sha'], tip);
  });

  it('closed (PATCH /pulls state) and reopened (PATCH /issues state): one delivery each', async () => {
    const c = await api('PATCH', `/repos/alice/proj/pulls/${n}`, { state: 'closed' });
    assert.equal(c.status, 201, c.text);
    const closed = await rx.one('/all', 'pull_request', 'closed');
    common(closed, 'pull_request', 'pull_request');
    assert.equal(closed.body['pull_request']['state'], 'closed');
    assert.equal(closed.body['pull_request']['merged'], false);

    const o = await api('PATCH', `/repos/alice/proj/issues/${n}`, { state: 'open' });
    assert.equal(o.status, 201, o.text);
    const reopened = await rx.one('/all', 'pull_request', 'reopened');
    common(reopened, 'pull_request', 'pull_request');
    assert.equal(reopened.body['pull_request']['state'], 'open');
  });

  it('merged: closed with merged: true, once', async () => {
    await s.ctx.pulls.idle();
    const r = await api('POST', `/repos/alice/proj/pulls/${n}/merge`, { Do: 'merge' });
    assert.equal(r.status, 200, r.text);
    const got = await rx.one('/all', 'pull_request', 'closed', (p) => p['pull_request']['merged'] === true);
    common(got, 'pull_request', 'pull_request');
    const pr = got.body['pull_request'];
    assert.equal(pr['state'], 'closed');
    assert.equal(pr['base']['ref'], 'main');
    assert.match(pr['merge_commit_sha'], /^[0-9a-f]{40}$/);
    assert.equal(pr['merged_by']['login'], 'alice');
  });

  it('exactly one delivery per change; nothing for a hook choosing only issues', async () => {
    await s.ctx.pulls.idle();
    await sleep(300);
    // One delivery per change; a delivery the server sent again (its first attempt timed out on a
    // loaded machine) carries the same X-Forgejo-Delivery and counts once.
    const deliveries = new Map(rx.at('/all').map((r) => [String(r.headers['x-forgejo-delivery']), r]));
    const seen = [...deliveries.values()]
      .map((r) => `${String(r.headers['x-forgejo-event-type'])} ${String(json(r)['action'])}`)
      .sort();
    assert.deepEqual(
      seen,
      [
        'pull_request opened',
        'pull_request edited',
        'pull_request edited',
        'pull_request edited',
        'pull_request_label label_updated',
        'pull_request_label label_cleared',
        'pull_request_assign assigned',
        'pull_request_milestone milestoned',
        'pull_request_review_request review_requested',
        'pull_request_review_approved reviewed',
        'pull_request_sync synchronized',
        'pull_request closed',
        'pull_request reopened',
        'pull_request closed',
      ].sort(),
    );
    for (const r of rx.at('/all')) assert.equal(r.headers['x-forgejo-signature'], hmac(r.body));
    assert.equal(rx.at('/sync').length, 1);
    assert.equal(rx.at('/issues').length, 0);
    const history = await api<unknown[]>('GET', `/repos/alice/proj/hooks/${issuesHookId}/deliveries`);
    assert.equal(history.status, 200, history.text);
    assert.deepEqual(history.body, []);
  });

  it('labels, milestone and assignees given at creation are announced after opened', async () => {
    await g.git(['checkout', '--quiet', '-b', 'feat2', 'origin/main'], wt);
    await g.commit(wt, 'other.txt', 'x\n');
    await g.git(['push', '--quiet', 'origin', 'feat2'], wt);
    const labels = await api<Array<{ id: number }>>('GET', '/repos/alice/proj/labels');
    const created = await api<Payload>('POST', '/repos/alice/proj/pulls', {
      head: 'feat2',
      base: 'main',
      title: 'Second',
      labels: labels.body.map((l) => l.id),
      assignees: ['bob'],
    });
    assert.equal(created.status, 201, created.text);
    const m = created.body['number'] as number;
    const of = (p: Payload) => p['number'] === m;
    const opened = await rx.one('/all', 'pull_request', 'opened', of);
    assert.equal(opened.body['pull_request']['head']['ref'], 'feat2');
    const labelled = await rx.one('/all', 'pull_request_label', 'label_updated', of);
    assert.equal(labelled.body['pull_request']['labels'].length, 1);
    const assigned = await rx.one('/all', 'pull_request_assign', 'assigned', of);
    assert.equal(assigned.body['sender']['login'], 'alice');
    assert.equal(rx.at('/issues').length, 0);
  });
});
