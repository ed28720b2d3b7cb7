import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import {
  ALL_SUBJECTS,
  LEAF_SUBJECTS,
  leavesOf,
  parseSubject,
  related,
  type Subject,
} from '../../src/quota/subjects.js';
import {
  groupStands,
  ruleCovers,
  ruleStands,
  usageOf,
  withinQuota,
  type Group,
  type Usage,
} from '../../src/quota/evaluate.js';

const rule = (name: string, limit: number, subjects: Subject[]) => ({ name, limit, subjects });

describe('quota subjects', () => {
  it('knows exactly the 11 spec subjects plus size:git:all and size:git:lfs', () => {
    assert.deepEqual([...ALL_SUBJECTS].sort(), [
      'size:all',
      'size:assets:all',
      'size:assets:artifacts',
      'size:assets:attachments:all',
      'size:assets:attachments:issues',
      'size:assets:attachments:releases',
      'size:assets:packages:all',
      'size:git:all',
      'size:git:lfs',
      'size:repos:all',
      'size:repos:private',
      'size:repos:public',
      'size:wiki',
    ]);
  });

  it('refuses any other string with a 422 naming it', () => {
    for (const bad of ['size:repos', 'SIZE:ALL', 'size:all ', 'size:git:LFS', 'count:repos', '']) {
      assert.throws(
        () => parseSubject(bad),
        (e: unknown) =>
          e instanceof AppError &&
          e.kind === 'invalid' &&
          e.message.includes(`invalid quota subject: ${bad}`),
      );
    }
  });

  it('declares the hierarchy: sums in both directions', () => {
    const leaves = (s: Subject) => [...leavesOf(s)].sort();
    assert.deepEqual(leaves('size:all'), [...LEAF_SUBJECTS].sort());
    assert.deepEqual(leaves('size:git:all'), ['size:git:lfs', 'size:repos:private', 'size:repos:public']);
    assert.deepEqual(leaves('size:repos:all'), ['size:repos:private', 'size:repos:public']);
    assert.deepEqual(leaves('size:assets:all'), [
      'size:assets:artifacts',
      'size:assets:attachments:issues',
      'size:assets:attachments:releases',
      'size:assets:packages:all',
    ]);
    assert.deepEqual(leaves('size:assets:attachments:all'), [
      'size:assets:attachments:issues',
      'size:assets:attachments:releases',
    ]);
    assert.deepEqual(leaves('size:wiki'), []);
  });

  it('relates ancestors and descendants, not siblings', () => {
    assert.ok(related('size:all', 'size:assets:artifacts'));
    assert.ok(related('size:assets:artifacts', 'size:all'));
    assert.ok(related('size:git:all', 'size:git:lfs'));
    assert.ok(related('size:repos:public', 'size:git:all'));
    assert.ok(!related('size:git:all', 'size:assets:all'));
    assert.ok(!related('size:repos:public', 'size:repos:private'));
    assert.ok(!related('size:wiki', 'size:all'));
  });
});

