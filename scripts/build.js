// `npm run build`: compiles the TypeScript sources into dist/ (what the tests import), then bundles
// the CLI and the git hook into dist/bundle/ (what `anvil` and `npm start` run). A few chunks instead
// of some 1,400 modules to resolve and read halve start-up time and save memory.
// Native addons, and packages that find files next to their own code, stay in node_modules.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const EXTERNAL = [
  'better-sqlite3',
  'better-sqlite3-napi',
  'argon2',
  'pg',
  'mysql2',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'ssh2',
];

/** What the build reads: a change to the content of any of these makes the next build run (contents, not
 * times: a copy made by tar keeps times only to the second). */
function inputsDigest() {
  const h = crypto.createHash('sha256');
  const walk = (dir) => {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|js|json|cjs|mjs)$/.test(e.name)) {
        h.update(`${path.relative(root, p)}\0`)
          .update(fs.readFileSync(p))
          .update('\n');
      }
    }
  };
  for (const d of ['src', 'test', 'bench']) walk(path.join(root, d));
  for (const f of ['tsconfig.json', 'package-lock.json', 'scripts/build.js']) {
    h.update(`${f}\0`)
      .update(fs.readFileSync(path.join(root, f)))
      .update('\n');
  }
  return h.digest('hex');
}

const STAMP = path.join(root, 'dist', '.build-inputs');

/**
 * Builds dist/ (and the bundle), unless nothing it reads changed since the last build: CI runs
 * `npm test` once per database, and a second compile of unchanged sources costs half a minute.
 */
export async function buildAll({ bundle = true } = {}) {
  const digest = inputsDigest();
  const stamp = `${digest} ${bundle ? 'bundle' : 'tsc'}`;
  const previous = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8') : '';
  const bundled = fs.existsSync(path.join(root, 'dist', 'bundle', 'cli.js'));
  if ((previous === stamp && (bundled || !bundle)) || (!bundle && previous === `${digest} bundle`)) return 0;
  fs.rmSync(STAMP, { force: true });
  const status = await compileAndBundle(bundle);
  if (status === 0) fs.writeFileSync(STAMP, stamp);
  return status;
}

async function compileAndBundle(bundle) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  if (compiled.status !== 0) return compiled.status ?? 1;
  if (!bundle) return 0;
  const outdir = path.join(root, 'dist/bundle');
  const common = {
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    // Bundled CommonJS packages call require(); give the ES module one.
    banner: {
      js: "import { createRequire as __anvilRequire } from 'node:module'; const require = __anvilRequire(import.meta.url);",
    },
    // Smaller source to keep in memory and parse; identifiers stay, so stack traces still read.
    minifyWhitespace: true,
    minifySyntax: true,
    // Licence comments go to <file>.LEGAL.txt beside the bundle: they hold names outside ASCII.
    legalComments: 'external',
    logLevel: 'warning',
    metafile: true,
  };
  // The CLI is split: cli.js declares the commands, and each command's code (and what the server
  // loads with import()) is a chunk beside it, read only when it runs. `anvil keys` and `anvil
  // serv`, run per SSH operation, then parse a fraction of the 6 MB the whole server is.
  const cli = await build({
    ...common,
    entryPoints: { cli: path.join(root, 'dist/src/cli.js') },
    splitting: true,
    chunkNames: 'chunk-[hash]',
  });
  // Run by git for each push; src/git/pushes.ts finds it next to the code that names it. One file
  // of its own, sharing no chunk with the CLI.
  const hook = await build({
    ...common,
    entryPoints: { hook: path.join(root, 'dist/src/git/hook.js') },
  });
  const written = new Set(
    [...Object.keys(cli.metafile.outputs), ...Object.keys(hook.metafile.outputs)].map((f) =>
      path.basename(f),
    ),
  );
  // What earlier builds wrote and this one did not: licence files go, chunks once a day old (a
  // process started before a rebuild may still import its own).
  for (const file of fs.readdirSync(outdir)) {
    if (written.has(file)) continue;
    const p = path.join(outdir, file);
    if (file.endsWith('.LEGAL.txt')) fs.rmSync(p, { force: true });
    else if (/^chunk-.*\.js$/.test(file) && Date.now() - fs.statSync(p).mtimeMs > 24 * 3600_000) {
      fs.rmSync(p, { force: true });
    }
  }
  // V8 keeps a source with one character outside Latin-1 as two bytes per character: the CLI's
  // 6 MB would take 12 MB of every server's memory. esbuild escapes strings; a regular expression
  // or template needs \u escapes in the TypeScript.
  for (const file of [...written].filter((f) => f.endsWith('.js'))) {
    const text = fs.readFileSync(path.join(outdir, file), 'latin1');
    const at = text.search(/[\u0080-\u00ff]/);
    if (at >= 0) {
      console.error(
        `dist/bundle/${file}: a character outside ASCII near ${JSON.stringify(text.slice(at - 60, at + 20))}`,
      );
      return 1;
    }
  }
  return bundleTests(common);
}

/**
 * The test files bundled as the CLI is (dist/test-bundle/integration/x.test.js, shared code in
 * chunks/ beside them), what `npm test` runs: each test file is a process of its own, and reading
 * a few chunks instead of some 2,000 modules saves about a second of CPU per file. The layout keeps
 * every module three directories below the root, as in dist/test, so paths made from
 * import.meta.url (the bundled CLI, package.json) stay right; the git hook is copied next to
 * each output, as src/git/pushes.ts looks for it beside its own code.
 */
async function bundleTests(common) {
  const testRoot = path.join(root, 'dist', 'test');
  const outdir = path.join(root, 'dist', 'test-bundle');
  const entries = {};
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.test.js')) entries[path.relative(testRoot, p).replace(/\.js$/, '')] = p;
    }
  };
  walk(testRoot);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  fs.rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    ...common,
    outdir,
    entryPoints: entries,
    splitting: true,
    chunkNames: 'chunks/chunk-[hash]',
    // The test-only packages (playwright, s3rver, ...) are read from node_modules.
    external: [...EXTERNAL, ...Object.keys(pkg.devDependencies ?? {})],
    minifyWhitespace: false,
    minifySyntax: false,
    legalComments: 'none',
    metafile: false,
  });
  if (result.errors.length) return 1;
  const hook = fs.readFileSync(path.join(root, 'dist', 'bundle', 'hook.js'));
  const dirs = new Set();
  const collect = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) collect(path.join(dir, e.name));
      else if (e.name.endsWith('.js')) dirs.add(dir);
    }
  };
  collect(outdir);
  for (const dir of dirs) fs.writeFileSync(path.join(dir, 'hook.js'), hook);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(await buildAll());
