// `npm test`: build, then run every test file with Node's test runner, as bundled in
// dist/test-bundle (scripts/build.js; the same files as dist/test, in a few chunks).
// Set ANVIL__DATABASE__DB_TYPE=postgres (and ANVIL__DATABASE__NAME, HOST, USER) to run the same
// suite against PostgreSQL; each test server then makes and drops a database of its own.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildAll } from './build.js';
import { ensurePrerequisites } from './prerequisites.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The real clients the tests drive (git-lfs, twine, mvn, chromium, ...): installed when this can,
// else one message naming what to install, before anything is built.
ensurePrerequisites();
// The same build as `npm start`: the CLI tests run the bundled CLI, as users do.
const built = await buildAll();
if (built !== 0) process.exit(built);

/** Every *.test.js under dir (helpers and fixtures are not tests). */
function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? testFiles(p) : e.name.endsWith('.test.js') ? [p] : [];
  });
}

// Files that touch no database: run once, on SQLite (CI's first pass), not again on PostgreSQL
// and MariaDB. test/unit is pure logic by definition; the few integration files listed drive
// tools only.
const DATABASE_FREE = ['unit/', 'integration/prerequisites.test.js'];
const otherDatabase = ['postgres', 'postgresql', 'mysql', 'mariadb'].includes(
  (process.env.ANVIL__DATABASE__DB_TYPE ?? '').toLowerCase(),
);

// On PostgreSQL, the test servers' commits do not wait for the WAL to reach the disk (about 2 ms
// a commit on this machine's disk, thousands of commits a pass). Only a crash of PostgreSQL itself
// could lose such a commit; the crash tests kill Anvil, whose guarantees are the same either way.
if (/^postgres(ql)?$/i.test(process.env.ANVIL__DATABASE__DB_TYPE ?? '')) {
  process.env.PGOPTIONS ??= '-c synchronous_commit=off';
}

const args = process.argv.slice(2);
const targets = args.length
  ? args.map((a) => path.resolve(root, 'dist', a.replace(/^test\//, 'test-bundle/').replace(/\.ts$/, '.js')))
  : testFiles(path.join(root, 'dist', 'test-bundle'))
      .sort()
      .filter((f) => {
        const rel = path
          .relative(path.join(root, 'dist', 'test-bundle'), f)
          .split(path.sep)
          .join('/');
        return !(otherDatabase && DATABASE_FREE.some((p) => rel.startsWith(p)));
      });
// One migrated database (or SQLite file) per run, copied by each test server (test/helpers/template.ts).
const { makeTemplate, TEMPLATE_ENV } = await import(
  pathToFileURL(path.join(root, 'dist', 'test', 'helpers', 'template.js')).href
);
const template = await makeTemplate(process.env);
if (otherDatabase && !args.length) {
  console.log(`npm test: ${DATABASE_FREE.join(', ')} touch no database; they run on the SQLite pass only`);
}
const child = spawn(
  process.execPath,
  [
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${path.join(root, 'scripts', 'test-durations.js')}`,
    '--test-reporter-destination=stdout',
    `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
    // A test that hangs (a child process or a socket that never ends) fails by name after this
    // long instead of holding the run until CI's limit. (--test-force-exit is not used: it ends
    // the runner before its reporters have written everything.)
    `--test-timeout=${process.env.TEST_TIMEOUT_MS ?? 600_000}`,
    ...targets,
  ],
  { stdio: 'inherit', cwd: root, env: { ...process.env, [TEMPLATE_ENV]: template.value } },
);
// Ctrl-C reaches the runner too; wait for it, so that the template is still dropped.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
const status = await new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
await template.drop();
process.exit(status);
