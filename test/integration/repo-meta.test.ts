// Repository metadata over HTTP: /languages and the Repository JSON's `language` (recomputed after
// a push), /issue_templates, /issue_config and /issue_config/validate from the default branch,
// /flags (site administrators only), /hooks/git (Forgejo's default: disabled, 403) and the
// deprecated POST /org/{org}/repos.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';

interface U {
  name: string;
  password: string;
  token: string;
}

describe('repository metadata', () => {
  let s: TestServer;
  let alice: U;
  let bob: U;
  const g = new GitClient();
  let work: string;

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const name of ['code', 'secret', 'empty']) {
      const r = await s.api('POST', '/user/repos', {
        token: alice.token,
        body: { name, private: name === 'secret' },
      });
      assert.equal(r.status, 201, r.text);
    }
    await s.api('PUT', '/repos/alice/code/collaborators/bob', {
      token: alice.token,
      body: { permission: 'write' },
    });
    work = await g.workTree('main');
    await g.commit(work, 'main.go', 'package main\n\nfunc main() {}\n'.repeat(10));
    await g.commit(work, 'web/app.ts', 'export const x = 1;\n');
    await g.commit(work, 'vendor/lib/dep.go', 'package dep\n'.repeat(1000));
    await g.commit(work, 'README.md', '# readme\n'.repeat(1000));
    await g.commit(
      work,
      '.gitea/ISSUE_TEMPLATE/bug.md',
      '---\nname: Bug report\nabout: Something is broken\nlabels: bug\n---\nWhat happened?\n',
    );
    await g.commit(
      work,
      '.gitea/ISSUE_TEMPLATE/form.yaml',
      'name: Feature\ndescription: Ask for a feature\nbody:\n  - type: textarea\n    id: what\n    attributes:\n      label: What\n',
    );
    await g.commit(work, '.gitea/ISSUE_TEMPLATE/broken.yaml', 'name: Broken\nabout: no body\n');
    await g.commit(
      work,
      '.github/ISSUE_TEMPLATE/config.yml',
      'blank_issues_enabled: false\ncontact_links:\n  - name: Forum\n    url: https://forum.example.com\n    about: Questions go there\n',
    );
    await g.git(
      ['push', '--quiet', repoUrl(s.url, 'alice', 'code', [alice.name, alice.password]), 'main'],
      work,
    );
  });
  after(async () => {
    await s.close();
    g.cleanup();
  });

  it('counts languages of the default branch and shows the largest on the repository', async () => {
    const r = await s.api<Record<string, number>>('GET', '/repos/alice/code/languages', { token: bob.token });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['Go', 'TypeScript']);
    assert.equal(r.body['Go'], 'package main\n\nfunc main() {}\n'.length * 10);
    const repo = await s.api<{ language: string }>('GET', '/repos/alice/code', { token: bob.token });
    assert.equal(repo.body.language, 'Go');
    const empty = await s.api('GET', '/repos/alice/empty/languages', { token: alice.token });
    assert.deepEqual(empty.body, {});
    assert.equal(
      (await s.api<{ language: string }>('GET', '/repos/alice/empty', { token: alice.token })).body.language,
      '',
    );
  });

  it('recomputes the statistics after a push', async () => {
    await g.commit(work, 'src/big.ts', 'export const y = 2;\n'.repeat(100));
    await g.git(
      ['push', '--quiet', repoUrl(s.url, 'alice', 'code', [alice.name, alice.password]), 'main'],
      work,
    );
    const r = await s.api<Record<string, number>>('GET', '/repos/alice/code/languages', {
      token: alice.token,
    });
    assert.ok(r.body['TypeScript']! > r.body['Go']!, r.text);
    const list = await s.api<Array<{ name: string; language: string }>>('GET', '/user/repos', {
      token: alice.token,
    });
    assert.equal(list.body.find((x) => x.name === 'code')?.language, 'TypeScript');
  });

  it('follows the linguist attributes of .gitattributes', async () => {
    await g.commit(
      work,
      '.gitattributes',
      [
        'vendor/** -linguist-vendored',
        'src/big.ts linguist-generated',
        'README.md linguist-documentation=false linguist-detectable',
        'web/app.ts linguist-language=JavaScript',
      ].join('\n') + '\n',
    );
    await g.git(
      ['push', '--quiet', repoUrl(s.url, 'alice', 'code', [alice.name, alice.password]), 'main'],
      work,
    );
    const r = await s.api<Record<string, number>>('GET', '/repos/alice/code/languages', { token: bob.token });
    assert.deepEqual(r.body, {
      Go: 'package main\n\nfunc main() {}\n'.length * 10 + 'package dep\n'.length * 1000,
      Markdown: '# readme\n'.length * 1000,
      JavaScript: 'export const x = 1;\n'.length,
    });
  });

  it('lists the issue templates that parse, with a warning for the others', async () => {
    const r = await s.api<
      Array<{ name: string; about: string; labels: string[]; ref: string; file_name: string }>
    >('GET', '/repos/alice/code/issue_templates', { token: bob.token });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.map((t) => [t.file_name, t.name, t.about]),
      [
        ['.gitea/ISSUE_TEMPLATE/bug.md', 'Bug report', 'Something is broken'],
        ['.gitea/ISSUE_TEMPLATE/form.yaml', 'Feature', 'Ask for a feature'],
      ],
    );
    assert.deepEqual(r.body[0]!.labels, ['bug']);
    assert.equal(r.body[0]!.ref, 'refs/heads/');
    assert.equal(r.headers.get('x-gitea-warning'), 'error occurs when parsing issue template: count=1');
    const none = await s.api('GET', '/repos/alice/empty/issue_templates', { token: alice.token });
    assert.deepEqual(none.body, []);
  });

  it('reads and validates the issue config', async () => {
    const c = await s.api('GET', '/repos/alice/code/issue_config', { token: bob.token });
    assert.deepEqual(c.body, {
      blank_issues_enabled: false,
      contact_links: [{ name: 'Forum', url: 'https://forum.example.com', about: 'Questions go there' }],
    });
    assert.deepEqual(
      (await s.api('GET', '/repos/alice/code/issue_config/validate', { token: bob.token })).body,
      {
        valid: true,
        message: '',
      },
    );
    assert.deepEqual((await s.api('GET', '/repos/alice/empty/issue_config', { token: alice.token })).body, {
      blank_issues_enabled: true,
      contact_links: [],
    });
    // A broken config: the default, and the reason on validate.
    const r = await s.api('POST', '/repos/alice/empty/contents/.forgejo/ISSUE_TEMPLATE/config.yaml', {
      token: alice.token,
      body: { content: Buffer.from('contact_links:\n  - name: x\n').toString('base64') },
    });
    assert.ok(r.status === 201 || r.status === 200, r.text);
    assert.deepEqual((await s.api('GET', '/repos/alice/empty/issue_config', { token: alice.token })).body, {
      blank_issues_enabled: true,
      contact_links: [],
    });
    assert.deepEqual(
      (await s.api('GET', '/repos/alice/empty/issue_config/validate', { token: alice.token })).body,
      {
        valid: false,
        message: 'contact_link at position 1 is missing url key',
      },
    );
  });

  it('hides private repositories from those who cannot read them', async () => {
    for (const p of ['languages', 'issue_templates', 'issue_config', 'issue_config/validate']) {
      assert.equal((await s.api('GET', `/repos/alice/secret/${p}`, { token: bob.token })).status, 404, p);
      assert.equal((await s.api('GET', `/repos/alice/secret/${p}`)).status, 404, p);
      assert.equal((await s.api('GET', `/repos/alice/nothing/${p}`, { token: alice.token })).status, 404, p);
    }
  });

  it('lets site administrators set flags, and nobody else', async () => {
    const admin = s.admin.token;
    assert.equal((await s.api('GET', '/repos/alice/code/flags', { token: alice.token })).status, 403);
    assert.equal((await s.api('PUT', '/repos/alice/code/flags/x', { token: alice.token })).status, 403);
    assert.equal((await s.api('GET', '/repos/alice/code/flags')).status, 401);
    assert.equal((await s.api('GET', '/repos/alice/secret/flags', { token: bob.token })).status, 404);
    assert.equal((await s.api('GET', '/repos/alice/nothing/flags', { token: admin })).status, 404);

    let r = await s.api('GET', '/repos/alice/code/flags', { token: admin });
    assert.deepEqual(r.body, []);
    r = await s.api('PUT', '/repos/alice/code/flags', { token: admin, body: { flags: ['b', 'a', 'b'] } });
    assert.equal(r.status, 204, r.text);
    assert.equal((await s.api('PUT', '/repos/alice/code/flags/c', { token: admin })).status, 204);
    assert.equal((await s.api('PUT', '/repos/alice/code/flags/c', { token: admin })).status, 204);
    r = await s.api('GET', '/repos/alice/code/flags', { token: admin });
    assert.deepEqual(r.body, ['a', 'b', 'c']);
    assert.equal(r.headers.get('x-total-count'), '3');
    assert.equal((await s.api('GET', '/repos/alice/code/flags/a', { token: admin })).status, 204);
    assert.equal((await s.api('GET', '/repos/alice/code/flags/zzz', { token: admin })).status, 404);
    assert.equal((await s.api('DELETE', '/repos/alice/code/flags/a', { token: admin })).status, 204);
    assert.equal((await s.api('GET', '/repos/alice/code/flags/a', { token: admin })).status, 404);
    assert.deepEqual((await s.api('GET', '/repos/alice/code/flags', { token: admin })).body, ['b', 'c']);
    assert.equal((await s.api('DELETE', '/repos/alice/code/flags', { token: admin })).status, 204);
    assert.deepEqual((await s.api('GET', '/repos/alice/code/flags', { token: admin })).body, []);

    r = await s.api('PUT', '/repos/alice/code/flags', { token: admin, body: { flags: 'nope' } });
    assert.equal(r.status, 422, r.text);
    const bad = await s.api<{ message: string }>('PUT', '/repos/alice/code/flags', {
      token: admin,
      body: { flags: [''] },
    });
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.body.message, /\[Flags\]/);
  });

  it('answers git hooks as Forgejo does by default: disabled', async () => {
    assert.equal((await s.api('GET', '/repos/alice/code/hooks/git')).status, 401);
    assert.equal((await s.api('GET', '/repos/alice/code/hooks/git', { token: bob.token })).status, 403);
    assert.equal((await s.api('GET', '/repos/alice/secret/hooks/git', { token: bob.token })).status, 404);
    for (const [method, p] of [
      ['GET', ''],
      ['GET', '/pre-receive'],
      ['PATCH', '/pre-receive'],
      ['DELETE', '/pre-receive'],
    ] as const) {
      const r = await s.api<{ message: string }>(method, `/repos/alice/code/hooks/git${p}`, {
        token: alice.token,
        ...(method === 'PATCH' ? { body: { content: '#!/bin/sh\nexit 1\n' } } : {}),
      });
      assert.equal(r.status, 403, `${method} ${p}: ${r.text}`);
      assert.equal(r.body.message, 'must be allowed to edit Git hooks');
    }
    const admin = await s.api('GET', '/repos/alice/code/hooks/git', { token: s.admin.token });
    assert.equal(admin.status, 403);
  });

  it('creates organization repositories through the deprecated /org/{org}/repos', async () => {
    let r = await s.api('POST', '/orgs', { token: alice.token, body: { username: 'acme' } });
    assert.equal(r.status, 201, r.text);
    r = await s.api<{ full_name: string; owner: { login: string } }>('POST', '/org/acme/repos', {
      token: alice.token,
      body: { name: 'tool' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal((r.body as { full_name: string }).full_name, 'acme/tool');
    assert.equal(
      (await s.api('POST', '/org/acme/repos', { token: bob.token, body: { name: 'x' } })).status,
      403,
    );
    assert.equal((await s.api('POST', '/org/acme/repos', { token: alice.token, body: {} })).status, 422);
    assert.equal(
      (await s.api('POST', '/org/nope/repos', { token: alice.token, body: { name: 'x' } })).status,
      404,
    );
    assert.equal((await s.api('POST', '/org/acme/repos', { body: { name: 'x' } })).status, 401);
  });
});
