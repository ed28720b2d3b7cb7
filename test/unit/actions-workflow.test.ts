// Workflow parsing and filters (src/actions/workflow.ts) and the expressions `anvil runner`
// evaluates (src/actions/expressions.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import {
  expandMatrix,
  matchPaths,
  matchPatterns,
  matchRef,
  nextCronTime,
  parseConcurrency,
  parseTriggers,
  parseWorkflow,
  resolveInputs,
  WorkflowError,
} from '../../src/actions/workflow.js';
import { condition, evaluate, interpolate, type ExprContext } from '../../src/actions/expressions.js';
import { aggregateStatus } from '../../src/actions/tables.js';
import { CommandReader, parseCommand, parseKeyValueFile } from '../../src/actions/runner-commands.js';
import { parseUses } from '../../src/actions/runner-actions.js';
import { inputEnv, isArtifactAction } from '../../src/actions/runner-node.js';
import { shellCommand } from '../../src/actions/runner-steps.js';

describe('workflow triggers', () => {
  it('reads the forms of on:', () => {
    assert.deepEqual(Object.keys(parseTriggers('push')), ['push']);
    assert.deepEqual(Object.keys(parseTriggers(['push', 'workflow_dispatch', 'issues'])), [
      'push',
      'workflow_dispatch',
    ]);
    // A schedule needs its cron specs: five fields each.
    assert.deepEqual(parseTriggers({ schedule: [{ cron: ' 0 3 * * 1 ' }] }).schedule, ['0 3 * * 1']);
    assert.throws(() => parseTriggers(['schedule']), WorkflowError);
    assert.throws(() => parseTriggers({ schedule: [{ cron: '* * * * * *' }] }), /five fields/);
    assert.throws(() => parseTriggers({ schedule: [{ cron: '0 25 * * *' }] }), WorkflowError);
    const t = parseTriggers({
      push: { branches: 'main', 'paths-ignore': ['docs/**'] },
      pull_request: { types: ['opened'] },
    });
    assert.deepEqual(t.push?.branches, ['main']);
    assert.deepEqual(t.push?.pathsIgnore, ['docs/**']);
    assert.deepEqual(t.pull_request?.types, ['opened']);
    assert.throws(() => parseTriggers(5), WorkflowError);
    assert.throws(() => parseTriggers({ push: { branches: [{ a: 1 }] } }), WorkflowError);
  });

  it('finds the next time of a cron spec as GitHub reads it (UTC, day of month or of week)', () => {
    const at = (iso: string) => Date.parse(iso) / 1000;
    const next = (spec: string, from: string) => new Date(nextCronTime(spec, at(from)) * 1000).toISOString();
    assert.equal(next('*/15 * * * *', '2026-03-01T10:07:30Z'), '2026-03-01T10:15:00.000Z');
    assert.equal(next('*/15 * * * *', '2026-03-01T10:15:00Z'), '2026-03-01T10:30:00.000Z');
    assert.equal(next('0 3 * * 1', '2026-03-01T10:00:00Z'), '2026-03-02T03:00:00.000Z');
    // Both day fields restricted: either matches (the 13th, or a Friday).
    assert.equal(next('0 12 13 * 5', '2026-11-01T00:00:00Z'), '2026-11-06T12:00:00.000Z');
    assert.throws(() => nextCronTime('@daily', 0), /five fields/);
  });

  it('reads concurrency as a group name or a mapping', () => {
    assert.equal(parseConcurrency(undefined, 'concurrency'), undefined);
    assert.deepEqual(parseConcurrency('deploy', 'concurrency'), { group: 'deploy', cancelInProgress: false });
    assert.deepEqual(parseConcurrency({ group: 'g-${{ github.ref }}', 'cancel-in-progress': true }, 'c'), {
      group: 'g-${{ github.ref }}',
      cancelInProgress: true,
    });
    assert.throws(() => parseConcurrency({ 'cancel-in-progress': true }, 'concurrency'), /group/);
    assert.throws(() => parseConcurrency([1], 'concurrency'), WorkflowError);
  });

  it('matches branches and tags as GitHub does', () => {
    assert.ok(matchPatterns(['main', 'releases/**'], 'releases/v1/x'));
    assert.ok(!matchPatterns(['feature/*'], 'feature/a/b'));
    assert.ok(!matchPatterns(['releases/**', '!releases/**-alpha'], 'releases/v2-alpha'));
    assert.ok(matchPatterns(['releases/**', '!releases/**-alpha', 'releases/v2-alpha'], 'releases/v2-alpha'));
    assert.ok(matchRef({}, 'refs/heads/x'));
    assert.ok(matchRef({}, 'refs/tags/x'));
    assert.ok(!matchRef({ branches: ['main'] }, 'refs/tags/v1'), 'branch filters only: no tags');
    assert.ok(!matchRef({ tags: ['v*'] }, 'refs/heads/main'), 'tag filters only: no branches');
    assert.ok(matchRef({ tags: ['v*'] }, 'refs/tags/v1.2'));
    assert.ok(!matchRef({ branchesIgnore: ['wip/**'] }, 'refs/heads/wip/a'));
    assert.ok(matchRef({ branchesIgnore: ['wip/**'] }, 'refs/heads/main'));
    assert.ok(!matchRef({}, 'refs/notes/x'));
  });

  it('matches changed paths', () => {
    assert.ok(matchPaths({ paths: ['src/**'] }, ['README.md', 'src/a/b.ts']));
    assert.ok(!matchPaths({ paths: ['src/**'] }, ['README.md']));
    assert.ok(!matchPaths({ pathsIgnore: ['docs/**'] }, ['docs/a.md']));
    assert.ok(matchPaths({ pathsIgnore: ['docs/**'] }, ['docs/a.md', 'x']));
    assert.ok(matchPaths({ paths: ['.github/**'] }, ['.github/workflows/ci.yml']));
    assert.ok(!matchPaths({ paths: ['**'] }, []));
  });

  it('resolves dispatch inputs', () => {
    const spec = parseTriggers({
      workflow_dispatch: {
        inputs: {
          who: { required: true },
          debug: { type: 'boolean', default: false },
          level: { type: 'choice', options: ['a', 'b'], default: 'a' },
        },
      },
    }).workflow_dispatch!.inputs;
    assert.deepEqual(resolveInputs(spec, { who: 'me' }), { who: 'me', debug: 'false', level: 'a' });
    assert.throws(() => resolveInputs(spec, {}), /required input "who"/);
    assert.throws(() => resolveInputs(spec, { who: 'x', level: 'c' }), /one of: a, b/);
    assert.throws(() => resolveInputs(spec, { who: 'x', debug: 'maybe' }), /true or false/);
  });
});

