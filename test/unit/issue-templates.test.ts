// Issue templates and config.yml as Forgejo parses them, and the language statistics of a tree.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  TemplateError,
  frontMatter,
  parseIssueConfig,
  parseTemplate,
  templateType,
} from '../../src/repometa/issue-templates.js';
import {
  isExcluded,
  languageOf,
  languageStats,
  parseCheckAttr,
  loadLanguages,
  primaryLanguage,
} from '../../src/repometa/languages.js';

const fails = (fn: () => unknown, message: string | RegExp) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof TemplateError);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });

describe('issue templates', () => {
  it('knows templates by extension, never config.yml', () => {
    assert.equal(templateType('.gitea/ISSUE_TEMPLATE/bug.md'), 'md');
    assert.equal(templateType('x/form.yaml'), 'yaml');
    assert.equal(templateType('x/form.yml'), 'yaml');
    assert.equal(templateType('x/config.yml'), '');
    assert.equal(templateType('x/config.yaml'), '');
    assert.equal(templateType('x/notes.txt'), '');
  });

  it('reads Markdown front matter: name, about (or description), title, labels, ref', () => {
    const t = parseTemplate(
      '.gitea/ISSUE_TEMPLATE/bug.md',
      '---\nname: Bug\ndescription: Report a bug\ntitle: "[BUG] "\nlabels: bug, help wanted\nref: dev\n---\nSteps:\n',
    );
    assert.deepEqual(t, {
      name: 'Bug',
      title: '[BUG] ',
      about: 'Report a bug',
      labels: ['bug', 'help wanted'],
      ref: 'refs/heads/dev',
      content: 'Steps:\n',
      body: null,
      file_name: '.gitea/ISSUE_TEMPLATE/bug.md',
    });
    const t2 = parseTemplate('a/b.md', '---\nname: B\nabout: A\nlabels: [x, y]\nref: refs/tags/v1\n---\n');
    assert.deepEqual(t2.labels, ['x', 'y']);
    assert.equal(t2.ref, 'refs/tags/v1');
    assert.equal(t2.content, '');
  });

  it('treats Markdown without metadata as a template named after the file', () => {
    const long = 'x'.repeat(100);
    const t = parseTemplate('ISSUE_TEMPLATE/plain.md', long);
    assert.equal(t.name, 'plain.md');
    assert.equal(t.content, long);
    assert.equal([...t.about].length, 80);
    assert.ok(t.about.endsWith('…'));
    assert.equal(frontMatter('---\n---\nbody'), null);
    fails(() => parseTemplate('a/empty.md', ''), "'about' is required");
    fails(() => parseTemplate('a/x.md', '---\nabout: no name\n---\n'), "'name' is required");
  });

  it('reads issue forms, filling ids and visibility', () => {
    const t = parseTemplate(
      '.github/ISSUE_TEMPLATE/form.yaml',
      [
        'name: Form',
        'about: A form',
        'labels: ["kind/bug"]',
        'body:',
        '  - type: markdown',
        '    attributes:',
        '      value: Thanks!',
        '  - type: input',
        '    attributes:',
        '      label: Version',
        '    validations:',
        '      required: true',
        '  - type: dropdown',
        '    id: os',
        '    attributes:',
        '      label: OS',
        '      options: [Linux, macOS]',
        '      default: 1',
        '  - type: checkboxes',
        '    id: terms',
        '    attributes:',
        '      label: Terms',
        '      options:',
        '        - label: I agree',
        '          required: true',
      ].join('\n'),
    );
    assert.equal(t.ref, 'refs/heads/');
    assert.deepEqual(t.labels, ['kind/bug']);
    assert.equal(t.content, '');
    assert.deepEqual(
      t.body!.map((f) => [f.type, f.id, f.visible]),
      [
        ['markdown', '0', ['form']],
        ['input', '1', ['form', 'content']],
        ['dropdown', 'os', ['form', 'content']],
        ['checkboxes', 'terms', ['form', 'content']],
      ],
    );
    assert.deepEqual(t.body![1]!.validations, { required: true });
  });

  it("refuses bad forms with Forgejo's messages", () => {
    const form = (body: string) => `name: F\nabout: A\nbody:\n${body}`;
    fails(() => parseTemplate('f.yaml', 'name: F\nabout: A\n'), "'body' is required");
    fails(
      () => parseTemplate('f.yaml', form('  - type: nope\n    attributes: {label: L}')),
      'body[0](nope): unknown type',
    );
    fails(
      () => parseTemplate('f.yaml', form('  - type: input\n    attributes: {}')),
      "body[0](input): 'label' is required",
    );
    fails(
      () => parseTemplate('f.yaml', form('  - type: input\n    id: a b\n    attributes: {label: L}')),
      "body[0](input): 'id' should contain only alphanumeric, '-' and '_'",
    );
    fails(
      () =>
        parseTemplate(
          'f.yaml',
          form(
            '  - type: input\n    id: a\n    attributes: {label: L}\n  - type: textarea\n    id: a\n    attributes: {label: M}',
          ),
        ),
      "body[1](textarea): 'id' should be unique",
    );
    fails(
      () => parseTemplate('f.yaml', form('  - type: dropdown\n    attributes: {label: L, options: []}')),
      "body[0](dropdown): 'options' is required and should be a array",
    );
    fails(
      () =>
        parseTemplate(
          'f.yaml',
          form('  - type: dropdown\n    attributes: {label: L, options: [a], default: 3}'),
        ),
      "body[0](dropdown): the value of 'default' is out of range",
    );
    fails(
      () => parseTemplate('f.yaml', form('  - type: checkboxes\n    attributes: {label: L, options: [x]}')),
      'body[0](checkboxes), option[0]: should be a dictionary',
    );
    fails(
      () =>
        parseTemplate(
          'f.yaml',
          form(
            '  - type: input\n    attributes: {label: L}\n    visible: [content]\n    validations: {required: true}',
          ),
        ),
      'body[0](input): can not require a hidden field',
    );
    fails(() => parseTemplate('f.yaml', 'name: [1\n'), /^yaml: /);
  });
});

