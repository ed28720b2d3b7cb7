// A second reporter for `npm test` (scripts/test.js adds it): after the run, the slowest test
// files with their wall time (process start to exit, as the runner measures a file), so where the
// suite's time goes is visible in every log. ANVIL_TEST_DURATIONS=<file> also writes every file's
// time there, slowest first, one "seconds<TAB>file" a line.
import fs from 'node:fs';
import path from 'node:path';

const SHOWN = 10;

export default async function* durations(source) {
  /** file -> milliseconds */
  const files = new Map();
  for await (const event of source) {
    // The runner reports each file as a test of its own named by its path, at nesting 0.
    if (event.type !== 'test:complete' && event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, file, nesting, details } = event.data;
    if (nesting !== 0 || !file || name !== file) continue;
    files.set(file, details?.duration_ms ?? 0);
  }
  const rows = [...files].sort((a, b) => b[1] - a[1]);
  // dist/test-bundle/x.test.js is test/x.test.ts to whoever reads the log.
  const rel = (f) =>
    path
      .relative(path.join(process.cwd(), 'dist'), f)
      .replace(/^test-bundle\//, 'test/')
      .replace(/\.js$/, '.ts');
  const out = process.env.ANVIL_TEST_DURATIONS;
  if (out) {
    fs.writeFileSync(out, rows.map(([f, ms]) => `${(ms / 1000).toFixed(1)}\t${rel(f)}\n`).join(''));
  }
  if (rows.length < 2) return;
  yield `\nslowest test files (of ${rows.length}):\n`;
  for (const [f, ms] of rows.slice(0, SHOWN)) yield `${(ms / 1000).toFixed(1).padStart(7)}s  ${rel(f)}\n`;
}
