// Forgejo's reference grammar in commit messages: `#N` and `owner/repo#N`, standing alone, with
// an optional closing or reopening keyword (and colon) right before; each issue once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseIssueReferences } from '../../src/issues/commit-refs.js';

describe('parseIssueReferences', () => {
  it('reads closing and reopening keywords in every form', () => {
    for (const word of [
      'close',
      'closes',
      'closed',
      'fix',
      'fixes',
      'fixed',
      'resolve',
      'resolves',
      'resolved',
    ]) {
      assert.deepEqual(parseIssueReferences(`${word} #3`), [{ index: 3, action: 'close' }], word);
      assert.deepEqual(
        parseIssueReferences(`${word.toUpperCase()}: #3`),
        [{ index: 3, action: 'close' }],
        word,
      );
    }
    for (const word of ['reopen', 'reopens', 'reopened']) {
      assert.deepEqual(parseIssueReferences(`This ${word} #12.`), [{ index: 12, action: 'reopen' }]);
    }
  });

  it('reads references to other repositories and plain mentions', () => {
    assert.deepEqual(parseIssueReferences('Fixes alice/lib.js#7, see #2 and (bob/x-y#1)'), [
      { index: 7, owner: 'alice', repo: 'lib.js', action: 'close' },
      { index: 2 },
      { index: 1, owner: 'bob', repo: 'x-y' },
    ]);
    assert.deepEqual(parseIssueReferences('subject\n\ncloses #4\nreopens #5'), [
      { index: 4, action: 'close' },
      { index: 5, action: 'reopen' },
    ]);
  });

  it('lists each issue once, a keyword winning over a plain mention', () => {
    assert.deepEqual(parseIssueReferences('see #4; closes #4; and #4 again'), [
      { index: 4, action: 'close' },
    ]);
  });

  it('ignores what is not a reference', () => {
    for (const text of [
      'issue#4',
      'https://example.com/page#4',
      'a/b/c#4',
      'color #ff0000',
      '#4x',
      'prefixcloses #4 is a mention only',
      'closes#4',
      '&#4;',
    ]) {
      const refs = parseIssueReferences(text);
      assert.ok(refs.length === 0 || refs.every((r) => !r.action), `${text}: ${JSON.stringify(refs)}`);
    }
    assert.deepEqual(parseIssueReferences('issue#4 a/b/c#5 #ff0000 #6x'), []);
    assert.deepEqual(parseIssueReferences('prefixcloses #4'), [{ index: 4 }]);
  });
});
