// Teams over HTTP: creation with permissions and units, lists and search, reading, editing and
// deleting a team, and team membership (which carries organization membership with it).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface OrgJson {
  id: number;
  name: string;
  email: string;
}

interface TeamJson {
  id: number;
  name: string;
  description: string;
  organization: OrgJson | null;
  includes_all_repositories: boolean;
  permission: string;
  units: string[];
  units_map: Record<string, string>;
  can_create_org_repo: boolean;
}

interface UserJson {
  id: number;
  login: string;
  username: string;
}

interface ErrorJson {
  message: string;
  url: string;
}

/** The properties of Forgejo's Team definition, and nothing else. */
const TEAM_KEYS = [
  'can_create_org_repo',
  'description',
  'id',
  'includes_all_repositories',
  'name',
  'organization',
  'permission',
  'units',
  'units_map',
];

const ALL_UNITS = [
  'repo.actions',
  'repo.code',
  'repo.ext_issues',
  'repo.ext_wiki',
  'repo.issues',
  'repo.packages',
  'repo.projects',
  'repo.pulls',
  'repo.releases',
  'repo.wiki',
];

/** What a team with `admin` permission gets: admin on every unit, read on the external ones. */
const ADMIN_UNITS_MAP = Object.fromEntries(
  ALL_UNITS.map((u) => [u, u === 'repo.ext_issues' || u === 'repo.ext_wiki' ? 'read' : 'admin']),
);

const sortedUnits = (t: TeamJson) => [...t.units].sort();
const logins = (users: UserJson[]) => users.map((u) => u.login);
const teamNames = (teams: TeamJson[]) => teams.map((t) => t.name);

