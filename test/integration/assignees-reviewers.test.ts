// /repos/{owner}/{repo}/assignees (who may write the issues) and /reviewers (who may be asked to
// review: readers of a private repository, writers and watchers of a public one, the asker aside),
// for a person's repository with collaborators and an organization's with owner, admin, unit and
// read teams; each list matches what the access rules grant, and hidden repositories stay hidden.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

type User = { name: string; token: string };

describe('assignees and reviewers', () => {
  let s: TestServer;
  const u: Record<string, User> = {};
  const names = async (path: string, token: string) =>
    (await s.api<Array<{ login: string }>>('GET', path, { token })).body.map((x) => x.login);

  before(async () => {
    s = await startServer();
    for (const n of ['alice', 'wally', 'reed', 'adam', 'ivy', 'otto', 'watcher'])
      u[n] = await s.createUser(n);
    const t = (n: string) => u[n]!.token;
    await s.api('POST', '/user/repos', { token: t('alice'), body: { name: 'mine' } });
    await s.api('PUT', '/repos/alice/mine/collaborators/wally', {
      token: t('alice'),
      body: { permission: 'write' },
    });
    await s.api('PUT', '/repos/alice/mine/collaborators/reed', {
      token: t('alice'),
      body: { permission: 'read' },
    });
    await s.api('PUT', '/repos/alice/mine/subscription', { token: t('watcher') });
    // An organization: alice owns it; adam's team administers all repositories; ivy's team writes
    // issues only; otto's team reads.
    await s.api('POST', '/orgs', { token: t('alice'), body: { username: 'guild' } });
    await s.api('POST', '/orgs/guild/repos', { token: t('alice'), body: { name: 'hall', private: true } });
    const team = async (name: string, body: Record<string, unknown>, member: string) => {
      const r = await s.api<{ id: number }>('POST', '/orgs/guild/teams', {
        token: t('alice'),
        body: { name, ...body },
      });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      await s.api('PUT', `/teams/${r.body.id}/members/${member}`, { token: t('alice') });
    };
    await team('admins', { permission: 'admin', includes_all_repositories: true }, 'adam');
    await team(
      'triage',
      { units_map: { 'repo.issues': 'write', 'repo.code': 'read' }, includes_all_repositories: true },
      'ivy',
    );
    await team(
      'readers',
      {
        permission: 'read',
        units: ['repo.code', 'repo.issues', 'repo.pulls'],
        includes_all_repositories: true,
      },
      'otto',
    );
  });
  after(() => s.close());

  it("lists a person's repository's writers as assignees, and its reviewers", async () => {
    assert.deepEqual(await names('/repos/alice/mine/assignees', u['reed']!.token), ['alice', 'wally']);
    // Public: writers and watchers, the asker aside.
    assert.deepEqual(await names('/repos/alice/mine/reviewers', u['alice']!.token), ['wally', 'watcher']);
  });

  it("lists an organization's repository by its teams", async () => {
    assert.deepEqual(await names('/repos/guild/hall/assignees', u['alice']!.token), ['adam', 'alice', 'ivy']);
    // Private: everyone who may read its pull requests (ivy's team has no pulls unit).
    assert.deepEqual(await names('/repos/guild/hall/reviewers', u['alice']!.token), ['adam', 'otto']);
  });

  it('hides what the caller may not see', async () => {
    assert.equal(
      (await s.api('GET', '/repos/guild/hall/assignees', { token: u['reed']!.token })).status,
      404,
    );
    assert.equal((await s.api('GET', '/repos/guild/hall/assignees')).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/mine/reviewers')).status, 401);
  });
});
