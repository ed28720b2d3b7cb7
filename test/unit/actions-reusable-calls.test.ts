// Reusable workflows, the parts the issue of matrices of calls and of the inputs context added:
// `inputs` as an expression context (expressions.ts contextRefs/bindContext, reusable-inputs.ts,
// reusable-task.ts), the inputs known when a run is created read in the called jobs' runs-on,
// strategy and name, and the max-parallel and fail-fast of a matrix of calls (reusable-task.ts
// callWaits, cancelledByCall).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { bindContext, condition, contextRefs, evaluate, interpolate } from '../../src/actions/expressions.js';
import { parseWorkflow, WorkflowError } from '../../src/actions/workflow.js';
import { expandCalls, type CallSite, type LoadWorkflow, type RunJob } from '../../src/actions/reusable.js';
import {
  callWaits,
  cancelledByCall,
  exprWithInputs,
  payloadWithInputs,
  type CallJobState,
} from '../../src/actions/reusable-task.js';
import { knownInputs } from '../../src/actions/reusable-inputs.js';

function loader(files: Record<string, string>): LoadWorkflow {
  return async (ref, from) => {
    const path = ref.kind === 'local' ? ref.path : `${ref.owner}/${ref.repo}/${ref.path}`;
    const content = files[path];
    if (content === undefined) throw new WorkflowError(`${path}: the workflow file does not exist`);
    return { site: { ...from, path }, wf: parseWorkflow(content, path), content };
  };
}
const site: CallSite = { repoId: 1, commit: 'c', path: '.forgejo/workflows/ci.yml' };
const ctx = (inputs = {}) => ({
  contexts: { inputs, github: { ref: 'r' } },
  failed: false,
  cancelled: false,
});

const BUILD = `on:
  workflow_call:
    inputs:
      os: { type: string, default: linux }
      list: { type: string, default: '[1]' }
      par: { type: number, default: 0 }
      flag: { type: boolean }
jobs:
  b:
    name: build \${{ inputs.os }} \${{ matrix.n }}
    runs-on:
      - \${{ inputs.os }}
      - x-\${{ format('{0}-{1}', inputs.os, github.ref_name) }}
    strategy:
      max-parallel: \${{ inputs.par }}
      matrix:
        n: \${{ fromJSON(inputs.list) }}
    steps:
      - if: inputs.flag
        run: echo \${{ inputs.flag && 'yes' || 'no' }}
`;

