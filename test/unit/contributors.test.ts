// The contributors page's numbers from `git log --shortstat`: per author (by e-mail, any case),
// lines added and deleted, weeks starting on Sunday 00:00 UTC.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tally, weekOf } from '../../src/activities/contributors.js';

describe('contributors tally', () => {
  it('starts weeks on Sunday, 00:00 UTC', () => {
    const sunday = Date.UTC(2026, 10, 29) / 1000; // 2026-11-29 was a Sunday
    assert.equal(weekOf(sunday), sunday);
    assert.equal(weekOf(sunday + 6 * 86400 + 86399), sunday);
    assert.equal(weekOf(sunday - 1), sunday - 7 * 86400);
  });

  it('adds up commits, insertions and deletions per author and per week', () => {
    const t = Date.UTC(2026, 10, 30, 12) / 1000;
    const log = [
      `\x1eAda\x00ada@example.com\x00${t}\n\n 2 files changed, 10 insertions(+), 1 deletion(-)\n`,
      `\x1eAda L.\x00ADA@example.com\x00${t + 86400}\n\n 1 file changed, 1 insertion(+)\n`,
      `\x1eBob\x00bob@example.com\x00${t - 7 * 86400}\n\n 1 file changed, 4 deletions(-)\n`,
      `\x1eBob\x00bob@example.com\x00${t - 7 * 86400}\n`, // an empty commit: no stat line
    ].join('');
    const r = tally(log);
    assert.deepEqual(r.total, {
      commits: 4,
      additions: 11,
      deletions: 5,
      weeks: [
        { week: weekOf(t - 7 * 86400), commits: 2, additions: 0, deletions: 4 },
        { week: weekOf(t), commits: 2, additions: 11, deletions: 1 },
      ],
    });
    assert.deepEqual(
      r.contributors.map((c) => [c.name, c.commits, c.additions, c.deletions, c.weeks.length]),
      [
        ['Ada', 2, 11, 1, 1],
        ['Bob', 2, 0, 4, 1],
      ],
    );
    assert.deepEqual(tally(''), {
      total: { commits: 0, additions: 0, deletions: 0, weeks: [] },
      contributors: [],
    });
  });
});
