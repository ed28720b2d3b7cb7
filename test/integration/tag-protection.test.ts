// Tag protection over HTTP: the /repos/{owner}/{repo}/tag_protections API (who may use it,
// validation, editing) and its enforcement: pushes of tags with the real git client over smart
// HTTP (creating, moving and deleting protected tags; allow-listed users and teams; globs and
// regular expressions) and the API paths that create or delete tags (/tags, releases).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface TP {
  id: number;
  name_pattern: string;
  whitelist_usernames: string[];
  whitelist_teams: string[];
  created_at: string;
  updated_at: string;
}

interface Msg {
  message: string;
}

const TP_KEYS = ['created_at', 'id', 'name_pattern', 'updated_at', 'whitelist_teams', 'whitelist_usernames'];

let s: TestServer;
let g: GitClient;
let alice: U; // owns alice/tagged and the organization
let bob: U; // write collaborator of alice/tagged
let reader: U; // read collaborator
let stranger: U; // no access
let carol: U; // member of the organization's releasers team (write)
let dave: U; // member of the organization's writers team (write), not allow-listed

const tp = (repo: string, rest = '') => `/repos/${repo}/tag_protections${rest}`;

async function createRepo(path: string, body: Record<string, unknown> = {}): Promise<void> {
  const [owner, name] = path.split('/');
  const url = owner === 'alice' ? '/user/repos' : `/orgs/${owner}/repos`;
  const r = await s.api('POST', url, { token: alice.token, body: { name, auto_init: true, ...body } });
  assert.equal(r.status, 201, r.text);
}

async function addCollaborator(repoPath: string, user: U, permission: string): Promise<void> {
  const r = await s.api('PUT', `/repos/${repoPath}/collaborators/${user.name}`, {
    token: alice.token,
    body: { permission },
  });
  assert.equal(r.status, 204, r.text);
}

async function createTeam(name: string, members: U[]): Promise<number> {
  const r = await s.api<{ id: number }>('POST', '/orgs/tag-org/teams', {
    token: alice.token,
    body: {
      name,
      permission: 'write',
      units: ['repo.code', 'repo.releases'],
      includes_all_repositories: true,
    },
  });
  assert.equal(r.status, 201, r.text);
  for (const m of members) {
    const a = await s.api('PUT', `/teams/${r.body.id}/members/${m.name}`, { token: alice.token });
    assert.equal(a.status, 204, a.text);
  }
  return r.body.id;
}

async function createRule(repo: string, body: Record<string, unknown>): Promise<TP> {
  const r = await s.api<TP>('POST', tp(repo), { token: alice.token, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

function remote(user: U, repoPath: string): string {
  const u = new URL(`${s.url}/${repoPath}.git`);
  u.username = user.name;
  u.password = user.token;
  return u.toString();
}

/** A clone of `repoPath` made as `user`. */
async function clone(user: U, repoPath: string): Promise<string> {
  const dir = await g.workTree();
  await g.git(['-c', 'credential.helper=', 'clone', '--quiet', remote(user, repoPath), dir + '/c']);
  return dir + '/c';
}

async function push(dir: string, user: U, repoPath: string, ...refspecs: string[]) {
  return g.tryGit(['-c', 'credential.helper=', 'push', '--quiet', remote(user, repoPath), ...refspecs], dir);
}

function assertRefused(r: { ok: boolean; out: string }, message: string): void {
  assert.equal(r.ok, false, 'the push should have been refused');
  assert.ok(r.out.includes(`remote: ${message}`), `expected "remote: ${message}" in:\n${r.out}`);
  assert.match(r.out, /pre-receive hook declined/);
}

async function serverTags(repoPath: string): Promise<Map<string, string>> {
  const refs = await g.lsRemote(remote(alice, repoPath));
  return new Map([...refs].filter(([ref]) => ref.startsWith('refs/tags/') && !ref.endsWith('^{}')));
}

before(async () => {
  s = await startServer();
  g = new GitClient();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  reader = await s.createUser('reader');
  stranger = await s.createUser('stranger');
  carol = await s.createUser('carol');
  dave = await s.createUser('dave');
  await createRepo('alice/tagged');
  await addCollaborator('alice/tagged', bob, 'write');
  await addCollaborator('alice/tagged', reader, 'read');
  await createRepo('alice/hidden', { private: true });
  await addCollaborator('alice/hidden', bob, 'write');
  const o = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'tag-org' } });
  assert.equal(o.status, 201, o.text);
  await createTeam('releasers', [carol]);
  await createTeam('writers', [dave]);
  await createRepo('tag-org/lib');
});

after(async () => {
  await s?.close();
  g?.cleanup();
});

