// /admin/cron: the scheduled tasks with Forgejo's Cron shape (schedule, next, prev, exec_times),
// running one now (204; the run is awaited and counted, prev set), an unknown
// task (404), and administrators only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/git.js';

interface Cron {
  name: string;
  schedule: string;
  next: string;
  prev: string;
  exec_times: number;
}

describe('admin cron tasks', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  before(async () => {
    s = await startServer({ ANVIL__CRON_0X2E_CLEANUP_PACKAGES__SCHEDULE: '@daily' });
    alice = await s.createUser('alice');
  });
  after(() => s.close());

  it('lists the tasks with their schedules', async () => {
    const r = await s.api<Cron[]>('GET', '/admin/cron', { token: s.admin.token });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.map((c) => c.name),
      [
        'cleanup_actions',
        'cleanup_packages',
        'quota_usage_sample',
        'recover_unfinished_changes',
        'sweep_leftovers',
        'update_mirrors',
      ],
    );
    const cleanup = r.body.find((c) => c.name === 'cleanup_packages')!;
    assert.equal(cleanup.schedule, '@daily');
    assert.equal(cleanup.exec_times, 0);
    assert.ok(Date.parse(cleanup.next) > Date.now());
    assert.equal(r.headers.get('x-total-count'), '6');
    const paged = await s.api<Cron[]>('GET', '/admin/cron?limit=1&page=2', { token: s.admin.token });
    assert.deepEqual(
      paged.body.map((c) => c.name),
      ['cleanup_packages'],
    );
  });

  it('runs a task now, and counts the run', async () => {
    const r = await s.api('POST', '/admin/cron/cleanup_packages', { token: s.admin.token });
    assert.equal(r.status, 204);
    await s.ctx.cron.running('cleanup_packages');
    const after = (await s.api<Cron[]>('GET', '/admin/cron', { token: s.admin.token })).body.find(
      (c) => c.name === 'cleanup_packages',
    )!;
    assert.equal(after.exec_times, 1);
    assert.ok(Math.abs(Date.parse(after.prev) - Date.now()) < 60_000);
    // The mirror task too (nothing to update: it still counts a run).
    assert.equal((await s.api('POST', '/admin/cron/update_mirrors', { token: s.admin.token })).status, 204);
    assert.ok(
      await waitFor(async () => {
        const c = (await s.api<Cron[]>('GET', '/admin/cron', { token: s.admin.token })).body;
        return c.find((x) => x.name === 'update_mirrors')!.exec_times === 1;
      }),
    );
  });

  it('runs the recovery of unfinished changes and the sweep of leftovers', async () => {
    for (const name of ['recover_unfinished_changes', 'sweep_leftovers']) {
      assert.equal((await s.api('POST', `/admin/cron/${name}`, { token: s.admin.token })).status, 204);
      assert.ok(
        await waitFor(async () => {
          const c = (await s.api<Cron[]>('GET', '/admin/cron', { token: s.admin.token })).body;
          return c.find((x) => x.name === name)!.exec_times === 1;
        }),
        name,
      );
    }
  });

  it('refuses unknown tasks and non-administrators', async () => {
    assert.equal((await s.api('POST', '/admin/cron/no_such_task', { token: s.admin.token })).status, 404);
    assert.equal((await s.api('GET', '/admin/cron', { token: alice.token })).status, 403);
    assert.equal((await s.api('POST', '/admin/cron/cleanup_packages', { token: alice.token })).status, 403);
    assert.equal((await s.api('GET', '/admin/cron')).status, 401);
  });
});
