// Wiki page names (src/wiki/names.ts): title, web path and file name as Forgejo converts them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  cleanRelative,
  gitPathToWebPath,
  isReserved,
  isSafeGitPath,
  queryEscape,
  titleToWebPath,
  unescape,
  webPathFromRequest,
  webPathToGitPath,
  webPathToTitle,
} from '../../src/wiki/names.js';

describe('wiki page names', () => {
  it('escapes and unescapes as Go url.QueryEscape / QueryUnescape', () => {
    assert.equal(queryEscape('a b/c%d~e_f.g-h!é'), 'a+b%2Fc%25d~e_f.g-h%21%C3%A9');
    assert.equal(unescape('a+b%2Fc%25d'), 'a b/c%d');
    assert.equal(unescape('a+b', false), 'a+b');
    assert.equal(unescape('bad%%'), undefined);
    assert.equal(unescape('bad%2'), undefined);
    assert.equal(unescape('%C3%A9'), 'é');
  });

  it('cleans relative paths as util.PathJoinRelX', () => {
    assert.equal(cleanRelative(''), '');
    assert.equal(cleanRelative('/'), '.');
    assert.equal(cleanRelative('..'), '.');
    assert.equal(cleanRelative('a/../b'), 'b');
    assert.equal(cleanRelative('../../x'), 'x');
    assert.equal(cleanRelative('a\\b/'), 'a/b');
  });

  it('turns titles into web paths', () => {
    const cases: Array<[string, string]> = [
      ['unnamed', ''],
      ['unnamed', '.'],
      ['unnamed', '..'],
      ['wiki-name', 'wiki name'],
      ['title.md.-', 'title.md'],
      ['wiki-name.-', 'wiki-name'],
      ['the+wiki-name.-', 'the wiki-name'],
      ['a%2Fb', 'a/b'],
      ['a%25b', 'a%b'],
      ['Home', '  Home  '],
      ['%C3%9Cbersicht-%E6%97%A5%E6%9C%AC', 'Übersicht 日本'],
    ];
    for (const [want, title] of cases) assert.equal(titleToWebPath(title), want, title);
  });

  it('shows web paths as titles', () => {
    const cases: Array<[string, string]> = [
      ['wiki name', 'wiki-name'],
      ['wiki-name', 'wiki-name.-'],
      ['name with / slash', 'name-with %2F slash'],
      ['name with % percent', 'name-with %25 percent'],
      ['2000-01-02 meeting', '2000-01-02+meeting.-.md'],
      ['a b', 'a%20b.md'],
    ];
    for (const [want, web] of cases) assert.equal(webPathToTitle(web), want, web);
  });

  it('finds the file of a web path', () => {
    const cases: Array<[string, string]> = [
      ['wiki-name.md', 'wiki%20name'],
      ['wiki-name.md', 'wiki+name'],
      ['wiki name.md', 'wiki%20name.md'],
      ['wiki%20name.md', 'wiki%2520name.md'],
      ['2000-01-02-meeting.md', '2000-01-02+meeting'],
      ['2000-01-02 meeting.-.md', '2000-01-02%20meeting.-'],
      ['Home.md', 'Home'],
      ['home-of-and-%26-or-wiki-page%21.md', titleToWebPath('home of and & or wiki page!')],
    ];
    for (const [want, web] of cases) assert.equal(webPathToGitPath(web), want, web);
  });

  it('finds the web path of a file, and refuses files that are no pages', () => {
    const cases: Array<[string, string]> = [
      ['hello-world', 'hello-world.md'],
      ['hello-world', 'hello world.md'],
      ['hello-world.-', 'hello-world.-.md'],
      ['hello+world.-', 'hello world.-.md'],
      ['symbols-%2F', 'symbols %2F.md'],
    ];
    for (const [want, file] of cases) assert.equal(gitPathToWebPath(file), want, file);
    for (const bad of ['nofileextension', 'wrongfileextension.txt', 'badescaping%%.md']) {
      assert.equal(gitPathToWebPath(bad), undefined, bad);
    }
  });

  it('keeps requests to one level', () => {
    assert.equal(webPathFromRequest('a/b'), 'a%2Fb');
    assert.equal(webPathFromRequest('a'), 'a');
    assert.equal(webPathFromRequest('a/../b'), 'b');
    assert.equal(webPathFromRequest('../../etc/passwd'), 'etc%2Fpasswd');
  });

  it('round-trips every printable title', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 2000; i++) {
      const len = rand(20);
      let s = '';
      for (let j = 0; j < len; j++) s += String.fromCharCode(0x20 + rand(0x80 - 0x20));
      const title = s.trim();
      if (title === '' || title === '.' || title === '..') continue;
      const web = titleToWebPath(title);
      const file = webPathToGitPath(web);
      const web1 = gitPathToWebPath(file);
      assert.equal(web1, web, `web path of ${JSON.stringify(title)}`);
      assert.equal(webPathToTitle(web1!), title, `title of ${JSON.stringify(title)}`);
      assert.equal(webPathToGitPath(web1!), file, `file of ${JSON.stringify(title)}`);
      assert.ok(isSafeGitPath(file), file);
    }
  });

  it('knows reserved names and unsafe files', () => {
    assert.ok(isReserved('_pages'));
    assert.ok(isReserved('_edit'));
    assert.ok(!isReserved('_Sidebar'));
    assert.ok(!isSafeGitPath(''));
    assert.ok(!isSafeGitPath('../x.md'));
    assert.ok(!isSafeGitPath('.git/config.md'));
    assert.ok(!isSafeGitPath('a\0b.md'));
    assert.ok(isSafeGitPath('sub/page.md'));
  });
});