describe('the tag protection API', () => {
  it('creates a rule and shows it with exactly the TagProtection fields', async () => {
    const r = await s.api<TP>('POST', tp('alice/tagged'), {
      token: alice.token,
      body: { name_pattern: '  v*  ', whitelist_usernames: ['Alice', 'alice'] },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), TP_KEYS);
    assert.equal(r.body.name_pattern, 'v*', 'trimmed');
    assert.deepEqual(r.body.whitelist_usernames, ['alice'], 'by the user name, each once');
    assert.deepEqual(r.body.whitelist_teams, []);
    assert.match(r.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(r.body.updated_at, r.body.created_at);

    const got = await s.api<TP>('GET', tp('alice/tagged', `/${r.body.id}`), { token: alice.token });
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.body, r.body);
    const list = await s.api<TP[]>('GET', tp('alice/tagged'), { token: alice.token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.map((x) => x.name_pattern),
      ['v*'],
    );
  });

  it('edits only what is present and not null, and deletes', async () => {
    const rule = await createRule('alice/tagged', { name_pattern: 'edit-*', whitelist_usernames: ['bob'] });
    let r = await s.api<TP>('PATCH', tp('alice/tagged', `/${rule.id}`), {
      token: alice.token,
      body: { name_pattern: '   ', whitelist_usernames: null },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.name_pattern, 'edit-*', 'a blank pattern is kept');
    assert.deepEqual(r.body.whitelist_usernames, ['bob']);
    r = await s.api<TP>('PATCH', tp('alice/tagged', `/${rule.id}`), {
      token: alice.token,
      body: { name_pattern: '/^edited-\\d+$/', whitelist_usernames: ['reader', 'alice'] },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.name_pattern, '/^edited-\\d+$/');
    assert.deepEqual(r.body.whitelist_usernames, ['reader', 'alice']);
    r = await s.api<TP>('PATCH', tp('alice/tagged', `/${rule.id}`), {
      token: alice.token,
      body: { whitelist_usernames: [] },
    });
    assert.deepEqual(r.body.whitelist_usernames, []);

    const dup = await s.api<Msg>('PATCH', tp('alice/tagged', `/${rule.id}`), {
      token: alice.token,
      body: { name_pattern: 'v*' },
    });
    assert.equal(dup.status, 422, dup.text);
    assert.match(dup.body.message, /NamePattern/);

    const del = await s.api('DELETE', tp('alice/tagged', `/${rule.id}`), { token: alice.token });
    assert.equal(del.status, 204, del.text);
    const again = await s.api('DELETE', tp('alice/tagged', `/${rule.id}`), { token: alice.token });
    assert.equal(again.status, 404);
    const gone = await s.api('GET', tp('alice/tagged', `/${rule.id}`), { token: alice.token });
    assert.equal(gone.status, 404);
  });

  it('answers 404 for a rule of another repository and for unknown ids', async () => {
    const other = await createRule('alice/hidden', { name_pattern: 'x*', whitelist_usernames: ['alice'] });
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const r = await s.api('DELETE' === method ? 'DELETE' : method, tp('alice/tagged', `/${other.id}`), {
        token: alice.token,
        body: method === 'PATCH' ? {} : undefined,
      });
      assert.equal(r.status, 404, `${method}: ${r.text}`);
    }
    const r = await s.api('GET', tp('alice/tagged', '/999999'), { token: alice.token });
    assert.equal(r.status, 404);
    const still = await s.api('GET', tp('alice/hidden', `/${other.id}`), { token: alice.token });
    assert.equal(still.status, 200, 'untouched');
  });

  it('is for repository administrators only: 403 for writers and readers, 404 for the others', async () => {
    const rule = (await s.api<TP[]>('GET', tp('alice/tagged'), { token: alice.token })).body[0]!;
    for (const u of [bob, reader]) {
      for (const [method, path, body] of [
        ['GET', tp('alice/tagged'), undefined],
        ['POST', tp('alice/tagged'), { name_pattern: 'z*', whitelist_usernames: [u.name] }],
        ['GET', tp('alice/tagged', `/${rule.id}`), undefined],
        ['PATCH', tp('alice/tagged', `/${rule.id}`), { whitelist_usernames: [u.name] }],
        ['DELETE', tp('alice/tagged', `/${rule.id}`), undefined],
      ] as const) {
        const r = await s.api(method, path, { token: u.token, body });
        assert.equal(r.status, 403, `${u.name} ${method} ${path}: ${r.text}`);
      }
    }
    const hidden = await s.api('GET', tp('alice/hidden'), { token: stranger.token });
    assert.equal(hidden.status, 404);
    const bobHidden = await s.api('GET', tp('alice/hidden'), { token: bob.token });
    assert.equal(bobHidden.status, 403);
    const anon = await s.api('GET', tp('alice/tagged'));
    assert.equal(anon.status, 401);
    const after = await s.api<TP>('GET', tp('alice/tagged', `/${rule.id}`), { token: alice.token });
    assert.deepEqual(after.body, rule, 'nothing changed');
  });

  it('refuses bad input with 422 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ whitelist_usernames: ['alice'] }, /NamePattern/],
      [{ name_pattern: '  ', whitelist_usernames: ['alice'] }, /NamePattern/],
      [{ name_pattern: 'w*' }, /WhitelistUsernames/],
      [{ name_pattern: 'w*', whitelist_usernames: [], whitelist_teams: [] }, /WhitelistUsernames/],
      [{ name_pattern: 'w*', whitelist_usernames: ['nobody-here'] }, /WhitelistUsernames.*nobody-here/],
      [{ name_pattern: 'w*', whitelist_usernames: ['tag-org'] }, /WhitelistUsernames/],
      [{ name_pattern: 'w*', whitelist_teams: ['releasers'] }, /WhitelistTeams.*organizations/],
      [{ name_pattern: 'v*', whitelist_usernames: ['alice'] }, /NamePattern.*already exists/],
      [{ name_pattern: '/[unclosed/', whitelist_usernames: ['alice'] }, /NamePattern/],
      [{ name_pattern: 'v[', whitelist_usernames: ['alice'] }, /NamePattern/],
      // What could take exponential time in JavaScript (Go's engine has no backreferences).
      [{ name_pattern: '/^(a+)+$/', whitelist_usernames: ['alice'] }, /NamePattern.*repeat/],
      [{ name_pattern: '/(x)\\1/', whitelist_usernames: ['alice'] }, /NamePattern.*backreferences/],
      [{ name_pattern: 'v{a,b', whitelist_usernames: ['alice'] }, /NamePattern/],
      [{ name_pattern: 'x'.repeat(256), whitelist_usernames: ['alice'] }, /NamePattern/],
    ];
    for (const [body, message] of cases) {
      const r = await s.api<Msg>('POST', tp('alice/tagged'), { token: alice.token, body });
      assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.body.message, message, JSON.stringify(body));
    }
    const wrongType = await s.api('POST', tp('alice/tagged'), {
      token: alice.token,
      body: { name_pattern: 5, whitelist_usernames: 'alice' },
    });
    assert.equal(wrongType.status, 422, wrongType.text);
    const teamUnknown = await s.api<Msg>('POST', tp('tag-org/lib'), {
      token: alice.token,
      body: { name_pattern: 'w*', whitelist_teams: ['no-such-team'] },
    });
    assert.equal(teamUnknown.status, 422);
    assert.match(teamUnknown.body.message, /WhitelistTeams/);
    const badId = await s.api('GET', tp('alice/tagged', '/abc'), { token: alice.token });
    assert.ok([400, 404, 422].includes(badId.status), badId.text);
    const list = await s.api<TP[]>('GET', tp('alice/tagged'), { token: alice.token });
    assert.deepEqual(
      list.body.map((x) => x.name_pattern),
      ['v*'],
      'nothing was created',
    );
  });
});

