// The hard deadline of a stopping `anvil web` ([server] GRACEFUL_HAMMER_TIME): whatever a
// connection, a background task or the log output does, the process ends by then.
//
// A timer that keeps the process alive (not unref'd) says why and exits. Should the event loop
// never come back to run it (something synchronous that does not return), a watchdog thread of
// its own kills the process a little later.
import { Worker } from 'node:worker_threads';

/** How long after the deadline the watchdog kills a process whose event loop never came back. */
const WATCHDOG_SLACK_MS = 5_000;

/** The watchdog: sleeps (its own thread), then SIGKILLs the process. */
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms);
process.kill(workerData.pid, 'SIGKILL');
`;

/**
 * Arms the deadline: after `ms`, `onDeadline` runs (it says why) and the process exits with
 * status 1 once `beforeExit` resolves (bounded by the caller); the watchdog follows
 * `WATCHDOG_SLACK_MS` later.
 */
export function armDeadline(ms: number, onDeadline: () => void, beforeExit: () => Promise<void>): void {
  setTimeout(() => {
    try {
      onDeadline();
    } finally {
      void beforeExit().finally(() => process.exit(1));
    }
  }, ms);
  try {
    const watchdog = new Worker(WATCHDOG, {
      eval: true,
      workerData: { ms: ms + WATCHDOG_SLACK_MS, pid: process.pid },
    });
    watchdog.unref();
    watchdog.on('error', () => undefined);
  } catch {
    // No thread to spare: the timer alone keeps the deadline.
  }
}
