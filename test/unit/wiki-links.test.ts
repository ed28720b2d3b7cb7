// Forgejo's [[wiki links]] in a wiki page (src/wiki/web-common.tsx): links to the pages, code untouched.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { wikiLinks } from '../../src/wiki/web-common.js';

describe('wiki links', () => {
  it('links [[Page]] and [[Text|Page]] to the pages by their web paths', () => {
    assert.equal(
      wikiLinks('See [[Home]] and [[the guide|Getting started]].', '/o/r'),
      'See [Home](/o/r/wiki/Home) and [the guide](/o/r/wiki/Getting-started).',
    );
    assert.equal(wikiLinks('[[a/b (c)]]', '/o/r'), '[a/b (c)](/o/r/wiki/a%2Fb-%28c%29)');
  });
  it('leaves code spans and fenced blocks alone', () => {
    const md = 'Use `[[Home]]` here\n```\n[[Home]]\n```\n[[Home]]';
    assert.equal(wikiLinks(md, '/o/r'), 'Use `[[Home]]` here\n```\n[[Home]]\n```\n[Home](/o/r/wiki/Home)');
  });
});
