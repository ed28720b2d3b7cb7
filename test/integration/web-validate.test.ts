// Every page of the web interface is valid HTML: html-validate's recommended rules, page by page,
// as a visitor and as a signed-in administrator, over a site with a bit of everything (an
// organization, a repository with files, an issue, a pull request, labels, a milestone, a release,
// a wiki page, a project, a package). Rules turned off are listed with the reason.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HtmlValidate } from 'html-validate';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient } from '../helpers/web.js';

const validator = new HtmlValidate({
  extends: ['html-validate:recommended'],
  rules: {
    // Preact writes `<!DOCTYPE html>`-less fragments' doctype in lower case and self-closes void
    // elements the XHTML way; both are valid HTML.
    'doctype-style': 'off',
    'void-style': 'off',
    // Pages carry a few style attributes computed per item (label colours, progress widths).
    'no-inline-style': 'off',
    // Long lines of generated markup are not a defect of the page.
    'long-title': 'off',
    // A group of checkboxes sharing a name is one multi-valued field (the token scopes).
    'form-dup-name': ['error', { shared: ['radio', 'checkbox', 'button', 'reset', 'submit'] }],
  },
});

describe('web pages are valid HTML', () => {
  let s: TestServer;
  let alice: { name: string; token: string; password: string };
  let sha = '';
  const pages = {
    visitor: [] as string[],
    owner: [] as string[],
  };

  before(async () => {
    s = await startServer({ ANVIL__INDEXER__REPO_INDEXER_ENABLED: 'true' });
    alice = await s.createUser('alice');
    const auth = { token: alice.token };
    const ok = async (method: string, p: string, body: unknown, token = alice.token) => {
      const r = await s.api(method, p, { token, body });
      assert.ok(r.status < 300, `${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as Record<string, unknown>;
    };
    await ok('POST', '/user/repos', {
      name: 'app',
      auto_init: true,
      readme: 'Default',
      description: 'An app',
    });
    await ok('POST', '/repos/alice/app/contents/src/main.ts', {
      content: Buffer.from('export const answer = 42;\n// TODO: more\n').toString('base64'),
      message: 'Add the code',
    });
    await ok('POST', '/repos/alice/app/contents/src/feature.ts', {
      content: Buffer.from('export const feature = true;\n').toString('base64'),
      message: 'Add a feature',
      new_branch: 'feature',
    });
    const label = await ok('POST', '/repos/alice/app/labels', { name: 'bug', color: '#d73a4a' });
    const milestone = await ok('POST', '/repos/alice/app/milestones', { title: 'v1', description: 'First' });
    await ok('POST', '/repos/alice/app/issues', {
      title: 'It breaks',
      body: 'Steps:\n\n1. start\n2. **crash**\n\n```js\nthrow 1\n```',
      labels: [label['id']],
      milestone: milestone['id'],
    });
    await ok('POST', '/repos/alice/app/issues/1/comments', { body: 'Seen it too, see #1 and @alice' });
    await ok('POST', '/repos/alice/app/pulls', { head: 'feature', base: 'main', title: 'Add a feature' });
    await ok('POST', '/repos/alice/app/releases', {
      tag_name: 'v1.0',
      name: 'First',
      body: 'The *first* one',
    });
    await ok('POST', '/repos/alice/app/wiki/new', {
      title: 'Home',
      content_base64: Buffer.from('# Welcome\n\nSee [[Setup]].').toString('base64'),
    });
    await ok('POST', '/orgs', { username: 'team', full_name: 'The Team' });
    await ok('POST', '/orgs/team/repos', { name: 'site' });
    const put = await fetch(`${s.url}/api/packages/alice/generic/tool/1.0.0/tool.bin`, {
      method: 'PUT',
      headers: { authorization: `token ${alice.token}` },
      body: 'bytes',
    });
    assert.equal(put.status, 201);
    const branch = await s.api<{ commit: { id: string } }>('GET', '/repos/alice/app/branches/main', auth);
    sha = branch.body.commit.id;

    const repo = '/alice/app';
    pages.visitor = [
      '/',
      '/explore/repos',
      '/explore/users',
      '/explore/organizations',
      '/explore/code?q=answer',
      '/user/login',
      '/user/sign_up',
      '/user/forgot_password',
      '/alice',
      '/team',
      repo,
      `${repo}/src/branch/main`,
      `${repo}/src/branch/main/src`,
      `${repo}/src/branch/main/src/main.ts`,
      `${repo}/src/branch/main/README.md`,
      `${repo}/blame/branch/main/src/main.ts`,
      `${repo}/commits/branch/main`,
      `${repo}/graph`,
      `${repo}/commit/${sha}`,
      `${repo}/branches`,
      `${repo}/tags`,
      `${repo}/compare/main...feature`,
      `${repo}/search?q=answer`,
      `${repo}/issues`,
      `${repo}/issues/1`,
      `${repo}/pulls`,
      `${repo}/pulls/2`,
      `${repo}/pulls/2/files`,
      `${repo}/pulls/2/commits`,
      `${repo}/labels`,
      `${repo}/milestones`,
      `${repo}/releases`,
      `${repo}/releases/tag/v1.0`,
      `${repo}/wiki`,
      `${repo}/wiki/Home`,
      `${repo}/wiki/_pages`,
      `${repo}/activity`,
      `${repo}/activity/contributors`,
      `${repo}/stars`,
      `${repo}/watchers`,
      `${repo}/forks`,
      `${repo}/projects`,
      '/team/-/projects',
      '/alice/-/projects',
      '/alice/-/packages',
      '/alice/-/packages/generic/tool/1.0.0',
      '/alice/-/packages/generic/tool/versions',
      `${repo}/packages`,
      '/this/does-not-exist',
    ];
    pages.owner = [
      '/',
      '/repo/create',
      '/repo/migrate',
      '/org/create',
      `${repo}/issues/new`,
      `${repo}/releases/new`,
      `${repo}/releases/edit/v1.0`,
      `${repo}/wiki/?action=_new`,
      `${repo}/wiki/Home?action=_edit`,
      `${repo}/wiki/Home?action=_revision`,
      `${repo}/milestones/new`,
      `${repo}/projects/new`,
      `${repo}/settings`,
      `${repo}/_upload/main/src`,
      `${repo}/_new/main`,
      `${repo}/_edit/main/src/main.ts`,
      `${repo}/settings/collaboration`,
      `${repo}/settings/branches`,
      `${repo}/settings/keys`,
      `${repo}/settings/units`,
      `${repo}/actions`,
      '/alice/-/packages/generic/tool/settings',
      '/user/settings/packages',
      '/notifications',
      '/milestones',
      '/issues',
      '/pulls?type=created_by',
      '/user/settings',
      '/user/settings/account',
      '/user/settings/appearance',
      '/user/settings/security',
      '/user/settings/applications',
      '/user/settings/keys',
      '/user/settings/repos',
      '/user/settings/organization',
      '/user/settings/notifications',
      '/user/settings/blocked_users',
      '/user/settings/storage_overview',
      '/user/settings/actions/secrets',
      '/org/team/members',
      '/org/team/teams',
      '/org/team/settings',
      '/admin',
      '/admin/users',
      '/admin/orgs',
      '/admin/repos',
      '/admin/packages',
      '/admin/config',
      '/admin/monitor/cron',
      '/admin/emails',
      '/admin/notices',
    ];
  });

  after(async () => {
    await s.close();
  });

  const check = async (web: WebClient, list: string[]) => {
    const problems: string[] = [];
    for (const p of list) {
      const r = await web.get(p);
      if (r.status >= 500 || (r.status >= 300 && r.status < 400)) {
        problems.push(`${p}: ${r.status} ${r.location ?? ''}`);
        continue;
      }
      const report = await validator.validateString(r.text, p);
      for (const m of report.results.flatMap((x) => x.messages))
        // The token form has one <select name="scope"> per category, Forgejo's field names.
        if (!(m.ruleId === 'form-dup-name' && m.message.includes('"scope"')))
          problems.push(`${p} (${r.status}) ${m.line}:${m.column} ${m.ruleId}: ${m.message}`);
    }
    assert.deepEqual(problems, []);
  };

  it('as a visitor', async () => {
    await check(new WebClient(s.url), pages.visitor);
  });

  it('as a signed-in administrator', async () => {
    const web = new WebClient(s.url);
    const signed = await web.signIn(s.admin.name, s.admin.password);
    assert.equal(signed.status, 303);
    // An organization's board with a note, as its writers see it.
    await web.get('/team/-/projects/new');
    const made = await web.post('/team/-/projects/new', { title: 'Plan', template_type: '1' });
    assert.equal(made.status, 303);
    assert.equal((await web.post(`${made.location}/notes`, { note: 'A note' })).status, 303);
    pages.owner.push('/team/-/projects/new', made.location!);
    // The administrator sees alice's repository with its settings, and every administration page.
    await check(web, [...pages.owner, ...pages.visitor.slice(8, 14)]);
  });
});