describe('teams', () => {
  let s: TestServer;
  let admin: U;
  /** Owner of every organization below. */
  let alice: U;
  /** Member of the "devs" team of team-org. */
  let bob: U;
  /** Member of the "ops" team of team-org. */
  let carol: U;
  /** Member of nothing at first. */
  let dave: U;
  /** Never a member of team-org. */
  let eve: U;
  let org: OrgJson;
  let ownersId: number;
  let devs: TeamJson;
  let ops: TeamJson;

  const tok = (u: U | null) => (u ? { token: u.token } : {});

  async function createTeam(owner: U, orgName: string, body: Record<string, unknown>): Promise<TeamJson> {
    const r = await s.api<TeamJson>('POST', `/orgs/${orgName}/teams`, { token: owner.token, body });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  async function addToTeam(owner: U, teamId: number, user: string): Promise<void> {
    const r = await s.api('PUT', `/teams/${teamId}/members/${user}`, { token: owner.token });
    assert.equal(r.status, 204, r.text);
  }

  async function orgMembership(viewer: U, orgName: string, user: string): Promise<number> {
    return (await s.api('GET', `/orgs/${orgName}/members/${user}`, { token: viewer.token })).status;
  }

  async function getTeam(viewer: U, id: number): Promise<TeamJson> {
    const r = await s.api<TeamJson>('GET', `/teams/${id}`, { token: viewer.token });
    assert.equal(r.status, 200, r.text);
    return r.body;
  }

  async function ownersTeamOf(owner: U, orgName: string): Promise<number> {
    const r = await s.api<TeamJson[]>('GET', `/orgs/${orgName}/teams`, { token: owner.token });
    assert.equal(r.status, 200, r.text);
    const t = r.body.find((x) => x.permission === 'owner');
    assert.ok(t);
    return t.id;
  }

  before(async () => {
    s = await startServer();
    admin = { ...s.admin, id: 1 };
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    eve = await s.createUser('eve');
    const r = await s.api<OrgJson>('POST', '/orgs', {
      token: alice.token,
      body: { username: 'team-org', email: 'team@org.example' },
    });
    assert.equal(r.status, 201, r.text);
    org = r.body;
    ownersId = await ownersTeamOf(alice, 'team-org');
  });
  after(() => s.close());

  describe('POST /orgs/{org}/teams', () => {
    it('creates a team and answers it with its organization', async () => {
      const r = await s.api<TeamJson>('POST', '/orgs/team-org/teams', {
        token: alice.token,
        body: {
          name: 'devs',
          description: 'Developers of things',
          permission: 'write',
          units: ['repo.code', 'repo.issues'],
          includes_all_repositories: true,
          can_create_org_repo: true,
        },
      });
      assert.equal(r.status, 201, r.text);
      devs = r.body;
      assert.deepEqual(Object.keys(r.body).sort(), TEAM_KEYS);
      assert.equal(typeof r.body.id, 'number');
      assert.equal(r.body.name, 'devs');
      assert.equal(r.body.description, 'Developers of things');
      assert.equal(r.body.permission, 'write');
      assert.deepEqual(sortedUnits(r.body), ['repo.code', 'repo.issues']);
      assert.deepEqual(r.body.units_map, { 'repo.code': 'write', 'repo.issues': 'write' });
      assert.equal(r.body.includes_all_repositories, true);
      assert.equal(r.body.can_create_org_repo, true);
      // The spec: the response carries the organization.
      assert.ok(r.body.organization, 'organization is present');
      assert.equal(r.body.organization.name, 'team-org');
      assert.equal(r.body.organization.id, org.id);
      assert.equal(r.body.organization.email, 'team@org.example');
      assert.deepEqual(r.body.organization, org);
      // And the team reads back the same.
      assert.deepEqual(await getTeam(alice, r.body.id), r.body);
    });

    it('defaults the flags and description', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'ops',
        permission: 'read',
        units: ['repo.code'],
      });
      ops = t;
      assert.equal(t.description, '');
      assert.equal(t.includes_all_repositories, false);
      assert.equal(t.can_create_org_repo, false);
      assert.equal(t.permission, 'read');
      assert.deepEqual(t.units_map, { 'repo.code': 'read' });
    });

    it('derives the permission from units_map: the lowest access given', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'mapped',
        permission: 'write',
        units_map: { 'repo.code': 'read', 'repo.issues': 'write' },
      });
      assert.equal(t.permission, 'read');
      assert.deepEqual(t.units_map, { 'repo.code': 'read', 'repo.issues': 'write' });
      assert.deepEqual(sortedUnits(t), ['repo.code', 'repo.issues']);
      assert.deepEqual(await getTeam(alice, t.id), t);
    });

    it('keeps units mapped to none in units_map but not in units, and ignores them for the permission', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'with-none',
        units_map: { 'repo.code': 'write', 'repo.pulls': 'admin', 'repo.wiki': 'none' },
      });
      assert.equal(t.permission, 'write');
      assert.deepEqual(t.units_map, { 'repo.code': 'write', 'repo.pulls': 'admin', 'repo.wiki': 'none' });
      assert.deepEqual(sortedUnits(t), ['repo.code', 'repo.pulls']);
    });

    it('external units do not lower the permission derived from units_map; admin gives every unit', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'with-external',
        units_map: { 'repo.code': 'admin', 'repo.ext_wiki': 'read' },
      });
      assert.equal(t.permission, 'admin');
      assert.deepEqual(t.units_map, ADMIN_UNITS_MAP);
    });

    it('gives an admin team every unit, whatever units were asked for', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'admins',
        permission: 'admin',
        units: ['repo.code'],
      });
      assert.equal(t.permission, 'admin');
      assert.deepEqual(sortedUnits(t), ALL_UNITS);
      assert.deepEqual(t.units_map, ADMIN_UNITS_MAP);
    });

    it('takes a unit listed twice once', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'twice',
        permission: 'write',
        units: ['repo.code', 'repo.code', 'repo.issues'],
      });
      assert.deepEqual(sortedUnits(t), ['repo.code', 'repo.issues']);
      assert.deepEqual(t.units_map, { 'repo.code': 'write', 'repo.issues': 'write' });
    });

    it('an admin permission wins over units_map, as in Forgejo', async () => {
      const t = await createTeam(alice, 'team-org', {
        name: 'admins-mapped',
        permission: 'admin',
        units_map: { 'repo.code': 'read', 'repo.issues': 'write' },
      });
      assert.equal(t.permission, 'admin');
      assert.deepEqual(t.units_map, ADMIN_UNITS_MAP);
      assert.deepEqual((await getTeam(alice, t.id)).units_map, ADMIN_UNITS_MAP);
    });

    it('refuses unknown units and access modes with 422, creating nothing', async () => {
      for (const body of [
        { name: 'bad-units', permission: 'read', units: ['repo.code', 'repo.nonsense'] },
        { name: 'bad-units', units_map: { 'repo.code': 'read', 'repo.nonsense': 'read' } },
        { name: 'bad-units', units_map: { 'repo.code': 'owner' } },
        { name: 'bad-units', units_map: { 'repo.code': 'constructor' } },
        { name: 'bad-units', units_map: { toString: 'read' } },
        { name: 'bad-units', permission: 'owner', units: ['repo.code'] },
        { name: 'bad-units', permission: 'none', units: ['repo.code'] },
      ]) {
        const r = await s.api<ErrorJson>('POST', '/orgs/team-org/teams', { token: alice.token, body });
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.equal(typeof r.body.message, 'string');
      }
      const list = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?limit=50', tok(alice));
      assert.ok(!teamNames(list.body).includes('bad-units'));
    });

    it('refuses a duplicate name, whatever the case, with 422', async () => {
      for (const name of ['devs', 'DEVS', 'Owners', 'owners']) {
        const r = await s.api<ErrorJson>('POST', '/orgs/team-org/teams', {
          token: alice.token,
          body: { name, permission: 'read', units: ['repo.code'] },
        });
        assert.equal(r.status, 422, name);
        assert.match(r.body.message, /already exists/);
      }
    });

    it('refuses a missing or invalid name with 422', async () => {
      for (const body of [
        { permission: 'read', units: ['repo.code'] },
        { name: '', permission: 'read', units: ['repo.code'] },
        { name: 'two words', permission: 'read', units: ['repo.code'] },
        { name: 'slash/name', permission: 'read', units: ['repo.code'] },
        { name: 'x'.repeat(256), permission: 'read', units: ['repo.code'] },
      ]) {
        const r = await s.api<ErrorJson>('POST', '/orgs/team-org/teams', { token: alice.token, body });
        assert.equal(r.status, 422, JSON.stringify(body).slice(0, 60));
        assert.match(r.body.message, /Name/);
      }
      await createTeam(alice, 'team-org', {
        name: 'Dots.and-dashes_ok',
        permission: 'read',
        units: ['repo.code'],
      });
    });

    it('answers 403 to members who are not owners and to non-members', async () => {
      await addToTeam(alice, devs.id, 'bob');
      await addToTeam(alice, ops.id, 'carol');
      for (const u of [bob, carol, eve]) {
        const r = await s.api('POST', '/orgs/team-org/teams', {
          token: u.token,
          body: { name: `by-${u.name}`, permission: 'read', units: ['repo.code'] },
        });
        assert.equal(r.status, 403, u.name);
      }
    });

    it('answers 401 to anonymous callers, 404 for an unknown or hidden organization', async () => {
      const body = { name: 'nope', permission: 'read', units: ['repo.code'] };
      assert.equal((await s.api('POST', '/orgs/team-org/teams', { body })).status, 401);
      assert.equal(
        (await s.api('POST', '/orgs/no-such-org/teams', { token: alice.token, body })).status,
        404,
      );
      const priv = await s.api('POST', '/orgs', {
        token: alice.token,
        body: { username: 'hidden-org', visibility: 'private' },
      });
      assert.equal(priv.status, 201);
      assert.equal((await s.api('POST', '/orgs/hidden-org/teams', { token: eve.token, body })).status, 404);
    });

    it('lets a site administrator create a team in any organization', async () => {
      const r = await s.api<TeamJson>('POST', '/orgs/hidden-org/teams', {
        token: admin.token,
        body: { name: 'by-admin', permission: 'read', units: ['repo.code'] },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.organization?.name, 'hidden-org');
    });
  });

  describe('GET /orgs/{org}/teams', () => {
    it('lists the teams for members, the owners team first, then by name, each with its organization', async () => {
      for (const u of [alice, bob, carol, admin]) {
        const r = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?limit=50', tok(u));
        assert.equal(r.status, 200, u.name);
        const got = teamNames(r.body);
        assert.equal(got[0], 'Owners');
        const rest = got.slice(1);
        assert.deepEqual(
          rest,
          [...rest].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)),
        );
        assert.ok(got.includes('devs') && got.includes('ops') && got.includes('mapped'));
        assert.equal(r.headers.get('x-total-count'), String(r.body.length));
        for (const t of r.body) {
          assert.deepEqual(Object.keys(t).sort(), TEAM_KEYS);
          assert.equal(t.organization?.name, 'team-org');
          assert.equal(t.organization?.id, org.id);
        }
        const owners = r.body[0]!;
        assert.equal(owners.id, ownersId);
        assert.equal(owners.permission, 'owner');
        assert.equal(owners.includes_all_repositories, true);
        assert.equal(owners.can_create_org_repo, true);
        assert.deepEqual(sortedUnits(owners), ALL_UNITS);
        assert.ok(Object.values(owners.units_map).every((m) => m === 'owner' || m === 'read'));
      }
    });

    it('pages', async () => {
      const all = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?limit=50', tok(alice));
      const p2 = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?page=2&limit=2', tok(alice));
      assert.equal(p2.status, 200);
      assert.deepEqual(teamNames(p2.body), teamNames(all.body).slice(2, 4));
      assert.equal(p2.headers.get('x-total-count'), String(all.body.length));
      assert.match(p2.headers.get('link') ?? '', /rel="prev"/);
    });

    it('answers 403 to non-members, 401 to anonymous callers and 404 for an unknown organization', async () => {
      assert.equal((await s.api('GET', '/orgs/team-org/teams', tok(eve))).status, 403);
      assert.equal((await s.api('GET', '/orgs/team-org/teams')).status, 401);
      assert.equal((await s.api('GET', '/orgs/no-such-org/teams', tok(alice))).status, 404);
      assert.equal((await s.api('GET', '/orgs/hidden-org/teams', tok(eve))).status, 404);
    });
  });

  describe('GET /orgs/{org}/teams/search', () => {
    before(async () => {
      const frontend = await createTeam(alice, 'team-org', {
        name: 'frontend',
        description: 'Pixel PUSHERS',
        permission: 'read',
        units: ['repo.code'],
      });
      await addToTeam(alice, frontend.id, 'bob');
    });

    type Search = { ok: boolean; data: TeamJson[] };

    it('lets administrators search every team by name, case-insensitively', async () => {
      const r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=DEV', tok(admin));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.ok, true);
      assert.deepEqual(teamNames(r.body.data), ['devs']);
      assert.equal(r.headers.get('x-total-count'), '1');
      assert.deepEqual(Object.keys(r.body.data[0]!).sort(), TEAM_KEYS);
      assert.equal(r.body.data[0]!.organization?.name, 'team-org');
      const admins = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=admins', tok(admin));
      assert.deepEqual(teamNames(admins.body.data), ['admins', 'admins-mapped']);
    });

    it('matches descriptions too unless include_desc=false, and trims the keyword', async () => {
      let r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=pushers', tok(admin));
      assert.deepEqual(teamNames(r.body.data), ['frontend']);
      r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=pushers&include_desc=false', tok(admin));
      assert.deepEqual(r.body.data, []);
      assert.equal(r.headers.get('x-total-count'), '0');
      r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=%20%20ops%20', tok(admin));
      assert.deepEqual(teamNames(r.body.data), ['ops']);
    });

    it('lists every team without a keyword, and pages', async () => {
      const all = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?limit=50', tok(admin));
      const r = await s.api<Search>('GET', '/orgs/team-org/teams/search?limit=50', tok(admin));
      assert.deepEqual(teamNames(r.body.data), teamNames(all.body));
      const p = await s.api<Search>('GET', '/orgs/team-org/teams/search?page=2&limit=3', tok(admin));
      assert.deepEqual(teamNames(p.body.data), teamNames(all.body).slice(3, 6));
      assert.equal(p.headers.get('x-total-count'), String(all.body.length));
    });

    it("searches only the caller's own teams for everyone else, as in Forgejo", async () => {
      let r = await s.api<Search>('GET', '/orgs/team-org/teams/search', tok(bob));
      assert.equal(r.status, 200);
      assert.deepEqual(teamNames(r.body.data), ['devs', 'frontend']);
      r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=front', tok(bob));
      assert.deepEqual(teamNames(r.body.data), ['frontend']);
      r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=ops', tok(bob));
      assert.deepEqual(r.body.data, []);
      r = await s.api<Search>('GET', '/orgs/team-org/teams/search?q=ops', tok(carol));
      assert.deepEqual(teamNames(r.body.data), ['ops']);
      r = await s.api<Search>('GET', '/orgs/team-org/teams/search', tok(alice));
      assert.deepEqual(teamNames(r.body.data), ['Owners']);
    });

    it('answers 403 to non-members, 401 to anonymous callers and 404 for an unknown organization', async () => {
      assert.equal((await s.api('GET', '/orgs/team-org/teams/search?q=devs', tok(eve))).status, 403);
      assert.equal((await s.api('GET', '/orgs/team-org/teams/search?q=devs')).status, 401);
      assert.equal((await s.api('GET', '/orgs/no-such-org/teams/search?q=devs', tok(alice))).status, 404);
    });
  });

  describe('GET /teams/{id}', () => {
    it('shows the team to its members, the owners and administrators', async () => {
      for (const u of [bob, alice, admin]) {
        const t = await getTeam(u, devs.id);
        assert.deepEqual(Object.keys(t).sort(), TEAM_KEYS);
        assert.equal(t.name, 'devs');
        assert.equal(t.organization?.name, 'team-org');
        assert.equal(t.organization?.id, org.id);
      }
    });

    it('answers 403 to organization members outside the team', async () => {
      const r = await s.api<ErrorJson>('GET', `/teams/${devs.id}`, tok(carol));
      assert.equal(r.status, 403);
      assert.equal((await s.api('GET', `/teams/${ownersId}`, tok(bob))).status, 403);
    });

    it('answers 404 to outsiders and for unknown teams, 401 to anonymous callers', async () => {
      assert.equal((await s.api('GET', `/teams/${devs.id}`, tok(eve))).status, 404);
      assert.equal((await s.api('GET', '/teams/999999', tok(alice))).status, 404);
      assert.equal((await s.api('GET', `/teams/${devs.id}`)).status, 401);
    });
  });

  describe('PATCH /teams/{id}', () => {
    let team: TeamJson;
    before(async () => {
      team = await createTeam(alice, 'team-org', {
        name: 'editable',
        description: 'before',
        permission: 'read',
        units: ['repo.code', 'repo.wiki'],
      });
      await addToTeam(alice, team.id, 'dave');
    });

    it('lets an owner rename a team and change its permission and units', async () => {
      const r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: {
          name: 'edited',
          description: 'after',
          permission: 'write',
          units: ['repo.code', 'repo.pulls', 'repo.releases'],
          includes_all_repositories: true,
          can_create_org_repo: true,
        },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), TEAM_KEYS);
      assert.equal(r.body.id, team.id);
      assert.equal(r.body.name, 'edited');
      assert.equal(r.body.description, 'after');
      assert.equal(r.body.permission, 'write');
      assert.deepEqual(sortedUnits(r.body), ['repo.code', 'repo.pulls', 'repo.releases']);
      assert.deepEqual(r.body.units_map, {
        'repo.code': 'write',
        'repo.pulls': 'write',
        'repo.releases': 'write',
      });
      assert.equal(r.body.includes_all_repositories, true);
      assert.equal(r.body.can_create_org_repo, true);
      assert.equal(r.body.organization?.name, 'team-org');
      assert.deepEqual(await getTeam(alice, team.id), r.body);
      team = r.body;
    });

    it('changes only what is given', async () => {
      const r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: { description: 'only this' },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, { ...team, description: 'only this' });
      team = r.body;
    });

    it('derives the permission from units_map, and lets admin win over it', async () => {
      let r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: { permission: 'write', units_map: { 'repo.code': 'write', 'repo.issues': 'read' } },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.permission, 'read');
      assert.deepEqual(r.body.units_map, { 'repo.code': 'write', 'repo.issues': 'read' });
      r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: { permission: 'admin', units_map: { 'repo.code': 'read' } },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.permission, 'admin');
      assert.deepEqual(r.body.units_map, ADMIN_UNITS_MAP);
      r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: { permission: 'read', units: ['repo.issues'] },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.permission, 'read');
      assert.deepEqual(r.body.units_map, { 'repo.issues': 'read' });
      team = r.body;
    });

    it('keeps a name that only changes case', async () => {
      const r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: { name: 'EDITED' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.name, 'EDITED');
      team = r.body;
    });

    it('refuses a name taken by another team, an invalid name and unknown units with 422', async () => {
      for (const body of [
        { name: 'devs' },
        { name: 'OPS' },
        { name: 'Owners' },
        { name: 'bad name' },
        { name: 'x'.repeat(256) },
        { units: ['repo.nonsense'] },
        { units_map: { 'repo.nonsense': 'read' } },
      ]) {
        const r = await s.api('PATCH', `/teams/${team.id}`, { token: alice.token, body });
        assert.equal(r.status, 422, JSON.stringify(body));
      }
      assert.deepEqual(await getTeam(alice, team.id), team);
    });

    it('treats an empty name as no change, as Forgejo does', async () => {
      const r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: alice.token,
        body: { name: '' },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, team);
      const empty = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, { token: alice.token, body: {} });
      assert.equal(empty.status, 200, empty.text);
      assert.deepEqual(empty.body, team);
    });

    it('never renames the Owners team nor lowers its access', async () => {
      const before = await getTeam(alice, ownersId);
      const r = await s.api<TeamJson>('PATCH', `/teams/${ownersId}`, {
        token: alice.token,
        body: {
          name: 'Bosses',
          description: 'The owners',
          permission: 'read',
          units: ['repo.code'],
          includes_all_repositories: false,
          can_create_org_repo: false,
        },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.name, 'Owners');
      assert.equal(r.body.description, 'The owners');
      assert.equal(r.body.permission, 'owner');
      assert.deepEqual(r.body.units_map, before.units_map);
      assert.equal(r.body.includes_all_repositories, true);
      assert.equal(r.body.can_create_org_repo, true);
      assert.deepEqual(await getTeam(alice, ownersId), r.body);
      const list = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?limit=50', tok(alice));
      assert.ok(!teamNames(list.body).includes('Bosses'));
    });

    it('answers 403 to members who are not owners, inside or outside the team', async () => {
      for (const u of [dave, bob]) {
        const r = await s.api('PATCH', `/teams/${team.id}`, {
          token: u.token,
          body: { description: 'hijack' },
        });
        assert.equal(r.status, 403, u.name);
      }
      assert.equal((await getTeam(alice, team.id)).description, 'only this');
    });

    it('answers 404 to outsiders and for unknown teams, 401 to anonymous callers', async () => {
      assert.equal(
        (await s.api('PATCH', `/teams/${team.id}`, { token: eve.token, body: { description: 'x' } })).status,
        404,
      );
      assert.equal(
        (await s.api('PATCH', '/teams/999999', { token: alice.token, body: { description: 'x' } })).status,
        404,
      );
      assert.equal((await s.api('PATCH', `/teams/${team.id}`, { body: { description: 'x' } })).status, 401);
    });

    it('lets a site administrator edit any team', async () => {
      const r = await s.api<TeamJson>('PATCH', `/teams/${team.id}`, {
        token: admin.token,
        body: { description: 'by admin' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.description, 'by admin');
    });
  });

  describe('team members', () => {
    it('GET /teams/{id}/members lists the members to owners, team members and administrators', async () => {
      for (const u of [alice, bob, admin]) {
        const r = await s.api<UserJson[]>('GET', `/teams/${devs.id}/members`, tok(u));
        assert.equal(r.status, 200, u.name);
        assert.deepEqual(logins(r.body), ['bob']);
        assert.equal(r.headers.get('x-total-count'), '1');
      }
      const owners = await s.api<UserJson[]>('GET', `/teams/${ownersId}/members`, tok(alice));
      assert.deepEqual(logins(owners.body), ['alice']);
    });

    it('GET /teams/{id}/members answers 403 to organization members outside the team, 404 to outsiders', async () => {
      assert.equal((await s.api('GET', `/teams/${devs.id}/members`, tok(carol))).status, 403);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members`, tok(eve))).status, 404);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members`)).status, 401);
      assert.equal((await s.api('GET', '/teams/999999/members', tok(alice))).status, 404);
    });

    it('GET /teams/{id}/members/{username} answers the member, or 404', async () => {
      const r = await s.api<UserJson>('GET', `/teams/${devs.id}/members/bob`, tok(alice));
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.login, 'bob');
      assert.equal(r.body.id, bob.id);
      const self = await s.api<UserJson>('GET', `/teams/${devs.id}/members/BOB`, tok(bob));
      assert.equal(self.status, 200);
      assert.equal(self.body.login, 'bob');
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/carol`, tok(alice))).status, 404);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/alice`, tok(alice))).status, 404);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/no-such-user`, tok(alice))).status, 404);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/bob`, tok(carol))).status, 403);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/bob`, tok(eve))).status, 404);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/bob`)).status, 401);
    });

    it('adding a user to a team makes them a (concealed) member of the organization', async () => {
      assert.equal(await orgMembership(alice, 'team-org', 'eve'), 404);
      let r = await s.api('PUT', `/teams/${devs.id}/members/eve`, tok(alice));
      assert.equal(r.status, 204, r.text);
      assert.equal(r.text, '');
      assert.equal(await orgMembership(alice, 'team-org', 'eve'), 204);
      assert.equal((await s.api('GET', '/orgs/team-org/public_members/eve')).status, 404);
      const eveOrgs = await s.api<OrgJson[]>('GET', '/user/orgs', tok(eve));
      assert.ok(eveOrgs.body.some((o) => o.name === 'team-org'));
      const members = await s.api<UserJson[]>('GET', `/teams/${devs.id}/members`, tok(alice));
      assert.deepEqual(logins(members.body), ['bob', 'eve']);
      // Eve now sees the team and the organization's teams.
      assert.equal((await s.api('GET', `/teams/${devs.id}`, tok(eve))).status, 200);
      assert.equal((await s.api('GET', '/orgs/team-org/teams', tok(eve))).status, 200);
      // Adding again changes nothing.
      r = await s.api('PUT', `/teams/${devs.id}/members/eve`, tok(alice));
      assert.equal(r.status, 204);
      assert.equal((await s.api<UserJson[]>('GET', `/teams/${devs.id}/members`, tok(alice))).body.length, 2);
    });

    it('removing a user from one of two teams keeps them in the organization', async () => {
      await addToTeam(alice, ops.id, 'eve');
      const r = await s.api('DELETE', `/teams/${devs.id}/members/eve`, tok(alice));
      assert.equal(r.status, 204, r.text);
      assert.equal((await s.api('GET', `/teams/${devs.id}/members/eve`, tok(alice))).status, 404);
      assert.equal(await orgMembership(alice, 'team-org', 'eve'), 204);
    });

    it('removing a user from their last team removes them from the organization', async () => {
      const r = await s.api('DELETE', `/teams/${ops.id}/members/eve`, tok(alice));
      assert.equal(r.status, 204, r.text);
      assert.equal(await orgMembership(alice, 'team-org', 'eve'), 404);
      const eveOrgs = await s.api<OrgJson[]>('GET', '/user/orgs', tok(eve));
      assert.ok(!eveOrgs.body.some((o) => o.name === 'team-org'));
      assert.equal((await s.api('GET', '/orgs/team-org/teams', tok(eve))).status, 403);
      assert.equal((await s.api('GET', `/teams/${devs.id}`, tok(eve))).status, 404);
    });

    it('removing someone who is not in the team answers 204, as in Forgejo; unknown users are 404', async () => {
      assert.equal((await s.api('DELETE', `/teams/${devs.id}/members/eve`, tok(alice))).status, 204);
      assert.equal(await orgMembership(alice, 'team-org', 'eve'), 404);
      // carol is in ops, not devs: she stays in the organization.
      assert.equal((await s.api('DELETE', `/teams/${devs.id}/members/carol`, tok(alice))).status, 204);
      assert.equal(await orgMembership(alice, 'team-org', 'carol'), 204);
      assert.equal((await s.api('DELETE', `/teams/${devs.id}/members/no-such-user`, tok(alice))).status, 404);
      assert.equal((await s.api('PUT', `/teams/${devs.id}/members/no-such-user`, tok(alice))).status, 404);
      assert.equal((await s.api('PUT', `/teams/${devs.id}/members/team-org`, tok(alice))).status, 404);
      assert.equal((await s.api('PUT', '/teams/999999/members/eve', tok(alice))).status, 404);
    });

    it('answers 403 to members who are not owners, 404 to outsiders and 401 to anonymous callers', async () => {
      for (const method of ['PUT', 'DELETE']) {
        // bob is in devs, carol is not.
        assert.equal((await s.api(method, `/teams/${devs.id}/members/dave`, tok(bob))).status, 403, method);
        assert.equal((await s.api(method, `/teams/${devs.id}/members/bob`, tok(carol))).status, 403, method);
        assert.equal((await s.api(method, `/teams/${devs.id}/members/bob`, tok(eve))).status, 404, method);
        assert.equal((await s.api(method, `/teams/${devs.id}/members/bob`)).status, 401, method);
      }
      const members = await s.api<UserJson[]>('GET', `/teams/${devs.id}/members`, tok(alice));
      assert.deepEqual(logins(members.body), ['bob']);
    });

    it('the last member of the Owners team cannot be removed (422)', async () => {
      const r = await s.api<ErrorJson>('DELETE', `/teams/${ownersId}/members/alice`, tok(alice));
      assert.equal(r.status, 422);
      assert.match(r.body.message, /last owner/);
      const a = await s.api<ErrorJson>('DELETE', `/teams/${ownersId}/members/alice`, tok(admin));
      assert.equal(a.status, 422);
      const owners = await s.api<UserJson[]>('GET', `/teams/${ownersId}/members`, tok(alice));
      assert.deepEqual(logins(owners.body), ['alice']);
    });

    it('with a second owner, an owner can leave the Owners team and thereby the organization', async () => {
      const o = await s.api<OrgJson>('POST', '/orgs', {
        token: alice.token,
        body: { username: 'handover-org' },
      });
      assert.equal(o.status, 201);
      const owners = await ownersTeamOf(alice, 'handover-org');
      await addToTeam(alice, owners, 'dave');
      assert.equal(
        (await s.api('PATCH', '/orgs/handover-org', { token: dave.token, body: { location: 'x' } })).status,
        200,
      );
      const r = await s.api('DELETE', `/teams/${owners}/members/alice`, tok(dave));
      assert.equal(r.status, 204, r.text);
      assert.equal(await orgMembership(dave, 'handover-org', 'alice'), 404);
      assert.equal((await s.api('GET', `/teams/${owners}`, tok(alice))).status, 404);
      assert.equal(
        (await s.api('PATCH', '/orgs/handover-org', { token: alice.token, body: { location: 'y' } })).status,
        403,
      );
      const last = await s.api('DELETE', `/teams/${owners}/members/dave`, tok(dave));
      assert.equal(last.status, 422);
    });
  });

  describe('DELETE /teams/{id}', () => {
    let doomed: TeamJson;
    let keep: TeamJson;
    before(async () => {
      doomed = await createTeam(alice, 'team-org', {
        name: 'doomed',
        permission: 'read',
        units: ['repo.code'],
      });
      keep = await createTeam(alice, 'team-org', {
        name: 'keeper',
        permission: 'read',
        units: ['repo.code'],
      });
      await s.createUser('zed');
      await addToTeam(alice, doomed.id, 'zed');
      await addToTeam(alice, doomed.id, 'carol');
      await addToTeam(alice, keep.id, 'carol');
    });

    it('answers 403 to members who are not owners, 404 to outsiders, 401 to anonymous callers', async () => {
      assert.equal((await s.api('DELETE', `/teams/${doomed.id}`, tok(carol))).status, 403);
      assert.equal((await s.api('DELETE', `/teams/${doomed.id}`, tok(bob))).status, 403);
      assert.equal((await s.api('DELETE', `/teams/${doomed.id}`, tok(eve))).status, 404);
      assert.equal((await s.api('DELETE', `/teams/${doomed.id}`)).status, 401);
      assert.equal((await getTeam(alice, doomed.id)).name, 'doomed');
    });

    it('never deletes the Owners team (422)', async () => {
      const r = await s.api<ErrorJson>('DELETE', `/teams/${ownersId}`, tok(alice));
      assert.equal(r.status, 422);
      assert.equal((await s.api('DELETE', `/teams/${ownersId}`, tok(admin))).status, 422);
      assert.equal((await getTeam(alice, ownersId)).name, 'Owners');
    });

    it('deletes a team: members left in no team leave the organization, the others stay', async () => {
      const r = await s.api('DELETE', `/teams/${doomed.id}`, tok(alice));
      assert.equal(r.status, 204, r.text);
      assert.equal(r.text, '');
      assert.equal((await s.api('GET', `/teams/${doomed.id}`, tok(alice))).status, 404);
      assert.equal((await s.api('DELETE', `/teams/${doomed.id}`, tok(alice))).status, 404);
      assert.equal((await s.api('GET', `/teams/${doomed.id}/members`, tok(alice))).status, 404);
      const list = await s.api<TeamJson[]>('GET', '/orgs/team-org/teams?limit=50', tok(alice));
      assert.ok(!teamNames(list.body).includes('doomed'));
      assert.equal(await orgMembership(alice, 'team-org', 'zed'), 404);
      assert.equal(await orgMembership(alice, 'team-org', 'carol'), 204);
      const members = await s.api<UserJson[]>('GET', '/orgs/team-org/members', tok(alice));
      assert.ok(!logins(members.body).includes('zed'));
      // The name is free again.
      await createTeam(alice, 'team-org', { name: 'doomed', permission: 'read', units: ['repo.code'] });
    });

    it('lets a site administrator delete a team', async () => {
      assert.equal((await s.api('DELETE', `/teams/${keep.id}`, tok(admin))).status, 204);
      assert.equal((await s.api('GET', `/teams/${keep.id}`, tok(admin))).status, 404);
      assert.equal(await orgMembership(alice, 'team-org', 'carol'), 204, 'carol is still in ops');
    });
  });

  describe('GET /user/teams', () => {
    it("lists the caller's teams across organizations, each with its organization", async () => {
      const other = await s.api<OrgJson>('POST', '/orgs', {
        token: dave.token,
        body: { username: 'bob-too' },
      });
      assert.equal(other.status, 201);
      const otherTeam = await createTeam(dave, 'bob-too', {
        name: 'alpha',
        permission: 'read',
        units: ['repo.code'],
      });
      await addToTeam(dave, otherTeam.id, 'bob');

      const r = await s.api<TeamJson[]>('GET', '/user/teams', tok(bob));
      assert.equal(r.status, 200, r.text);
      const got = r.body.map((t) => `${t.organization?.name}/${t.name}`).sort();
      assert.deepEqual(got, ['bob-too/alpha', 'team-org/devs', 'team-org/frontend']);
      assert.equal(r.headers.get('x-total-count'), '3');
      for (const t of r.body) assert.deepEqual(Object.keys(t).sort(), TEAM_KEYS);
      const alpha = r.body.find((t) => t.name === 'alpha')!;
      assert.equal(alpha.organization?.id, other.body.id);
      const p = await s.api<TeamJson[]>('GET', '/user/teams?page=2&limit=2', tok(bob));
      assert.equal(p.body.length, 1);
      assert.equal(p.headers.get('x-total-count'), '3');
    });

    it('lists the Owners teams of the caller', async () => {
      const r = await s.api<TeamJson[]>('GET', '/user/teams', tok(dave));
      assert.ok(r.body.some((t) => t.name === 'Owners' && t.organization?.name === 'bob-too'));
      assert.ok(r.body.some((t) => t.name === 'Owners' && t.organization?.name === 'handover-org'));
    });

    it('answers an empty list to a user in no team and 401 to anonymous callers', async () => {
      const r = await s.api<TeamJson[]>('GET', '/user/teams', tok(eve));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, []);
      assert.equal(r.headers.get('x-total-count'), '0');
      assert.equal((await s.api('GET', '/user/teams')).status, 401);
    });
  });
});
