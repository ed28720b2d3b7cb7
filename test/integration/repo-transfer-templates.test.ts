// Pending repository transfers (POST /repos/{o}/{r}/transfer, /transfer/accept, /transfer/reject):
// who moves a repository at once and who only asks, what the Repository JSON shows meanwhile, the
// recipient's notification, who may answer; repositories generated from templates
// (POST /repos/{o}/{r}/generate) with their git content, variable expansion, labels, topics and
// webhooks; and syncing a fork's branch with its base (GET/POST /repos/{o}/{r}/sync_fork[/{branch}]).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface UserJson {
  login: string;
}

interface RepoJson {
  id: number;
  name: string;
  full_name: string;
  owner: UserJson;
  private: boolean;
  template: boolean;
  empty: boolean;
  description: string;
  default_branch: string;
  topics: string[];
  permissions: { admin: boolean; push: boolean; pull: boolean };
  repo_transfer: { doer: UserJson; recipient: UserJson; teams: Array<{ id: number; name: string }> } | null;
}

interface Msg {
  message: string;
}

const tok = (u: U | null) => (u ? { token: u.token } : {});

describe('repository transfers, templates and fork syncing', () => {
  let s: TestServer;
  let g: GitClient;
  let alice: U;
  let bob: U;
  let carol: U;
  let dave: U;
  let makersId: number;

  async function create(u: U, body: Record<string, unknown>, org?: string): Promise<RepoJson> {
    const r = await s.api<RepoJson>('POST', org ? `/orgs/${org}/repos` : '/user/repos', {
      token: u.token,
      body,
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  }

  const get = (u: U | null, full: string) => s.api<RepoJson>('GET', `/repos/${full}`, tok(u));
  const transfer = (u: U | null, full: string, body: Record<string, unknown>) =>
    s.api<RepoJson & Msg>('POST', `/repos/${full}/transfer`, { ...tok(u), body });
  const answer = (u: U | null, full: string, action: 'accept' | 'reject') =>
    s.api<RepoJson & Msg>('POST', `/repos/${full}/transfer/${action}`, tok(u));

  before(async () => {
    s = await startServer();
    g = new GitClient();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    dave = await s.createUser('dave');
    const org = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    assert.equal(org.status, 201, org.text);
    const makers = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'makers', permission: 'write', units: ['repo.code'], can_create_org_repo: true },
    });
    assert.equal(makers.status, 201, makers.text);
    makersId = makers.body.id;
    const viewers = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'viewers', permission: 'read', units: ['repo.code'] },
    });
    assert.equal((await s.api('PUT', `/teams/${makersId}/members/bob`, tok(alice))).status, 204);
    assert.equal((await s.api('PUT', `/teams/${viewers.body.id}/members/dave`, tok(alice))).status, 204);
  });

  after(async () => {
    await s?.close();
    g?.cleanup();
  });

  describe('transfers', () => {
    it('a transfer to another user waits for them: 202, repo_transfer shown, read access, notified', async () => {
      await create(alice, { name: 'gift', private: true, auto_init: true });
      assert.equal((await get(bob, 'alice/gift')).status, 404);
      const r = await transfer(alice, 'alice/gift', { new_owner: 'bob' });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'alice/gift');
      assert.equal(r.body.repo_transfer?.doer.login, 'alice');
      assert.equal(r.body.repo_transfer?.recipient.login, 'bob');
      assert.deepEqual(r.body.repo_transfer?.teams, []);
      // The recipient may read it meanwhile, and sees the same pending transfer.
      const seen = await get(bob, 'alice/gift');
      assert.equal(seen.status, 200, seen.text);
      assert.equal(seen.body.repo_transfer?.recipient.login, 'bob');
      assert.equal(seen.body.permissions.push, false);
      const notes = await s.api<Array<{ subject: { type: string; title: string }; repository: RepoJson }>>(
        'GET',
        '/notifications',
        tok(bob),
      );
      assert.equal(notes.status, 200, notes.text);
      const note = notes.body.find((n) => n.repository.full_name === 'alice/gift');
      assert.ok(note, notes.text);
      assert.equal(note.subject.type, 'Repository');
      assert.equal(note.subject.title, 'alice/gift');
      // The doer is not notified.
      const mine = await s.api<unknown[]>('GET', '/notifications', tok(alice));
      assert.equal(mine.body.length, 0);

      // A second transfer while one is pending: 409.
      assert.equal((await transfer(alice, 'alice/gift', { new_owner: 'carol' })).status, 409);
      assert.equal((await transfer(s.admin as U, 'alice/gift', { new_owner: 'carol' })).status, 409);

      // Nobody but the recipient answers it.
      assert.equal((await answer(alice, 'alice/gift', 'accept')).status, 403);
      assert.equal((await answer(alice, 'alice/gift', 'reject')).status, 403);
      assert.equal((await answer(carol, 'alice/gift', 'accept')).status, 404); // cannot see it
      assert.equal((await answer(null, 'alice/gift', 'accept')).status, 401);

      const ok = await answer(bob, 'alice/gift', 'accept');
      assert.equal(ok.status, 202, ok.text);
      assert.equal(ok.body.full_name, 'bob/gift');
      assert.equal(ok.body.repo_transfer, null);
      assert.equal(ok.body.permissions.admin, true);
      assert.equal((await get(bob, 'bob/gift')).body.repo_transfer, null);
      // alice no longer sees the private repository; nothing is pending any more.
      assert.equal((await get(alice, 'bob/gift')).status, 404);
      assert.equal((await answer(bob, 'bob/gift', 'accept')).status, 404);
      assert.equal((await answer(bob, 'bob/gift', 'reject')).status, 404);
    });

    it('the recipient rejects: 200, the repository stays where it was', async () => {
      await create(alice, { name: 'nope' });
      assert.equal((await transfer(alice, 'alice/nope', { new_owner: 'carol' })).status, 202);
      assert.equal((await answer(bob, 'alice/nope', 'reject')).status, 403);
      const r = await answer(carol, 'alice/nope', 'reject');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.full_name, 'alice/nope');
      assert.equal(r.body.repo_transfer, null);
      assert.equal((await answer(carol, 'alice/nope', 'accept')).status, 404);
      // A new transfer may be asked again.
      assert.equal((await transfer(alice, 'alice/nope', { new_owner: 'carol' })).status, 202);
      assert.equal((await answer(carol, 'alice/nope', 'accept')).status, 202);
      assert.equal((await get(carol, 'carol/nope')).status, 200);
    });

    it('moves at once for site administrators, to oneself and to organizations one may create in', async () => {
      await create(alice, { name: 'quick' });
      const r = await transfer(alice, 'alice/quick', { new_owner: 'acme', team_ids: [makersId] });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'acme/quick');
      assert.equal(r.body.repo_transfer, null);
      // bob (a team allowed to create) moves it back... to himself he may not (not the owner), but an
      // administrator moves it to anyone at once.
      const admin = await transfer(s.admin as U, 'acme/quick', { new_owner: 'dave' });
      assert.equal(admin.status, 202, admin.text);
      assert.equal(admin.body.full_name, 'dave/quick');
      assert.equal(admin.body.repo_transfer, null);
    });

    it('a transfer to an organization the doer cannot create in waits for its owners', async () => {
      await create(carol, { name: 'offer' });
      const r = await transfer(carol, 'carol/offer', { new_owner: 'acme', team_ids: [makersId] });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.full_name, 'carol/offer');
      assert.equal(r.body.repo_transfer?.recipient.login, 'acme');
      assert.deepEqual(
        r.body.repo_transfer?.teams.map((t) => t.name),
        ['makers'],
      );
      // dave is a member who may not create repositories in acme; carol asked, she does not answer.
      assert.equal((await answer(dave, 'carol/offer', 'accept')).status, 403);
      assert.equal((await answer(carol, 'carol/offer', 'accept')).status, 403);
      // bob's team may create repositories there: he may accept.
      const ok = await answer(bob, 'carol/offer', 'accept');
      assert.equal(ok.status, 202, ok.text);
      assert.equal(ok.body.full_name, 'acme/offer');
      const teamRepos = await s.api<RepoJson[]>('GET', `/teams/${makersId}/repos`, tok(alice));
      assert.ok(teamRepos.body.some((x) => x.full_name === 'acme/offer'));
    });

    it('refuses a name the recipient already has, when asking and when accepting', async () => {
      await create(alice, { name: 'clash' });
      await create(carol, { name: 'clash' });
      assert.equal((await transfer(alice, 'alice/clash', { new_owner: 'carol' })).status, 422);
      await create(alice, { name: 'later' });
      assert.equal((await transfer(alice, 'alice/later', { new_owner: 'carol' })).status, 202);
      await create(carol, { name: 'later' });
      const r = await answer(carol, 'alice/later', 'accept');
      assert.equal(r.status, 422, r.text);
      assert.match(r.body.message, /NewOwner/);
      // Still pending: the recipient may reject it.
      assert.equal((await answer(carol, 'alice/later', 'reject')).status, 200);
    });

    it('refuses blocked users, bad bodies and non-owners', async () => {
      await create(alice, { name: 'blocked' });
      assert.equal((await s.api('PUT', '/user/block/alice', tok(dave))).status, 204);
      assert.equal((await transfer(alice, 'alice/blocked', { new_owner: 'dave' })).status, 403);
      assert.equal((await get(alice, 'alice/blocked')).body.repo_transfer, null);
      assert.equal((await transfer(alice, 'alice/blocked', {})).status, 422);
      assert.equal(
        (await transfer(alice, 'alice/blocked', { new_owner: 'bob', team_ids: [makersId] })).status,
        422,
      );
      assert.equal((await transfer(bob, 'alice/blocked', { new_owner: 'bob' })).status, 403);
      assert.equal((await transfer(alice, 'alice/blocked', { new_owner: 'nobody' })).status, 404);
      assert.equal((await answer(bob, 'alice/nothing-here', 'accept')).status, 404);
    });

    it('deleting a repository forgets its pending transfer', async () => {
      await create(alice, { name: 'gone' });
      assert.equal((await transfer(alice, 'alice/gone', { new_owner: 'bob' })).status, 202);
      assert.equal((await s.api('DELETE', '/repos/alice/gone', tok(alice))).status, 204);
      await create(alice, { name: 'gone' });
      assert.equal((await get(alice, 'alice/gone')).body.repo_transfer, null);
      assert.equal((await answer(bob, 'alice/gone', 'accept')).status, 404);
    });
  });

  describe('sync_fork', () => {
    let base: string; // alice's working copy of alice/up

    const info = (u: U | null, full: string, branch?: string) =>
      s.api<{ allowed: boolean; fork_commit: string; base_commit: string; commits_behind: number } & Msg>(
        'GET',
        `/repos/${full}/sync_fork${branch ? `/${branch}` : ''}`,
        tok(u),
      );
    const sync = (u: U | null, full: string, branch?: string) =>
      s.api<Msg>('POST', `/repos/${full}/sync_fork${branch ? `/${branch}` : ''}`, tok(u));
    const head = async (full: string, branch: string) => {
      const r = await s.api<{ commit: { id: string } }>(
        'GET',
        `/repos/${full}/branches/${branch}`,
        tok(alice),
      );
      assert.equal(r.status, 200, r.text);
      return r.body.commit.id;
    };
    const push = async (file: string, branch = 'main') => {
      await g.git(['checkout', '--quiet', branch], base);
      const oid = await g.commit(base, file, `${file}\n`);
      await g.git(['push', '--quiet', 'origin', branch], base);
      return oid;
    };

    before(async () => {
      await create(alice, { name: 'up', auto_init: true });
      const wt = await g.workTree();
      await g.git(['clone', '--quiet', repoUrl(s.url, 'alice', 'up', [alice.name, alice.password]), 'c'], wt);
      base = path.join(wt, 'c');
      await g.git(['checkout', '--quiet', '-b', 'feature/x'], base);
      await push('feature.txt', 'feature/x');
      const f = await s.api('POST', '/repos/alice/up/forks', { token: bob.token, body: {} });
      assert.equal(f.status, 202, f.text);
    });

    it('tells how far behind a fork is, and fast-forwards it', async () => {
      const before = await info(bob, 'bob/up');
      assert.equal(before.status, 200, before.text);
      assert.equal(before.body.allowed, false); // nothing new in the base
      assert.equal(before.body.fork_commit, before.body.base_commit);
      const first = await push('one.txt');
      const second = await push('two.txt');
      const r = await info(carol, 'bob/up'); // anyone who may read the fork
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, {
        allowed: true,
        fork_commit: before.body.fork_commit,
        base_commit: second,
        commits_behind: 2,
      });
      // Writing takes write access to the fork.
      assert.equal((await sync(carol, 'bob/up')).status, 403);
      assert.equal((await sync(null, 'bob/up')).status, 401);
      assert.equal((await sync(alice, 'bob/up')).status, 403);
      const done = await sync(bob, 'bob/up');
      assert.equal(done.status, 204, done.text);
      assert.equal(await head('bob/up', 'main'), second);
      const after = await info(bob, 'bob/up');
      assert.deepEqual(after.body, {
        allowed: false,
        fork_commit: second,
        base_commit: second,
        commits_behind: 0,
      });
      // Synced again: nothing to do.
      assert.equal((await sync(bob, 'bob/up')).status, 400);
      void first;
    });

    it('syncs a branch named in the path, slashes and all', async () => {
      const oid = await push('more.txt', 'feature/x');
      const r = await info(bob, 'bob/up', 'feature/x');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.allowed, true);
      assert.equal(r.body.commits_behind, 1);
      assert.equal((await sync(bob, 'bob/up', 'feature/x')).status, 204);
      assert.equal(await head('bob/up', 'feature/x'), oid);
    });

    it('refuses what is not a fast-forward, not a fork, or not a branch', async () => {
      // The fork's own commit on main: diverged from the base.
      const wt = await g.workTree();
      await g.git(['clone', '--quiet', repoUrl(s.url, 'bob', 'up', [bob.name, bob.password]), 'c'], wt);
      const mine = await g.commit(path.join(wt, 'c'), 'mine.txt', 'mine\n');
      await g.git(['push', '--quiet', 'origin', 'main'], path.join(wt, 'c'));
      await push('three.txt');
      const r = await info(bob, 'bob/up');
      assert.equal(r.body.allowed, false);
      assert.equal(r.body.fork_commit, mine);
      assert.equal((await sync(bob, 'bob/up')).status, 400);
      assert.equal(await head('bob/up', 'main'), mine);
      // Not a fork.
      assert.equal((await info(alice, 'alice/up')).status, 400);
      assert.equal((await sync(alice, 'alice/up')).status, 400);
      // No such branch in the fork; a branch the base lacks is not allowed.
      assert.equal((await info(bob, 'bob/up', 'nope')).status, 404);
      assert.equal((await sync(bob, 'bob/up', 'nope')).status, 404);
      const b = await s.api('POST', '/repos/bob/up/branches', {
        token: bob.token,
        body: { new_branch_name: 'solo' },
      });
      assert.equal(b.status, 201, b.text);
      const solo = await info(bob, 'bob/up', 'solo');
      assert.equal(solo.status, 200, solo.text);
      assert.equal(solo.body.allowed, false);
      assert.equal(solo.body.base_commit, '');
      assert.equal((await sync(bob, 'bob/up', 'solo')).status, 400);
      // A fork nobody may see does not exist.
      assert.equal((await info(null, 'bob/nothing')).status, 404);
    });
  });

  describe('POST /repos/{template_owner}/{template_repo}/generate', () => {
    const PNG =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const generate = (u: U | null, full: string, body: Record<string, unknown>) =>
      s.api<RepoJson & Msg & { avatar_url: string }>('POST', `/repos/${full}/generate`, { ...tok(u), body });
    const raw = async (u: U, full: string, file: string) => {
      const r = await s.api('GET', `/repos/${full}/raw/${file}`, tok(u));
      return r.status === 200 ? r.text : undefined;
    };

    before(async () => {
      await create(alice, { name: 'tpl', auto_init: true, description: 'the template' });
      const wt = await g.workTree();
      await g.git(
        ['clone', '--quiet', repoUrl(s.url, 'alice', 'tpl', [alice.name, alice.password]), 'c'],
        wt,
      );
      const c = path.join(wt, 'c');
      await g.commit(c, '.forgejo/template', '# expanded files\n*.md\nsrc/**\n\n');
      await g.commit(
        c,
        'README.md',
        '# $REPO_NAME by ${REPO_OWNER} from $TEMPLATE_OWNER/$TEMPLATE_NAME\n' +
          '$REPO_NAME_SNAKE $REPO_NAME_KEBAB $REPO_NAME_PASCAL $REPO_NAME_CAMEL $REPO_NAME_UPPER\n' +
          '$REPO_DESCRIPTION; $UNKNOWN_VAR; cost: 5$\n',
      );
      await g.commit(c, 'src/$REPO_NAME.txt', 'x=${REPO_NAME_LOWER}\n');
      await g.commit(c, 'keep.txt', 'stays $REPO_NAME\n');
      await g.git(['push', '--quiet', 'origin', 'main'], c);
      const edit = await s.api<RepoJson>('PATCH', '/repos/alice/tpl', {
        token: alice.token,
        body: { template: true },
      });
      assert.equal(edit.status, 200, edit.text);
      assert.equal(edit.body.template, true);
      const topics = await s.api('PUT', '/repos/alice/tpl/topics', {
        token: alice.token,
        body: { topics: ['go', 'cli'] },
      });
      assert.equal(topics.status, 204, topics.text);
      const label = await s.api('POST', '/repos/alice/tpl/labels', {
        token: alice.token,
        body: { name: 'bug', color: '#ff0000', description: 'broken' },
      });
      assert.equal(label.status, 201, label.text);
      const hook = await s.api('POST', '/repos/alice/tpl/hooks', {
        token: alice.token,
        body: {
          type: 'forgejo',
          config: { url: 'http://127.0.0.1:9/hook', content_type: 'json' },
          events: ['push'],
          active: true,
        },
      });
      assert.equal(hook.status, 201, hook.text);
      const rule = await s.api('POST', '/repos/alice/tpl/branch_protections', {
        token: alice.token,
        body: { rule_name: 'main' },
      });
      assert.equal(rule.status, 201, rule.text);
      const avatar = await s.api('POST', '/repos/alice/tpl/avatar', {
        token: alice.token,
        body: { image: PNG },
      });
      assert.equal(avatar.status, 204, avatar.text);
      await create(alice, { name: 'plain', auto_init: true });
      await create(alice, { name: 'hidden-tpl', auto_init: true, private: true, template: true });
      await create(alice, { name: 'empty-tpl', template: true });
    });

    it('generates one fresh commit with the listed files expanded, and copies what is asked', async () => {
      const r = await generate(bob, 'alice/tpl', {
        owner: 'bob',
        name: 'My-App',
        description: 'made from tpl',
        git_content: true,
        topics: true,
        labels: true,
        webhooks: true,
        protected_branch: true,
        avatar: true,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.full_name, 'bob/My-App');
      assert.equal(r.body.empty, false);
      assert.equal(r.body.template, false);
      assert.equal(r.body.description, 'made from tpl');
      assert.equal(r.body.default_branch, 'main');
      assert.deepEqual(r.body.topics, ['cli', 'go']);
      assert.notEqual(r.body.avatar_url, '');
      assert.equal(
        await raw(bob, 'bob/My-App', 'README.md'),
        '# My-App by bob from alice/tpl\n' +
          'my_app my-app MyApp myApp MY-APP\n' +
          'made from tpl; UNKNOWN_VAR; cost: 5$\n',
      );
      assert.equal(await raw(bob, 'bob/My-App', 'src/My-App.txt'), 'x=my-app\n');
      assert.equal(await raw(bob, 'bob/My-App', 'keep.txt'), 'stays $REPO_NAME\n');
      assert.equal(await raw(bob, 'bob/My-App', '.forgejo/template'), undefined);
      const commits = await s.api<Array<{ commit: { message: string } }>>(
        'GET',
        '/repos/bob/My-App/commits',
        tok(bob),
      );
      assert.equal(commits.status, 200, commits.text);
      assert.equal(commits.body.length, 1);
      assert.equal(commits.body[0]!.commit.message.trim(), 'Initial commit');
      const labels = await s.api<Array<{ name: string; color: string }>>(
        'GET',
        '/repos/bob/My-App/labels',
        tok(bob),
      );
      assert.deepEqual(
        labels.body.map((l) => [l.name, l.color]),
        [['bug', 'ff0000']],
      );
      const hooks = await s.api<Array<{ config: { url: string } }>>(
        'GET',
        '/repos/bob/My-App/hooks',
        tok(bob),
      );
      assert.deepEqual(
        hooks.body.map((h) => h.config.url),
        ['http://127.0.0.1:9/hook'],
      );
      const rules = await s.api<Array<{ rule_name: string }>>(
        'GET',
        '/repos/bob/My-App/branch_protections',
        tok(bob),
      );
      assert.deepEqual(
        rules.body.map((x) => x.rule_name),
        ['main'],
      );
      // The new repository is a repository of its own: it clones and takes pushes.
      const wt = await g.workTree();
      await g.git(['clone', '--quiet', repoUrl(s.url, 'bob', 'My-App', [bob.name, bob.password]), 'c'], wt);
      assert.equal(fs.readFileSync(path.join(wt, 'c', 'src', 'My-App.txt'), 'utf8'), 'x=my-app\n');
    });

    it('copies only what is asked; another default branch; an empty template gives an empty repository', async () => {
      const r = await generate(bob, 'alice/tpl', {
        owner: 'bob',
        name: 'just-labels',
        labels: true,
        private: true,
      });
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.empty, true);
      assert.equal(r.body.private, true);
      assert.deepEqual(r.body.topics, []);
      const hooks = await s.api<unknown[]>('GET', '/repos/bob/just-labels/hooks', tok(bob));
      assert.deepEqual(hooks.body, []);
      const b = await generate(bob, 'alice/tpl', {
        owner: 'bob',
        name: 'trunk',
        git_content: true,
        default_branch: 'trunk',
      });
      assert.equal(b.status, 201, b.text);
      assert.equal(b.body.default_branch, 'trunk');
      assert.ok((await raw(bob, 'bob/trunk', 'README.md'))?.startsWith('# trunk by bob'));
      const e = await generate(bob, 'alice/empty-tpl', {
        owner: 'bob',
        name: 'from-empty',
        git_content: true,
      });
      assert.equal(e.status, 201, e.text);
      assert.equal(e.body.empty, true);
    });

    it('generates for organizations the doer may create in, and site administrators for anyone', async () => {
      const org = await generate(bob, 'alice/tpl', { owner: 'acme', name: 'org-app', git_content: true });
      assert.equal(org.status, 201, org.text);
      assert.equal(org.body.full_name, 'acme/org-app');
      // bob is no owner of acme and his team holds no repository: he administers it as a collaborator.
      assert.deepEqual(org.body.permissions, { admin: true, push: true, pull: true });
      const collaborators = await s.api<UserJson[]>('GET', '/repos/acme/org-app/collaborators', tok(bob));
      assert.deepEqual(
        collaborators.body.map((u) => u.login),
        ['bob'],
      );
      assert.equal(
        (await generate(dave, 'alice/tpl', { owner: 'acme', name: 'nope', topics: true })).status,
        403,
      );
      const admin = await generate(s.admin as U, 'alice/tpl', {
        owner: 'carol',
        name: 'for-carol',
        topics: true,
      });
      assert.equal(admin.status, 201, admin.text);
      assert.equal(admin.body.full_name, 'carol/for-carol');
    });

    it('refuses what cannot be generated', async () => {
      const cases: Array<[U | null, string, Record<string, unknown>, number]> = [
        [bob, 'alice/plain', { owner: 'bob', name: 'x1', git_content: true }, 404], // not a template
        [carol, 'alice/hidden-tpl', { owner: 'carol', name: 'x2', git_content: true }, 404], // cannot see it
        [bob, 'alice/tpl', { owner: 'bob', name: 'x3' }, 422], // nothing asked
        [bob, 'alice/tpl', { owner: 'bob', name: 'bad name', topics: true }, 422],
        [bob, 'alice/tpl', { owner: 'bob', name: 'x.git', topics: true }, 422],
        [bob, 'alice/tpl', { owner: 'bob', name: '', topics: true }, 422],
        [bob, 'alice/tpl', { name: 'x4', topics: true }, 422], // no owner
        [bob, 'alice/tpl', { owner: 'bob', topics: true }, 422], // no name
        [bob, 'alice/tpl', { owner: 'bob', name: 'x5', topics: 'yes' }, 422],
        [bob, 'alice/tpl', { owner: 'bob', name: 'x6', git_content: true, default_branch: 'a..b' }, 422],
        [bob, 'alice/tpl', { owner: 'nobody-here', name: 'x7', topics: true }, 404],
        [bob, 'alice/tpl', { owner: 'carol', name: 'x8', topics: true }, 403], // another user
        [bob, 'alice/tpl', { owner: 'bob', name: 'My-App', topics: true }, 409], // taken
        [bob, 'alice/tpl', { owner: 'bob', name: 'my-app', git_content: true }, 409], // case-insensitively
        [null, 'alice/tpl', { owner: 'bob', name: 'x9', topics: true }, 401],
      ];
      for (const [u, full, body, status] of cases) {
        const r = await generate(u, full, body);
        assert.equal(
          r.status,
          status,
          `${u?.name ?? 'anonymous'} ${full} ${JSON.stringify(body)}: ${r.text}`,
        );
      }
      const named = await generate(bob, 'alice/tpl', { owner: 'bob', name: 'bad name', topics: true });
      assert.match(named.body.message, /\[Name\]/);
      // Nothing was left behind by the refusals.
      for (const name of ['x1', 'x2', 'x3', 'x6', 'x8']) {
        assert.equal((await s.api('GET', `/repos/bob/${name}`, tok(bob))).status, 404, name);
      }
      const dirs = fs.readdirSync(s.config.repository.root).filter((d) => d !== '.tmp');
      const tmp = path.join(s.config.repository.root, '.tmp');
      assert.deepEqual(fs.existsSync(tmp) ? fs.readdirSync(tmp) : [], []);
      assert.ok(dirs.length > 0);
    });
  });
});
