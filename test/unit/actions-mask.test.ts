// What `anvil runner` masks in a job's log for a secret (src/actions/runner-mask.ts): the value,
// each line of a multi-line value, and its base64 forms wherever they start in an encoded text.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyMasks, maskForms } from '../../src/actions/runner-mask.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

describe('runner log masks', () => {
  it('masks the value and each line of a multi-line value', () => {
    const forms = maskForms('first-line\n  second-line  \nxy\n');
    assert.ok(forms.includes('first-line\n  second-line  \nxy'));
    assert.ok(forms.includes('first-line') && forms.includes('second-line'));
    assert.ok(!forms.includes('xy'), 'lines shorter than 3 characters are not masked');
    assert.equal(applyMasks('got second-line here', forms), 'got *** here');
  });

  it('masks the base64 forms at every alignment inside longer encoded text', () => {
    const secret = 'correct-horse-battery-staple';
    const forms = maskForms(secret);
    for (const prefix of ['', 'a', 'ab', 'abc', 'abcd']) {
      for (const suffix of ['', 'z', 'zz']) {
        const encoded = b64(prefix + secret + suffix);
        const masked = applyMasks(encoded, forms);
        assert.ok(masked.includes('***'), `${prefix}|${suffix}: ${masked}`);
        // What is left around the mask is at most the few characters that mix in other bytes.
        assert.ok(masked.replace('***', '').length <= encoded.length - 28, `${prefix}|${suffix}: ${masked}`);
      }
    }
  });

  it('replaces the longest mask first and ignores short values', () => {
    assert.deepEqual(maskForms('ab'), []);
    assert.equal(applyMasks('token abcdef and abc', ['abc', 'abcdef']), 'token *** and ***');
    assert.equal(applyMasks('nothing here', []), 'nothing here');
  });
});