describe('workflow jobs', () => {
  it('expands matrices with include and exclude', () => {
    assert.deepEqual(expandMatrix({ os: ['a', 'b'], v: [1, 2], exclude: [{ os: 'b', v: 2 }] }), [
      { os: 'a', v: 1 },
      { os: 'a', v: 2 },
      { os: 'b', v: 1 },
    ]);
    assert.deepEqual(expandMatrix({ os: ['a'], include: [{ os: 'a', x: 1 }, { os: 'z' }] }), [
      { os: 'a', x: 1 },
      { os: 'z' },
    ]);
    assert.deepEqual(expandMatrix({ include: [{ a: 1 }, { a: 2 }] }), [{ a: 1 }, { a: 2 }]);
    assert.throws(() => expandMatrix({ a: [...Array(20).keys()], b: [...Array(20).keys()] }), /at most 256/);
  });

  it('gives each job its payload, needs and labels', () => {
    const wf = parseWorkflow(
      `name: W
on: push
env: { A: 1 }
jobs:
  one:
    runs-on: [self-hosted, 'os-\${{ matrix.os }}']
    strategy: { matrix: { os: [x, y] } }
    steps: [{ run: 'true' }]
  two:
    name: second
    needs: one
    runs-on: { labels: host }
    steps: [{ run: 'true' }]
`,
      '.forgejo/workflows/w.yml',
    );
    assert.equal(wf.name, 'W');
    assert.deepEqual(
      wf.jobs.map((j) => [j.jobId, j.name, j.needs, j.runsOn]),
      [
        ['one', 'one (x)', [], ['self-hosted', 'os-x']],
        ['one', 'one (y)', [], ['self-hosted', 'os-y']],
        ['two', 'second', ['one'], ['host']],
      ],
    );
    const payload = parse(wf.jobs[1]!.payload) as {
      env: unknown;
      jobs: Record<string, { strategy: unknown }>;
    };
    assert.deepEqual(payload.env, { A: 1 });
    assert.deepEqual(Object.keys(payload.jobs), ['one']);
    assert.deepEqual(payload.jobs['one']!.strategy, { matrix: { os: ['y'] } });
  });

  it('refuses what is not a workflow', () => {
    assert.throws(() => parseWorkflow('jobs: {a: {}}', 'x'), /has no `on`/);
    assert.throws(() => parseWorkflow('on: push', 'x'), /has no jobs/);
    assert.throws(() => parseWorkflow('on: [push', 'x'), /not valid YAML/);
    assert.throws(() => parseWorkflow('on: push\njobs: {a: {needs: b}}', 'x'), /needs b/);
    assert.throws(() => parseWorkflow('on: push\njobs: {a: {needs: b}, b: {needs: a}}', 'x'), /cycle/);
    assert.throws(() => parseWorkflow('- a', 'x'), /not a workflow/);
  });
});