describe('reusable workflows: the inputs context', () => {
  it('finds the contexts an expression reads and binds one to literals', () => {
    assert.deepEqual(
      contextRefs("inputs.a == 'inputs.b' && INPUTS['c'] || toJSON(inputs) || github.inputs.d").map((r) => [
        r.name,
        r.key,
      ]),
      [
        ['inputs', 'a'],
        ['inputs', 'c'],
        ['inputs', undefined],
        ['github', 'inputs'],
      ],
    );
    const values = { a: "o'k", c: 3, flag: false };
    assert.equal(
      bindContext("inputs.a == 'inputs.b' && INPUTS['C'] || toJSON(inputs)", 'inputs', values),
      `'o''k' == 'inputs.b' && 3 || toJSON(fromJSON('{"a":"o''k","c":3,"flag":false}'))`,
    );
    assert.equal(bindContext('inputs.nope', 'inputs', values), 'null');
    // Unreadable expressions are left to the runner, which says why.
    assert.equal(exprWithInputs("inputs.a == 'x", values), "inputs.a == 'x");
  });

  it('evaluates inputs as typed values wherever an expression is', () => {
    const inputs = { name: 'n', flag: false, on: true, count: 2 };
    const run = (e: string) => evaluate(exprWithInputs(e, inputs), ctx());
    assert.equal(run("format('{0}-x', inputs.name)"), 'n-x');
    assert.equal(run("inputs.flag && 'a' || 'b'"), 'b');
    assert.equal(run("inputs.on && 'a' || 'b'"), 'a');
    assert.equal(run('inputs.count == 2 && inputs.count > 1'), true);
    assert.equal(run("inputs['name']"), 'n');
    assert.equal(condition(exprWithInputs('inputs.flag', inputs), ctx()), false, 'a false input is falsy');
    assert.equal(condition(exprWithInputs('${{ !inputs.flag }}', inputs), ctx()), true);
    const payload = payloadWithInputs(
      [
        'env: { W: "${{ inputs.name }}-w" }',
        'jobs:',
        '  j:',
        '    runs-on: ${{ inputs.name }}',
        '    if: inputs.on',
        '    env: { E: "e-${{ inputs.count }}" }',
        '    steps:',
        '      - if: ${{ inputs.flag }}',
        "        run: echo ${{ format('{0}/{1}', inputs.name, inputs.count) }} ${{ toJSON(inputs) }}",
        "        with: { a: \"${{ inputs.flag && 'y' || 'n' }}\" }",
        '',
      ].join('\n'),
      inputs,
    );
    const doc = parse(payload) as {
      env: { W: string };
      jobs: {
        j: {
          'runs-on': string;
          if: string;
          env: { E: string };
          steps: Array<{ if: string; run: string; with: { a: string } }>;
        };
      };
    };
    const j = doc.jobs.j;
    const show = (s: string) => interpolate(s, ctx());
    assert.equal(show(doc.env.W), 'n-w');
    assert.equal(show(j['runs-on']), 'n');
    assert.equal(condition(j.if, ctx()), true);
    assert.equal(show(j.env.E), 'e-2');
    assert.equal(condition(j.steps[0]!.if, ctx()), false);
    assert.equal(show(j.steps[0]!.with.a), 'n');
    assert.match(show(j.steps[0]!.run), /^echo n\/2 \{\n {2}"name": "n",/);
  });

  it('reads the inputs known at creation in runs-on, name and strategy of the called jobs', async () => {
    const wf = parseWorkflow(
      [
        'on: push',
        'jobs:',
        '  setup: { runs-on: x, steps: [] }',
        '  call:',
        '    uses: ./.forgejo/workflows/build.yml',
        "    with: { os: '${{ github.ref_name }}', list: '[1, 2, 3]', par: 2, flag: true }",
        '',
      ].join('\n'),
      'ci.yml',
    );
    const base = { github: { ref_name: 'main', event_name: 'push' }, inputs: {} };
    const jobs = await expandCalls(wf, site, loader({ '.forgejo/workflows/build.yml': BUILD }), base);
    const called = jobs.filter((j) => j.jobId === 'call/b');
    assert.deepEqual(
      called.map((j) => [j.name, j.runsOn, j.maxParallel]),
      [
        ['call / build main 1', ['main', 'x-main-main'], 2],
        ['call / build main 2', ['main', 'x-main-main'], 2],
        ['call / build main 3', ['main', 'x-main-main'], 2],
      ],
    );
    assert.ok(called.every((j) => j.maxParallelExpr === undefined));
    // Read alone, its max-parallel waits for the inputs (the service fails a run left with one).
    const alone = parseWorkflow(BUILD, 'build.yml').jobs[0]!;
    assert.deepEqual([alone.maxParallel, alone.maxParallelExpr], [0, '${{ inputs.par }}']);
    // Steps keep their expressions: the runner evaluates them with the inputs when it runs.
    assert.match(called[0]!.payload, /if: inputs.flag/);

    // An input that needs a job's outputs is had only when the job runs: runs-on cannot read it.
    const late = parseWorkflow(
      [
        'on: push',
        'jobs:',
        '  setup: { runs-on: x, steps: [] }',
        '  call:',
        '    needs: setup',
        '    uses: ./.forgejo/workflows/build.yml',
        "    with: { os: '${{ needs.setup.outputs.os }}' }",
        '',
      ].join('\n'),
      'ci.yml',
    );
    await assert.rejects(
      expandCalls(late, site, loader({ '.forgejo/workflows/build.yml': BUILD }), base),
      /jobs\.b\.runs-on reads inputs\.os, which is had only when the job runs/,
    );
    const badList = parseWorkflow(
      "on: push\njobs:\n  call:\n    uses: ./.forgejo/workflows/build.yml\n    with: { list: 'nope' }\n",
      'ci.yml',
    );
    await assert.rejects(
      expandCalls(badList, site, loader({ '.forgejo/workflows/build.yml': BUILD }), base),
      /jobs\.b\.strategy: fromJSON: not JSON/,
    );
  });

  it('knows the inputs whose values need only the matrix, github and known inputs', () => {
    const spec = parseWorkflow(BUILD, 'b.yml').triggers.workflow_call!;
    const call = {
      uses: '',
      with: { os: '${{ matrix.os }}-${{ inputs.up }}', list: '${{ needs.a.outputs.l }}', flag: 'true' },
      secrets: {},
      if: '',
      matrix: { os: 'deb' },
    };
    assert.deepEqual(knownInputs(call, spec, { up: 'u' }, { github: {}, inputs: {} }), {
      os: 'deb-u',
      par: 0,
      flag: true,
    });
    // An input of the caller not known makes it unknown too.
    assert.deepEqual(Object.keys(knownInputs(call, spec, {}, { github: {}, inputs: {} })), ['par', 'flag']);
  });
});

describe('reusable workflows: the strategy of a matrix of calls', () => {
  const LEAF = `on: workflow_call
jobs:
  a: { runs-on: x, steps: [] }
  b: { runs-on: x, needs: a, steps: [] }
`;
  const expand = (strategy: string) =>
    expandCalls(
      parseWorkflow(
        `on: push\njobs:\n  m:\n    strategy: { ${strategy}matrix: { n: [1, 2, 3] } }\n    uses: ./.forgejo/workflows/leaf.yml\n`,
        'ci.yml',
      ),
      site,
      loader({ '.forgejo/workflows/leaf.yml': LEAF }),
    );

  it('numbers the calls and keeps their caller strategy', async () => {
    const jobs = await expand('max-parallel: 2, fail-fast: false, ');
    assert.deepEqual(
      jobs.map((j) => [j.jobId, j.frames[0]!.leg, j.frames[0]!.maxParallel, j.frames[0]!.failFast]),
      [
        ['m/a', 0, 2, false],
        ['m/b', 0, 2, false],
        ['m/a', 1, 2, false],
        ['m/b', 1, 2, false],
        ['m/a', 2, 2, false],
        ['m/b', 2, 2, false],
      ],
    );
  });

  it('starts at most max-parallel calls at once; a call under way goes on', async () => {
    const jobs = await expand('max-parallel: 2, ');
    const state = (statuses: string[]): CallJobState[] =>
      jobs.map((j: RunJob, i) => ({ frames: j.frames, status: statuses[i] ?? 'blocked' }));
    // As the run is made: the first jobs of calls 0 and 1 wait, call 2 does not start.
    assert.equal(callWaits(jobs[0]!.frames, []), false);
    assert.equal(callWaits(jobs[2]!.frames, state(['waiting', 'blocked'])), false);
    assert.equal(callWaits(jobs[4]!.frames, state(['waiting', 'blocked', 'waiting', 'blocked'])), true);
    // Call 0's second job may start while call 2 waits: call 0 is under way.
    const mid = state(['success', 'blocked', 'running', 'blocked', 'blocked', 'blocked']);
    assert.equal(callWaits(jobs[1]!.frames, mid), false);
    assert.equal(callWaits(jobs[4]!.frames, mid), true);
    // Once call 0 ended, call 2 starts.
    const later = state(['success', 'failure', 'running', 'blocked', 'blocked', 'blocked']);
    assert.equal(callWaits(jobs[4]!.frames, later), false);
    // Without max-parallel nothing waits.
    const free = await expand('');
    assert.equal(callWaits(free[4]!.frames, state(['running', 'blocked', 'running', 'blocked'])), false);
  });

  it('with fail-fast, a failed job cancels the other calls, not its own', async () => {
    const jobs = await expand('');
    assert.equal(cancelledByCall(jobs[0]!.frames, jobs[2]!.frames), true);
    assert.equal(cancelledByCall(jobs[0]!.frames, jobs[5]!.frames), true);
    assert.equal(cancelledByCall(jobs[0]!.frames, jobs[1]!.frames), false);
    assert.equal(cancelledByCall(jobs[0]!.frames, []), false);
    const off = await expand('fail-fast: false, ');
    assert.equal(cancelledByCall(off[0]!.frames, off[2]!.frames), false);
  });
});
