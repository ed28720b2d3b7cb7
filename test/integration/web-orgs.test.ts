// Organizations in the web interface: creating one (bad, taken and too long names, bad visibility,
// CSRF), members (hidden private members, leave/remove, public/private), teams (new, members,
// repositories, the Owners team's protections), settings (rename, delete) and who may do what
// (403 for plain members, 404 for private organizations); then in Chromium: an owner creates an
// organization and a team with write access to a repository, adds a member, and the member reads
// the repository's page and pushes to it over HTTP, with axe and screenshots of each page.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';
import { GitClient, repoUrl } from '../helpers/git.js';

/** A real 16x16 PNG (Python's test image, as avatars.test.ts uses it). */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAMAAAAoLQ9TAAAAIGNIUk0AAHomAACAhAAA+gAAAIDoAAB1MAAA6mAAADqYAAAXcJy6UTwAAAHFUExURQAAAE6NwEqGujxxnjdolgAAAAAAAAAAAAAAAAAAAE6PxEyKv0iFtkN9rT10oTlsljZmkAAAAAAAAFKRxv3dSvnVPgAAADJghwAAAP3VNgAAADVokgAAAOzORQAAADZpkxsxRQAAAAAAAOLDRf3ZQQAAAEaBsjZnkQAAAPLhbv3pav3LG0N9rhwyS/Xjb/PBGkB1oz1zogAAAMKaEgAAAAAAAAAAAAAAAAAAAOjHPevFNOvCKuu+Ieu7GMabEgAAAAAAAAAAAAAAAAAAAAAAAAAAAP3eTgAAAAAAAAAAAAAAAPHQP/rTOf3SL/rHGcCXEgAAAAAAAAAAAAAAAAAAAAAAAEiDtER+rUB4p0yKvP///0V/r0F5qD50ojpvmzZplEmFt0aAsUJ7qj51oztwnTdqljhsl0+NwUuIu0R9rUB4pj1zoDltmf/iVVCPw0yJvEiEtT10of/eS//aQU2LvkaAsDtwnP/aQv/WN//TLUqHuUeBskN8qz92pf/XOP/PI//mYf/jV//fTf/bQv/TLv/PJP/rbP/nYf/bQ//XOf/MHDpwnP/nYv/jWP/fTv/TL//bRP/XOv/TMP/QJf/YOv/UMP/QJpJJAAIAAABWdFJOUwCv7feSCwMoQRV+oKGjp6qqSBi994IKtkPtJPdPiD22XExHa/dG96pOpvf311uzwm/3S3o0CCE8NaqpqampeSACCRMSLB73QBwFAUzM99h7Ox1CRTgf+DIQcQAAAAFiS0dEWgO7paIAAAD1SURBVBjTY2AAAkamsPAIZhZWNgYoiIyKjomNi2dnhQkkJCYlp6TGc3CCeVzcPLx8/AJp8fGCQiC+cHpGWGZWdk48UCBXRFSMIS+/IDqmMA7IF5coKpaUYihJKE1KLkuNlxaXkS2vqJRjqKquqZVXUBRU4lBWqausV2VQy8xS19DUamhsaq5radVWYtCJKdTVa2tvbOrobGnt0udgMDDsNmrr6e3r6Oxv7eoyNmEwNTO3APItraxtbG3tOOwZHBydnHv7JkycNLmLw8LFFeJ6twlTpk6L0nb3cPT0Agt4+/hO6/LzD3CGec400CJIKTgk1BTIBgBAYkJ/yC2b5QAAACV0RVh0ZGF0ZTpjcmVhdGUAMjAxNC0wMS0yNlQyMDo1OTozNyswMjowMPuaB3cAAAAldEVYdGRhdGU6bW9kaWZ5ADIwMTQtMDEtMjZUMjA6NTk6MDArMDI6MDDB74amAAAAAElFTkSuQmCC';

