// A repository's settings in the browser's terms: options (rename with the old address leading on,
// archive, transfer, delete with the name typed), units, collaborators, branch and tag protection,
// deploy keys. WebClient for bad input (422 beside the field, nothing changed), permissions (403 for
// a collaborator who is no administrator, 404 for a stranger), CSRF; Chromium for adding a
// collaborator who can then push and protecting a branch so a push is refused, with axe and
// screenshots of each page.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';
import { GitClient, repoUrl } from '../helpers/git.js';
import { makeKey } from '../helpers/ssh.js';

type U = { name: string; password: string; token: string; id: number };

describe('web repository settings', () => {
  let s: TestServer;
  let alice: U;
  let bob: U;
  let carol: U;
  let browser: Browser | undefined;
  const git = new GitClient();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-reposettings-'));

  const makeRepo = async (owner: U, name: string, priv = true) => {
    const r = await s.api('POST', '/user/repos', {
      token: owner.token,
      body: { name, private: priv, auto_init: true, default_branch: 'main' },
    });
    assert.equal(r.status, 201, r.text);
  };
  const signedIn = async (u: U) => {
    const c = new WebClient(s.url);
    const r = await c.signIn(u.name, u.password);
    assert.equal(r.status, 303, r.text);
    return c;
  };
  /** The message shown beside a field (its error paragraph). */
  const fieldError = (html: string, id: string) =>
    new RegExp(`id="${id}-error">([^<]*)<`).exec(html)?.[1] ?? '';

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    carol = await s.createUser('carol');
    await makeRepo(alice, 'proj');
    await makeRepo(alice, 'taken');
    const put = await s.api('PUT', '/repos/alice/proj/collaborators/bob', {
      token: alice.token,
      body: { permission: 'write' },
    });
    assert.equal(put.status, 204);
  });
  after(async () => {
    await browser?.close();
    await s.close();
    git.cleanup();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('answers 404 to strangers, 403 to collaborators who do not administer, sign-in to visitors', async () => {
    const pages = ['', '/units', '/collaboration', '/branches', '/branches/edit', '/tags', '/keys'];
    const b = await signedIn(bob);
    const c = await signedIn(carol);
    for (const p of pages) {
      assert.equal((await b.get(`/alice/proj/settings${p}`)).status, 403, `bob ${p}`);
      assert.equal((await c.get(`/alice/proj/settings${p}`)).status, 404, `carol ${p}`);
    }
    // A form posted by someone who may not change it changes nothing.
    await b.get('/alice/proj');
    assert.equal((await b.post('/alice/proj/settings/collaboration', { collaborator: 'carol' })).status, 403);
    assert.equal(
      (await s.api('GET', '/repos/alice/proj/collaborators/carol', { token: alice.token })).status,
      404,
    );
    const anon = await new WebClient(s.url).get('/alice/proj/settings');
    assert.equal(anon.status, 303);
    assert.match(anon.location ?? '', /^\/user\/login\?redirect_to=/);
    // The Settings tab: for administrators only.
    const a = await signedIn(alice);
    assert.match((await a.get('/alice/proj')).text, /href="\/alice\/proj\/settings"/);
    assert.doesNotMatch((await b.get('/alice/proj')).text, /href="\/alice\/proj\/settings"/);
  });

  it('refuses a form without its CSRF token', async () => {
    const a = await signedIn(alice);
    await a.get('/alice/proj/settings/collaboration');
    const r = await a.post('/alice/proj/settings/collaboration', { _csrf: null, collaborator: 'carol' });
    assert.equal(r.status, 403);
    assert.match(r.text, /CSRF/);
    assert.equal(
      (await s.api('GET', '/repos/alice/proj/collaborators/carol', { token: alice.token })).status,
      404,
    );
  });

  it('refuses bad names on rename, keeping what was typed; a rename leads the old address on', async () => {
    await makeRepo(alice, 'renamed-me');
    const a = await signedIn(alice);
    const page = await a.get('/alice/renamed-me/settings');
    assert.equal(page.status, 200);
    assert.match(page.text, /<title>Settings - alice\/renamed-me - Anvil<\/title>/);
    const update = (repo_name: string, extra: Record<string, string> = {}) =>
      a.post('/alice/renamed-me/settings', { action: 'update', repo_name, description: 'typed', ...extra });

    let r = await update('');
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-repo_name'), /must not be empty/);
    assert.match(r.text, />typed<\/textarea>/, 'what was typed is kept');
    r = await update('x'.repeat(101));
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-repo_name'), /at most 100/);
    r = await update('taken');
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-repo_name'), /already exists/);
    assert.match(r.text, /value="taken"/);
    r = await update('bad name!');
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-repo_name'), /invalid/);
    r = await update('renamed-me', { website: 'not a url' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-website'), /http or https/);
    r = await update('renamed-me', { default_branch: 'no-such-branch' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-default_branch'), /does not exist/);
    r = await update('renamed-me', { description: 'd'.repeat(2049) });
    assert.equal(r.status, 422);
    // Nothing changed by any of them.
    const still = await s.api<{ description: string; website: string }>('GET', '/repos/alice/renamed-me', {
      token: alice.token,
    });
    assert.equal(still.status, 200);
    assert.equal(still.body.description, '');

    r = await update('new-name', { website: 'https://example.com/', private: 'on', template: 'on' });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/alice/new-name/settings');
    const now = await s.api<{ description: string; website: string; private: boolean; template: boolean }>(
      'GET',
      '/repos/alice/new-name',
      { token: alice.token },
    );
    assert.deepEqual(
      [now.body.description, now.body.website, now.body.private, now.body.template],
      ['typed', 'https://example.com/', true, true],
    );
    assert.match((await a.get('/alice/new-name/settings')).text, /renamed to new-name/);
    const old = await a.get('/alice/renamed-me/settings');
    assert.equal(old.status, 307);
    assert.equal(old.location, '/alice/new-name/settings');
  });

  it('deletes only with the name typed, archives, transfers to an existing owner only, toggles units', async () => {
    await makeRepo(alice, 'doomed');
    const a = await signedIn(alice);
    await a.get('/alice/doomed/settings');
    let r = await a.post('/alice/doomed/settings', { action: 'delete', repo_name: 'doome' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-delete-repo_name'), /not the repository's name/);
    assert.equal((await s.api('GET', '/repos/alice/doomed', { token: alice.token })).status, 200);

    r = await a.post('/alice/doomed/settings', { action: 'archive' });
    assert.equal(r.status, 303);
    assert.equal(
      (await s.api<{ archived: boolean }>('GET', '/repos/alice/doomed', { token: alice.token })).body
        .archived,
      true,
    );
    r = await a.post('/alice/doomed/settings', { action: 'unarchive' });
    assert.equal(
      (await s.api<{ archived: boolean }>('GET', '/repos/alice/doomed', { token: alice.token })).body
        .archived,
      false,
    );

    r = await a.post('/alice/doomed/settings', {
      action: 'transfer',
      repo_name: 'doomed',
      new_owner_name: 'nobody-here',
    });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-transfer-new_owner_name'), /no user or organization nobody-here/);
    assert.match(r.text, /value="nobody-here"/);
    r = await a.post('/alice/doomed/settings', {
      action: 'transfer',
      repo_name: 'wrong',
      new_owner_name: 'carol',
    });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-transfer-repo_name'), /not the repository's name/);

    // A collaborator with write access cannot delete (403), whatever they type.
    const b = await signedIn(bob);
    await b.get('/alice/proj');
    assert.equal((await b.post('/alice/proj/settings', { action: 'delete', repo_name: 'proj' })).status, 403);

    await a.get('/alice/doomed/settings/units');
    r = await a.post('/alice/doomed/settings/units', {
      enable_issues: 'on',
      enable_pulls: 'on',
      enable_releases: 'on',
    });
    assert.equal(r.status, 422, 'the default merge style (merge) is no longer allowed');
    assert.match(fieldError(r.text, 'f-pulls_default_merge_style'), /allowed styles/);
    assert.equal(
      (await s.api<{ has_wiki: boolean }>('GET', '/repos/alice/doomed', { token: alice.token })).body
        .has_wiki,
      true,
    );
    r = await a.post('/alice/doomed/settings/units', {
      enable_issues: 'on',
      enable_pulls: 'on',
      enable_releases: 'on',
      pulls_allow_squash: 'on',
      pulls_default_merge_style: 'squash',
    });
    assert.equal(r.status, 303);
    const units = await s.api<Record<string, unknown>>('GET', '/repos/alice/doomed', { token: alice.token });
    assert.deepEqual(
      [units.body['has_issues'], units.body['has_wiki'], units.body['has_actions']],
      [true, false, false],
    );
    assert.deepEqual(
      [
        units.body['allow_merge_commits'],
        units.body['allow_squash_merge'],
        units.body['allow_rebase'],
        units.body['default_merge_style'],
      ],
      [false, true, false, 'squash'],
    );

    await a.get('/alice/doomed/settings');
    r = await a.post('/alice/doomed/settings', { action: 'delete', repo_name: 'doomed' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/alice');
    assert.equal((await s.api('GET', '/repos/alice/doomed', { token: alice.token })).status, 404);
  });

  it('merges pull requests only in the styles the settings allow', async () => {
    await makeRepo(alice, 'styles');
    const a = await signedIn(alice);
    await a.get('/alice/styles/settings/units');
    const r = await a.post('/alice/styles/settings/units', {
      enable_issues: 'on',
      enable_pulls: 'on',
      pulls_allow_squash: 'on',
      pulls_default_merge_style: 'squash',
    });
    assert.equal(r.status, 303);
    const branch = await s.api('POST', '/repos/alice/styles/branches', {
      token: alice.token,
      body: { new_branch_name: 'feature', old_branch_name: 'main' },
    });
    assert.equal(branch.status, 201, branch.text);
    const file = await s.api('POST', '/repos/alice/styles/contents/new.txt', {
      token: alice.token,
      body: { branch: 'feature', content: Buffer.from('new\n').toString('base64'), message: 'add new.txt' },
    });
    assert.equal(file.status, 201, file.text);
    const pr = await s.api<{ number: number }>('POST', '/repos/alice/styles/pulls', {
      token: alice.token,
      body: { head: 'feature', base: 'main', title: 'A feature' },
    });
    assert.equal(pr.status, 201, pr.text);
    // The pull request's page offers the allowed style only.
    const page = await a.get(`/alice/styles/pulls/${pr.body.number}`);
    assert.match(page.text, /<option value="squash" selected/);
    assert.doesNotMatch(page.text, /<option value="merge"/);
    const merge = (Do: string) =>
      s.api('POST', `/repos/alice/styles/pulls/${pr.body.number}/merge`, {
        token: alice.token,
        body: { Do },
      });
    const refused = await merge('merge');
    assert.equal(refused.status, 405, refused.text);
    assert.match(refused.text, /not allowed/);
    const merged = await merge('squash');
    assert.equal(merged.status, 200, merged.text);
  });

  it('adds collaborators by name only, changes their permission, removes them', async () => {
    const a = await signedIn(alice);
    await a.get('/alice/proj/settings/collaboration');
    let r = await a.post('/alice/proj/settings/collaboration', { collaborator: 'ghost' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-collaborator'), /no user ghost/);
    assert.match(r.text, /value="ghost"/);
    r = await a.post('/alice/proj/settings/collaboration', { collaborator: '' });
    assert.equal(r.status, 422);
    r = await a.post('/alice/proj/settings/collaboration', { collaborator: 'bob' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-collaborator'), /already a collaborator/);
    r = await a.post('/alice/proj/settings/collaboration', { collaborator: 'alice' });
    assert.equal(r.status, 422);

    r = await a.post('/alice/proj/settings/collaboration', { collaborator: 'carol' });
    assert.equal(r.status, 303);
    const perm = async () =>
      (
        await s.api<{ permission: string }>('GET', '/repos/alice/proj/collaborators/carol/permission', {
          token: alice.token,
        })
      ).body.permission;
    assert.equal(await perm(), 'write');
    r = await a.post('/alice/proj/settings/collaboration/access_mode', { uid: String(carol.id), mode: '3' });
    assert.equal(r.status, 303);
    assert.equal(await perm(), 'admin');
    // Now an administrator of the repository, carol sees its settings.
    assert.equal((await (await signedIn(carol)).get('/alice/proj/settings')).status, 200);
    r = await a.post('/alice/proj/settings/collaboration/delete', { id: String(carol.id) });
    assert.equal(r.status, 303);
    assert.equal(
      (await s.api('GET', '/repos/alice/proj/collaborators/carol', { token: alice.token })).status,
      404,
    );
  });

  it("gives an organization's teams access to its repository, and takes it away", async () => {
    assert.equal(
      (await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } })).status,
      201,
    );
    const team = await s.api<{ id: number }>('POST', '/orgs/acme/teams', {
      token: alice.token,
      body: { name: 'devs', permission: 'write', units: ['repo.code'], includes_all_repositories: false },
    });
    assert.equal(team.status, 201, team.text);
    const repo = await s.api('POST', '/orgs/acme/repos', {
      token: alice.token,
      body: { name: 'orgrepo', private: true },
    });
    assert.equal(repo.status, 201, repo.text);
    const a = await signedIn(alice);
    const page = await a.get('/acme/orgrepo/settings/collaboration');
    assert.equal(page.status, 200);
    assert.match(page.text, /Owners/);
    let r = await a.post('/acme/orgrepo/settings/collaboration/team', { team: 'ghosts' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-team'), /acme has no team ghosts/);
    r = await a.post('/acme/orgrepo/settings/collaboration/team', { team: 'devs' });
    assert.equal(r.status, 303);
    assert.equal((await s.api('GET', '/repos/acme/orgrepo/teams/devs', { token: alice.token })).status, 200);
    r = await a.post('/acme/orgrepo/settings/collaboration/team', { team: 'devs' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-team'), /already added/);
    // Teams can be allow-listed in the protection rules of an organization's repository.
    assert.match((await a.get('/acme/orgrepo/settings/branches/edit')).text, /name="whitelist_teams"/);
    r = await a.post('/acme/orgrepo/settings/collaboration/team/delete', { id: String(team.body.id) });
    assert.equal(r.status, 303);
    assert.equal((await s.api('GET', '/repos/acme/orgrepo/teams/devs', { token: alice.token })).status, 404);
    // Transferred to the organization (alice owns it: at once), the old address leads on.
    await makeRepo(alice, 'moving');
    await a.get('/alice/moving/settings');
    r = await a.post('/alice/moving/settings', {
      action: 'transfer',
      repo_name: 'moving',
      new_owner_name: 'acme',
    });
    assert.equal(r.status, 303, r.text);
    assert.equal(r.location, '/acme/moving');
    assert.equal((await s.api('GET', '/repos/acme/moving', { token: alice.token })).status, 200);
    const old = await a.get('/alice/moving/settings');
    assert.equal(old.status, 307);
    assert.equal(old.location, '/acme/moving/settings');
    // A user's repository has no teams section.
    assert.doesNotMatch((await a.get('/alice/proj/settings/collaboration')).text, /Add team/);
  });

  it('refuses bad protection rules beside their fields and saves every field of a good one', async () => {
    const a = await signedIn(alice);
    await a.get('/alice/proj/settings/branches/edit');
    let r = await a.post('/alice/proj/settings/branches/edit', { rule_name: '', enable_push: 'all' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-rule_name'), /must not be empty/);
    r = await a.post('/alice/proj/settings/branches/edit', { rule_name: 'r'.repeat(256) });
    assert.equal(r.status, 422);
    r = await a.post('/alice/proj/settings/branches/edit', {
      rule_name: 'release/*',
      enable_push: 'whitelist',
      whitelist_users: 'ghost',
    });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-whitelist_users'), /user does not exist \[name: ghost\]/);
    assert.match(r.text, /value="release\/\*"/);
    r = await a.post('/alice/proj/settings/branches/edit', { rule_name: 'main', required_approvals: '-1' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-required_approvals'), /whole number/);
    assert.deepEqual(
      (await s.api('GET', '/repos/alice/proj/branch_protections', { token: alice.token })).body,
      [],
    );

    const form = {
      rule_name: 'release/*',
      enable_push: 'whitelist',
      whitelist_users: 'bob',
      whitelist_deploy_keys: 'on',
      enable_merge_whitelist: 'on',
      merge_whitelist_users: 'bob',
      enable_status_check: 'on',
      status_check_contexts: 'ci/build\nci/test',
      required_approvals: '2',
      enable_approvals_whitelist: 'on',
      approvals_whitelist_users: 'bob',
      block_on_rejected_reviews: 'on',
      block_on_official_review_requests: 'on',
      block_on_outdated_branch: 'on',
      dismiss_stale_approvals: 'on',
      ignore_stale_approvals: 'on',
      require_signed_commits: 'on',
      protected_file_patterns: '*.lock',
      unprotected_file_patterns: 'docs/**',
      apply_to_admins: 'on',
    };
    r = await a.post('/alice/proj/settings/branches/edit', form);
    assert.equal(r.status, 303, r.text);
    const rules = await s.api<Array<Record<string, unknown>>>('GET', '/repos/alice/proj/branch_protections', {
      token: alice.token,
    });
    const rule = rules.body[0]!;
    assert.deepEqual(
      {
        ...rule,
        created_at: undefined,
        updated_at: undefined,
      },
      {
        branch_name: 'release/*',
        rule_name: 'release/*',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: ['bob'],
        push_whitelist_teams: [],
        push_whitelist_deploy_keys: true,
        enable_merge_whitelist: true,
        merge_whitelist_usernames: ['bob'],
        merge_whitelist_teams: [],
        enable_status_check: true,
        status_check_contexts: ['ci/build', 'ci/test'],
        required_approvals: 2,
        enable_approvals_whitelist: true,
        approvals_whitelist_username: ['bob'],
        approvals_whitelist_teams: [],
        block_on_rejected_reviews: true,
        block_on_official_review_requests: true,
        block_on_outdated_branch: true,
        dismiss_stale_approvals: true,
        ignore_stale_approvals: true,
        require_signed_commits: true,
        protected_file_patterns: '*.lock',
        unprotected_file_patterns: 'docs/**',
        apply_to_admins: true,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    // The edit form shows it back; a second rule of the same name is refused.
    const edit = await a.get(
      `/alice/proj/settings/branches/edit?rule_name=${encodeURIComponent('release/*')}`,
    );
    assert.equal(edit.status, 200);
    assert.match(edit.text, /ci\/build\nci\/test<\/textarea>/);
    r = await a.post('/alice/proj/settings/branches/edit', { rule_name: 'release/*', enable_push: 'all' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-rule_name'), /already exists/);
    // Renamed and turned off field by field through the edit form.
    const id = /name="rule_id" value="(\d+)"/.exec(edit.text)![1]!;
    r = await a.post('/alice/proj/settings/branches/edit', {
      rule_id: id,
      rule_name: 'stable/*',
      enable_push: 'all',
    });
    assert.equal(r.status, 303);
    const after = await s.api<Array<Record<string, unknown>>>('GET', '/repos/alice/proj/branch_protections', {
      token: alice.token,
    });
    assert.equal(after.body.length, 1);
    assert.equal(after.body[0]!['rule_name'], 'stable/*');
    assert.equal(after.body[0]!['enable_push_whitelist'], false);
    assert.equal(after.body[0]!['require_signed_commits'], false);
    assert.deepEqual(after.body[0]!['status_check_contexts'], []);
    r = await a.post(`/alice/proj/settings/branches/${id}/delete`, {});
    assert.equal(r.status, 303);
    assert.deepEqual(
      (await s.api('GET', '/repos/alice/proj/branch_protections', { token: alice.token })).body,
      [],
    );
  });

  it('protects tags: bad pattern and unknown users refused, edit and delete', async () => {
    const a = await signedIn(alice);
    await a.get('/alice/proj/settings/tags');
    let r = await a.post('/alice/proj/settings/tags', { name_pattern: '/[/', allowlist_users: 'alice' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-name_pattern'), /cannot be read/);
    assert.match(r.text, /value="\/\[\/"/);
    r = await a.post('/alice/proj/settings/tags', { name_pattern: '', allowlist_users: 'alice' });
    assert.equal(r.status, 422);
    r = await a.post('/alice/proj/settings/tags', { name_pattern: 'v*', allowlist_users: 'ghost' });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-allowlist_users'), /ghost/);
    r = await a.post('/alice/proj/settings/tags', { name_pattern: 'v*', allowlist_users: '' });
    assert.equal(r.status, 422);
    assert.deepEqual(
      (await s.api('GET', '/repos/alice/proj/tag_protections', { token: alice.token })).body,
      [],
    );
    r = await a.post('/alice/proj/settings/tags', { name_pattern: 'v*', allowlist_users: 'alice' });
    assert.equal(r.status, 303);
    const list = await s.api<Array<{ id: number; name_pattern: string; whitelist_usernames: string[] }>>(
      'GET',
      '/repos/alice/proj/tag_protections',
      { token: alice.token },
    );
    const id = list.body[0]!.id;
    assert.equal((await a.get(`/alice/proj/settings/tags/${id}`)).status, 200);
    r = await a.post(`/alice/proj/settings/tags/${id}`, {
      name_pattern: 'release-*',
      allowlist_users: 'alice, bob',
    });
    assert.equal(r.status, 303);
    const edited = await s.api<{ name_pattern: string; whitelist_usernames: string[] }>(
      'GET',
      `/repos/alice/proj/tag_protections/${id}`,
      { token: alice.token },
    );
    assert.deepEqual(
      [edited.body.name_pattern, edited.body.whitelist_usernames],
      ['release-*', ['alice', 'bob']],
    );
    r = await a.post('/alice/proj/settings/tags/delete', { id: String(id) });
    assert.equal(r.status, 303);
    assert.deepEqual(
      (await s.api('GET', '/repos/alice/proj/tag_protections', { token: alice.token })).body,
      [],
    );
  });

  it('adds deploy keys (bad ones refused), deletes them', async () => {
    const a = await signedIn(alice);
    await a.get('/alice/proj/settings/keys');
    let r = await a.post('/alice/proj/settings/keys', { title: 'ci', content: 'ssh-ed25519 not-a-key' });
    assert.equal(r.status, 422);
    assert.match(r.text, /value="ci"/);
    assert.match(r.text, /class="field-error"/);
    const key = await makeKey(tmp, 'deploy');
    r = await a.post('/alice/proj/settings/keys', { title: '', content: key.pub });
    assert.equal(r.status, 422);
    assert.match(fieldError(r.text, 'f-title'), /title/);
    r = await a.post('/alice/proj/settings/keys', { title: 't'.repeat(256), content: key.pub });
    assert.equal(r.status, 422);
    r = await a.post('/alice/proj/settings/keys', { title: 'ci', content: key.pub, is_writable: 'on' });
    assert.equal(r.status, 303);
    r = await a.post('/alice/proj/settings/keys', { title: 'again', content: key.pub });
    assert.equal(r.status, 422);
    assert.match(r.text, /already been added/);
    const keys = await s.api<Array<{ id: number; title: string; read_only: boolean }>>(
      'GET',
      '/repos/alice/proj/keys',
      {
        token: alice.token,
      },
    );
    assert.deepEqual(
      keys.body.map((k) => [k.title, k.read_only]),
      [['ci', false]],
    );
    const page = await a.get('/alice/proj/settings/keys');
    assert.match(page.text, new RegExp(key.fingerprint.replace(/[+/]/g, '\\$&')));
    r = await a.post('/alice/proj/settings/keys/delete', { id: String(keys.body[0]!.id) });
    assert.equal(r.status, 303);
    assert.deepEqual((await s.api('GET', '/repos/alice/proj/keys', { token: alice.token })).body, []);
  });

  describe('in a browser', () => {
    let page: Page;
    const errors: string[] = [];
    before(async () => {
      browser = await launchBrowser();
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      page = await context.newPage();
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('dialog', (d) => void d.accept());
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', alice.name);
      await page.fill('#f-password', alice.password);
      await page.click('main button[type=submit]');
      await page.waitForURL(`${s.url}/`);
    });
    const check = async (name: string) => {
      assert.deepEqual(await accessibilityViolations(page), [], name);
      await screenshots(page, name);
    };

    it('adds a collaborator who can then push', async () => {
      const dave = await s.createUser('dave');
      await makeRepo(alice, 'shared');
      const dir = fs.mkdtempSync(path.join(tmp, 'clone-'));
      const asDave = repoUrl(s.url, 'alice', 'shared', [dave.name, dave.password]);
      const asAlice = repoUrl(s.url, 'alice', 'shared', [alice.name, alice.password]);
      await git.git(['clone', '--quiet', asAlice, dir]);
      await git.commit(dir, 'dave.txt', 'from dave\n');
      const before = await git.tryGit(['push', asDave, 'HEAD:main'], dir);
      assert.equal(before.ok, false, 'a stranger cannot push');

      await page.goto(`${s.url}/alice/shared`);
      await page.click('nav[aria-label=Repository] >> text=Settings');
      await page.waitForURL(`${s.url}/alice/shared/settings`);
      await check('repo-settings-options');
      await page.click('.settings-nav >> text=Collaborators');
      await page.fill('#f-collaborator', 'dave');
      await page.click('text=Add collaborator');
      await page.waitForURL(`${s.url}/alice/shared/settings/collaboration`);
      assert.match((await page.textContent('[role=status]')) ?? '', /dave was added/);
      await check('repo-settings-collaboration');

      const afterAdd = await git.tryGit(['push', asDave, 'HEAD:main'], dir);
      assert.equal(afterAdd.ok, true, afterAdd.out);

      await page.click('.settings-nav >> text=Deploy keys');
      await check('repo-settings-keys');
      await page.click('.settings-nav >> text=Units');
      await check('repo-settings-units');
      await page.click('.settings-nav >> text=Tags');
      await check('repo-settings-tags');
    });

    it('protects a branch and a push to it is refused', async () => {
      const dir = fs.mkdtempSync(path.join(tmp, 'clone-'));
      const asAlice = repoUrl(s.url, 'alice', 'shared', [alice.name, alice.password]);
      await git.git(['clone', '--quiet', asAlice, dir]);
      await git.commit(dir, 'one.txt', 'one\n');
      assert.equal((await git.tryGit(['push', asAlice, 'HEAD:main'], dir)).ok, true);

      await page.goto(`${s.url}/alice/shared/settings/branches`);
      await check('repo-settings-branches');
      await page.click('text=Add a protection rule');
      await page.fill('#f-rule_name', 'main');
      await page.check('#f-enable_push-none');
      await page.check('#f-apply_to_admins');
      await check('repo-settings-branch-edit');
      await page.click('text=Create rule');
      await page.waitForURL(`${s.url}/alice/shared/settings/branches`);
      assert.match((await page.textContent('main')) ?? '', /main/);

      await git.commit(dir, 'two.txt', 'two\n');
      const refused = await git.tryGit(['push', asAlice, 'HEAD:main'], dir);
      assert.equal(refused.ok, false);
      assert.match(refused.out, /Not allowed to push to protected branch main/);

      // Deleted from its page, the rule lets the push through again.
      await page.click('.settings-rows >> text=Delete');
      await page.waitForURL(`${s.url}/alice/shared/settings/branches`);
      assert.match((await page.textContent('main')) ?? '', /No branch is protected/);
      assert.equal((await git.tryGit(['push', asAlice, 'HEAD:main'], dir)).ok, true);
      assert.deepEqual(errors, []);
    });
  });
});
