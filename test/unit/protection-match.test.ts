// Which branch protection rule governs a branch: globs with '/' as the separator, plain names
// before globs, and creation order among globs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  filePatterns,
  inPriorityOrder,
  isGlobRule,
  matchesAnyPattern,
  ruleForBranch,
  ruleMatches,
} from '../../src/protection/match.js';

describe('isGlobRule', () => {
  it('tells glob rules from plain branch names', () => {
    for (const g of ['*', 'release/*', 'release/**', 'v?', 'feat-[ab]', '{main,dev}', 'a\\b']) {
      assert.equal(isGlobRule(g), true, g);
    }
    for (const p of ['main', 'release/v1', 'feature/x-y_z.1', 'a+b', '!main', 'a(b)']) {
      assert.equal(isGlobRule(p), false, p);
    }
  });
});

describe('ruleMatches', () => {
  const cases: Array<[string, string, boolean]> = [
    // * stays within a segment
    ['release/*', 'release/v1', true],
    ['release/*', 'release/v1/x', false],
    ['release/*', 'release', false],
    ['*', 'main', true],
    ['*', 'feature/x', false],
    // ** crosses segments
    ['release/**', 'release/v1', true],
    ['release/**', 'release/v1/x', true],
    ['release/**', 'releases/v1', false],
    ['**', 'a/b/c', true],
    ['**/hotfix', 'a/b/hotfix', true],
    ['a/**/z', 'a/b/c/z', true],
    ['a/**/z', 'a/b/c/y', false],
    // other glob characters
    ['v?', 'v1', true],
    ['v?', 'v10', false],
    ['feat-[ab]', 'feat-b', true],
    ['feat-[ab]', 'feat-c', false],
    ['{main,dev}', 'dev', true],
    ['{main,dev}', 'test', false],
    ['*-stable', 'v1-stable', true],
    ['*-stable', 'x/v1-stable', false],
    // plain names: whole name, compared ignoring case (as Forgejo does)
    ['main', 'main', true],
    ['main', 'Main', true],
    ['main', 'main2', false],
    ['release/v1', 'release/v1', true],
    ['release/v1', 'release/v1/x', false],
    // characters that are not glob syntax here stay literal
    ['!main', 'dev', false],
    ['!main', '!main', true],
  ];
  for (const [rule, branch, expected] of cases) {
    it(`${rule} ${expected ? 'matches' : 'does not match'} ${branch}`, () => {
      assert.equal(ruleMatches(rule, branch), expected);
    });
  }
});

describe('ruleForBranch', () => {
  const rules = [
    { id: 1, rule_name: 'release/**' },
    { id: 2, rule_name: 'release/*' },
    { id: 3, rule_name: 'release/v1' },
    { id: 4, rule_name: '*' },
    { id: 5, rule_name: 'hotfix/*' },
  ];

  it('prefers a plain name over any glob, even one created before it', () => {
    assert.equal(ruleForBranch(rules, 'release/v1')?.id, 3);
  });

  it('takes the first created glob among those that match', () => {
    assert.equal(ruleForBranch(rules, 'release/v2')?.id, 1);
    assert.equal(ruleForBranch(rules, 'release/v2/x')?.id, 1);
    assert.equal(ruleForBranch([rules[1]!, rules[0]!], 'release/v2')?.id, 1);
    assert.equal(ruleForBranch(rules, 'hotfix/a')?.id, 5);
    assert.equal(ruleForBranch(rules, 'main')?.id, 4);
  });

  it('finds nothing when no rule matches', () => {
    assert.equal(ruleForBranch(rules, 'feature/a'), undefined);
    assert.equal(ruleForBranch([], 'main'), undefined);
  });

  it('prefers the exact plain name to one that differs in case', () => {
    const r = [
      { id: 1, rule_name: 'Main' },
      { id: 2, rule_name: 'main' },
    ];
    assert.equal(ruleForBranch(r, 'main')?.id, 2);
    assert.equal(ruleForBranch(r, 'Main')?.id, 1);
    assert.equal(ruleForBranch(r, 'MAIN')?.id, 1);
  });

  it('orders rules plain names first, then globs, each by creation', () => {
    assert.deepEqual(
      inPriorityOrder(rules).map((r) => r.id),
      [3, 1, 2, 4, 5],
    );
  });
});

describe('file patterns', () => {
  it("splits on ';', ignores blanks and compares in lower case", () => {
    const p = filePatterns(' *.lock ; ; docs/** ;CI/*.yml');
    assert.equal(p.length, 3);
    assert.equal(matchesAnyPattern(p, 'yarn.lock'), true);
    assert.equal(matchesAnyPattern(p, 'YARN.LOCK'), true);
    assert.equal(matchesAnyPattern(p, 'docs/a/b.md'), true);
    assert.equal(matchesAnyPattern(p, 'ci/build.yml'), true);
    assert.equal(matchesAnyPattern(p, 'src/yarn.lock'), false);
    assert.equal(matchesAnyPattern(p, 'README.md'), false);
    assert.deepEqual(filePatterns(''), []);
  });
});