describe('web organizations', () => {
  let s: TestServer;
  let browser: Browser;
  let alice: { name: string; password: string };
  let bob: { name: string; password: string };
  let carol: { name: string; password: string };
  /** The API as the site administrator (who sees private organizations too). */
  const api = <T = unknown>(method: string, p: string, opts: { body?: unknown } = {}) =>
    s.api<T>(method, p, { token: s.admin.token, ...opts });
  const signedIn = async (u: { name: string; password: string }) => {
    const c = new WebClient(s.url);
    const r = await c.signIn(u.name, u.password);
    assert.equal(r.status, 303, r.text);
    return c;
  };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  it('creates an organization; bad, taken and too long names, bad visibility and no CSRF token are refused', async () => {
    const c = await signedIn(alice);
    assert.equal((await c.get('/org/create')).status, 200);
    const bad = async (form: Record<string, string | null>, pattern: RegExp) => {
      const r = await c.post('/org/create', { visibility: '0', ...form });
      assert.equal(r.status, 422, r.text);
      assert.match(r.text, pattern);
      assert.match(r.text, /class="field-error"|class="field invalid"/);
    };
    await bad({ org_name: '' }, /Required/);
    await bad({ org_name: 'x'.repeat(41) }, /at most 40 characters/);
    await bad({ org_name: 'bob' }, /already exists/);
    await bad({ org_name: 'bad name!' }, /invalid/);
    await bad({ org_name: 'fine', visibility: '7' }, /Choose public, limited or private/);
    // What was typed stays in the form.
    const kept = await c.post('/org/create', { org_name: 'bob', visibility: '2' });
    assert.match(kept.text, /value="bob"/);
    assert.equal((await api('GET', '/orgs/fine')).status, 404, 'nothing made on error');

    const noCsrf = await c.post('/org/create', { _csrf: null, org_name: 'sneaky' });
    assert.equal(noCsrf.status, 403);
    assert.equal((await api('GET', '/orgs/sneaky')).status, 404);

    const made = await c.post('/org/create', { org_name: 'acme', visibility: '2' });
    assert.equal(made.status, 303, made.text);
    assert.equal(made.location, '/acme');
    const org = await api<{ visibility: string }>('GET', '/orgs/acme');
    assert.equal(org.body.visibility, 'private');
    const profile = await c.get('/acme');
    assert.match(profile.text, /has been created/);
    assert.match(profile.text, /href="\/org\/acme\/members"/);
    // Signed out, the form sends the browser to sign in.
    const anon = new WebClient(s.url);
    assert.equal((await anon.get('/org/create')).status, 303);
  });

  it('teams: a plain member gets 403 on settings and team edits, others 404 on a private organization', async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    assert.equal((await a.post('/org/create', { org_name: 'hidden', visibility: '2' })).status, 303);
    await a.get('/org/hidden/teams/new');
    const bad = await a.post('/org/hidden/teams/new', { team_name: '', permission: 'read' });
    assert.equal(bad.status, 422);
    const badPerm = await a.post('/org/hidden/teams/new', { team_name: 'devs', permission: 'owner' });
    assert.equal(badPerm.status, 422);
    assert.match(badPerm.text, /Choose read, write or administrator/);
    const taken = await a.post('/org/hidden/teams/new', { team_name: 'Owners', permission: 'read' });
    assert.equal(taken.status, 422);
    assert.match(taken.text, /already exists/);
    const team = await a.post('/org/hidden/teams/new', {
      team_name: 'devs',
      description: 'Developers',
      permission: 'write',
      'unit_repo.code': 'write',
      'unit_repo.issues': 'read',
    });
    assert.equal(team.status, 303, team.text);
    assert.equal(team.location, '/org/hidden/teams/devs');
    await a.get('/org/hidden/teams/devs');
    const nobody = await a.post('/org/hidden/teams/devs/action/add', { uname: 'nobody-at-all' });
    assert.equal(nobody.status, 422);
    assert.match(nobody.text, /does not exist/);
    assert.equal((await a.post('/org/hidden/teams/devs/action/add', { uname: 'bob' })).status, 303);

    const b = await signedIn(bob);
    assert.equal((await b.get('/org/hidden/members')).status, 200);
    assert.equal((await b.get('/org/hidden/teams')).status, 200);
    assert.equal((await b.get('/org/hidden/settings')).status, 403);
    assert.equal((await b.post('/org/hidden/settings', { name: 'taken-over', visibility: '0' })).status, 403);
    assert.equal((await b.get('/org/hidden/teams/new')).status, 403);
    assert.equal(
      (await b.post('/org/hidden/teams/new', { team_name: 'mine', permission: 'admin' })).status,
      403,
    );
    assert.equal((await b.get('/org/hidden/teams/devs/edit')).status, 403);
    assert.equal((await b.post('/org/hidden/teams/devs/delete', {})).status, 403);
    assert.equal((await b.post('/org/hidden/teams/owners/action/add', { uname: 'bob' })).status, 403);
    assert.equal((await api('GET', '/orgs/hidden')).body !== undefined, true);

    const c = await signedIn(carol);
    for (const p of ['/hidden', '/org/hidden/members', '/org/hidden/teams', '/org/hidden/settings']) {
      assert.equal((await c.get(p)).status, 404, p);
    }
    assert.equal((await new WebClient(s.url).get('/org/hidden/members')).status, 404);

    // The team's page lists its member; editing keeps the typed name on error.
    const page = await a.get('/org/hidden/teams/devs');
    assert.match(page.text, /href="\/bob"/);
    await a.get('/org/hidden/teams/devs/edit');
    const badEdit = await a.post('/org/hidden/teams/devs/edit', {
      team_name: 'no spaces!',
      permission: 'read',
    });
    assert.equal(badEdit.status, 422);
    assert.match(badEdit.text, /value="no spaces!"/);
  });

  it("site administrators set an organization's repository limit; past it creation is refused on the API (403) and beside the owner field", async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    assert.equal((await a.post('/org/create', { org_name: 'capped', visibility: '0' })).status, 303);
    const limitOf = async () =>
      Number(
        (
          await s.ctx.db
            .selectFrom('user')
            .select('max_repo_creation')
            .where('lower_name', '=', 'capped')
            .executeTakeFirstOrThrow()
        ).max_repo_creation,
      );
    const base = { name: 'capped', full_name: '', visibility: '0', email: '', website: '', location: '' };

    // An owner who is not a site administrator neither sees nor changes the limit.
    const own = await a.get('/org/capped/settings');
    assert.doesNotMatch(own.text, /name="max_repo_creation"/);
    assert.equal((await a.post('/org/capped/settings', { ...base, max_repo_creation: '0' })).status, 303);
    assert.equal(await limitOf(), -1);

    const root = await signedIn({ name: s.admin.name, password: s.admin.password });
    const page = await root.get('/org/capped/settings');
    assert.match(
      page.text,
      /name="max_repo_creation"[^>]*value="-1"|value="-1"[^>]*name="max_repo_creation"/,
    );
    for (const bad of ['lots', '-2', '1.5', '99999999999']) {
      const r = await root.post('/org/capped/settings', { ...base, max_repo_creation: bad });
      assert.equal(r.status, 422, bad);
      assert.match(r.text, /id="f-max_repo_creation-error"/, bad);
    }
    assert.equal(
      (await root.post('/org/capped/settings', { ...base, _csrf: null, max_repo_creation: '1' })).status,
      403,
    );
    assert.equal(await limitOf(), -1);
    assert.equal((await root.post('/org/capped/settings', { ...base, max_repo_creation: '1' })).status, 303);
    assert.equal(await limitOf(), 1);

    // The organization's own limit holds for its owners, on the API and on the web form.
    const alicesToken = (
      await s.api<{ sha1: string }>('POST', '/users/alice/tokens', {
        basic: ['alice', alice.password],
        body: { name: 'capped', scopes: ['write:organization', 'write:repository'] },
      })
    ).body.sha1;
    assert.equal(
      (await s.api('POST', '/orgs/capped/repos', { token: alicesToken, body: { name: 'one' } })).status,
      201,
    );
    const over = await s.api<{ message: string }>('POST', '/orgs/capped/repos', {
      token: alicesToken,
      body: { name: 'two' },
    });
    assert.equal(over.status, 403);
    assert.match(over.body.message, /reached maximum limit of repositories \[limit: 1\]/);
    const form = await a.get('/repo/create');
    const orgId = /<option value="(\d+)"[^>]*>capped</.exec(form.text)![1]!;
    const web = await a.post('/repo/create', { uid: orgId, repo_name: 'three' });
    assert.equal(web.status, 422);
    assert.match(web.text, /id="f-uid-error"[^>]*>[^<]*maximum limit of repositories/);
    assert.equal((await api('GET', '/repos/capped/three')).status, 404);
  });

  it('teams: all repositories reach those created later; add all and remove all repositories', async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    assert.equal((await a.post('/org/create', { org_name: 'allco', visibility: '2' })).status, 303);
    assert.equal(
      (await api('POST', '/orgs/allco/repos', { body: { name: 'first', private: true } })).status,
      201,
    );
    await a.get('/org/allco/teams/new');
    const made = await a.post('/org/allco/teams/new', {
      team_name: 'readers',
      permission: 'read',
      repo_access: 'all',
      'unit_repo.code': 'read',
    });
    assert.equal(made.status, 303, made.text);
    await a.get('/org/allco/teams/readers');
    assert.equal((await a.post('/org/allco/teams/readers/action/add', { uname: 'bob' })).status, 303);
    assert.equal(
      (await api('POST', '/orgs/allco/repos', { body: { name: 'later', private: true } })).status,
      201,
    );
    const b = await signedIn(bob);
    assert.equal((await b.get('/allco/first')).status, 200);
    assert.equal((await b.get('/allco/later')).status, 200, 'a repository created later is reached too');
    const edit = await a.get('/org/allco/teams/readers/edit');
    assert.match(
      edit.text,
      /name="repo_access" value="all" checked|checked[^>]*name="repo_access" value="all"/,
    );
    assert.match(edit.text, /name="repo_access" value="specific"/);
    // A team with all repositories has no buttons, and cannot lose them.
    assert.doesNotMatch((await a.get('/org/allco/teams/readers/repositories')).text, /Add all repositories/);
    const keep = await a.post('/org/allco/teams/readers/action/repo/removeall', {});
    assert.equal(keep.status, 303);
    assert.equal((await b.get('/allco/later')).status, 200);

    await a.get('/org/allco/teams/readers/edit');
    const specific = await a.post('/org/allco/teams/readers/edit', {
      team_name: 'readers',
      permission: 'read',
      repo_access: 'specific',
      'unit_repo.code': 'read',
    });
    assert.equal(specific.status, 303, specific.text);
    assert.equal((await b.get('/allco/later')).status, 404);
    const repos = await a.get('/org/allco/teams/readers/repositories');
    assert.match(repos.text, /action="\/org\/allco\/teams\/readers\/action\/repo\/addall"/);
    assert.match(repos.text, /Remove all repositories/);

    // Not without the CSRF token, not for a plain member.
    assert.equal((await a.post('/org/allco/teams/readers/action/repo/addall', { _csrf: null })).status, 403);
    await b.get('/org/allco/teams/readers/repositories');
    assert.equal((await b.post('/org/allco/teams/readers/action/repo/addall', {})).status, 403);
    assert.equal((await b.get('/allco/later')).status, 404);

    const all = await a.post('/org/allco/teams/readers/action/repo/addall', {});
    assert.equal(all.status, 303);
    assert.equal(all.location, '/org/allco/teams/readers/repositories');
    assert.equal((await b.get('/allco/first')).status, 200);
    assert.equal((await b.get('/allco/later')).status, 200);
    const listed = await a.get('/org/allco/teams/readers/repositories');
    assert.match(listed.text, /allco\/first/);
    assert.match(listed.text, /allco\/later/);
    // Twice is harmless.
    assert.equal((await a.post('/org/allco/teams/readers/action/repo/addall', {})).status, 303);

    assert.equal((await a.post('/org/allco/teams/readers/action/repo/removeall', {})).status, 303);
    assert.equal((await b.get('/allco/first')).status, 404);
    assert.equal((await b.get('/allco/later')).status, 404);
    assert.equal(
      (await a.post('/org/allco/teams/readers/action/repo/nonsense', { repo_name: 'first' })).status,
      404,
    );
  });

  it('members: private members are hidden from outsiders; public/private, leave, remove', async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    assert.equal((await a.post('/org/create', { org_name: 'pubco', visibility: '0' })).status, 303);
    await a.get('/org/pubco/teams/new');
    await a.post('/org/pubco/teams/new', { team_name: 'crew', permission: 'read' });
    await a.get('/org/pubco/teams/crew');
    assert.equal((await a.post('/org/pubco/teams/crew/action/add', { uname: 'bob' })).status, 303);
    const memberView = await a.get('/org/pubco/members');
    assert.match(memberView.text, /href="\/bob"/, 'members see private members');
    const outsider = await (await signedIn(carol)).get('/org/pubco/members');
    assert.equal(outsider.status, 200);
    assert.doesNotMatch(outsider.text, /href="\/bob"/, 'outsiders do not');
    assert.doesNotMatch((await new WebClient(s.url).get('/org/pubco/members')).text, /href="\/alice"/);

    const b = await signedIn(bob);
    const me = (await api<{ id: number }>('GET', '/users/bob')).body.id;
    await b.get('/org/pubco/members');
    assert.equal((await b.post('/org/pubco/members/action/public', { uid: String(me) })).status, 303);
    assert.match((await new WebClient(s.url).get('/org/pubco/members')).text, /href="\/bob"/);
    // Only owners remove others; bob is not one.
    const aliceId = (await api<{ id: number }>('GET', '/users/alice')).body.id;
    assert.equal((await b.post('/org/pubco/members/action/remove', { uid: String(aliceId) })).status, 403);
    assert.equal((await b.post('/org/pubco/members/action/leave', {})).status, 303);
    assert.equal((await api('GET', '/orgs/pubco/members/bob')).status, 404);

    // The owner adds bob back and removes him.
    await a.get('/org/pubco/teams/crew');
    await a.post('/org/pubco/teams/crew/action/add', { uname: 'bob' });
    await a.get('/org/pubco/members');
    assert.equal((await a.post('/org/pubco/members/action/remove', { uid: String(me) })).status, 303);
    assert.doesNotMatch((await a.get('/org/pubco/members')).text, /href="\/bob"/);
  });

  it('the Owners team cannot be deleted nor lose its last member', async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    await a.post('/org/create', { org_name: 'ownco', visibility: '0' });
    const aliceId = (await api<{ id: number }>('GET', '/users/alice')).body.id;
    await a.get('/org/ownco/teams/owners');
    const removed = await a.post('/org/ownco/teams/owners/action/remove', { uid: String(aliceId) });
    assert.equal(removed.status, 303);
    assert.match((await a.get(removed.location!)).text, /last owner/);
    const left = await a.post('/org/ownco/members/action/leave', {});
    assert.match((await a.get(left.location!)).text, /last owner/);
    const deleted = await a.post('/org/ownco/teams/owners/delete', {});
    assert.match((await a.get(deleted.location!)).text, /cannot be deleted/);
    assert.equal((await api('GET', '/orgs/ownco/members/alice')).status, 204);
    const teams = await a.get('/org/ownco/teams');
    assert.match(teams.text, /Owners/);
    // The Owners team keeps its name on edit.
    await a.get('/org/ownco/teams/owners/edit');
    const edited = await a.post('/org/ownco/teams/owners/edit', {
      team_name: 'Bosses',
      description: 'The owners',
    });
    assert.equal(edited.status, 303, edited.text);
    assert.match((await a.get('/org/ownco/teams')).text, /Owners/);
  });

  it('settings: bad input is kept with its message, rename, delete after typing the name', async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    await a.post('/org/create', { org_name: 'setco', visibility: '0' });
    await a.get('/org/setco/settings');
    const base = {
      name: 'setco',
      full_name: 'Set Co',
      visibility: '0',
      email: '',
      website: '',
      location: '',
    };
    const badEmail = await a.post('/org/setco/settings', { ...base, email: 'not-an-email' });
    assert.equal(badEmail.status, 422);
    assert.match(badEmail.text, /value="not-an-email"/);
    assert.equal((await a.post('/org/setco/settings', { ...base, visibility: 'secret' })).status, 422);
    assert.equal((await a.post('/org/setco/settings', { ...base, name: 'bob' })).status, 422);
    assert.equal((await a.post('/org/setco/settings', { ...base, name: 'y'.repeat(41) })).status, 422);
    assert.equal((await a.post('/org/setco/settings', { ...base, website: 'javascript:x' })).status, 422);
    assert.equal((await api<{ full_name: string }>('GET', '/orgs/setco')).body.full_name, '');

    const ok = await a.post('/org/setco/settings', {
      ...base,
      name: 'setco2',
      location: 'Here',
      visibility: '1',
    });
    assert.equal(ok.status, 303, ok.text);
    assert.equal(ok.location, '/org/setco2/settings');
    const org = await api<{ full_name: string; location: string; visibility: string }>('GET', '/orgs/setco2');
    assert.equal(org.body.full_name, 'Set Co');
    assert.equal(org.body.visibility, 'limited');

    // The avatar: something that is not a picture is refused beside the field, a picture is taken.
    await a.get('/org/setco2/settings');
    const notPicture = new FormData();
    notPicture.append('avatar', new Blob([Buffer.from('just text')]), 'a.png');
    const refused = await a.postMultipart('/org/setco2/settings/avatar', notPicture);
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.text, /id="f-avatar-error"/);
    const picture = new FormData();
    picture.append('avatar', new Blob([Buffer.from(PNG, 'base64')], { type: 'image/png' }), 'a.png');
    const taken = await a.postMultipart('/org/setco2/settings/avatar', picture);
    assert.equal(taken.status, 303, taken.text);
    const withAvatar = await api<{ avatar_url: string }>('GET', '/orgs/setco2');
    assert.match(withAvatar.body.avatar_url, /avatars\/[0-9a-f]{64}/);
    await a.get('/org/setco2/settings');
    assert.equal((await a.post('/org/setco2/settings/avatar/delete', {})).status, 303);
    assert.doesNotMatch(
      (await api<{ avatar_url: string }>('GET', '/orgs/setco2')).body.avatar_url,
      /[0-9a-f]{64}/,
    );

    await a.get('/org/setco2/settings');
    const wrong = await a.post('/org/setco2/settings/delete', { org_name: 'setco' });
    assert.equal(wrong.status, 422);
    assert.equal((await api('GET', '/orgs/setco2')).status, 200);
    const gone = await a.post('/org/setco2/settings/delete', { org_name: 'setco2' });
    assert.equal(gone.status, 303);
    assert.equal((await api('GET', '/orgs/setco2')).status, 404);
  });

  it('settings: organization labels and blocked users, owners only', async () => {
    const a = await signedIn(alice);
    await a.get('/org/create');
    await a.post('/org/create', { org_name: 'labco', visibility: '0' });
    await a.get('/org/labco/settings/labels');
    const empty = await a.post('/org/labco/labels/new', { title: '', color: '#ff0000' });
    assert.equal(empty.status, 422);
    const badColor = await a.post('/org/labco/labels/new', { title: 'bug', color: 'red-ish' });
    assert.equal(badColor.status, 422);
    assert.match(badColor.text, /value="red-ish"/);
    const made = await a.post('/org/labco/labels/new', {
      title: 'bug',
      color: '#ee0701',
      description: 'Broken',
    });
    assert.equal(made.status, 303, made.text);
    const list = await api<Array<{ id: number; name: string }>>('GET', '/orgs/labco/labels');
    assert.deepEqual(
      list.body.map((l) => l.name),
      ['bug'],
    );
    const id = String(list.body[0]!.id);
    await a.get('/org/labco/settings/labels');
    assert.equal(
      (await a.post('/org/labco/labels/edit', { id, title: 'defect', color: '#ee0701' })).status,
      303,
    );
    assert.match((await a.get('/org/labco/settings/labels')).text, /defect/);

    const b = await signedIn(bob);
    assert.equal((await b.get('/org/labco/settings/labels')).status, 403);
    assert.equal((await b.post('/org/labco/labels/delete', { id })).status, 403);
    assert.equal((await b.get('/org/labco/settings/blocked_users')).status, 403);

    assert.equal((await a.post('/org/labco/labels/delete', { id })).status, 303);
    assert.equal((await api<unknown[]>('GET', '/orgs/labco/labels')).body.length, 0);

    await a.get('/org/labco/settings/blocked_users');
    const nobody = await a.post('/org/labco/settings/blocked_users/block', { uname: 'no-such-user' });
    assert.equal(nobody.status, 422);
    assert.equal((await a.post('/org/labco/settings/blocked_users/block', { uname: 'carol' })).status, 303);
    const blocked = await a.get('/org/labco/settings/blocked_users');
    assert.match(blocked.text, /href="\/carol"/);
    const carolId = (await api<{ id: number }>('GET', '/users/carol')).body.id;
    await a.post('/org/labco/settings/blocked_users/unblock', { user_id: String(carolId) });
    assert.doesNotMatch((await a.get('/org/labco/settings/blocked_users')).text, /href="\/carol"/);
  });

  it('in a browser: creates an organization and a team with write access, whose member reads and pushes', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => void d.accept());
    const check = async (name: string) => {
      assert.deepEqual(await accessibilityViolations(page), [], name);
      await screenshots(page, name);
    };

    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', alice.name);
    await page.fill('#f-password', alice.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    await page.goto(`${s.url}/org/create`);
    await page.fill('#f-org_name', 'forge');
    await page.selectOption('#f-visibility', 'private');
    await check('org-create');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/forge`);
    await check('org-profile');

    // A repository of the organization (through the API, as the repository pages are not ours).
    const made = await api('POST', '/orgs/forge/repos', { body: { name: 'anvil', auto_init: true } });
    assert.equal(made.status, 201, made.text);

    await page.goto(`${s.url}/org/forge/teams/new`);
    await page.fill('#f-team_name', 'smiths');
    await page.fill('#f-description', 'They push');
    await page.selectOption('#f-permission', 'write');
    await page.selectOption('[name="unit_repo.code"]', 'write');
    await check('org-team-new');
    await page.click('main form button.primary');
    await page.waitForURL(`${s.url}/org/forge/teams/smiths`);
    await page.fill('#f-uname', 'bob');
    await page.click('main form.inline-add button');
    await page.waitForURL(`${s.url}/org/forge/teams/smiths`);
    assert.match((await page.textContent('main')) ?? '', /bob has been added/);
    assert.match(
      (await page.textContent('main')) ?? '',
      /Write access/,
      'units left as the permission get write',
    );
    await check('org-team');
    await page.click('text=Repositories >> nth=-1');
    await page.waitForURL(`${s.url}/org/forge/teams/smiths/repositories`);
    await page.fill('#f-repo_name', 'anvil');
    await page.click('main form.inline-add button');
    await page.waitForURL(`${s.url}/org/forge/teams/smiths/repositories`);
    assert.match((await page.textContent('main')) ?? '', /forge\/anvil/);

    await page.goto(`${s.url}/org/forge/teams`);
    await check('org-teams');
    await page.goto(`${s.url}/org/forge/members`);
    assert.match((await page.textContent('main')) ?? '', /bob/);
    await check('org-members');
    await page.goto(`${s.url}/org/forge/settings`);
    await check('org-settings');
    await page.goto(`${s.url}/org/forge/settings/labels`);
    await check('org-labels');
    assert.deepEqual(errors, []);
    await context.close();

    // Bob reads the repository's page and pushes to it over HTTP.
    const b = await signedIn(bob);
    const repoPage = await b.get('/forge/anvil');
    assert.equal(repoPage.status, 200);
    assert.equal((await (await signedIn(carol)).get('/forge/anvil')).status, 404);
    const git = new GitClient();
    const dir = path.join(git.home, 'anvil');
    await git.git(['clone', repoUrl(s.url, 'forge', 'anvil', [bob.name, bob.password]), dir]);
    fs.writeFileSync(path.join(dir, 'hammer.txt'), 'strike\n');
    await git.git(['add', 'hammer.txt'], dir);
    await git.git(['commit', '-m', 'A hammer'], dir);
    await git.git(['push', 'origin', 'HEAD'], dir);
    const file = await api('GET', '/repos/forge/anvil/contents/hammer.txt');
    assert.equal(file.status, 200);
  });
});
