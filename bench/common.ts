// What the benchmarks share: waiting for a started server, and percentiles of latencies.

/** Resolves once `url` answers 200; throws after `deadlineMs`. */
export async function waitFor200(url: string, deadlineMs = 20_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`no 200 from ${url}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The `p`th percentile of `values` (ms), to two decimals. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2));
}
