// `npm run build`: compiles the TypeScript sources into dist/ (what the tests import), then bundles
// the CLI and the git hook into dist/bundle/ (what `anvil` and `npm start` run). One file instead
// of some 1,400 modules to resolve and read halves start-up time and saves memory.
// Native addons, and packages that find files next to their own code, stay in node_modules.
import { spawnSync } from 'node:child_process';
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

export async function buildAll({ bundle = true } = {}) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  if (compiled.status !== 0) return compiled.status ?? 1;
  if (!bundle) return 0;
  await build({
    entryPoints: {
      cli: path.join(root, 'dist/src/cli.js'),
      // Run by git for each push; src/git/pushes.ts finds it next to the code that names it.
      hook: path.join(root, 'dist/src/git/hook.js'),
    },
    outdir: path.join(root, 'dist/bundle'),
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
    // Licence comments go to cli.js.LEGAL.txt beside the bundle: they hold names outside ASCII.
    legalComments: 'external',
    logLevel: 'warning',
  });
  // V8 keeps a source with one character outside Latin-1 as two bytes per character: the CLI's
  // 6 MB would take 12 MB of every server's memory. esbuild escapes strings; a regular expression
  // or template needs \u escapes in the TypeScript.
  for (const file of ['cli.js', 'hook.js']) {
    const text = fs.readFileSync(path.join(root, 'dist/bundle', file), 'latin1');
    const at = text.search(/[\u0080-\u00ff]/);
    if (at >= 0) {
      console.error(
        `dist/bundle/${file}: a character outside ASCII near ${JSON.stringify(text.slice(at - 60, at + 20))}`,
      );
      return 1;
    }
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(await buildAll());
