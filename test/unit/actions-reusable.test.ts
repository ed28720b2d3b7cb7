// Reusable workflows: parsing `on.workflow_call` and calling jobs (workflow.ts), the expansion of
// calls into a run's jobs (reusable.ts, with an in-memory loader), and what a called job gets when
// a runner takes it (reusable-task.ts): needs, inputs, secrets, the caller's `if`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { parseWorkflow, WorkflowError, type Workflow } from '../../src/actions/workflow.js';
import {
  checkCall,
  coversKey,
  expandCalls,
  parseUses,
  type CallRef,
  type CallSite,
  type LoadWorkflow,
} from '../../src/actions/reusable.js';
import {
  exprWithInputs,
  needData,
  needsContext,
  payloadWithInputs,
  resolveFrames,
  type RunJobView,
} from '../../src/actions/reusable-task.js';

const REUSABLE = `on:
  workflow_call:
    inputs:
      who: { type: string, required: true }
      times: { type: number, default: 2 }
      loud: { type: boolean }
    secrets:
      token: { required: true }
    outputs:
      greeting:
        value: \${{ jobs.greet.outputs.text }}
jobs:
  prep:
    runs-on: x
    steps: [{ run: 'true' }]
  greet:
    needs: prep
    runs-on: x
    outputs: { text: '\${{ steps.s.outputs.text }}' }
    steps:
      - id: s
        if: inputs.loud
        run: echo "\${{ inputs.who }} \${{ inputs.times }}"
`;

/** A loader over in-memory files of repository 1 at commit "c". */
function loader(files: Record<string, string>): LoadWorkflow {
  return async (ref: CallRef, from: CallSite) => {
    const path = ref.kind === 'local' ? ref.path : `${ref.owner}/${ref.repo}/${ref.path}`;
    const content = files[path];
    if (content === undefined) throw new WorkflowError(`${path}: the workflow file does not exist`);
    return {
      site: { repoId: from.repoId, commit: from.commit, path },
      wf: parseWorkflow(content, path),
      content,
    };
  };
}
const site: CallSite = { repoId: 1, commit: 'c', path: '.forgejo/workflows/ci.yml' };
const caller = (jobs: string) => parseWorkflow(`on: push\njobs:\n${jobs}`, 'ci.yml');

