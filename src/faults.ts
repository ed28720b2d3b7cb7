// Fault points for the crash tests: `faultPoint('merge:ref-moved')` kills this process with
// SIGKILL when the environment says ANVIL_TEST_FAULT=merge:ref-moved, so a test can stop a real
// server exactly between two steps of a change and check what the next start makes of it. With
// ANVIL_TEST_FAULT_FILE=<path> the point armed is the one that file names when the point is
// reached, so a test can arm a server that is already running (one start per crash, not two).
// Outside those tests both variables are unset and a fault point is one string comparison.
import fs from 'node:fs';

const armed = process.env['ANVIL_TEST_FAULT'] ?? '';
const armFile = process.env['ANVIL_TEST_FAULT_FILE'];
/** With ANVIL_TEST_FAULT_SIGNAL=SIGTERM the point asks the process to stop gracefully instead. */
const gentle = process.env['ANVIL_TEST_FAULT_SIGNAL'] === 'SIGTERM';

function armedNow(): string {
  try {
    return fs.readFileSync(armFile!, 'utf8').trim() || armed;
  } catch {
    return armed;
  }
}

export function faultPoint(name: string): void {
  if (armFile === undefined ? armed !== name : armedNow() !== name) return;
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