describe('expressions', () => {
  const ctx = (failed = false): ExprContext => ({
    contexts: {
      github: { ref: 'refs/heads/main', event_name: 'push', event: { inputs: { n: '3' } } },
      secrets: { TOKEN: 'abc' },
      steps: { s: { outputs: { r: '42' }, outcome: 'success' } },
      matrix: { os: 'linux' },
      env: { A: 'x' },
    },
    failed,
    cancelled: false,
  });

  it('evaluates paths, operators and functions', () => {
    assert.equal(evaluate("github.ref == 'REFS/heads/main'", ctx()), true);
    assert.equal(evaluate('secrets.token', ctx()), 'abc');
    assert.equal(evaluate("steps.s.outputs.r == 42 && matrix['os']", ctx()), 'linux');
    assert.equal(evaluate("env.NOPE || 'fallback'", ctx()), 'fallback');
    assert.equal(
      evaluate("contains('Hello', 'ell') && startsWith('abc', 'A') && !endsWith('abc', 'b')", ctx()),
      true,
    );
    assert.equal(evaluate("format('{0}-{1}', 'a', 2)", ctx()), 'a-2');
    assert.equal(evaluate("fromJSON('[1,2]')[1]", ctx()), 2);
    assert.equal(evaluate('github.event.inputs.n > 2', ctx()), true);
    assert.equal(
      interpolate('v=${{ matrix.os }}/${{ steps.s.outputs.r }}/${{ nope.x }}', ctx()),
      'v=linux/42/',
    );
    assert.throws(() => evaluate("'open", ctx()));
    assert.throws(() => evaluate('explode()', ctx()));
  });

  it('reads if: conditions with the implicit success()', () => {
    assert.equal(condition(undefined, ctx()), true);
    assert.equal(condition(undefined, ctx(true)), false);
    assert.equal(condition('always()', ctx(true)), true);
    assert.equal(condition('${{ failure() }}', ctx(true)), true);
    assert.equal(condition("github.event_name == 'push'", ctx(true)), false);
    assert.equal(condition("github.event_name == 'push'", ctx()), true);
  });
});

