// What the Actions pages show of a job's log (src/actions/log-view.ts), the badge (badge.ts) and
// the commit statuses' words (commit-status.ts): pure functions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ansiToHtml, humanDuration, stepsOf } from '../../src/actions/log-view.js';
import { badgeLabel, badgeSvg } from '../../src/actions/badge.js';
import { commitStateOf, goDuration } from '../../src/actions/commit-status.js';

describe('ANSI colours as HTML', () => {
  it('escapes every character and turns SGR colours into classes', () => {
    assert.equal(
      ansiToHtml('<script>alert("x")</script> & \'y\''),
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;',
    );
    assert.equal(ansiToHtml('\x1b[31mred\x1b[0m plain'), '<span class="ansi-fg-1">red</span> plain');
    assert.equal(
      ansiToHtml('\x1b[1;92mbold\x1b[22m green'),
      '<span class="ansi-bold ansi-fg-10">bold</span><span class="ansi-fg-10"> green</span>',
    );
    assert.equal(
      ansiToHtml('\x1b[38;5;4mblue\x1b[39m \x1b[38;2;1;2;3mtrue\x1b[m'),
      '<span class="ansi-fg-4">blue</span> true',
    );
    assert.equal(ansiToHtml('\x1b[44m<b>\x1b[49m'), '<span class="ansi-bg-4">&lt;b&gt;</span>');
  });

  it('drops other escape sequences and control characters, and keeps what a carriage return wrote last', () => {
    assert.equal(ansiToHtml('\x1b]0;title\x07after\x1b[2K\x1b[1Gdone\x00\x08'), 'afterdone');
    assert.equal(ansiToHtml('10%\r50%\r100%'), '100%');
    assert.equal(ansiToHtml('tab\tkept'), 'tab\tkept');
    assert.equal(
      ansiToHtml('\x1b[31m"quoted" <tag class="x">'),
      '<span class="ansi-fg-1">&quot;quoted&quot; &lt;tag class=&quot;x&quot;&gt;</span>',
    );
  });
});

describe('steps of a log', () => {
  const task = { log_length: 7, started_unix: 100, stopped_unix: 110 };
  const marks = [
    { idx: 2, time_ms: 101_000, content: '\u2B52 build' },
    { idx: 4, time_ms: 103_000, content: '::error::Process completed with exit code 1.' },
    { idx: 5, time_ms: 104_000, content: '\u2B50 Run Main test' },
  ];

  it('folds the rows by the step headers, the rows before them being "Set up job"', () => {
    const steps = stepsOf(marks, task, { status: 'failure' }, 0);
    assert.deepEqual(
      steps.map((s) => [s.name, s.start, s.end, s.status]),
      [
        ['Set up job', 0, 2, 'success'],
        ['build', 3, 5, 'failure'],
        ['Main test', 6, 7, 'success'],
      ],
    );
    assert.equal(humanDuration(steps[1]!.endMs - steps[1]!.startMs), '3s');
  });

  it('marks the last step running while the job runs, and has none before a task', () => {
    const steps = stepsOf(marks, { ...task, stopped_unix: 0 }, { status: 'running' }, 120_000);
    assert.equal(steps.at(-1)!.status, 'running');
    assert.equal(humanDuration(steps.at(-1)!.endMs - steps.at(-1)!.startMs), '16s');
    assert.deepEqual(stepsOf([], undefined, { status: 'waiting' }, 0), []);
    assert.deepEqual(
      stepsOf([], { ...task, log_length: 3 }, { status: 'success' }, 0).map((s) => [s.name, s.start, s.end]),
      [['Set up job', 0, 3]],
    );
  });
});

describe('badges and commit statuses', () => {
  it('draws the status of the newest run, escaped', () => {
    assert.equal(badgeLabel('ci.yml'), 'ci');
    assert.equal(badgeLabel('build.yaml'), 'build');
    assert.match(badgeSvg('ci', 'success'), /aria-label="ci: passing"/);
    assert.match(badgeSvg('ci', 'failure'), /<text[^>]*>failing<\/text>/);
    assert.match(badgeSvg('ci', undefined), /no status/);
    assert.match(badgeSvg('a<b&"', 'running'), /a&lt;b&amp;&quot;/);
    assert.doesNotMatch(badgeSvg('<script>', 'success'), /<script>/);
  });

  it("maps job statuses to commit states and prints durations as Forgejo's (Go's)", () => {
    assert.deepEqual(
      ['success', 'skipped', 'failure', 'cancelled', 'waiting', 'blocked', 'running', 'odd'].map(
        commitStateOf,
      ),
      ['success', 'success', 'failure', 'failure', 'pending', 'pending', 'pending', 'error'],
    );
    assert.equal(goDuration(5), '5s');
    assert.equal(goDuration(62), '1m2s');
    assert.equal(goDuration(3723), '1h2m3s');
  });
});
