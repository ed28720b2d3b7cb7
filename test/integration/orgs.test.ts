// Organizations and their members over HTTP: creation, visibility, editing, deletion, the lists,
// administration, and (public) membership. Teams have their own file.
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
  username: string;
  full_name: string;
  email: string;
  avatar_url: string;
  description: string;
  website: string;
  location: string;
  visibility: string;
  repo_admin_change_team_access: boolean;
}

interface UserJson {
  id: number;
  login: string;
}

interface TeamJson {
  id: number;
  name: string;
  permission: string;
}

interface ErrorJson {
  message: string;
  url: string;
}

/** The properties of Forgejo's Organization definition, and nothing else. */
const ORG_KEYS = [
  'avatar_url',
  'description',
  'email',
  'full_name',
  'id',
  'location',
  'name',
  'repo_admin_change_team_access',
  'username',
  'visibility',
  'website',
];

const logins = (users: UserJson[]) => users.map((u) => u.login);
const names = (orgs: OrgJson[]) => orgs.map((o) => o.name);

describe('organizations', () => {
  let s: TestServer;
  let alice: U;
  let bob: U;
  let carol: U;
  let dave: U;
  let eve: U;
  /** The site administrator made by the test server. */
  let admin: U;
  /** Id of the "members" team of each organization made by `memberTeam`. */
  const memberTeams = new Map<string, number>();

  const tok = (u: U | null) => (u ? { token: u.token } : {});

  async function createOrg(owner: U, name: string, extra: Record<string, unknown> = {}): Promise<OrgJson> {
    const r = await s.api<OrgJson>('POST', '/orgs', {
      token: owner.token,
      body: { username: name, ...extra },
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  /** The organization's plain (non-owner) team, made on first use. */
  async function memberTeam(owner: U, org: string): Promise<number> {
    let id = memberTeams.get(org);
    if (id === undefined) {
      const r = await s.api<TeamJson>('POST', `/orgs/${org}/teams`, {
        token: owner.token,
        body: { name: 'members', permission: 'read', units: ['repo.code'] },
      });
      assert.equal(r.status, 201, r.text);
      id = r.body.id;
      memberTeams.set(org, id);
    }
    return id;
  }

  /** Makes `user` a plain member of `org` (through its members team). */
  async function addMember(owner: U, org: string, user: U): Promise<void> {
    const team = await memberTeam(owner, org);
    const r = await s.api('PUT', `/teams/${team}/members/${user.name}`, { token: owner.token });
    assert.equal(r.status, 204, r.text);
  }

  async function ownersTeam(owner: U, org: string): Promise<number> {
    const r = await s.api<TeamJson[]>('GET', `/orgs/${org}/teams`, { token: owner.token });
    assert.equal(r.status, 200, r.text);
    const team = r.body.find((t) => t.permission === 'owner');
    assert.ok(team, 'the organization has an owners team');
    return team.id;
  }

  async function isMember(viewer: U, org: string, user: string): Promise<number> {
    return (await s.api('GET', `/orgs/${org}/members/${user}`, { token: viewer.token })).status;
  }

  async function tokenFor(u: U, name: string, scopes: string[]): Promise<string> {
    const r = await s.api<{ sha1: string }>('POST', `/users/${u.name}/tokens`, {
      basic: [u.name, u.password],
      body: { name, scopes },
    });
    assert.equal(r.status, 201, r.text);
    return r.body.sha1;
  }

  async function editUser(name: string, body: Record<string, unknown>): Promise<void> {
    const r = await s.api('PATCH', `/admin/users/${name}`, { token: s.admin.token, body });
    assert.equal(r.status, 200, r.text);
  }

  /** Every page of a list endpoint, following page numbers until X-Total-Count is reached. */
  async function allPages<T>(path: string, token: string | undefined, limit: number): Promise<T[]> {
    const out: T[] = [];
    for (let page = 1; page < 100; page++) {
      const sep = path.includes('?') ? '&' : '?';
      const r = await s.api<T[]>('GET', `${path}${sep}page=${page}&limit=${limit}`, token ? { token } : {});
      assert.equal(r.status, 200, r.text);
      out.push(...r.body);
      if (r.body.length < limit) break;
    }
    return out;
  }

  before(async () => {
    s = await startServer();
    admin = { ...s.admin, id: 1 };
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    eve = await s.createUser('eve');
  });
  after(() => s.close());

  describe('POST /orgs', () => {
    it('creates an organization in Forgejo shape, with every option', async () => {
      const r = await s.api<OrgJson>('POST', '/orgs', {
        token: alice.token,
        body: {
          username: 'Acme',
          full_name: 'Acme Corporation',
          email: 'info@acme.example',
          description: 'We make anvils',
          website: 'https://acme.example',
          location: 'Desert',
          visibility: 'limited',
          repo_admin_change_team_access: true,
        },
      });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ORG_KEYS);
      assert.equal(typeof r.body.id, 'number');
      assert.deepEqual(r.body, {
        id: r.body.id,
        name: 'Acme',
        username: 'Acme',
        full_name: 'Acme Corporation',
        email: 'info@acme.example',
        avatar_url: `${s.url}/avatars/${r.body.id}`,
        description: 'We make anvils',
        website: 'https://acme.example',
        location: 'Desert',
        visibility: 'limited',
        repo_admin_change_team_access: true,
      });
      const got = await s.api<OrgJson>('GET', '/orgs/Acme', { token: alice.token });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, r.body);
    });

    it('defaults every optional field', async () => {
      const o = await createOrg(alice, 'plain-org');
      assert.equal(o.name, 'plain-org');
      assert.equal(o.username, 'plain-org');
      assert.equal(o.full_name, '');
      assert.equal(o.email, '');
      assert.equal(o.description, '');
      assert.equal(o.website, '');
      assert.equal(o.location, '');
      assert.equal(o.visibility, 'public');
      assert.equal(o.repo_admin_change_team_access, false);
    });

    it('makes the creator the only owner and member', async () => {
      await createOrg(bob, 'bobs-org');
      assert.equal(await isMember(bob, 'bobs-org', 'bob'), 204);
      const members = await s.api<UserJson[]>('GET', '/orgs/bobs-org/members', { token: bob.token });
      assert.equal(members.status, 200);
      assert.deepEqual(logins(members.body), ['bob']);
      const teams = await s.api<(TeamJson & { units: string[] })[]>('GET', '/orgs/bobs-org/teams', {
        token: bob.token,
      });
      assert.equal(teams.status, 200);
      assert.equal(teams.body.length, 1);
      assert.equal(teams.body[0]!.name, 'Owners');
      assert.equal(teams.body[0]!.permission, 'owner');
      const teamMembers = await s.api<UserJson[]>('GET', `/teams/${teams.body[0]!.id}/members`, {
        token: bob.token,
      });
      assert.equal(teamMembers.status, 200);
      assert.deepEqual(logins(teamMembers.body), ['bob']);
      const mine = await s.api<OrgJson[]>('GET', '/user/orgs', { token: bob.token });
      assert.ok(names(mine.body).includes('bobs-org'));
      // The creator's membership starts concealed.
      const pub = await s.api<UserJson[]>('GET', '/orgs/bobs-org/public_members');
      assert.deepEqual(pub.body, []);
    });

    for (const name of [
      'api',
      'admin',
      'org',
      'ghost',
      'anvil-actions',
      'Admin',
      'GHOST',
      'thing.git',
      'a.keys',
    ]) {
      it(`refuses the reserved name ${name} with 422`, async () => {
        const r = await s.api<ErrorJson>('POST', '/orgs', { token: alice.token, body: { username: name } });
        assert.equal(r.status, 422, r.text);
        assert.match(r.body.message, /reserved/);
      });
    }

    for (const name of [
      '-lead',
      'trail-',
      'dou..ble',
      'mi-_x',
      'has space',
      'sl/ash',
      'ünï',
      'x'.repeat(41),
      '',
    ]) {
      it(`refuses the invalid name ${JSON.stringify(name)} with 422`, async () => {
        const r = await s.api<ErrorJson>('POST', '/orgs', { token: alice.token, body: { username: name } });
        assert.equal(r.status, 422, r.text);
        assert.match(r.body.message, /Username/);
      });
    }

    it('accepts a name of exactly 40 characters', async () => {
      await createOrg(alice, 'o'.repeat(40));
    });

    it('answers 422 when the username is missing or of the wrong type', async () => {
      let r = await s.api<ErrorJson>('POST', '/orgs', { token: alice.token, body: { full_name: 'x' } });
      assert.equal(r.status, 422);
      assert.match(r.body.message, /Username/);
      r = await s.api<ErrorJson>('POST', '/orgs', {
        token: alice.token,
        body: { username: 'ok-name', visibility: 'secret' },
      });
      assert.equal(r.status, 422);
      assert.match(r.body.message, /Visibility/);
    });

    it('refuses a name taken by an organization or a user, whatever the case', async () => {
      await createOrg(alice, 'dup-org');
      for (const name of ['dup-org', 'DUP-ORG', 'bob', 'Carol']) {
        const r = await s.api<ErrorJson>('POST', '/orgs', { token: dave.token, body: { username: name } });
        assert.equal(r.status, 422, `${name}: ${r.text}`);
        assert.match(r.body.message, /already exists/);
      }
      // Nothing changed: dup-org still has alice as its only member, and carol is still a user.
      const members = await s.api<UserJson[]>('GET', '/orgs/dup-org/members', { token: alice.token });
      assert.deepEqual(logins(members.body), ['alice']);
      assert.equal((await s.api('GET', '/orgs/carol', { token: alice.token })).status, 404);
    });

    it('answers 401 to anonymous callers', async () => {
      const r = await s.api<ErrorJson>('POST', '/orgs', { body: { username: 'anon-org' } });
      assert.equal(r.status, 401);
      assert.equal((await s.api('GET', '/orgs/anon-org')).status, 404);
    });

    it('answers 403 to a token without write:organization', async () => {
      const readOnly = await tokenFor(dave, 'read-org', ['read:organization']);
      let r = await s.api('POST', '/orgs', { token: readOnly, body: { username: 'scoped-org' } });
      assert.equal(r.status, 403);
      const userOnly = await tokenFor(dave, 'user-only', ['write:user']);
      r = await s.api('POST', '/orgs', { token: userOnly, body: { username: 'scoped-org' } });
      assert.equal(r.status, 403);
      const writeOrg = await tokenFor(dave, 'write-org', ['write:organization']);
      r = await s.api('POST', '/orgs', { token: writeOrg, body: { username: 'scoped-org' } });
      assert.equal(r.status, 201, r.text);
    });

    it('answers 403 to a user who may not create organizations, until allowed again', async () => {
      const u = await s.createUser('no-orgs');
      await editUser('no-orgs', { allow_create_organization: false });
      let r = await s.api<ErrorJson>('POST', '/orgs', { token: u.token, body: { username: 'not-allowed' } });
      assert.equal(r.status, 403, r.text);
      assert.equal((await s.api('GET', '/orgs/not-allowed', { token: s.admin.token })).status, 404);
      await editUser('no-orgs', { allow_create_organization: true });
      r = await s.api('POST', '/orgs', { token: u.token, body: { username: 'not-allowed' } });
      assert.equal(r.status, 201, r.text);
    });

    it('lets a restricted user create an organization, as Forgejo does', async () => {
      const u = await s.createUser('restricted-maker');
      await editUser('restricted-maker', { restricted: true });
      const r = await s.api<OrgJson>('POST', '/orgs', {
        token: u.token,
        body: { username: 'restricted-made', visibility: 'limited' },
      });
      assert.equal(r.status, 201, r.text);
      const got = await s.api('GET', '/orgs/restricted-made', { token: u.token });
      assert.equal(got.status, 200);
    });
  });

  describe('GET /orgs/{org} and visibility', () => {
    before(async () => {
      await createOrg(alice, 'vis-public', { email: 'pub@vis.example' });
      await createOrg(alice, 'vis-limited', { visibility: 'limited', email: 'lim@vis.example' });
      await createOrg(alice, 'vis-private', { visibility: 'private', email: 'priv@vis.example' });
      await addMember(alice, 'vis-private', bob);
    });

    it('answers 404 for an unknown organization and for an individual user', async () => {
      let r = await s.api<ErrorJson>('GET', '/orgs/no-such-org', { token: alice.token });
      assert.equal(r.status, 404);
      assert.equal(typeof r.body.message, 'string');
      r = await s.api<ErrorJson>('GET', '/orgs/bob', { token: alice.token });
      assert.equal(r.status, 404);
    });

    it('finds an organization whatever the case of the name', async () => {
      const r = await s.api<OrgJson>('GET', '/orgs/VIS-PUBLIC', { token: eve.token });
      assert.equal(r.status, 200);
      assert.equal(r.body.name, 'vis-public');
    });

    it('shows a public organization to everyone', async () => {
      for (const viewer of [null, eve, bob, alice]) {
        const r = await s.api<OrgJson>('GET', '/orgs/vis-public', tok(viewer));
        assert.equal(r.status, 200, viewer?.name ?? 'anonymous');
        assert.equal(r.body.visibility, 'public');
      }
    });

    it('hides a limited organization from anonymous callers only', async () => {
      assert.equal((await s.api('GET', '/orgs/vis-limited')).status, 404);
      for (const viewer of [eve, bob, alice]) {
        const r = await s.api<OrgJson>('GET', '/orgs/vis-limited', tok(viewer));
        assert.equal(r.status, 200, viewer.name);
        assert.equal(r.body.visibility, 'limited');
      }
    });

    it('hides a private organization from everyone but members and admins', async () => {
      assert.equal((await s.api('GET', '/orgs/vis-private')).status, 404);
      assert.equal((await s.api('GET', '/orgs/vis-private', tok(eve))).status, 404);
      for (const token of [bob.token, alice.token, s.admin.token]) {
        const r = await s.api<OrgJson>('GET', '/orgs/vis-private', { token });
        assert.equal(r.status, 200);
        assert.equal(r.body.visibility, 'private');
      }
    });

    it('hides everything under a private organization from non-members', async () => {
      for (const path of [
        '/orgs/vis-private/members',
        '/orgs/vis-private/public_members',
        '/orgs/vis-private/members/alice',
      ]) {
        assert.equal((await s.api('GET', path, tok(eve))).status, 404, path);
        assert.equal((await s.api('GET', path)).status, 404, path);
      }
    });

    it('hides a limited organization from a restricted user who is not a member', async () => {
      const rita = await s.createUser('rita');
      await editUser('rita', { restricted: true });
      assert.equal((await s.api('GET', '/orgs/vis-limited', tok(rita))).status, 404);
      assert.equal((await s.api('GET', '/orgs/vis-private', tok(rita))).status, 404);
      assert.equal((await s.api('GET', '/orgs/vis-public', tok(rita))).status, 200);
      await addMember(alice, 'vis-limited', rita);
      assert.equal((await s.api('GET', '/orgs/vis-limited', tok(rita))).status, 200);
    });

    it('shows the e-mail address to signed-in callers only', async () => {
      for (const org of ['vis-public', 'vis-limited']) {
        const signed = await s.api<OrgJson>('GET', `/orgs/${org}`, tok(eve));
        assert.equal(signed.status, 200);
        assert.equal(signed.body.email, org === 'vis-public' ? 'pub@vis.example' : 'lim@vis.example');
      }
      const anon = await s.api<OrgJson>('GET', '/orgs/vis-public');
      assert.equal(anon.status, 200);
      assert.equal(anon.body.email, '');
      assert.deepEqual(Object.keys(anon.body).sort(), ORG_KEYS);
      const member = await s.api<OrgJson>('GET', '/orgs/vis-private', tok(bob));
      assert.equal(member.body.email, 'priv@vis.example');
    });

    it('hides the e-mail address from anonymous callers in lists too', async () => {
      const anon = await allPages<OrgJson>('/orgs', undefined, 50);
      const pub = anon.find((o) => o.name === 'vis-public');
      assert.ok(pub);
      assert.equal(pub.email, '');
      assert.ok(anon.every((o) => o.email === ''));
      const signed = await allPages<OrgJson>('/orgs', eve.token, 50);
      assert.equal(signed.find((o) => o.name === 'vis-public')?.email, 'pub@vis.example');
      assert.equal(signed.find((o) => o.name === 'vis-limited')?.email, 'lim@vis.example');

      // alice's memberships are concealed: make one public so it shows in /users/alice/orgs.
      assert.equal((await s.api('PUT', '/orgs/vis-public/public_members/alice', tok(alice))).status, 204);
      const ofAlice = await s.api<OrgJson[]>('GET', '/users/alice/orgs');
      assert.equal(ofAlice.status, 200);
      assert.deepEqual(names(ofAlice.body), ['vis-public']);
      assert.equal(ofAlice.body[0]!.email, '');
      const ofAliceSigned = await s.api<OrgJson[]>('GET', '/users/alice/orgs', tok(eve));
      assert.equal(ofAliceSigned.body[0]!.email, 'pub@vis.example');
    });
  });

  describe('PATCH /orgs/{org}', () => {
    before(async () => {
      await createOrg(alice, 'edit-org', {
        full_name: 'Edit Org',
        email: 'edit@org.example',
        location: 'Here',
      });
      await addMember(alice, 'edit-org', bob);
      await createOrg(alice, 'edit-private', { visibility: 'private' });
    });

    it('lets an owner change the fields given, and only those', async () => {
      const r = await s.api<OrgJson>('PATCH', '/orgs/edit-org', {
        token: alice.token,
        body: {
          description: 'Now described',
          website: 'https://edit.example',
          repo_admin_change_team_access: true,
        },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ORG_KEYS);
      assert.equal(r.body.name, 'edit-org');
      assert.equal(r.body.description, 'Now described');
      assert.equal(r.body.website, 'https://edit.example');
      assert.equal(r.body.repo_admin_change_team_access, true);
      assert.equal(r.body.full_name, 'Edit Org');
      assert.equal(r.body.email, 'edit@org.example');
      assert.equal(r.body.location, 'Here');
      assert.equal(r.body.visibility, 'public');
      const got = await s.api<OrgJson>('GET', '/orgs/edit-org', tok(alice));
      assert.deepEqual(got.body, r.body);
    });

    it('changes nothing for an empty body', async () => {
      const before = await s.api<OrgJson>('GET', '/orgs/edit-org', tok(alice));
      const r = await s.api<OrgJson>('PATCH', '/orgs/edit-org', { token: alice.token, body: {} });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, before.body);
    });

    it('changes the e-mail address and the visibility', async () => {
      const r = await s.api<OrgJson>('PATCH', '/orgs/edit-org', {
        token: alice.token,
        body: { email: 'new@org.example', full_name: 'Renamed Org', visibility: 'private' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.email, 'new@org.example');
      assert.equal(r.body.full_name, 'Renamed Org');
      assert.equal(r.body.visibility, 'private');
      assert.equal((await s.api('GET', '/orgs/edit-org')).status, 404);
      assert.equal((await s.api('GET', '/orgs/edit-org', tok(eve))).status, 404);
      assert.equal((await s.api('GET', '/orgs/edit-org', tok(bob))).status, 200);
      const back = await s.api<OrgJson>('PATCH', '/orgs/edit-org', {
        token: alice.token,
        body: { visibility: 'public' },
      });
      assert.equal(back.status, 200);
      assert.equal(back.body.visibility, 'public');
      assert.equal(back.body.email, 'new@org.example');
      assert.equal((await s.api('GET', '/orgs/edit-org')).status, 200);
    });

    it('refuses an invalid e-mail address or visibility with 422', async () => {
      let r = await s.api<ErrorJson>('PATCH', '/orgs/edit-org', {
        token: alice.token,
        body: { email: 'not-an-email' },
      });
      assert.equal(r.status, 422);
      assert.match(r.body.message, /Email/);
      r = await s.api<ErrorJson>('PATCH', '/orgs/edit-org', {
        token: alice.token,
        body: { visibility: 'hidden' },
      });
      assert.equal(r.status, 422);
      const got = await s.api<OrgJson>('GET', '/orgs/edit-org', tok(alice));
      assert.equal(got.body.email, 'new@org.example');
      assert.equal(got.body.visibility, 'public');
    });

    it('answers 403 to a member who is not an owner, and to a non-member of a visible organization', async () => {
      for (const u of [bob, eve]) {
        const r = await s.api<ErrorJson>('PATCH', '/orgs/edit-org', {
          token: u.token,
          body: { description: 'hijacked' },
        });
        assert.equal(r.status, 403, u.name);
      }
      const got = await s.api<OrgJson>('GET', '/orgs/edit-org', tok(alice));
      assert.equal(got.body.description, 'Now described');
    });

    it('answers 404 to a non-member of a private organization, and for an unknown one', async () => {
      let r = await s.api('PATCH', '/orgs/edit-private', { token: eve.token, body: { description: 'x' } });
      assert.equal(r.status, 404);
      r = await s.api('PATCH', '/orgs/no-such-org', { token: alice.token, body: { description: 'x' } });
      assert.equal(r.status, 404);
    });

    it('answers 401 to anonymous callers', async () => {
      const r = await s.api('PATCH', '/orgs/edit-org', { body: { description: 'x' } });
      assert.equal(r.status, 401);
    });

    it('lets a site administrator edit any organization', async () => {
      const r = await s.api<OrgJson>('PATCH', '/orgs/edit-private', {
        token: s.admin.token,
        body: { location: 'Admin land' },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.location, 'Admin land');
    });
  });

  describe('DELETE /orgs/{org}', () => {
    it('answers 403 to members who are not owners and to non-members, 401 to anonymous callers', async () => {
      await createOrg(alice, 'doomed');
      await addMember(alice, 'doomed', bob);
      assert.equal((await s.api('DELETE', '/orgs/doomed', tok(bob))).status, 403);
      assert.equal((await s.api('DELETE', '/orgs/doomed', tok(eve))).status, 403);
      assert.equal((await s.api('DELETE', '/orgs/doomed')).status, 401);
      assert.equal((await s.api('GET', '/orgs/doomed')).status, 200);
    });

    it('lets an owner delete it: then it, its teams and the memberships are gone', async () => {
      const teamId = await memberTeam(alice, 'doomed');
      const owners = await ownersTeam(alice, 'doomed');
      const r = await s.api('DELETE', '/orgs/doomed', tok(alice));
      assert.equal(r.status, 204, r.text);
      assert.equal(r.text, '');
      assert.equal((await s.api('GET', '/orgs/doomed', tok(alice))).status, 404);
      assert.equal((await s.api('DELETE', '/orgs/doomed', tok(alice))).status, 404);
      assert.equal((await s.api('GET', `/teams/${teamId}`, tok(admin))).status, 404);
      assert.equal((await s.api('GET', `/teams/${owners}`, tok(admin))).status, 404);
      const bobs = await s.api<OrgJson[]>('GET', '/user/orgs', tok(bob));
      assert.ok(!names(bobs.body).includes('doomed'));
      const bobTeams = await s.api<TeamJson[]>('GET', '/user/teams', tok(bob));
      assert.ok(!bobTeams.body.some((t) => t.id === teamId));
      memberTeams.delete('doomed');
      // The name is free again.
      await createOrg(bob, 'doomed');
    });

    it('answers 404 to a non-member of a private organization', async () => {
      await createOrg(alice, 'doomed-private', { visibility: 'private' });
      assert.equal((await s.api('DELETE', '/orgs/doomed-private', tok(eve))).status, 404);
      assert.equal((await s.api('GET', '/orgs/doomed-private', tok(alice))).status, 200);
    });

    it('lets a site administrator delete any organization', async () => {
      assert.equal((await s.api('DELETE', '/orgs/doomed-private', { token: s.admin.token })).status, 204);
      assert.equal((await s.api('GET', '/orgs/doomed-private', { token: s.admin.token })).status, 404);
    });
  });

  describe('GET /orgs and GET /admin/orgs', () => {
    before(async () => {
      await createOrg(carol, 'list-zeta-public');
      await createOrg(carol, 'list-alpha-limited', { visibility: 'limited' });
      await createOrg(carol, 'list-mid-private', { visibility: 'private' });
      await addMember(carol, 'list-mid-private', dave);
    });

    it('shows anonymous callers public organizations only', async () => {
      const all = await allPages<OrgJson>('/orgs', undefined, 50);
      assert.ok(names(all).includes('list-zeta-public'));
      assert.ok(!names(all).includes('list-alpha-limited'));
      assert.ok(!names(all).includes('list-mid-private'));
      assert.ok(all.every((o) => o.visibility === 'public'));
    });

    it('shows signed-in users public and limited organizations, not private ones', async () => {
      for (const u of [eve, dave, carol]) {
        const all = await allPages<OrgJson>('/orgs', u.token, 50);
        assert.ok(names(all).includes('list-zeta-public'), u.name);
        assert.ok(names(all).includes('list-alpha-limited'), u.name);
        // As in Forgejo, this list never holds private organizations for non-administrators, members or not.
        assert.ok(!names(all).includes('list-mid-private'), u.name);
        assert.ok(
          all.every((o) => o.visibility !== 'private'),
          u.name,
        );
      }
    });

    it('shows a restricted user only the organizations they belong to', async () => {
      const rhea = await s.createUser('rhea');
      await editUser('rhea', { restricted: true });
      let all = await allPages<OrgJson>('/orgs', rhea.token, 50);
      assert.deepEqual(names(all), []);
      await addMember(carol, 'list-alpha-limited', rhea);
      all = await allPages<OrgJson>('/orgs', rhea.token, 50);
      assert.deepEqual(names(all), ['list-alpha-limited']);
      const r = await s.api<OrgJson[]>('GET', '/orgs', tok(rhea));
      assert.equal(r.headers.get('x-total-count'), '1');
    });

    it('shows site administrators every organization', async () => {
      const all = await allPages<OrgJson>('/orgs', s.admin.token, 50);
      for (const n of ['list-zeta-public', 'list-alpha-limited', 'list-mid-private', 'vis-private']) {
        assert.ok(names(all).includes(n), n);
      }
    });

    it('sorts by name and pages with X-Total-Count and Link headers', async () => {
      const first = await s.api<OrgJson[]>('GET', '/orgs?limit=50', tok(eve));
      assert.equal(first.status, 200);
      const total = Number(first.headers.get('x-total-count'));
      assert.equal(total, first.body.length);
      assert.ok(total > 4);
      assert.deepEqual(
        names(first.body),
        [...names(first.body)].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)),
      );
      const paged = await allPages<OrgJson>('/orgs', eve.token, 2);
      assert.deepEqual(names(paged), names(first.body));

      const p1 = await s.api<OrgJson[]>('GET', '/orgs?page=1&limit=2', tok(eve));
      assert.equal(p1.body.length, 2);
      assert.equal(p1.headers.get('x-total-count'), String(total));
      const link = p1.headers.get('link') ?? '';
      assert.match(link, /rel="next"/);
      assert.match(link, /rel="last"/);
      assert.doesNotMatch(link, /rel="prev"/);
      const lastPage = Math.ceil(total / 2);
      assert.ok(link.includes(`page=${lastPage}&limit=2>; rel="last"`), link);
      const pl = await s.api<OrgJson[]>('GET', `/orgs?page=${lastPage}&limit=2`, tok(eve));
      assert.match(pl.headers.get('link') ?? '', /rel="prev"/);
      assert.doesNotMatch(pl.headers.get('link') ?? '', /rel="next"/);
      const beyond = await s.api<OrgJson[]>('GET', `/orgs?page=${lastPage + 1}&limit=2`, tok(eve));
      assert.equal(beyond.status, 200);
      assert.deepEqual(beyond.body, []);
      assert.equal(beyond.headers.get('x-total-count'), String(total));
    });

    it('GET /admin/orgs lists every organization for administrators', async () => {
      const r = await s.api<OrgJson[]>('GET', '/admin/orgs?limit=50', { token: s.admin.token });
      assert.equal(r.status, 200);
      assert.equal(Number(r.headers.get('x-total-count')), r.body.length);
      for (const n of ['list-zeta-public', 'list-alpha-limited', 'list-mid-private', 'vis-private']) {
        assert.ok(names(r.body).includes(n), n);
      }
      assert.ok(r.body.every((o) => Object.keys(o).sort().join() === ORG_KEYS.join()));
      const paged = await allPages<OrgJson>('/admin/orgs', s.admin.token, 3);
      assert.deepEqual(names(paged), names(r.body));
    });

    it('GET /admin/orgs answers 403 to other users and 401 to anonymous callers', async () => {
      assert.equal((await s.api('GET', '/admin/orgs', tok(carol))).status, 403);
      assert.equal((await s.api('GET', '/admin/orgs', tok(dave))).status, 403);
      assert.equal((await s.api('GET', '/admin/orgs')).status, 401);
    });
  });

  describe("a user's organizations", () => {
    let olga: U;
    before(async () => {
      olga = await s.createUser('olga');
      // Created out of alphabetical order on purpose.
      for (const [org, visibility] of [
        ['uo-d-private', 'private'],
        ['uo-b-concealed', 'public'],
        ['uo-a-public', 'public'],
        ['uo-c-limited', 'limited'],
      ] as const) {
        await createOrg(alice, org, { visibility });
        await addMember(alice, org, olga);
        if (org !== 'uo-b-concealed') {
          const r = await s.api('PUT', `/orgs/${org}/public_members/olga`, tok(olga));
          assert.equal(r.status, 204);
        }
      }
    });

    const ALL = ['uo-a-public', 'uo-b-concealed', 'uo-c-limited', 'uo-d-private'];

    it('GET /user/orgs lists all of them, sorted by name, with paging headers', async () => {
      const r = await s.api<OrgJson[]>('GET', '/user/orgs', tok(olga));
      assert.equal(r.status, 200);
      assert.deepEqual(names(r.body), ALL);
      assert.equal(r.headers.get('x-total-count'), '4');
      assert.ok(r.body.every((o) => Object.keys(o).sort().join() === ORG_KEYS.join()));
      const p2 = await s.api<OrgJson[]>('GET', '/user/orgs?page=2&limit=3', tok(olga));
      assert.deepEqual(names(p2.body), ['uo-d-private']);
      assert.equal(p2.headers.get('x-total-count'), '4');
      assert.match(p2.headers.get('link') ?? '', /rel="first"/);
    });

    it('GET /user/orgs answers 401 to anonymous callers and lists nothing for a user in no organization', async () => {
      assert.equal((await s.api('GET', '/user/orgs')).status, 401);
      const lonely = await s.createUser('lonely');
      const r = await s.api<OrgJson[]>('GET', '/user/orgs', tok(lonely));
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, []);
      assert.equal(r.headers.get('x-total-count'), '0');
    });

    it('GET /users/{username}/orgs shows the user and administrators every membership', async () => {
      for (const token of [olga.token, s.admin.token]) {
        const r = await s.api<OrgJson[]>('GET', '/users/olga/orgs', { token });
        assert.equal(r.status, 200);
        assert.deepEqual(names(r.body), ALL);
      }
    });

    it('GET /users/{username}/orgs shows others only public memberships of public organizations', async () => {
      for (const viewer of [eve, alice, null]) {
        const r = await s.api<OrgJson[]>('GET', '/users/olga/orgs', tok(viewer));
        assert.equal(r.status, 200, viewer?.name ?? 'anonymous');
        assert.deepEqual(names(r.body), ['uo-a-public'], viewer?.name ?? 'anonymous');
        assert.equal(r.headers.get('x-total-count'), '1');
      }
    });

    it('GET /users/{username}/orgs answers 404 for an unknown user', async () => {
      assert.equal((await s.api('GET', '/users/no-such-user/orgs', tok(eve))).status, 404);
    });
  });

  describe('POST /admin/users/{username}/orgs', () => {
    it('creates an organization owned by the user, not by the administrator', async () => {
      const r = await s.api<OrgJson>('POST', '/admin/users/carol/orgs', {
        token: s.admin.token,
        body: {
          username: 'carols-corp',
          full_name: 'Carol Corp',
          visibility: 'private',
          email: 'corp@carol.example',
        },
      });
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ORG_KEYS);
      assert.equal(r.body.name, 'carols-corp');
      assert.equal(r.body.full_name, 'Carol Corp');
      assert.equal(r.body.visibility, 'private');
      assert.equal(r.body.email, 'corp@carol.example');

      const members = await s.api<UserJson[]>('GET', '/orgs/carols-corp/members', tok(carol));
      assert.equal(members.status, 200);
      assert.deepEqual(logins(members.body), ['carol']);
      assert.equal(await isMember(carol, 'carols-corp', 'root'), 404);
      const mine = await s.api<OrgJson[]>('GET', '/user/orgs', tok(carol));
      assert.ok(names(mine.body).includes('carols-corp'));
      const edit = await s.api<OrgJson>('PATCH', '/orgs/carols-corp', {
        token: carol.token,
        body: { location: 'Mine' },
      });
      assert.equal(edit.status, 200, edit.text);
      const owners = await s.api<UserJson[]>(
        'GET',
        `/teams/${await ownersTeam(carol, 'carols-corp')}/members`,
        tok(carol),
      );
      assert.deepEqual(logins(owners.body), ['carol']);
    });

    it('answers 403 to non-administrators and 401 to anonymous callers', async () => {
      let r = await s.api('POST', '/admin/users/carol/orgs', {
        token: carol.token,
        body: { username: 'not-by-carol' },
      });
      assert.equal(r.status, 403);
      r = await s.api('POST', '/admin/users/carol/orgs', { body: { username: 'not-by-anon' } });
      assert.equal(r.status, 401);
      assert.equal((await s.api('GET', '/orgs/not-by-carol', { token: s.admin.token })).status, 404);
    });

    it('answers 404 for an unknown user or an organization as the owner', async () => {
      let r = await s.api('POST', '/admin/users/no-such-user/orgs', {
        token: s.admin.token,
        body: { username: 'orphan-org' },
      });
      assert.equal(r.status, 404);
      r = await s.api('POST', '/admin/users/carols-corp/orgs', {
        token: s.admin.token,
        body: { username: 'orphan-org' },
      });
      assert.equal(r.status, 404);
    });

    it('answers 422 for a reserved, invalid or taken name', async () => {
      for (const username of ['admin', 'bad name', 'carols-corp', 'dave']) {
        const r = await s.api('POST', '/admin/users/carol/orgs', {
          token: s.admin.token,
          body: { username },
        });
        assert.equal(r.status, 422, username);
      }
    });
  });

  describe('members', () => {
    before(async () => {
      await createOrg(alice, 'mem-org');
      await addMember(alice, 'mem-org', bob);
      await addMember(alice, 'mem-org', carol);
      assert.equal((await s.api('PUT', '/orgs/mem-org/public_members/bob', tok(bob))).status, 204);
    });

    it('GET /orgs/{org}/members shows members every member', async () => {
      for (const token of [alice.token, bob.token, carol.token, s.admin.token]) {
        const r = await s.api<UserJson[]>('GET', '/orgs/mem-org/members', { token });
        assert.equal(r.status, 200);
        assert.deepEqual(logins(r.body), ['alice', 'bob', 'carol']);
        assert.equal(r.headers.get('x-total-count'), '3');
      }
    });

    it('GET /orgs/{org}/members shows non-members and anonymous callers only public members', async () => {
      for (const viewer of [eve, null]) {
        const r = await s.api<UserJson[]>('GET', '/orgs/mem-org/members', tok(viewer));
        assert.equal(r.status, 200);
        assert.deepEqual(logins(r.body), ['bob']);
        assert.equal(r.headers.get('x-total-count'), '1');
      }
    });

    it('GET /orgs/{org}/members pages', async () => {
      const r = await s.api<UserJson[]>('GET', '/orgs/mem-org/members?page=2&limit=2', tok(alice));
      assert.equal(r.status, 200);
      assert.deepEqual(logins(r.body), ['carol']);
      assert.equal(r.headers.get('x-total-count'), '3');
    });

    it('GET /orgs/{org}/members answers 404 for an unknown organization', async () => {
      assert.equal((await s.api('GET', '/orgs/no-such-org/members', tok(alice))).status, 404);
    });

    it('GET /orgs/{org}/members/{username}: members see every membership', async () => {
      for (const viewer of [alice, bob, admin]) {
        assert.equal(await isMember(viewer, 'mem-org', 'alice'), 204);
        assert.equal(await isMember(viewer, 'mem-org', 'bob'), 204);
        assert.equal(await isMember(viewer, 'mem-org', 'carol'), 204);
        assert.equal(await isMember(viewer, 'mem-org', 'eve'), 404);
        assert.equal(await isMember(viewer, 'mem-org', 'no-such-user'), 404);
      }
    });

    it('GET /orgs/{org}/members/{username}: others see public memberships only', async () => {
      assert.equal(await isMember(eve, 'mem-org', 'bob'), 204);
      assert.equal(await isMember(eve, 'mem-org', 'carol'), 404);
      assert.equal(await isMember(eve, 'mem-org', 'alice'), 404);
      assert.equal(await isMember(eve, 'mem-org', 'eve'), 404);
      assert.equal((await s.api('GET', '/orgs/mem-org/members/bob')).status, 204);
      assert.equal((await s.api('GET', '/orgs/mem-org/members/carol')).status, 404);
      assert.equal((await s.api('GET', '/orgs/no-such-org/members/bob', tok(alice))).status, 404);
    });

    it('GET /orgs/{org}/public_members lists public members for everyone', async () => {
      for (const viewer of [alice, carol, eve, null]) {
        const r = await s.api<UserJson[]>('GET', '/orgs/mem-org/public_members', tok(viewer));
        assert.equal(r.status, 200);
        assert.deepEqual(logins(r.body), ['bob']);
        assert.equal(r.headers.get('x-total-count'), '1');
      }
      assert.equal((await s.api('GET', '/orgs/no-such-org/public_members')).status, 404);
    });

    it('GET /orgs/{org}/public_members/{username} answers 204 for public members only', async () => {
      for (const viewer of [alice, carol, eve, null]) {
        const check = async (u: string) =>
          (await s.api('GET', `/orgs/mem-org/public_members/${u}`, tok(viewer))).status;
        assert.equal(await check('bob'), 204);
        assert.equal(await check('carol'), 404);
        assert.equal(await check('eve'), 404);
        assert.equal(await check('no-such-user'), 404);
      }
    });

    it('a member publicizes and conceals their own membership', async () => {
      let r = await s.api('PUT', '/orgs/mem-org/public_members/carol', tok(carol));
      assert.equal(r.status, 204, r.text);
      assert.equal(r.text, '');
      assert.equal((await s.api('GET', '/orgs/mem-org/public_members/carol')).status, 204);
      assert.equal(await isMember(eve, 'mem-org', 'carol'), 204);
      let pub = await s.api<UserJson[]>('GET', '/orgs/mem-org/public_members');
      assert.deepEqual(logins(pub.body), ['bob', 'carol']);
      // Publicizing again changes nothing.
      assert.equal((await s.api('PUT', '/orgs/mem-org/public_members/carol', tok(carol))).status, 204);

      r = await s.api('DELETE', '/orgs/mem-org/public_members/carol', tok(carol));
      assert.equal(r.status, 204, r.text);
      assert.equal((await s.api('GET', '/orgs/mem-org/public_members/carol')).status, 404);
      assert.equal(await isMember(eve, 'mem-org', 'carol'), 404);
      assert.equal(await isMember(alice, 'mem-org', 'carol'), 204);
      pub = await s.api<UserJson[]>('GET', '/orgs/mem-org/public_members');
      assert.deepEqual(logins(pub.body), ['bob']);
    });

    it('nobody publicizes or conceals the membership of someone else, not even an owner', async () => {
      let r = await s.api<ErrorJson>('PUT', '/orgs/mem-org/public_members/carol', tok(alice));
      assert.equal(r.status, 403);
      r = await s.api<ErrorJson>('DELETE', '/orgs/mem-org/public_members/bob', tok(alice));
      assert.equal(r.status, 403);
      r = await s.api<ErrorJson>('DELETE', '/orgs/mem-org/public_members/bob', tok(carol));
      assert.equal(r.status, 403);
      assert.equal((await s.api('GET', '/orgs/mem-org/public_members/bob')).status, 204);
      assert.equal((await s.api('GET', '/orgs/mem-org/public_members/carol')).status, 404);
    });

    it('a non-member gets 404 for their own publicity; anonymous callers get 401', async () => {
      assert.equal((await s.api('PUT', '/orgs/mem-org/public_members/eve', tok(eve))).status, 404);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/public_members/eve', tok(eve))).status, 404);
      assert.equal((await s.api('GET', '/orgs/mem-org/public_members/eve')).status, 404);
      assert.equal((await s.api('PUT', '/orgs/mem-org/public_members/bob')).status, 401);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/public_members/bob')).status, 401);
      assert.equal((await s.api('PUT', '/orgs/no-such-org/public_members/eve', tok(eve))).status, 404);
      assert.equal((await s.api('PUT', '/orgs/mem-org/public_members/no-such-user', tok(eve))).status, 404);
    });

    it('DELETE /orgs/{org}/members/{username} answers 403 to non-owners and 401 to anonymous callers', async () => {
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/carol', tok(bob))).status, 403);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/bob', tok(bob))).status, 403);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/carol', tok(eve))).status, 403);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/carol')).status, 401);
      assert.equal(await isMember(alice, 'mem-org', 'carol'), 204);
      assert.equal(await isMember(alice, 'mem-org', 'bob'), 204);
    });

    it('an owner removes a member from the organization and from all its teams', async () => {
      const team = await memberTeam(alice, 'mem-org');
      const r = await s.api('DELETE', '/orgs/mem-org/members/carol', tok(alice));
      assert.equal(r.status, 204, r.text);
      assert.equal(await isMember(alice, 'mem-org', 'carol'), 404);
      const teamMembers = await s.api<UserJson[]>('GET', `/teams/${team}/members`, tok(alice));
      assert.deepEqual(logins(teamMembers.body), ['bob']);
      const carols = await s.api<OrgJson[]>('GET', '/user/orgs', tok(carol));
      assert.ok(!names(carols.body).includes('mem-org'));
      assert.equal((await s.api('GET', '/orgs/mem-org/members', tok(carol))).status, 200);
      assert.equal((await s.api('GET', `/teams/${team}`, tok(carol))).status, 404);
    });

    it('removing someone who is not a member answers 204, as in Forgejo; an unknown user is 404', async () => {
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/carol', tok(alice))).status, 204);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/eve', tok(alice))).status, 204);
      assert.equal(await isMember(alice, 'mem-org', 'eve'), 404);
      assert.equal((await s.api('DELETE', '/orgs/mem-org/members/no-such-user', tok(alice))).status, 404);
      assert.equal((await s.api('DELETE', '/orgs/no-such-org/members/bob', tok(alice))).status, 404);
    });

    it('the last owner cannot be removed (422); with a second owner either may go', async () => {
      let r = await s.api<ErrorJson>('DELETE', '/orgs/mem-org/members/alice', tok(alice));
      assert.equal(r.status, 422);
      assert.match(r.body.message, /last owner/);
      r = await s.api<ErrorJson>('DELETE', '/orgs/mem-org/members/alice', { token: s.admin.token });
      assert.equal(r.status, 422);
      assert.equal(await isMember(alice, 'mem-org', 'alice'), 204);

      const owners = await ownersTeam(alice, 'mem-org');
      assert.equal((await s.api('PUT', `/teams/${owners}/members/dave`, tok(alice))).status, 204);
      r = await s.api('DELETE', '/orgs/mem-org/members/alice', tok(dave));
      assert.equal(r.status, 204, r.text);
      assert.equal(await isMember(dave, 'mem-org', 'alice'), 404);
      assert.equal(
        (await s.api('PATCH', '/orgs/mem-org', { token: alice.token, body: { location: 'x' } })).status,
        403,
      );
      r = await s.api<ErrorJson>('DELETE', '/orgs/mem-org/members/dave', tok(dave));
      assert.equal(r.status, 422);
      const members = await s.api<UserJson[]>('GET', '/orgs/mem-org/members', tok(dave));
      assert.deepEqual(logins(members.body), ['bob', 'dave']);
    });
  });
});