describe('runner helpers', () => {
  it('aggregates job statuses into the run status', () => {
    assert.equal(aggregateStatus(['success', 'skipped']), 'success');
    assert.equal(aggregateStatus(['success', 'failure', 'running']), 'failure');
    assert.equal(aggregateStatus(['success', 'waiting']), 'running');
    assert.equal(aggregateStatus(['waiting', 'blocked']), 'waiting');
    assert.equal(aggregateStatus(['blocked']), 'blocked');
    assert.equal(aggregateStatus(['cancelled', 'failure']), 'cancelled');
  });

  it('parses GITHUB_OUTPUT files and shell templates', () => {
    assert.deepEqual(parseKeyValueFile('a=1\nb=x=y\nmulti<<EOF\nl1\nl2\nEOF\n'), {
      a: '1',
      b: 'x=y',
      multi: 'l1\nl2',
    });
    assert.deepEqual(shellCommand('bash', '/f'), ['bash', '--noprofile', '--norc', '-eo', 'pipefail', '/f']);
    assert.deepEqual(shellCommand('perl {0}', '/f'), ['perl', '/f']);
    assert.deepEqual(shellCommand('ruby', '/f'), ['ruby', '/f']);
  });

  it('reads what uses: names', () => {
    const base = 'https://forge.example.com';
    assert.deepEqual(parseUses('alice/tool@v1', base), {
      kind: 'remote',
      url: 'https://forge.example.com/alice/tool',
      repository: 'alice/tool',
      path: '',
      ref: 'v1',
    });
    assert.deepEqual(parseUses('https://other.example/o/r/sub/dir@main', base), {
      kind: 'remote',
      url: 'https://other.example/o/r',
      repository: 'o/r',
      path: 'sub/dir',
      ref: 'main',
    });
    assert.deepEqual(parseUses('actions/checkout@v4', base), { kind: 'checkout' });
    assert.deepEqual(parseUses('https://data.forgejo.org/actions/checkout@v4', base), { kind: 'checkout' });
    assert.deepEqual(parseUses('./.forgejo/actions/x', base), {
      kind: 'local',
      path: './.forgejo/actions/x',
    });
    assert.deepEqual(parseUses('docker://alpine:3', base), { kind: 'docker', image: 'alpine:3' });
    assert.throws(() => parseUses('alice/tool', base), /names no version/);
    assert.throws(() => parseUses('tool@v1', base), /owner\/repo/);
    assert.throws(() => parseUses('a/b/../../c@v1', base), /owner\/repo/);
  });

  it('reads workflow commands as GitHub writes them', () => {
    assert.deepEqual(parseCommand('::error file=a%2Cb.js,line=3,title=T%3Ax::bad%0Athing%25'), {
      name: 'error',
      props: { file: 'a,b.js', line: '3', title: 'T:x' },
      value: 'bad\nthing%',
    });
    assert.equal(parseCommand('::not a command'), undefined);
    const logged: string[] = [];
    const masks: string[] = [];
    const r = new CommandReader({ log: (l) => logged.push(l), addMask: (m) => masks.push(m) });
    for (const line of [
      '::add-mask::s3cret',
      '::set-output name=a::1',
      '::save-state name=s::2',
      '::debug::hidden',
      '::warning file=x.js,line=4,col=2::careful',
      '::group::Group',
      '::endgroup::',
      '::stop-commands::tok',
      '::set-output name=b::2',
      '::tok::',
      '::set-env name=X::y',
      'plain',
    ]) {
      r.line(line);
    }
    assert.deepEqual(masks, ['s3cret']);
    assert.deepEqual(r.outputs, { a: '1' });
    assert.deepEqual(r.state, { s: '2' });
    assert.equal(logged[0], '::warning::x.js:4:2: careful');
    assert.deepEqual(logged.slice(1, 4), ['::group::Group', '::endgroup::', '::set-output name=b::2']);
    assert.match(logged[4]!, /^::error::The `set-env` command is disabled/);
    assert.equal(logged[5], 'plain');
  });

  it("names a JavaScript action's inputs and knows the artifact actions", () => {
    assert.deepEqual(inputEnv({ 'fetch-depth': '1', 'my input': 'x' }), {
      'INPUT_FETCH-DEPTH': '1',
      INPUT_MY_INPUT: 'x',
    });
    assert.ok(isArtifactAction('actions/upload-artifact'));
    assert.ok(isArtifactAction('christopherhx/gitea-download-artifact'));
    assert.ok(!isArtifactAction('actions/upload-pages-artifact'));
    assert.ok(!isArtifactAction('alice/tool'));
  });
});