describe('quota evaluation', () => {
  const usage: Usage = {
    'size:repos:public': 100,
    'size:repos:private': 50,
    'size:git:lfs': 30,
    'size:assets:attachments:issues': 7,
    'size:assets:attachments:releases': 20,
    'size:assets:artifacts': 5,
    'size:assets:packages:all': 40,
  };

  it('sums a subject over what it covers', () => {
    assert.equal(usageOf('size:all', usage), 252);
    assert.equal(usageOf('size:git:all', usage), 180);
    assert.equal(usageOf('size:repos:all', usage), 150);
    assert.equal(usageOf('size:assets:all', usage), 72);
    assert.equal(usageOf('size:assets:attachments:all', usage), 27);
    assert.equal(usageOf('size:wiki', usage), 0);
  });

  it('a rule stands when the sum of its subjects is within the limit; -1 is unlimited; 0 allows nothing', () => {
    assert.ok(ruleStands(rule('r', 150, ['size:repos:all']), usage));
    assert.ok(!ruleStands(rule('r', 149, ['size:repos:all']), usage));
    assert.ok(
      ruleStands(
        rule('r', 90, ['size:git:lfs', 'size:assets:packages:all', 'size:assets:attachments:releases']),
        usage,
      ),
    );
    assert.ok(
      !ruleStands(
        rule('r', 89, ['size:git:lfs', 'size:assets:packages:all', 'size:assets:attachments:releases']),
        usage,
      ),
    );
    assert.ok(ruleStands(rule('r', -1, ['size:all']), usage));
    assert.ok(!ruleStands(rule('r', 0, ['size:assets:artifacts']), usage));
    assert.ok(ruleStands(rule('r', 0, ['size:assets:artifacts']), {}));
  });

  it('spec example: rule A (releases + packages + LFS) and rule B (packages alone); the group fails when either fails', () => {
    const a = rule('A', 100, [
      'size:assets:attachments:releases',
      'size:assets:packages:all',
      'size:git:lfs',
    ]);
    const b = rule('B', 50, ['size:assets:packages:all']);
    const group: Group = { name: 'g', rules: [a, b] };
    assert.ok(
      groupStands(group, {
        'size:assets:packages:all': 40,
        'size:git:lfs': 30,
        'size:assets:attachments:releases': 20,
      }),
    );
    // A fails (110 > 100), B stands
    assert.ok(
      !groupStands(group, {
        'size:assets:packages:all': 40,
        'size:git:lfs': 50,
        'size:assets:attachments:releases': 20,
      }),
    );
    // B fails (60 > 50), A stands (60 + 0 + 0)
    assert.ok(!groupStands(group, { 'size:assets:packages:all': 60 }));
    assert.ok(!withinQuota([group], { 'size:assets:packages:all': 60 }, 'size:assets:packages:all'));
  });

  it('for one subject only rules covering it count (itself, ancestors, descendants)', () => {
    const lfsOnly = rule('lfs', 10, ['size:git:lfs']);
    const all = rule('all', 1000, ['size:all']);
    assert.ok(ruleCovers(lfsOnly, 'size:git:lfs'));
    assert.ok(ruleCovers(lfsOnly, 'size:git:all'), 'a descendant of the subject covers it');
    assert.ok(ruleCovers(lfsOnly, 'size:all'));
    assert.ok(ruleCovers(all, 'size:assets:artifacts'), 'an ancestor of the subject covers it');
    assert.ok(!ruleCovers(lfsOnly, 'size:assets:artifacts'));
    const g: Group = { name: 'g', rules: [lfsOnly, all] };
    // LFS is over (30 > 10): checks touching LFS fail, unrelated ones are not limited by that rule.
    assert.ok(!withinQuota([g], usage, 'size:git:lfs'));
    assert.ok(!withinQuota([g], usage, 'size:all'));
    assert.ok(!withinQuota([g], usage, 'size:git:all'));
    assert.ok(withinQuota([g], usage, 'size:assets:artifacts'));
    assert.ok(withinQuota([g], usage, 'size:repos:public'));
  });

  it('a group with no rule covering the subject does not limit it', () => {
    const g: Group = { name: 'g', rules: [rule('pk', 0, ['size:assets:packages:all'])] };
    assert.ok(withinQuota([g], usage, 'size:repos:private'));
    assert.ok(!withinQuota([g], usage, 'size:assets:packages:all'));
  });

  it('any standing group is enough; no groups at all is unlimited; the wiki is always within', () => {
    const tight: Group = { name: 'tight', rules: [rule('t', 1, ['size:all'])] };
    const loose: Group = { name: 'loose', rules: [rule('l', 1000, ['size:all'])] };
    assert.ok(!withinQuota([tight], usage, 'size:all'));
    assert.ok(withinQuota([tight, loose], usage, 'size:all'));
    assert.ok(withinQuota([], usage, 'size:all'));
    assert.ok(withinQuota([tight], usage, 'size:wiki'));
    assert.ok(!withinQuota([tight], usage));
  });
});
