// A whole workflow through gitea-js, a client for Forgejo's and Gitea's API nobody on this project
// wrote, against a started server: account and settings, a repository with a label template,
// files and a branch, an issue with labels and a comment, a pull request merged, a release, stars,
// follows and notifications (read body-less), an organization with a team, markdown, blocking,
// nodeinfo. gitea-js throws on any non-2xx answer, so each step that returns is one Forgejo's
// clients accept.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { giteaApi } from 'gitea-js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('a workflow through gitea-js', () => {
  let s: TestServer;
  let alice: { name: string; token: string };
  let bob: { name: string; token: string };
  let api: ReturnType<typeof giteaApi>;
  let bobApi: ReturnType<typeof giteaApi>;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    api = giteaApi(s.url, { token: alice.token, customFetch: fetch });
    bobApi = giteaApi(s.url, { token: bob.token, customFetch: fetch });
  });
  after(() => s.close());

  it('drives an ordinary day of work', async () => {
    const me = (await api.user.userGetCurrent()).data;
    assert.equal(me.login, 'alice');
    const settings = (await api.user.updateUserSettings({ full_name: 'Alice', location: 'Porto' })).data;
    assert.equal(settings.location, 'Porto');
    const emails = (await api.user.userAddEmail({ emails: ['alice@work.example'] })).data;
    assert.equal(emails.length, 2);

    const repo = (
      await api.user.createCurrentUserRepo({ name: 'tool', auto_init: true, issue_labels: 'Default' })
    ).data;
    assert.equal(repo.full_name, 'alice/tool');
    await api.repos.repoCreateFile('alice', 'tool', 'src/main.txt', {
      content: Buffer.from('hello\n').toString('base64'),
      message: 'Add main',
    });
    await api.repos.repoCreateBranch('alice', 'tool', {
      new_branch_name: 'feature',
      old_branch_name: 'main',
    });
    await api.repos.repoCreateFile('alice', 'tool', 'src/feature.txt', {
      content: Buffer.from('feature\n').toString('base64'),
      message: 'Add the feature',
      branch: 'feature',
    });

    const issue = (
      await bobApi.repos.issueCreateIssue('alice', 'tool', { title: 'It breaks', body: 'see @alice' })
    ).data;
    const labels = (await api.repos.issueListLabels('alice', 'tool', { limit: 50 })).data;
    const bug = labels.find((l) => l.name === 'Kind/Bug')!;
    await api.repos.issueAddLabel('alice', 'tool', issue.number!, { labels: [bug.id!] });
    await api.repos.issueCreateComment('alice', 'tool', issue.number!, { body: 'On it.' });
    const fetched = (await api.repos.issueGetIssue('alice', 'tool', issue.number!)).data;
    assert.deepEqual(
      fetched.labels!.map((l) => l.name),
      ['Kind/Bug'],
    );
    assert.equal(fetched.comments, 1);

    const pr = (
      await api.repos.repoCreatePullRequest('alice', 'tool', {
        head: 'feature',
        base: 'main',
        title: 'The feature',
        body: `Fixes #${issue.number}`,
      })
    ).data;
    await api.repos.repoMergePullRequest('alice', 'tool', pr.number!, { Do: 'merge' });
    assert.equal((await api.repos.repoGetPullRequest('alice', 'tool', pr.number!)).data.merged, true);

    const release = (
      await api.repos.repoCreateRelease('alice', 'tool', {
        tag_name: 'v1.0.0',
        name: 'First',
        body: '**yes**',
      })
    ).data;
    assert.equal(release.tag_name, 'v1.0.0');

    await bobApi.user.userCurrentPutStar('alice', 'tool');
    await bobApi.user.userCurrentPutFollow('alice');
    const gazers = (await api.repos.repoListStargazers('alice', 'tool')).data;
    assert.deepEqual(
      gazers.map((u) => u.login),
      ['bob'],
    );
    // Bob opened the issue, so he hears of the comment; marking all read is a body-less PUT.
    const unread = (await bobApi.notifications.notifyGetList({ all: false })).data;
    assert.ok(unread.length >= 1);
    await bobApi.notifications.notifyReadList({});
    assert.deepEqual((await bobApi.notifications.notifyGetList({ all: false })).data, []);

    const org = (await api.orgs.orgCreate({ username: 'guild', visibility: 'public' })).data;
    assert.equal(org.name, 'guild');
    const team = (
      await api.orgs.orgCreateTeam('guild', {
        name: 'crew',
        permission: 'write',
        units: ['repo.code', 'repo.issues'],
      })
    ).data;
    await api.teams.orgAddTeamMember(team.id!, 'bob');

    const html = (
      await api.markdown.renderMarkdown(
        { Text: `Thanks @bob, see #${issue.number}`, Mode: 'gfm', Context: 'alice/tool' },
        { format: 'text' },
      )
    ).data;
    assert.match(html, /class="mention"/);
    assert.match(html, /class="ref-issue"/);

    const feed = (await api.users.userListActivityFeeds('alice', { limit: 50 })).data;
    assert.ok(feed.length > 0);
    const node = (await api.nodeinfo.getNodeInfo()).data;
    assert.equal(node.version, '2.1');
  });

  it('sees the refusals Forgejo gives, as errors it can read', async () => {
    // gitea-js follows Gitea, whose blocking API differs (/user/blocks); Forgejo's through its client.
    await api.request({ path: '/user/block/bob', method: 'PUT', secure: true });
    await assert.rejects(
      bobApi.repos.issueCreateIssue('alice', 'tool', { title: 'again' }),
      (err: { status?: number; error?: { message?: string } }) => {
        assert.equal(err.status, 403);
        assert.match(err.error?.message ?? '', /blocked/);
        return true;
      },
    );
    await api.request({ path: '/user/unblock/bob', method: 'PUT', secure: true });
    await assert.rejects(
      api.repos.repoGet('alice', 'nothere'),
      (err: { status?: number }) => err.status === 404,
    );
  });
});
