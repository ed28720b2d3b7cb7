// Where `anvil web` writes its log lines: standard output, in a way that can never hold the
// process up. pino's own destination for it (sonic-boom) flushes synchronously when the process
// exits and retries a write that failed for as long as it fails: with its output a pipe that
// nobody reads any more, or nobody holds any more (EPIPE), a process told to stop never ended.
// Here lines go through `process.stdout`, which libuv writes without blocking (a pipe is made
// non-blocking; what the pipe cannot take waits in memory, and an exit drops it). Lines beyond
// `maxQueued` bytes waiting are dropped and counted; once the output has failed (EPIPE) every
// line is dropped; and nothing is written at exit.
import type { Writable } from 'node:stream';

/** Bytes of log lines kept waiting for a slow reader before lines are dropped. */
const MAX_QUEUED = 8 << 20;

export class LogOutput {
  private broken = false;
  private dropped = 0;

  constructor(
    private readonly out: Writable = process.stdout,
    private readonly maxQueued = MAX_QUEUED,
  ) {
    // A write that failed (EPIPE: the reading end is gone) ends the output, never the process.
    out.on('error', () => {
      this.broken = true;
    });
  }

  /** pino's destination: one line. */
  write(line: string): void {
    if (this.broken || this.out.destroyed) return;
    if (this.out.writableLength + line.length > this.maxQueued) {
      this.dropped++;
      return;
    }
    if (this.dropped) {
      const note = `${this.dropped} log line(s) dropped: the log output was not being read`;
      this.dropped = 0;
      this.out.write(`${JSON.stringify({ level: 40, time: Date.now(), msg: note })}\n`);
    }
    this.out.write(line);
  }

  /** Resolves once the lines written so far are out (or the output has failed), or after `ms`. */
  async drained(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.broken && !this.out.destroyed && this.out.writableLength > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
