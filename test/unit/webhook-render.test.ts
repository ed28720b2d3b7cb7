// The bodies of the chat and build webhook types (src/webhooks/render*.ts) for each event, as
// Forgejo renders them: Discord embeds, Telegram HTML, Microsoft Teams MessageCards, DingTalk
// action cards, Feishu text, WeCom markdown, packagist's update and SourceHut build jobs; pushes
// without commits and events a type has nothing for give no delivery; and the settings each type
// keeps (src/webhooks/types.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { render } from '../../src/webhooks/render.js';
import { adjustManifest } from '../../src/webhooks/render-builds.js';
import { packagistUrl, telegramUrl, typeSettings } from '../../src/webhooks/types.js';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const repository = {
  id: 7,
  full_name: 'alice/app',
  html_url: 'https://forge.test/alice/app',
  clone_url: 'https://forge.test/alice/app.git',
  ssh_url: 'git@forge.test:alice/app.git',
  private: false,
};
const sender = {
  login: 'alice',
  full_name: 'Alice A.',
  avatar_url: 'https://forge.test/avatars/a',
  html_url: 'https://forge.test/alice',
};
const commit = (id: string, message: string) => ({
  id,
  message,
  url: `https://forge.test/alice/app/commit/${id}`,
  author: { name: 'Alice', email: 'a@x', username: 'alice' },
});
const push = {
  ref: 'refs/heads/main',
  compare_url: 'https://forge.test/alice/app/compare/a...b',
  commits: [
    commit('1234567890abcdef', 'Fix *all*, the [things]\n\nbody'),
    commit('abcdef1234567890', 'Second'),
  ],
  total_commits: 2,
  head_commit: commit('abcdef1234567890', 'Second'),
  repository,
  pusher: sender,
  sender,
};
const issue = {
  action: 'opened',
  number: 3,
  issue: {
    id: 42,
    number: 3,
    title: 'Broken <b>',
    body: 'It & breaks',
    html_url: 'https://forge.test/alice/app/issues/3',
    user: { login: 'bob' },
    assignees: [],
  },
  repository,
  sender,
};
const comment = {
  action: 'created',
  issue: issue.issue,
  comment: {
    body: 'Me too',
    html_url: 'https://forge.test/alice/app/issues/3#issuecomment-9',
    issue_url: 'https://forge.test/alice/app/issues/3',
    pull_request_url: '',
  },
  is_pull: false,
  repository,
  sender,
};
const pull = {
  action: 'closed',
  number: 5,
  pull_request: {
    id: 55,
    number: 5,
    title: 'Add feature',
    body: 'Please',
    url: 'https://forge.test/alice/app/pulls/5',
    html_url: 'https://forge.test/alice/app/pulls/5',
    merged: true,
    user: { login: 'bob' },
    assignees: [],
  },
  review: null,
  repository,
  sender,
};
const release = {
  action: 'published',
  release: { tag_name: 'v1.0', body: 'Notes', html_url: 'https://forge.test/alice/app/releases/tag/v1.0' },
  repository,
  sender,
};
const create = { sha: 'abcdef1234567890', ref: 'feature', ref_type: 'branch', repository, sender };

const body = (type: string, event: string, payload: J, meta: J = {}, opts = {}): J => {
  const text = render(type, event, payload, meta, opts);
  assert.ok(text !== null, `${type} ${event} renders`);
  return JSON.parse(text) as J;
};

