// The commit graph's reading of `git log --graph`: glyph rows and commit rows, refs without their
// prefixes, subjects that contain the separator's neighbours intact.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseGraph } from '../../src/git/graph.js';

const S = '\x1f';
describe('commit graph', () => {
  it('reads commit rows and the rows of lines between them', () => {
    const out = [
      `*   ${S}${'a'.repeat(40)}${S}Ann${S}1700000000${S}HEAD -> refs/heads/main, tag: refs/tags/v1.0${S}Merge branch 'topic'`,
      '|\\  ',
      `| * ${S}${'b'.repeat(40)}${S}Bo${S}1699999000${S}refs/heads/topic${S}Fix: a | b`,
      '|/  ',
      `* ${S}${'c'.repeat(40)}${S}Ann${S}1699990000${S}${S}Initial`,
      '',
    ].join('\n');
    const rows = parseGraph(out);
    assert.equal(rows.length, 5);
    assert.equal(rows[0]!.glyphs, '*');
    assert.deepEqual(rows[0]!.commit, {
      oid: 'a'.repeat(40),
      author: 'Ann',
      when: 1700000000,
      refs: ['main', 'v1.0'],
      subject: "Merge branch 'topic'",
    });
    assert.equal(rows[1]!.glyphs, '|\\');
    assert.equal(rows[1]!.commit, undefined);
    assert.equal(rows[2]!.glyphs, '| *');
    assert.equal(rows[2]!.commit?.subject, 'Fix: a | b');
    assert.deepEqual(rows[2]!.commit?.refs, ['topic']);
    assert.deepEqual(rows[4]!.commit?.refs, []);
  });
});
