// Benchmark for the web interface (manual, not a test). A repository of 10,000 commits (made by
// git fast-import: 100 files under src/ rewritten in turn, plus a 5,000-line TypeScript file),
// pushed over smart HTTP; a branch adding a 1,000-line file with a pull request; an issue with 500
// comments. Then, on a separate Anvil process (`anvil web`, as `npm start` runs it), the latency of
//   the repository home                                  (target: p99 < 100 ms)
//   a directory listing with the last commit of each entry  (target: p99 < 100 ms)
//   a 5,000-line file view, highlighted                  (target: p99 < 100 ms)
//   a 1,000-line pull request diff (files changed)       (target: p99 < 100 ms)
//   an issue page with 500 comments                      (target: p99 < 150 ms)
//   a code search of the default branch                  (target: p99 < 500 ms)
// each measured one request at a time over one kept-alive connection after a warm-up, and the
// weight of the JavaScript and CSS every page loads, gzipped (target: < 100 KB together).
// Run: npm run build && node dist/bench/web.js     (BENCH_COMMITS, BENCH_SAMPLES to change sizes)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { keepAliveClient } from './keepalive.js';
import { freePort } from '../test/helpers/server.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/app/context.js';
import { transaction } from '../src/db/database.js';
import * as issueStore from '../src/issues/store.js';
import { waitFor200, percentile, runWithInput as run } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const COMMITS = Number(process.env['BENCH_COMMITS'] ?? 10_000);
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 200);
const FILES = 100;
const COMMENTS = 500;

/** A TypeScript-looking line (so highlighting has work to do). */
const codeLine = (i: number) =>
  i % 10 === 0
    ? `// Section ${i}: a comment with "quotes" and <angle> brackets`
    : `export function f${i}(a: number, b: string): string { return \`\${a} and \${b}\` + ${i}; }`;