describe('reusable workflows', () => {
  it('parses on.workflow_call and calling jobs', () => {
    const wf = parseWorkflow(REUSABLE, 'r.yml');
    assert.deepEqual(wf.triggers.workflow_call?.inputs['times'], {
      type: 'number',
      required: false,
      default: 2,
    });
    assert.deepEqual(wf.triggers.workflow_call?.secrets, { TOKEN: { required: true } });
    assert.equal(wf.triggers.workflow_call?.outputs['greeting'], '${{ jobs.greet.outputs.text }}');
    assert.equal(wf.triggers.push, undefined, 'a workflow_call-only file does not run on push');
    const c = caller(
      "  a:\n    if: github.ref == 'x'\n    uses: ./.forgejo/workflows/r.yml\n    with: { who: w, times: 3 }\n    secrets: inherit\n",
    );
    assert.deepEqual(c.jobs[0]!.call, {
      uses: './.forgejo/workflows/r.yml',
      with: { who: 'w', times: 3 },
      secrets: 'inherit',
      if: "github.ref == 'x'",
      matrix: undefined,
    });
    assert.throws(
      () =>
        parseWorkflow(
          'on:\n  workflow_call:\n    inputs:\n      a: { type: choice }\njobs: { j: { runs-on: x } }',
          'r.yml',
        ),
      /string, number or boolean/,
    );
    assert.throws(
      () => caller('  a:\n    uses: ./.forgejo/workflows/r.yml\n    steps: []\n'),
      /both uses and steps/,
    );
  });

  it('reads uses references', () => {
    assert.deepEqual(parseUses('./.gitea/workflows/x.yaml', 'j'), {
      kind: 'local',
      path: '.gitea/workflows/x.yaml',
    });
    assert.deepEqual(parseUses('o/r/.github/workflows/x.yml@v1', 'j'), {
      kind: 'remote',
      owner: 'o',
      repo: 'r',
      path: '.github/workflows/x.yml',
      ref: 'v1',
    });
    for (const bad of [
      'actions/checkout@v4',
      './x.yml',
      'o/r/.forgejo/workflows/x.yml',
      './.forgejo/workflows/a/b.yml',
    ]) {
      assert.throws(() => parseUses(bad, 'j'), /is not a reusable workflow/, bad);
    }
  });

  it('checks a call against the inputs and secrets of the called workflow', () => {
    const spec = parseWorkflow(REUSABLE, 'r.yml').triggers.workflow_call!;
    const call = { uses: '', with: { who: 'w' }, secrets: { TOKEN: 't' }, if: '', matrix: undefined };
    checkCall(call, spec, 'a', 'r.yml');
    assert.throws(() => checkCall({ ...call, with: {} }, spec, 'a', 'r.yml'), /required input "who"/);
    assert.throws(
      () => checkCall({ ...call, with: { who: 'w', bogus: 1 } }, spec, 'a', 'r.yml'),
      /"bogus" is not an input/,
    );
    assert.throws(
      () => checkCall({ ...call, with: { who: 'w', times: 'x' } }, spec, 'a', 'r.yml'),
      /must be a number/,
    );
    assert.throws(
      () => checkCall({ ...call, with: { who: 'w', loud: 'yes' } }, spec, 'a', 'r.yml'),
      /must be a boolean/,
    );
    checkCall({ ...call, with: { who: 'w', times: '${{ matrix.n }}' } }, spec, 'a', 'r.yml');
    assert.throws(() => checkCall({ ...call, secrets: {} }, spec, 'a', 'r.yml'), /required secret TOKEN/);
    assert.throws(
      () => checkCall({ ...call, secrets: { TOKEN: 'a', X: 'b' } }, spec, 'a', 'r.yml'),
      /secret X is not/,
    );
    checkCall({ ...call, secrets: 'inherit' }, spec, 'a', 'r.yml');
  });

  it('expands calls into the run with keys, names and needs rewired', async () => {
    const wf: Workflow = caller(
      [
        '  setup: { runs-on: x, steps: [] }',
        '  call:',
        '    needs: setup',
        '    strategy: { matrix: { n: [1, 2] } }',
        '    uses: ./.forgejo/workflows/r.yml',
        "    with: { who: 'leg${{ matrix.n }}' }",
        '    secrets: { token: "${{ secrets.T }}" }',
        '  after: { needs: call, runs-on: x, steps: [] }',
        '',
      ].join('\n'),
    );
    const jobs = await expandCalls(wf, site, loader({ '.forgejo/workflows/r.yml': REUSABLE }));
    assert.deepEqual(
      jobs.map((j) => [j.jobId, j.name, j.needs]),
      [
        ['setup', 'setup', []],
        ['call/prep', 'call (1) / prep', ['setup']],
        ['call/greet', 'call (1) / greet', ['call/prep', 'setup']],
        ['call/prep', 'call (2) / prep', ['setup']],
        ['call/greet', 'call (2) / greet', ['call/prep', 'setup']],
        ['after', 'after', ['call']],
      ],
    );
    assert.deepEqual(jobs[1]!.frames[0]!.matrix, { n: 1 });
    assert.equal(jobs[0]!.frames.length, 0);
    assert.ok(coversKey('call', 'call/greet') && coversKey('call', 'call') && !coversKey('call', 'caller'));
  });

  it('refuses missing files, wrong triggers, cycles and nesting deeper than four levels', async () => {
    const call = (to: string) => `  c:\n    uses: ./.forgejo/workflows/${to}.yml\n`;
    const callable = (to: string) => `on: workflow_call\njobs:\n${call(to)}`;
    const go = (jobs: string, files: Record<string, string>) =>
      expandCalls(caller(jobs), site, loader(files));
    await assert.rejects(go(call('none'), {}), /does not exist/);
    await assert.rejects(go(call('r'), { '.forgejo/workflows/r.yml': REUSABLE }), /required input "who"/);
    await assert.rejects(
      go(call('p'), { '.forgejo/workflows/p.yml': 'on: push\njobs: { j: { runs-on: x, steps: [] } }' }),
      /has no workflow_call trigger/,
    );
    await assert.rejects(
      go(call('a'), { '.forgejo/workflows/a.yml': callable('b'), '.forgejo/workflows/b.yml': callable('a') }),
      /cycle/,
    );
    const leaf = 'on: workflow_call\njobs: { j: { runs-on: x, steps: [] } }';
    const chain = {
      '.forgejo/workflows/d2.yml': callable('d3'),
      '.forgejo/workflows/d3.yml': callable('d4'),
      '.forgejo/workflows/d4.yml': leaf,
    };
    const ok = await go(call('d2'), chain);
    assert.deepEqual(
      ok.map((j) => j.jobId),
      ['c/c/c/j'],
      'four levels are allowed',
    );
    await assert.rejects(
      go(call('d2'), {
        ...chain,
        '.forgejo/workflows/d4.yml': callable('d5'),
        '.forgejo/workflows/d5.yml': leaf,
      }),
      /nest at most 4 levels/,
    );
  });

  it('gives called jobs their needs, inputs and secrets, and skips them when the caller says so', async () => {
    const wf = caller(
      '  setup: { runs-on: x, steps: [] }\n  call:\n    needs: setup\n    uses: ./.forgejo/workflows/r.yml\n    with: { who: "${{ needs.setup.outputs.who }}", loud: true }\n    secrets: { token: "${{ secrets.T }}" }\n',
    );
    const jobs = await expandCalls(wf, site, loader({ '.forgejo/workflows/r.yml': REUSABLE }));
    const outs: Record<string, Record<string, string>> = {
      setup: { who: 'world' },
      'call/greet': { text: 'hi' },
    };
    const views: RunJobView[] = jobs.map((j) => ({
      job_id: j.jobId,
      status: 'success',
      outputs: outs[j.jobId] ?? {},
      frames: j.frames,
    }));
    const greet = jobs.find((j) => j.jobId === 'call/greet')!;
    // Its needs are its workflow's, by their names there.
    assert.deepEqual(Object.keys(needsContext(views, greet.needs, 'call/')), ['prep']);
    // The caller's outputs and result, for the jobs that need it.
    assert.deepEqual(needData(views, 'call'), { outputs: { greeting: 'hi' }, result: 'success' });
    const base = {
      github: { ref: 'refs/heads/main', event_name: 'push' },
      vars: {},
      secrets: { T: 't0ken', OTHER: 'no' },
      inputs: {},
    };
    const needsOf = (keys: string[], prefix: string) => needsContext(views, keys, prefix);
    const r = resolveFrames(greet.frames, base, needsOf);
    assert.deepEqual(r, {
      skip: false,
      inputs: { who: 'world', times: 2, loud: true },
      secrets: { TOKEN: 't0ken' },
    });
    const frames = [{ ...greet.frames[0]!, if: "github.ref == 'refs/heads/other'" }];
    assert.deepEqual(resolveFrames(frames, base, needsOf), { skip: true });
    const inherit = [{ ...greet.frames[0]!, secrets: 'inherit' as const }];
    assert.deepEqual((resolveFrames(inherit, base, needsOf) as { secrets: unknown }).secrets, base.secrets);
    const badType = [{ ...greet.frames[0]!, with: { who: 'w', times: '${{ github.ref }}' } }];
    assert.throws(() => resolveFrames(badType, base, needsOf), /must be a number/);
  });

  it('replaces inputs.x in expressions by literals', () => {
    const inputs = { who: "o'k", n: 3, on: false };
    assert.equal(
      exprWithInputs(" inputs.who == 'inputs.who' && inputs.n ", inputs),
      " 'o''k' == 'inputs.who' && 3 ",
    );
    assert.equal(exprWithInputs('inputs.missing || github.inputs.x', inputs), 'null || github.inputs.x');
    const doc = parse(
      payloadWithInputs(
        'jobs:\n  j:\n    steps:\n      - if: inputs.on\n        run: echo ${{ inputs.who }}\n',
        inputs,
      ),
    ) as { jobs: { j: { steps: Array<{ if: string; run: string }> } } };
    assert.deepEqual(doc.jobs.j.steps[0], { if: 'false', run: "echo ${{ 'o''k' }}" });
  });
});