describe('webhook bodies of the chat and build types', () => {
  it('discord: embeds with title, link, colour and author; commits escaped and shortened', () => {
    const b = body('discord', 'push', push, { username: 'forge', icon_url: 'https://i.test/a.png' });
    assert.equal(b['username'], 'forge');
    assert.equal(b['avatar_url'], 'https://i.test/a.png');
    const e = b['embeds'][0];
    assert.equal(e.title, '[alice/app:main] 2 new commits');
    assert.equal(e.url, push.compare_url);
    assert.equal(e.color, 0x1ac600);
    assert.deepEqual(e.author, { name: 'alice', url: sender.html_url, icon_url: sender.avatar_url });
    // Forgejo keeps the whole message (its first-line cut splits into one part).
    const lines = (e.description as string).split('\n');
    const [first, second] = [lines[0], lines[lines.length - 1]];
    assert.match(first!, /^\[1234567\]\(https:\/\/forge\.test\/alice\/app\/commit\/1234567890abcdef\) /);
    assert.match(first!, /Fix \\\*all\\\*, the \\\[things\\\]/);
    assert.equal(second, `[abcdef1](${push.commits[1]!.url}) Second - Alice`);

    const i = body('discord', 'issues', issue, { username: 'forge' })['embeds'][0];
    assert.equal(i.title, '[alice/app] Issue opened: #3 Broken <b>');
    assert.equal(i.description, 'It & breaks');
    assert.equal(i.url, issue.issue.html_url);
    assert.equal(i.color, 0xeb6420);
    assert.ok(!('avatar_url' in body('discord', 'issues', issue, { username: 'forge' })));

    const m = body('discord', 'pull_request', pull)['embeds'][0];
    assert.equal(m.title, '[alice/app] Pull request merged: #5 Add feature');
    assert.equal(m.color, 0x7289da);
    const c = body('discord', 'issue_comment', comment)['embeds'][0];
    assert.equal(c.title, '[alice/app] New comment on issue #3 Broken <b>');
    assert.equal(c.description, 'Me too');
    const r = body('discord', 'release', release)['embeds'][0];
    assert.equal(r.title, '[alice/app] Release created: v1.0');
    assert.equal(r.description, 'Notes');
    const cr = body('discord', 'create', create)['embeds'][0];
    assert.equal(cr.title, '[alice/app] branch feature created');
    assert.equal(cr.url, 'https://forge.test/alice/app/src/feature');
    assert.equal(body('discord', 'delete', create)['embeds'][0].color, 0xff3232);
    const review = { ...pull, action: 'reviewed', review: { type: 'approved', content: 'LGTM' } };
    const rv = body('discord', 'pull_request_review_approved', review)['embeds'][0];
    assert.equal(rv.title, '[alice/app] Pull request review approved: #5 Add feature');
    assert.equal(rv.description, 'LGTM');
  });

  it('telegram: HTML text with links, sanitized, parse_mode HTML', () => {
    const p = body('telegram', 'push', push);
    assert.equal(p['parse_mode'], 'HTML');
    assert.equal(p['disable_web_page_preview'], true);
    assert.match(p['text'], /^\[alice\/app:main\] 2 new commits\n\[<a href="[^"]+">1234567<\/a>\] Fix/);
    const i = body('telegram', 'issues', issue);
    assert.equal(
      i['text'],
      '[alice/app] Issue opened: <a href="https://forge.test/alice/app/issues/3">#3 Broken &lt;b&gt;</a> by alice\n\nIt &amp; breaks',
    );
    const c = body('telegram', 'create', create);
    assert.equal(
      c['text'],
      '[alice/app] branch <a href="https://forge.test/alice/app/src/feature">feature</a> created',
    );
    const rel = body('telegram', 'release', release);
    assert.equal(
      rel['text'],
      '[alice/app] Release created: <a href="https://forge.test/alice/app/releases/tag/v1.0">v1.0</a> by alice',
    );
  });

  it('msteams: a MessageCard with facts, theme colour and a link', () => {
    const b = body('msteams', 'issues', issue);
    assert.equal(b['@type'], 'MessageCard');
    assert.equal(b['@context'], 'https://schema.org/extensions');
    assert.equal(b['themeColor'], 'eb6420');
    assert.equal(b['title'], '[alice/app] Issue opened: #3 Broken <b>');
    assert.equal(b['summary'], b['title']);
    const s = b['sections'][0];
    assert.equal(s.activityTitle, 'Alice A.');
    assert.equal(s.activitySubtitle, 'alice');
    assert.equal(s.text, 'It & breaks');
    assert.deepEqual(s.facts, [
      { name: 'Repository:', value: 'alice/app' },
      { name: 'Issue #:', value: '42' },
    ]);
    assert.deepEqual(b['potentialAction'], [
      { '@type': 'OpenUri', name: 'View in Gitea', targets: [{ os: 'default', uri: issue.issue.html_url }] },
    ]);
    const p = body('msteams', 'push', push);
    assert.deepEqual(p['sections'][0].facts[1], { name: 'Commit count:', value: '2' });
    assert.equal(body('msteams', 'delete', create)['themeColor'], 'ffd930');
  });

  it('dingtalk: an action card opening the link in the browser', () => {
    const b = body('dingtalk', 'issues', issue);
    assert.equal(b['msgtype'], 'actionCard');
    assert.equal(b['actionCard'].title, '#3 Broken <b>');
    assert.equal(b['actionCard'].text, '[alice/app] Issue opened: #3 Broken <b> by alice\r\n\r\nIt & breaks');
    assert.equal(b['actionCard'].singleTitle, 'view issue');
    assert.equal(
      b['actionCard'].singleURL,
      'dingtalk://dingtalkclient/page/link?pc_slide=false&url=https%3A%2F%2Fforge.test%2Falice%2Fapp%2Fissues%2F3',
    );
    assert.equal(body('dingtalk', 'push', push)['actionCard'].singleTitle, 'view commits');
    const gone = body('dingtalk', 'repository', { action: 'deleted', repository, sender });
    assert.deepEqual(gone['text'], { content: '[alice/app] Repository deleted' });
    assert.equal(gone['msgtype'], 'text');
  });

  it('feishu and wechatwork: text and markdown messages', () => {
    const f = body('feishu', 'issues', issue);
    assert.equal(f['msg_type'], 'text');
    assert.equal(
      f['content'].text,
      '[Issue-alice/app #3]: opened\nBroken <b>\nhttps://forge.test/alice/app/issues/3\nIssue by bob\nOperator: alice\n\nIt & breaks',
    );
    assert.match(body('feishu', 'push', push)['content'].text, /^\[alice\/app:main\] \r\n\[1234567\]/);
    const w = body('wechatwork', 'release', release);
    assert.equal(w['msgtype'], 'markdown');
    assert.equal(w['markdown'].content, '[alice/app] Release created: v1.0 by alice');
    assert.deepEqual(w['text'], { content: '', mentioned_list: null, mentioned_mobile_list: null });
    assert.match(
      body('wechatwork', 'push', push)['markdown'].content,
      /^# alice\/app:main <font color="warning">/,
    );
  });

  it('packagist: the package to update, whatever the event', () => {
    const meta = { username: 'u', api_token: 't', package_url: 'https://packagist.org/packages/a/b' };
    for (const [event, p] of [
      ['push', push],
      ['release', release],
    ] as const) {
      assert.deepEqual(body('packagist', event, p, meta), {
        repository: { url: 'https://packagist.org/packages/a/b' },
      });
    }
  });

  it('sourcehut_builds: a build job for pushes and created refs, none for other events', () => {
    const meta = { manifest_path: '.build.yml', visibility: 'PUBLIC', secrets: true };
    const manifest = {
      text: 'image: alpine/edge\nsources:\n  - https://forge.test/alice/app.git\ntasks:\n  - a: echo hi\n',
    };
    const b = body('sourcehut_builds', 'push', push, meta, { manifest, rootUrl: 'https://forge.test/' });
    assert.match(b['query'], /^mutation \(/);
    const v = b['variables'];
    assert.deepEqual(v.tags, ['alice/app', 'branch/main', '.build.yml']);
    assert.equal(v.note, 'Second');
    assert.equal(v.secrets, true);
    assert.equal(v.execute, true);
    assert.equal(v.visibility, 'PUBLIC');
    assert.match(v.manifest, /- https:\/\/forge\.test\/alice\/app\.git#abcdef1234567890/);
    assert.match(v.manifest, /BUILD_SUBMITTER: forgejo/);
    assert.match(v.manifest, /GIT_REF: refs\/heads\/main/);
    assert.match(v.manifest, /image: alpine\/edge/);

    const c = body('sourcehut_builds', 'create', create, meta, { manifest });
    assert.deepEqual(c['variables'].tags, ['alice/app', 'branch/feature', '.build.yml']);
    assert.equal(c['variables'].note, 'branch feature created');

    const missing = body('sourcehut_builds', 'push', push, meta, {
      manifest: { error: 'could not open manifest ".build.yml"' },
    });
    assert.equal(missing['error'], 'alice/app:refs/heads/main could not open manifest ".build.yml"');
    assert.ok(!('query' in missing));

    assert.equal(render('sourcehut_builds', 'issues', issue, meta, { manifest }), null);
    assert.equal(render('sourcehut_builds', 'release', release, meta, { manifest }), null);
  });

  it('a push without commits reaches only the JSON types', () => {
    const empty = { ...push, commits: [], total_commits: 0 };
    for (const t of [
      'discord',
      'telegram',
      'msteams',
      'dingtalk',
      'feishu',
      'wechatwork',
      'slack',
      'packagist',
    ]) {
      assert.equal(render(t, 'push', empty, {}), null, t);
    }
    assert.deepEqual(JSON.parse(render('forgejo', 'push', empty, {})!), empty);
  });

  it('adjustManifest pins the listed source, or adds the SSH address of a private repository', () => {
    const listed = adjustManifest(
      'sources:\n  - git@forge.test:alice/app.git\n',
      repository,
      'c0ffee',
      'refs/tags/v1',
      'u',
    );
    assert.match(listed, /- git@forge\.test:alice\/app\.git#c0ffee/);
    const added = adjustManifest(
      'image: x\n',
      { ...repository, private: true },
      'c0ffee',
      'refs/heads/x',
      'u',
    );
    assert.match(added, /sources:\n {4}- git@forge\.test:alice\/app\.git#c0ffee/);
  });
});

describe('webhook type settings', () => {
  it('telegram and packagist make their URLs from their credentials as Forgejo does', () => {
    assert.equal(
      telegramUrl('123:AB C', '-100 5', '7'),
      'https://api.telegram.org/bot123:AB%20C/sendMessage?chat_id=-100+5&message_thread_id=7',
    );
    assert.equal(
      packagistUrl('me', 't&k'),
      'https://packagist.org/api/update-package?username=me&apiToken=t%26k',
    );
    const t = typeSettings('telegram', { bot_token: 'b', chat_id: 'c' });
    assert.equal(t.url, telegramUrl('b', 'c', ''));
    assert.deepEqual(JSON.parse(t.meta), { bot_token: 'b', chat_id: 'c', thread_id: '' });
  });

  it('checks what each type keeps', () => {
    assert.throws(() => typeSettings('telegram', { chat_id: 'c' }), /Missing config option: bot_token/);
    assert.throws(() => typeSettings('packagist', { username: 'u' }), /Missing config option: api_token/);
    assert.throws(() => typeSettings('discord', { icon_url: 'nope' }), /Invalid icon_url/);
    assert.throws(() => typeSettings('sourcehut_builds', { manifest_path: '../x' }), /Invalid manifest_path/);
    assert.throws(() => typeSettings('sourcehut_builds', { visibility: 'secret' }), /Invalid visibility/);
    assert.deepEqual(JSON.parse(typeSettings('sourcehut_builds', { secrets: 'true' }).meta), {
      manifest_path: '.build.yml',
      visibility: 'PRIVATE',
      secrets: true,
    });
    assert.equal(typeSettings('msteams', {}).meta, '');
    const kept = typeSettings('discord', { icon_url: 'https://i.test/x' }, { username: 'old' });
    assert.deepEqual(JSON.parse(kept.meta), { username: 'old', icon_url: 'https://i.test/x' });
  });
});