/** The fast-import stream: COMMITS commits on main, then one on `feature` adding 1,000 lines. */
function history(): string {
  const parts: string[] = [];
  const blob = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const t0 = 1_700_000_000;
  for (let c = 1; c <= COMMITS; c++) {
    parts.push(
      `commit refs/heads/main\nmark :${c}\ncommitter Bench <bench@example.com> ${t0 + c * 60} +0000\n`,
    );
    parts.push(blob(`Commit ${c}: change file ${c % FILES}`));
    if (c > 1) parts.push(`from :${c - 1}\n`);
    if (c === 1) {
      parts.push(`M 100644 inline README.md\n${blob('# Big\n\nA repository of 10,000 commits.\n')}`);
      const huge = Array.from({ length: 5000 }, (_, i) => codeLine(i)).join('\n') + '\n';
      parts.push(`M 100644 inline big/huge.ts\n${blob(huge)}`);
    }
    const f = c % FILES;
    parts.push(
      `M 100644 inline src/file${f}.ts\n${blob(`export const value${f} = ${c};\n${codeLine(c)}\n`)}`,
    );
    parts.push('\n');
  }
  parts.push(
    `commit refs/heads/feature\ncommitter Bench <bench@example.com> ${t0 + (COMMITS + 1) * 60} +0000\n`,
  );
  parts.push(blob('Add a 1,000-line module'));
  parts.push(`from :${COMMITS}\n`);
  const added = Array.from({ length: 1000 }, (_, i) => codeLine(i + 7)).join('\n') + '\n';
  parts.push(`M 100644 inline src/added.ts\n${blob(added)}\n`);
  return parts.join('');
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-web-'));
const port = await freePort();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ANVIL__SERVER__APP_DATA_PATH: dir,
  ANVIL__SERVER__HTTP_PORT: String(port),
  ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
  ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
  ANVIL__SECURITY__SECRET_KEY: 'bench-secret',
  ANVIL__LOG__LEVEL: 'warn',
};
let server: ChildProcess | undefined;
try {
  const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
  const alice = await ctx.users.create({
    username: 'alice',
    email: 'alice@example.com',
    password: 'password-1',
    isAdmin: false,
  });
  const token = (await ctx.tokens.create(alice, 'bench', ['all'])).token;
  const repo = await ctx.repos.create(alice, alice, { name: 'big' });
  await ctx.close();

  server = spawn(process.execPath, [cli, 'web'], { env, stdio: 'inherit' });
  const root = `http://127.0.0.1:${port}`;
  await waitFor200(`${root}/api/v1/version`, 20_000);

  // The history, pushed over HTTP (so every push hook runs, as for a user).
  const made = Date.now();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-web-home-'));
  const gitEnv = { PATH: process.env['PATH'], HOME: home, LANG: 'C', GIT_TERMINAL_PROMPT: '0' };
  const src = path.join(home, 'src.git');
  await run('git', ['init', '--bare', '-q', '--initial-branch=main', src], { env: gitEnv });
  await run('git', ['fast-import', '--quiet'], { cwd: src, env: gitEnv, input: history() });
  const remote = `http://alice:${token}@127.0.0.1:${port}/alice/big.git`;
  await run('git', ['push', '-q', remote, 'main', 'feature'], { cwd: src, env: gitEnv });
  const api = (method: string, p: string, body?: unknown) =>
    fetch(`${root}/api/v1${p}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const pr = (await (
    await api('POST', '/repos/alice/big/pulls', { title: 'Add a module', head: 'feature', base: 'main' })
  ).json()) as { number: number };
  const issue = (await (await api('POST', '/repos/alice/big/issues', { title: 'Long talk' })).json()) as {
    number: number;
  };
  // 500 comments, through the store (the API would take a while and measure nothing of interest).
  {
    const c2 = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'warn' }));
    const row = await c2.issues.requireIssue(repo, issue.number);
    const now = Math.floor(Date.now() / 1000);
    await transaction(c2.db, (tx) =>
      issueStore.insertComments(
        tx,
        Array.from({ length: COMMENTS }, (_, i) => ({
          repo_id: repo.id,
          issue_id: row.id,
          poster_id: alice.id,
          content: `Comment **${i}** with \`code\` and a [link](https://example.com/${i}).`,
          created_unix: now + i,
          updated_unix: now + i,
        })),
      ),
    );
    await c2.close();
  }
  const setupSeconds = (Date.now() - made) / 1000;

  const pages: Array<{ name: string; path: string; target: number; expect: RegExp }> = [
    { name: 'repository home', path: '/alice/big', target: 100, expect: /README/ },
    {
      name: 'directory with last commits',
      path: '/alice/big/src/branch/main/src',
      target: 100,
      expect: /file99\.ts/,
    },
    {
      name: '5,000-line file, highlighted',
      path: '/alice/big/src/branch/main/big/huge.ts',
      target: 100,
      expect: /Section 4990/,
    },
    {
      name: '1,000-line pull request diff',
      // Whole: [git] MAX_GIT_DIFF_LINES (1,000) would cut it.
      path: `/alice/big/pulls/${pr.number}/files?full=1`,
      target: 100,
      expect: /f1006/,
    },
    {
      name: 'issue with 500 comments',
      path: `/alice/big/issues/${issue.number}`,
      target: 150,
      expect: /Comment <strong>499/,
    },
    {
      name: 'code search (git grep of the default branch)',
      path: `/alice/big/search?q=${encodeURIComponent('Section 4990')}`,
      target: 500,
      expect: /huge\.ts/,
    },
  ];
  const results: Record<string, unknown> = {};
  for (const p of pages) {
    const client = keepAliveClient(root + p.path);
    const first = await client.get({ accept: 'text/html' });
    if (first.status !== 200 || !p.expect.test(first.body)) throw new Error(`${p.path}: ${first.status}`);
    for (let i = 0; i < 10; i++) await client.get({ accept: 'text/html' });
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = process.hrtime.bigint();
      const r = await client.get({ accept: 'text/html' });
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (r.status !== 200) throw new Error(`${p.path}: ${r.status}`);
    }
    client.close();
    results[p.name] = {
      path: p.path,
      htmlKB: Number((first.bytes / 1024).toFixed(1)),
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      target: `p99 < ${p.target} ms`,
      met: percentile(times, 99) < p.target,
    };
  }
  // What every page loads besides its HTML: the stylesheet and the script, gzipped.
  const html = await (await fetch(`${root}/alice/big`)).text();
  const assets = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+\.(?:css|js)[^"]*)"/g)].map((m) => m[1]!);
  let gz = 0;
  for (const a of assets)
    gz += zlib.gzipSync(Buffer.from(await (await fetch(root + a)).arrayBuffer())).length;
  console.log(
    JSON.stringify(
      {
        commits: COMMITS,
        setupSeconds,
        samples: SAMPLES,
        pages: results,
        assets: {
          files: assets,
          gzippedKB: Number((gz / 1024).toFixed(1)),
          target: '< 100 KB',
          met: gz < 100 * 1024,
        },
      },
      null,
      2,
    ),
  );
} finally {
  await new Promise((r) => setTimeout(r, 300));
  server?.kill('SIGTERM');
  if (server) await new Promise((r) => server!.once('exit', r));
  if (process.env['BENCH_KEEP']) console.log(`data kept in ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
}