describe('issue config', () => {
  it('defaults to blank issues and no links', () => {
    assert.deepEqual(parseIssueConfig(''), { blank_issues_enabled: true, contact_links: [] });
    assert.deepEqual(parseIssueConfig('contact_links: []\n'), {
      blank_issues_enabled: true,
      contact_links: [],
    });
  });

  it('reads blank_issues_enabled and contact links', () => {
    const c = parseIssueConfig(
      'blank_issues_enabled: false\ncontact_links:\n  - name: Forum\n    url: https://forum.example.com\n    about: Ask there\n',
    );
    assert.deepEqual(c, {
      blank_issues_enabled: false,
      contact_links: [{ name: 'Forum', url: 'https://forum.example.com', about: 'Ask there' }],
    });
  });

  it("refuses incomplete links and bad URLs with Forgejo's messages", () => {
    fails(
      () => parseIssueConfig('contact_links:\n  - url: https://x\n    about: a\n'),
      'contact_link at position 1 is missing name key',
    );
    fails(
      () => parseIssueConfig('contact_links:\n  - name: n\n    about: a\n'),
      'contact_link at position 1 is missing url key',
    );
    fails(
      () => parseIssueConfig('contact_links:\n  - name: n\n    url: https://x\n'),
      'contact_link at position 1 is missing about key',
    );
    fails(
      () => parseIssueConfig('contact_links:\n  - name: n\n    url: not a url\n    about: a\n'),
      'not a url is not a valid URL',
    );
    fails(() => parseIssueConfig('blank_issues_enabled: [\n'), /^yaml: /);
  });
});

describe('language statistics', () => {
  before(() => loadLanguages());
  it('names languages by file name and extension', () => {
    assert.equal(languageOf('main.go')?.name, 'Go');
    assert.equal(languageOf('src/a.ts')?.name, 'TypeScript');
    assert.equal(languageOf('inc/x.h')?.name, 'C');
    assert.equal(languageOf('Makefile')?.name, 'Makefile');
    assert.equal(languageOf('Dockerfile')?.name, 'Dockerfile');
    assert.equal(languageOf('noext'), undefined);
  });

  it('leaves out vendored, documentation, generated and dot files', () => {
    for (const p of [
      'vendor/x.go',
      'node_modules/a/b.js',
      'docs/a.py',
      'README.md',
      'a.min.js',
      '.eslintrc.js',
    ])
      assert.ok(isExcluded(p), p);
    assert.ok(!isExcluded('src/main.go'));
  });

  it('counts programming and markup languages, groups, and the first other when none', () => {
    const stats = languageStats([
      { path: 'main.go', size: 300 },
      { path: 'web/app.tsx', size: 100 },
      { path: 'web/lib.ts', size: 50 },
      { path: 'config.json', size: 9999 },
      { path: 'vendor/dep.go', size: 5000 },
      { path: 'empty.go', size: 0 },
    ]);
    assert.deepEqual(stats, { Go: 300, TypeScript: 150 });
    assert.equal(primaryLanguage(stats), 'Go');
    assert.deepEqual(
      languageStats([
        { path: 'a.json', size: 10 },
        { path: 'b.json', size: 5 },
        { path: 'c.yaml', size: 7 },
      ]),
      { JSON: 15 },
    );
    assert.equal(primaryLanguage({}), '');
  });

  it('reads git check-attr output and applies the linguist attributes over the built-in rules', () => {
    const out = [
      ['vendor/dep.go', 'linguist-vendored', 'false'],
      ['vendor/dep.go', 'linguist-language', 'unspecified'],
      ['gen.go', 'linguist-generated', 'set'],
      ['notes.txt', 'linguist-detectable', 'set'],
      ['lib.py', 'gitlab-language', 'ruby?key=value'],
      ['skip.go', 'linguist-detectable', 'unset'],
      ['web/x.pug', 'linguist-language', 'TSX'],
    ]
      .map((t) => t.join('\0'))
      .join('\0');
    const attrs = parseCheckAttr(out + '\0');
    assert.deepEqual(attrs.get('vendor/dep.go'), { vendored: false });
    assert.deepEqual(attrs.get('lib.py'), { language: 'ruby' });
    assert.equal(attrs.get('README.md'), undefined);
    const stats = languageStats(
      [
        { path: 'main.go', size: 10 },
        { path: 'vendor/dep.go', size: 100 },
        { path: 'gen.go', size: 1000 },
        { path: 'notes.txt', size: 5 },
        { path: 'lib.py', size: 7 },
        { path: 'skip.go', size: 3000 },
        { path: 'web/x.pug', size: 2 },
      ],
      attrs,
    );
    // TSX counts in its group, TypeScript; Text is prose, counted only because it is detectable.
    assert.deepEqual(stats, { Go: 110, ruby: 7, Text: 5, TypeScript: 2 });
  });
});
