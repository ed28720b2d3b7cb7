// Limits that protect the server from slow and oversized requests, and what operators see: body
// read timeouts (shortened for the test), body size limits, string field lengths, start-up warnings
// and the listen address of `anvil web`, and the request named in the log line of a 500.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { createContext } from '../../src/app/context.js';
import { buildServer } from '../../src/app/server.js';
import { freePort, startServer, type TestServer } from '../helpers/server.js';

const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));
const IDLE_MS = 1000;

interface RawReply {
  status: number | null;
  text: string;
  closed: boolean;
  ms: number;
}

/**
 * Sends `head` (request line and headers), then `chunks` one every `everyMs`, then waits without
 * sending anything more until the server answers or closes the connection.
 */
function rawRequest(url: string, head: string, chunks: string[], everyMs = 0): Promise<RawReply> {
  const { port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const give = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 30 s: ${text}`));
    }, 30_000);
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(give);
      clearInterval(timer);
      const status = /^HTTP\/1\.1 (\d+)/.exec(text);
      resolve({
        status: status ? Number(status[1]) : null,
        text,
        closed: true,
        ms: performance.now() - started,
      });
    });
    socket.write(head);
    const rest = [...chunks];
    const next = () => {
      const c = rest.shift();
      if (c !== undefined && !socket.destroyed) socket.write(c);
    };
    if (everyMs) timer = setInterval(next, everyMs);
    else while (rest.length) next();
  });
}

function jsonBody(text: string): { message: string; url: string } {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { message: string; url: string };
}

describe('request limits', () => {
  let s: TestServer;
  const head = (token: string, length: number) =>
    `POST /api/v1/user/repos HTTP/1.1\r\nHost: x\r\nAuthorization: token ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

  before(async () => {
    s = await startServer({}, { bodyTimeouts: { bodyIdleMs: IDLE_MS, bodyMinRate: 256 * 1024 } });
    const r = await s.api('POST', '/user/repos', {
      token: s.admin.token,
      body: { name: 'r', auto_init: true },
    });
    assert.equal(r.status, 201, r.text);
  });
  after(async () => s?.close());

  it('cuts off a body that stops arriving with a 408 in the Forgejo shape', async () => {
    // A declared length whose rate floor (IDLE_MS plus its length at 256 KiB/s) is well past the
    // idle timeout, so it is the silence that ends it.
    const r = await rawRequest(s.url, head(s.admin.token, 500_000), ['{"name":']);
    assert.equal(r.status, 408, r.text);
    assert.ok(r.ms < IDLE_MS + 4000, `cut off after ${r.ms} ms`);
    const body = jsonBody(r.text);
    assert.match(body.message, /request body timed out: no data for 1 s/);
    assert.equal(body.url, `${s.url}/api/swagger`);
    // The server is fine afterwards.
    assert.equal((await s.api('GET', '/version')).status, 200);
  });

  it('cuts off a body that trickles in slower than the floor, even when bytes keep coming', async () => {
    // 100 bytes may take IDLE_MS plus a fraction of a millisecond; one byte every 200 ms never idles.
    const r = await rawRequest(s.url, head(s.admin.token, 100), Array(100).fill(' '), 200);
    assert.equal(r.status, 408, r.text);
    assert.match(jsonBody(r.text).message, /not received within/);
    assert.ok(r.ms < IDLE_MS + 4000, `cut off after ${r.ms} ms`);
  });

  it('cuts off an anonymous streamed body (git) that stalls', async () => {
    const r = await rawRequest(
      s.url,
      'POST /root/r.git/git-upload-pack HTTP/1.1\r\nHost: x\r\n' +
        'Content-Type: application/x-git-upload-pack-request\r\nTransfer-Encoding: chunked\r\n\r\n',
      ['4\r\n0032\r\n'],
    );
    assert.ok(r.closed);
    assert.ok(r.ms < IDLE_MS + 4000, `cut off after ${r.ms} ms`);
    assert.ok(r.status === null || r.status === 408 || r.status === 200, r.text);
  });

  it('refuses a JSON body over 1 MiB with 413 in the Forgejo shape', async () => {
    const r = await s.api<{ message: string; url: string }>('POST', '/user/repos', {
      token: s.admin.token,
      body: { name: 'big', description: 'x', readme: 'y'.repeat(1024 * 1024 + 1) },
    });
    assert.equal(r.status, 413, r.text);
    assert.deepEqual(Object.keys(r.body).sort(), ['message', 'url']);
  });

  it('answers 422 naming the field for a string over its length', async () => {
    const issue = await s.api<{ message: string }>('POST', '/repos/root/r/issues', {
      token: s.admin.token,
      body: { title: 't'.repeat(300) },
    });
    assert.equal(issue.status, 422, issue.text);
    assert.match(issue.body.message, /^\[Title\]: /);
    const ok = await s.api('POST', '/repos/root/r/issues', {
      token: s.admin.token,
      body: { title: 't'.repeat(255) },
    });
    assert.equal(ok.status, 201, ok.text);
    const org = await s.api<{ message: string }>('POST', '/orgs', {
      token: s.admin.token,
      body: { username: 'org1', description: 'd'.repeat(256) },
    });
    assert.equal(org.status, 422, org.text);
    assert.match(org.body.message, /^\[Description\]: /);
  });

  it('still takes a file of several MiB through the contents API', async () => {
    const content = crypto.randomBytes(3 * 1024 * 1024);
    const r = await s.api<{ content: { size: number } }>('POST', '/repos/root/r/contents/big.bin', {
      token: s.admin.token,
      body: { content: content.toString('base64'), message: 'big file' },
    });
    assert.equal(r.status, 201, r.text.slice(0, 500));
    assert.equal(r.body.content.size, content.length);
  });

  it('answers GETs while big bodies are still arriving', async () => {
    /** A big issue whose body arrives all but its last byte now, and that byte on finish(). */
    const big = (i: number) => {
      const body = Buffer.from(JSON.stringify({ title: `big ${i}`, body: 'b'.repeat(1000 * 1024) }));
      const req = http.request(`${s.url}/api/v1/repos/root/r/issues`, {
        method: 'POST',
        headers: {
          authorization: `token ${s.admin.token}`,
          'content-type': 'application/json',
          'content-length': body.length,
        },
      });
      const status = new Promise<number>((resolve, reject) => {
        req.once('response', (res) => res.resume().once('end', () => resolve(res.statusCode!)));
        req.once('error', reject);
      });
      req.write(body.subarray(0, -1));
      return { status, finish: () => req.writableEnded || req.end(body.subarray(-1)) };
    };
    const oversized = () =>
      s
        .api('POST', '/repos/root/r/issues', {
          token: s.admin.token,
          raw: JSON.stringify({ title: 'huge', body: 'h'.repeat(10 * 1024 * 1024) }),
        })
        .catch((err: Error) => ({ status: err.message }));
    const bigs = Array.from({ length: 6 }, (_, i) => big(i));
    let arrived = false;
    const bigDone = Promise.all(bigs.map((b) => b.status.finally(() => (arrived = true))));
    const refused = Promise.all([oversized(), oversized()]);
    // No big body is complete yet, so none can have been answered: each GET is answered meanwhile.
    // (Should a GET wait for them, the bodies are completed after a while, and it fails below.)
    const stuck = setTimeout(() => bigs.forEach((b) => b.finish()), 10_000);
    try {
      for (let i = 0; i < 5; i++) {
        assert.equal((await s.api('GET', '/version')).status, 200);
        assert.equal(arrived, false, 'a GET waited for the big bodies');
      }
    } finally {
      clearTimeout(stuck);
      for (const b of bigs) b.finish();
    }
    assert.deepEqual(await bigDone, [201, 201, 201, 201, 201, 201]);
    assert.deepEqual(
      (await refused).map((r) => r.status),
      [413, 413],
    );
  });

  it('answers HEAD for every GET route with its status and headers and no body, on a connection kept alive', async () => {
    // Raw requests on one socket: a body sent after a HEAD answer would be read as the start of
    // the next answer.
    const socket = net.connect(Number(new URL(s.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.setEncoding('latin1').on('data', (d: string) => (received += d));
    const ask = async (method: string, p: string, answers: number) => {
      socket.write(`${method} ${p} HTTP/1.1\r\nHost: x\r\nAuthorization: token ${s.admin.token}\r\n\r\n`);
      for (let i = 0; i < 200 && received.split('HTTP/1.1 ').length - 1 < answers; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    try {
      await ask('HEAD', '/api/v1/repos/root/r', 1);
      await ask('HEAD', '/api/v1/repos/root/missing?x=1', 2);
      await ask('HEAD', '/root/r', 3);
      await ask('GET', '/api/v1/version', 4);
      await new Promise((r) => setTimeout(r, 50));
      const answers = received.split(/(?=HTTP\/1\.1 )/);
      assert.equal(answers.length, 4, received);
      const [repo, missing, page, version] = answers as [string, string, string, string];
      const get = await s.api<unknown>('GET', '/repos/root/r', { token: s.admin.token });
      assert.match(repo, /^HTTP\/1\.1 200 /);
      assert.match(repo, /content-type: application\/json/i);
      assert.equal(Number(/content-length: (\d+)/i.exec(repo)?.[1]), Buffer.byteLength(get.text));
      assert.ok(repo.endsWith('\r\n\r\n'), `no body after the headers:\n${repo}`);
      assert.match(missing, /^HTTP\/1\.1 404 /);
      assert.ok(missing.endsWith('\r\n\r\n'), missing);
      assert.match(page, /^HTTP\/1\.1 200 /);
      assert.match(page, /content-type: text\/html/i);
      assert.ok(page.endsWith('\r\n\r\n'), page);
      assert.match(version, /^HTTP\/1\.1 200 [\s\S]*\r\n\r\n\{"version":/);
    } finally {
      socket.destroy();
    }
  });
});

describe('the log line of an unexpected failure', () => {
  for (const level of ['warn', 'info']) {
    it(`names the request id, method and url at ${level} level; a line per request at info`, async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-limits-'));
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const l of chunk.toString().split('\n'))
            if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
          done();
        },
      });
      const config = loadConfig({
        env: {
          ANVIL__SERVER__APP_DATA_PATH: dataDir,
          ANVIL__SECURITY__SECRET_KEY: 'k',
          ANVIL__DATABASE__DB_TYPE: 'sqlite3',
        },
        cwd: dataDir,
      });
      const ctx = await createContext(config, pino({ level }, sink));
      const app = await buildServer(ctx);
      app.get('/api/v1/test/boom', async () => {
        throw new Error('boom');
      });
      try {
        const r = await app.inject({ method: 'GET', url: '/api/v1/test/boom?x=1' });
        assert.equal(r.statusCode, 500);
        assert.deepEqual(Object.keys(r.json() as object).sort(), ['message', 'url']);
        const line = lines.find((l) => l['msg'] === 'unexpected failure');
        assert.ok(line, JSON.stringify(lines));
        assert.equal(line['level'], 50);
        assert.equal(typeof line['reqId'], 'string');
        assert.equal(line['method'], 'GET');
        assert.equal(line['url'], '/api/v1/test/boom?x=1');
        assert.match(JSON.stringify(line['err']), /boom/);
        // The request log: at info one line per request, once answered (none on arrival).
        const completed = () => lines.filter((l) => String(l['msg']).startsWith('completed '));
        for (let i = 0; level === 'info' && !completed().length && i < 100; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        if (level === 'info') {
          assert.equal(completed().length, 1, JSON.stringify(lines));
          assert.deepEqual(
            [completed()[0]!['method'], completed()[0]!['url'], completed()[0]!['status']],
            ['GET', '/api/v1/test/boom?x=1', 500],
          );
        } else assert.deepEqual(completed(), []);
        assert.equal(lines.filter((l) => l['msg'] === 'incoming request').length, 0);
      } finally {
        await app.close();
        await ctx.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});

describe('anvil web at LEVEL = warn', () => {
  it('prints where it listens and warns about unused settings', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-limits-cli-'));
    const port = await freePort();
    fs.writeFileSync(
      path.join(cwd, 'app.ini'),
      [
        '[server]',
        'HTTP_ADDR = 127.0.0.1',
        `HTTP_PORT = ${port}`,
        'HTTP_PROT = 1',
        '[log]',
        'LEVEL = warn',
        '[securty]',
        'X = 1',
      ].join('\n'),
    );
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.toUpperCase().startsWith('ANVIL__')) env[k] = v;
    const child = spawn(process.execPath, [CLI, 'web', '--config', 'app.ini'], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      const deadline = Date.now() + 30_000;
      while (!out.includes('listening on') && Date.now() < deadline && child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.match(out, new RegExp(`listening on http://127\\.0\\.0\\.1:${port}`), out);
      assert.match(
        out,
        /\[server\] HTTP_PROT in .* is not used by Anvil \(did you mean \[server\] HTTP_PORT\?\)/,
      );
      assert.match(out, /\[securty\] in .* is not a section used by Anvil \(did you mean \[security\]\?\)/);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const closed = new Promise((r) => child.once('close', r));
        child.kill('SIGTERM');
        await closed;
      }
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
