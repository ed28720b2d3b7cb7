// Fault points for the crash tests: `faultPoint('merge:ref-moved')` kills this process with
// SIGKILL when the environment says ANVIL_TEST_FAULT=merge:ref-moved, so a test can stop a real
// server exactly between two steps of a change and check what the next start makes of it.
// Outside those tests the variable is unset and a fault point is one string comparison.
const armed = process.env['ANVIL_TEST_FAULT'] ?? '';
/** With ANVIL_TEST_FAULT_SIGNAL=SIGTERM the point asks the process to stop gracefully instead. */
const gentle = process.env['ANVIL_TEST_FAULT_SIGNAL'] === 'SIGTERM';

export function faultPoint(name: string): void {
  if (armed !== name) return;
  if (gentle) {
    process.stderr.write(`anvil: fault point ${name} reached, sending SIGTERM to this process\n`);
    process.kill(process.pid, 'SIGTERM');
    return;
  }
  process.stderr.write(`anvil: fault point ${name} reached, killing this process\n`);
  process.kill(process.pid, 'SIGKILL');
  // The signal is delivered asynchronously: take no further step meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000);
}