describe('tag protection on git pushes', () => {
  let dir: string;
  before(async () => {
    dir = await clone(bob, 'alice/tagged');
  });

  it('refuses a protected tag to a user who is not allow-listed, and allows an allow-listed one', async () => {
    assertRefused(await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/v1.0'), 'Tag v1.0 is protected');
    assert.equal((await serverTags('alice/tagged')).has('refs/tags/v1.0'), false);
    const r = await push(dir, alice, 'alice/tagged', 'HEAD:refs/tags/v1.0');
    assert.ok(r.ok, r.out);
    assert.ok((await serverTags('alice/tagged')).has('refs/tags/v1.0'));
  });

  it('lets anyone with write access push tags no rule matches', async () => {
    const r = await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/nightly', 'HEAD:refs/tags/release/v1');
    assert.ok(r.ok, r.out);
    const tags = await serverTags('alice/tagged');
    assert.ok(tags.has('refs/tags/nightly') && tags.has('refs/tags/release/v1'));
  });

  it('refuses moving and deleting a protected tag, and a whole push that includes one', async () => {
    const before = (await serverTags('alice/tagged')).get('refs/tags/v1.0');
    await g.commit(dir, 'moved.txt', 'moved\n');
    assertRefused(await push(dir, bob, 'alice/tagged', '+HEAD:refs/tags/v1.0'), 'Tag v1.0 is protected');
    assertRefused(await push(dir, bob, 'alice/tagged', ':refs/tags/v1.0'), 'Tag v1.0 is protected');
    assertRefused(
      await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/other', 'HEAD:refs/tags/v2'),
      'Tag v2 is protected',
    );
    const tags = await serverTags('alice/tagged');
    assert.equal(tags.get('refs/tags/v1.0'), before);
    assert.equal(tags.has('refs/tags/other'), false, 'the push is refused as a whole');
    const moved = await push(dir, alice, 'alice/tagged', '+HEAD:refs/tags/v1.0');
    assert.ok(moved.ok, moved.out);
    const deleted = await push(dir, alice, 'alice/tagged', ':refs/tags/v1.0');
    assert.ok(deleted.ok, deleted.out);
    assert.equal((await serverTags('alice/tagged')).has('refs/tags/v1.0'), false);
  });

  it('reads patterns as Forgejo does: `*` crosses slashes, /.../ is a regular expression', async () => {
    const rule = await createRule('alice/tagged', {
      name_pattern: '/^rel-\\d+$/',
      whitelist_usernames: ['alice'],
    });
    assertRefused(await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/rel-12'), 'Tag rel-12 is protected');
    const loose = await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/rel-12x');
    assert.ok(loose.ok, loose.out);
    assertRefused(
      await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/v/nested'),
      'Tag v/nested is protected',
    );
    await s.api('DELETE', tp('alice/tagged', `/${rule.id}`), { token: alice.token });
    const free = await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/rel-13');
    assert.ok(free.ok, free.out);
  });

  it('allows when any matching rule allows the pusher', async () => {
    const rule = await createRule('alice/tagged', { name_pattern: 'v9*', whitelist_usernames: ['bob'] });
    const r = await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/v9.1');
    assert.ok(r.ok, r.out);
    assertRefused(await push(dir, bob, 'alice/tagged', 'HEAD:refs/tags/v8'), 'Tag v8 is protected');
    await s.api('DELETE', tp('alice/tagged', `/${rule.id}`), { token: alice.token });
  });

  it('allows members of allow-listed teams on organization repositories', async () => {
    const rule = await createRule('tag-org/lib', { name_pattern: 'v*', whitelist_teams: ['Releasers'] });
    assert.deepEqual(rule.whitelist_teams, ['releasers']);
    const carolDir = await clone(carol, 'tag-org/lib');
    const ok = await push(carolDir, carol, 'tag-org/lib', 'HEAD:refs/tags/v1');
    assert.ok(ok.ok, ok.out);
    const daveDir = await clone(dave, 'tag-org/lib');
    assertRefused(await push(daveDir, dave, 'tag-org/lib', 'HEAD:refs/tags/v2'), 'Tag v2 is protected');
    assertRefused(await push(daveDir, dave, 'tag-org/lib', ':refs/tags/v1'), 'Tag v1 is protected');
    const other = await push(daveDir, dave, 'tag-org/lib', 'HEAD:refs/tags/snapshot');
    assert.ok(other.ok, other.out);
  });
});

describe('tag protection on the API', () => {
  it('refuses creating and deleting protected tags through /tags with 422', async () => {
    let r = await s.api<Msg>('POST', '/repos/alice/tagged/tags', {
      token: bob.token,
      body: { tag_name: 'v3', target: 'main' },
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /Tag v3 is protected/);
    r = await s.api<Msg>('POST', '/repos/alice/tagged/tags', {
      token: alice.token,
      body: { tag_name: 'v3', target: 'main' },
    });
    assert.equal(r.status, 201, r.text);
    r = await s.api<Msg>('DELETE', '/repos/alice/tagged/tags/v3', { token: bob.token });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /Tag v3 is protected/);
    assert.ok((await serverTags('alice/tagged')).has('refs/tags/v3'));
    r = await s.api<Msg>('DELETE', '/repos/alice/tagged/tags/v3', { token: alice.token });
    assert.equal(r.status, 204, r.text);
    const free = await s.api('POST', '/repos/alice/tagged/tags', {
      token: bob.token,
      body: { tag_name: 'beta', target: 'main' },
    });
    assert.equal(free.status, 201, free.text);
  });

  it('refuses a release that would create a protected tag with 422', async () => {
    let r = await s.api<Msg>('POST', '/repos/alice/tagged/releases', {
      token: bob.token,
      body: { tag_name: 'v4', target_commitish: 'main', name: 'four' },
    });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /Tag v4 is protected/);
    assert.equal((await serverTags('alice/tagged')).has('refs/tags/v4'), false);
    r = await s.api<Msg>('POST', '/repos/alice/tagged/releases', {
      token: alice.token,
      body: { tag_name: 'v4', target_commitish: 'main', name: 'four' },
    });
    assert.equal(r.status, 201, r.text);
    assert.ok((await serverTags('alice/tagged')).has('refs/tags/v4'));
  });
});
