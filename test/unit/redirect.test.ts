// Redirect targets from requests (web/redirect.ts): read as the browser reads them, only paths of
// this site come out, normalised, and nothing a header may not carry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { safeRedirect, siteOf } from '../../src/web/redirect.js';

const site = siteOf('https://code.example.org:8443/');

describe('safeRedirect', () => {
  it('keeps paths of this site, normalised, with their query and fragment', () => {
    for (const [to, want] of [
      ['/', '/'],
      ['/alice/repo?tab=files#L3', '/alice/repo?tab=files#L3'],
      ['/a/./b/../c', '/a/c'],
      ['/a b?q=x y#f g', '/a%20b?q=x%20y#f%20g'],
      ['/%2F/x', '/%2F/x'],
      ['explore', '/explore'],
      ['https://code.example.org:8443/user/settings', '/user/settings'],
      ['/é', '/%C3%A9'],
      // The scheme of the site and no slashes: a relative path, for the browser as here.
      ['https:evil.example', '/evil.example'],
    ]) {
      assert.equal(safeRedirect(to, site), want, to);
    }
  });

  it('sends anything else to the fallback', () => {
    for (const to of [
      undefined,
      42,
      '',
      '//evil.example',
      '/\t/evil.example',
      '/\n/evil.example',
      '\r\n//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      '/%2e%2e//evil.example',
      '/.//evil.example',
      'https://evil.example/',
      'http://code.example.org:8443/',
      'https://code.example.org/',
      'https://user:pw@code.example.org:8443/',
      'javascript:alert(1)',
      'data:text/html,x',
      'http:evil.example',
      'x'.repeat(5000),
    ]) {
      assert.equal(safeRedirect(to, site, '/home'), '/home', JSON.stringify(to));
    }
  });

  it('never gives back a control character, a space or a backslash', () => {
    for (let c = 0; c < 0x80; c++) {
      const ch = String.fromCharCode(c);
      for (const to of [`/${ch}/x`, `/x?${ch}`, `/x#${ch}`, `${ch}/x`]) {
        const out = safeRedirect(to, site);
        assert.match(out, /^\/(?![/\\])[\x21-\x7e]*$/, JSON.stringify(to));
      }
    }
  });

  it('keeps to the site path when the site lives below one', () => {
    const below = siteOf('https://example.org/', '/git');
    assert.equal(safeRedirect('/git/alice', below), '/git/alice');
    assert.equal(safeRedirect('/git', below), '/git');
    assert.equal(safeRedirect('/gitlab', below), '/');
    assert.equal(safeRedirect('/other', below), '/');
  });
});
