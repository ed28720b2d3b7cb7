// An organization's tabs (/{org}, /org/{org}/members, /org/{org}/teams) as Forgejo shows them:
// Repositories and Members with their counts to everyone (outsiders count and see only the public
// members, without the public/private marks), Teams with its count to members and site
// administrators only (the teams page refuses anyone else), Settings to owners.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

type User = { name: string; password: string; token: string };

/** The tab linking to `href` and its count (undefined when the tab is not there or has no count). */
function tab(html: string, href: string): { present: boolean; count: number | undefined } {
  const nav = /<nav class="tabs" aria-label="Organization">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '';
  const m = new RegExp(`<a href="${href}"[^>]*>([^<]*)(?:<span class="count">(\\d+)</span>)?`).exec(nav);
  return { present: m !== null, count: m?.[2] === undefined ? undefined : Number(m[2]) };
}

describe('organization tabs', () => {
  let s: TestServer;
  let alice: User;
  let bob: User;
  let carol: User;

  const signedIn = async (u: { name: string; password: string }) => {
    const c = new WebClient(s.url);
    assert.equal((await c.signIn(u.name, u.password)).status, 303);
    return c;
  };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    assert.equal(
      (await s.api('POST', '/orgs', { token: alice.token, body: { username: 'guild' } })).status,
      201,
    );
    const team = await s.api<{ id: number }>('POST', '/orgs/guild/teams', {
      token: alice.token,
      body: { name: 'devs', permission: 'read', units: ['repo.code'] },
    });
    assert.equal(team.status, 201, team.text);
    assert.equal(
      (await s.api('PUT', `/teams/${team.body.id}/members/bob`, { token: alice.token })).status,
      204,
    );
    // Bob shows his membership; Alice (the creator) keeps hers private.
    assert.equal((await s.api('PUT', '/orgs/guild/public_members/bob', { token: bob.token })).status, 204);
    for (const name of ['one', 'two']) {
      const r = await s.api('POST', '/orgs/guild/repos', { token: alice.token, body: { name } });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(() => s.close());

  it('outsiders see the public members counted and listed, and no teams', async () => {
    for (const c of [new WebClient(s.url), await signedIn(carol)]) {
      const home = await c.get('/guild');
      assert.equal(home.status, 200);
      assert.deepEqual(tab(home.text, '/guild'), { present: true, count: 2 });
      assert.deepEqual(tab(home.text, '/org/guild/members'), { present: true, count: 1 });
      assert.equal(tab(home.text, '/org/guild/teams').present, false);
      assert.equal(tab(home.text, '/org/guild/settings').present, false);

      const members = await c.get('/org/guild/members');
      assert.equal(members.status, 200);
      assert.match(members.text, /href="\/bob"/);
      assert.doesNotMatch(members.text, /href="\/alice"/, 'a private member is not shown');
      assert.doesNotMatch(members.text, /class="pill">(Public|Private)</);
      assert.deepEqual(tab(members.text, '/org/guild/members'), { present: true, count: 1 });
    }
    assert.notEqual((await (await signedIn(carol)).get('/org/guild/teams')).status, 200);
  });

  it('members see every member, the teams tab with its count and the teams', async () => {
    const c = await signedIn(bob);
    const home = await c.get('/guild');
    assert.deepEqual(tab(home.text, '/org/guild/members'), { present: true, count: 2 });
    assert.deepEqual(tab(home.text, '/org/guild/teams'), { present: true, count: 2 });
    assert.equal(tab(home.text, '/org/guild/settings').present, false);

    const members = await c.get('/org/guild/members');
    assert.match(members.text, /href="\/alice"/);
    assert.match(members.text, /class="pill">Private</);
    assert.match(members.text, /class="pill">Public</);

    const teams = await c.get('/org/guild/teams');
    assert.equal(teams.status, 200);
    assert.match(teams.text, /Owners/);
    assert.match(teams.text, /devs/);
    assert.deepEqual(tab(teams.text, '/org/guild/teams'), { present: true, count: 2 });
    assert.match(teams.text, /<a href="\/org\/guild\/teams" aria-current="page"/);
  });

  it('owners also get the settings tab; site administrators count as members', async () => {
    const owner = await (await signedIn(alice)).get('/guild');
    assert.equal(tab(owner.text, '/org/guild/settings').present, true);
    assert.deepEqual(tab(owner.text, '/org/guild/teams'), { present: true, count: 2 });
    const admin = await (await signedIn(s.admin)).get('/org/guild/members');
    assert.deepEqual(tab(admin.text, '/org/guild/members'), { present: true, count: 2 });
    assert.deepEqual(tab(admin.text, '/org/guild/teams'), { present: true, count: 2 });
  });
});
