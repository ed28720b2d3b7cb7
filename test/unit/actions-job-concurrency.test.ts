// Job-level `concurrency:`: how it is read from a workflow (matrix values in the group) and what a
// job entering its group does to the group's other jobs (src/actions/job-concurrency.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideEntry } from '../../src/actions/job-concurrency.js';
import { groupOf, type RunEvent } from '../../src/actions/run-create.js';
import { parseWorkflow, WorkflowError } from '../../src/actions/workflow.js';

const job = (id: number, status: string, held = 0) => ({ id, status, concurrency_held: held });

describe('job-level concurrency', () => {
  it('reads a job group with the matrix values in it', () => {
    const wf = parseWorkflow(
      `on: push
jobs:
  plain:
    runs-on: x
    steps: [{ run: 'true' }]
  named:
    runs-on: x
    concurrency: deploy
    steps: [{ run: 'true' }]
  legs:
    runs-on: x
    strategy: { matrix: { os: [a, b] } }
    concurrency: { group: 'legs-\${{ matrix.os }}-\${{ github.ref }}', cancel-in-progress: true }
    steps: [{ run: 'true' }]
`,
      'w.yml',
    );
    assert.equal(wf.jobs[0]!.concurrency, undefined);
    assert.deepEqual(wf.jobs[1]!.concurrency, { group: 'deploy', cancelInProgress: false });
    assert.deepEqual(
      wf.jobs.slice(2).map((j) => j.concurrency),
      [
        { group: 'legs-a-${{ github.ref }}', cancelInProgress: true },
        { group: 'legs-b-${{ github.ref }}', cancelInProgress: true },
      ],
    );
    // The github and inputs contexts are evaluated when the run is created.
    const ev: RunEvent = {
      event: 'workflow_dispatch',
      ref: 'refs/heads/main',
      sha: 'abc',
      triggerUserId: 1,
      title: 't',
      payload: { inputs: { env: 'prod' } },
    };
    const run = { id: 7, run_number: 3 };
    assert.equal(groupOf(wf, ev, 'o/r', run, wf.jobs[2]!.concurrency), 'legs-a-refs/heads/main');
    assert.equal(
      groupOf(wf, ev, 'o/r', run, {
        group: '${{ inputs.env }}-${{ github.run_number }}',
        cancelInProgress: false,
      }),
      'prod-3',
    );
    assert.equal(groupOf(wf, ev, 'o/r', run, undefined), '');
  });

  it('refuses a job concurrency that is not a group', () => {
    assert.throws(
      () =>
        parseWorkflow(
          'on: push\njobs:\n  j:\n    runs-on: x\n    concurrency: [1]\n    steps: []\n',
          'w.yml',
        ),
      (err: unknown) => err instanceof WorkflowError && /jobs\.j\.concurrency/.test(err.message),
    );
  });

  it('waits while another job of the group waits or runs, and replaces a held one', () => {
    assert.deepEqual(decideEntry(false, []), { cancel: [], wait: false });
    assert.deepEqual(decideEntry(false, [job(1, 'running')]), { cancel: [], wait: true });
    assert.deepEqual(decideEntry(false, [job(1, 'waiting'), job(2, 'blocked', 1)]), {
      cancel: [2],
      wait: true,
    });
    // A job blocked by its needs has not entered the group: it neither holds nor is replaced.
    assert.deepEqual(decideEntry(false, [job(3, 'blocked', 0)]), { cancel: [], wait: false });
    // Ended jobs do not count.
    assert.deepEqual(decideEntry(false, [job(4, 'success'), job(5, 'cancelled')]), {
      cancel: [],
      wait: false,
    });
  });

  it('with cancel-in-progress cancels every open job of the group and does not wait', () => {
    assert.deepEqual(decideEntry(true, [job(1, 'running'), job(2, 'waiting'), job(3, 'blocked', 1)]), {
      cancel: [1, 2, 3],
      wait: false,
    });
  });
});
