// Benchmark of big pages in a real browser (manual, not a test): how long Chromium takes to reach
// the load event of
//   a 6,000-line, 580 KB TypeScript file, highlighted          (target: < 1.5 s)
//   a pull request changing 4,000 lines (2,000 out, 2,000 in),
//     as the page first shows it ([git] MAX_GIT_DIFF_LINES) and whole (?full=1)  (target: < 1.5 s)
//   the repository home                                         (target: < 300 ms)
// on an `anvil web` process (as `npm start` runs it), median of SAMPLES loads after a warm-up, with
// the HTML's size as sent (the browser asks for it compressed) and uncompressed. With
// BEFORE_CLI=<bundle> (e.g. an older dist/bundle/cli.js) the same pages are measured on it too, on
// the same data, and printed side by side.
// Run: npm run build && node dist/bench/browser-pages.js
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { freePort } from '../test/helpers/server.js';
import { median, waitFor200 } from './common.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'bundle', 'cli.js');
const before = process.env['BEFORE_CLI'];
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 5);
const PASSWORD = 'bench-password-1';

const codeLine = (i: number) =>
  i % 10 === 0
    ? `// Section ${i}: a comment with "quotes" and <angle> brackets and some padding padding`
    : `export function f${i}(a: number, b: string): string { return \`\${a} and \${b}\` + ${i}; } // pad pad`;

async function serve(bundle: string, dir: string, port: number): Promise<ChildProcess> {
  const env = {
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: dir,
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__SERVER__START_SSH_SERVER: 'false',
    ANVIL__LOG__LEVEL: 'warn',
  };
  const child = spawn(process.execPath, [bundle, 'web'], { env, cwd: dir, stdio: 'inherit' });
  await waitFor200(`http://127.0.0.1:${port}/api/v1/version`, 60_000);
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
}

/** The account, the repository with the big file and the pull request. */
async function seed(bundle: string, dir: string, port: number): Promise<void> {
  const env = { ...process.env, ANVIL__SERVER__APP_DATA_PATH: dir, ANVIL__LOG__LEVEL: 'warn' };
  const args = [
    'admin',
    'user',
    'create',
    '--username',
    'alice',
    '--password',
    PASSWORD,
    '--email',
    'a@x.io',
  ];
  await new Promise<void>((resolve, reject) =>
    spawn(process.execPath, [bundle, ...args, '--admin'], { env, cwd: dir, stdio: 'inherit' }).once(
      'exit',
      (c) => (c === 0 ? resolve() : reject(new Error(`user create: ${c}`))),
    ),
  );
  const auth = `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}`;
  const api = async (method: string, p: string, body: unknown) => {
    const r = await fetch(`http://127.0.0.1:${port}/api/v1${p}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return (await r.json()) as Record<string, unknown>;
  };
  await api('POST', '/user/repos', { name: 'big', auto_init: true });
  const lines = Array.from({ length: 6000 }, (_, i) => codeLine(i));
  const file = await api('POST', '/repos/alice/big/contents/huge.ts', {
    content: Buffer.from(`${lines.join('\n')}\n`).toString('base64'),
    message: 'A big file',
  });
  const changed = lines.map((l, i) => (i < 2000 ? l.replace('pad pad', 'changed') : l));
  await api('PUT', '/repos/alice/big/contents/huge.ts', {
    content: Buffer.from(`${changed.join('\n')}\n`).toString('base64'),
    message: 'Change 2,000 lines',
    sha: (file['content'] as { sha: string }).sha,
    new_branch: 'feature',
  });
  await api('POST', '/repos/alice/big/pulls', { title: 'A big change', head: 'feature', base: 'main' });
}

const PAGES = [
  { name: '6,000-line file', path: '/alice/big/src/branch/main/huge.ts', target: 1500 },
  { name: '4,000-line diff, as first shown', path: '/alice/big/pulls/1/files', target: 1500 },
  { name: '4,000-line diff, whole', path: '/alice/big/pulls/1/files?full=1', target: 1500 },
  { name: 'repository home', path: '/alice/big', target: 300 },
];

interface Result {
  loadMs: number;
  sentKb: number;
  htmlKb: number;
}

/** Bytes on the wire for a client that accepts brotli and gzip (fetch would decompress them). */
function bytesSent(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
        let n = 0;
        res.on('data', (chunk: Buffer) => (n += chunk.length));
        res.on('end', () => resolve(n));
      })
      .once('error', reject);
  });
}

async function measure(port: number): Promise<Result[]> {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  try {
    const page = await browser.newPage();
    const out: Result[] = [];
    for (const p of PAGES) {
      const url = `http://127.0.0.1:${port}${p.path}`;
      await page.goto(url, { waitUntil: 'load' });
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t = performance.now();
        await page.goto(url, { waitUntil: 'load' });
        times.push(performance.now() - t);
      }
      const sentBytes = await bytesSent(url);
      const html = await (await fetch(url, { headers: { 'accept-encoding': 'identity' } })).text();
      out.push({ loadMs: median(times), sentKb: sentBytes / 1024, htmlKb: Buffer.byteLength(html) / 1024 });
    }
    return out;
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-pages-'));
  const port = await freePort();
  try {
    let child = await serve(cli, dir, port);
    await seed(cli, dir, port);
    const now = await measure(port);
    await stop(child);
    let then: Result[] | undefined;
    if (before) {
      child = await serve(before, dir, port);
      then = await measure(port);
      await stop(child);
    } else {
      child = undefined as unknown as ChildProcess;
    }
    console.log(`Chromium load event, median of ${SAMPLES} (HTML as sent / uncompressed)`);
    PAGES.forEach((p, i) => {
      const r = now[i]!;
      const b = then?.[i];
      const cell = (x: Result) =>
        `${x.loadMs.toFixed(0).padStart(6)} ms (${x.sentKb.toFixed(0)} / ${x.htmlKb.toFixed(0)} KB)`;
      console.log(
        `${p.name.padEnd(34)} ${cell(r).padEnd(34)}${b ? ` before: ${cell(b).padEnd(34)}` : ''} target < ${p.target} ms ${r.loadMs < p.target ? 'met' : 'NOT met'}`,
      );
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
