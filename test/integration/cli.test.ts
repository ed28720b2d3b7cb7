// The `anvil` command as an administrator uses it: real child processes, an INI file in a temp
// directory, and `anvil web` serving what the admin commands wrote. With
// ANVIL__DATABASE__DB_TYPE=postgres, the INI points at a fresh PostgreSQL database, dropped at the end.
//
// The bundled CLI (dist/bundle/cli.js, made by scripts/build.js, which `npm test` runs first) is
// spawned directly: bin/anvil.js only adds that build step before importing it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../../src/config/config.js';
import { openDatabase } from '../../src/db/database.js';
import { freePort, freshDatabase } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';
import { WebClient } from '../helpers/web.js';

const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));

/** Longest any single CLI run may take before it is killed and the test fails. */
const RUN_TIMEOUT_MS = 30_000;
const WEB_START_TIMEOUT_MS = 30_000;

const children = new Set<ChildProcess>();

/** The environment without any ANVIL__ override, so only the INI file configures the child. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.toUpperCase().startsWith('ANVIL__')) env[k] = v;
  }
  return { ...env, ...extra };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: opts.cwd,
      env: opts.env ?? cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      children.delete(child);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

function assertOk(r: Run, what: string): void {
  assert.equal(r.code, 0, `${what} exited ${r.code ?? r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function assertFails(r: Run, stderr: RegExp, what: string): void {
  assert.notEqual(r.code, 0, `${what} should fail\nstdout: ${r.stdout}`);
  assert.equal(r.signal, null, `${what} was killed (timeout?)`);
  assert.match(r.stderr, stderr, `${what}: stderr`);
}

/** Stops a child: SIGTERM, then SIGKILL if it has not exited within a few seconds. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

interface Web {
  child: ChildProcess;
  url: string;
  /** Milliseconds from spawn to the first 200 on /api/v1/version. */
  startupMs: number;
  output(): string;
}

/** Spawns `anvil web ...` and waits until GET /api/v1/version answers 200. */
async function startWeb(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; port: number },
): Promise<Web> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'web', ...args], {
    cwd: opts.cwd,
    env: opts.env ?? cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = started + WEB_START_TIMEOUT_MS;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`anvil web exited (${child.exitCode ?? child.signalCode}) before serving:\n${out}`);
      }
      if (performance.now() > deadline) throw new Error(`anvil web did not answer in time:\n${out}`);
      try {
        const res = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  } catch (err) {
    await stop(child);
    throw err;
  }
  return { child, url, startupMs: performance.now() - started, output: () => out };
}

async function api<T = unknown>(
  url: string,
  method: string,
  p: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const headers: Record<string, string> = {};
  if (token) headers['authorization'] = `token ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}/api/v1${p}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

after(async () => {
  await Promise.all([...children].map((c) => stop(c)));
});

describe('anvil CLI', () => {
  let dir: string;
  let iniPath: string;
  let port: number;
  let dropDb: (() => Promise<void>) | undefined;
  let web: Web | undefined;
  /** Tokens shared between the tests below (they run in order). */
  const tokens: Record<string, string> = {};

  const cli = (...args: string[]) => run([...args, '--config', iniPath], { cwd: dir });

  function iniText(database: string[], extra = ''): string {
    return [
      '; Anvil CLI test configuration',
      'APP_NAME = Anvil CLI test',
      '',
      '[server]',
      `APP_DATA_PATH = ${path.join(dir, 'data')}`,
      'HTTP_ADDR = 127.0.0.1',
      `HTTP_PORT = ${port}`,
      `ROOT_URL = http://127.0.0.1:${port}/`,
      '',
      '[database]',
      ...database,
      '',
      '[log]',
      'LEVEL = warn',
      extra,
    ].join('\n');
  }

  async function mustChangePassword(name: string): Promise<number | undefined> {
    const database = await openDatabase(loadConfig({ configPath: iniPath, env: {}, cwd: dir }), {
      migrate: false,
    });
    try {
      const row = await database.db
        .selectFrom('user')
        .select('must_change_password')
        .where('lower_name', '=', name.toLowerCase())
        .executeTakeFirst();
      return row?.must_change_password;
    } finally {
      await database.close();
    }
  }

  async function ensureWeb(): Promise<Web> {
    web ??= await startWeb(['--config', iniPath], { cwd: dir, port });
    return web;
  }

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cli-'));
    iniPath = path.join(dir, 'app.ini');
    port = await freePort();
    const base: Config = loadConfig({ env: process.env, cwd: dir });
    let database: string[];
    const fresh = await freshDatabase(base.database);
    if (fresh) {
      dropDb = fresh.drop;
      database = [
        `DB_TYPE = ${base.database.type}`,
        `HOST = ${base.database.host}`,
        `NAME = ${fresh.name}`,
        `USER = ${base.database.user}`,
        `PASSWD = ${base.database.passwd}`,
        `SSL_MODE = ${base.database.sslMode}`,
      ];
    } else {
      database = ['DB_TYPE = sqlite3', `PATH = ${path.join(dir, 'data', 'anvil.db')}`];
    }
    fs.writeFileSync(iniPath, iniText(database));
  });

  after(async () => {
    if (web) await stop(web.child);
    if (dropDb) await dropDb();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('anvil --version prints the version', async () => {
    const r = await run(['--version'], { cwd: dir });
    assertOk(r, '--version');
    const pkg = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    assert.equal(r.stdout.trim(), pkg.version);
  });

  it('admin user create makes the first user, an admin who need not change the password', async () => {
    const r = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'alice',
      '--password',
      'alice-pass-1',
      '--email',
      'alice@example.com',
      '--admin',
    );
    assertOk(r, 'create alice');
    assert.match(r.stdout, /New user 'alice' has been successfully created!/);
    assert.equal(r.stderr, '');
    assert.equal(await mustChangePassword('alice'), 0);
  });

  it('later users must change their password by default', async () => {
    const r = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'bob',
      '--password',
      'bob-pass-1',
      '--email',
      'bob@example.com',
    );
    assertOk(r, 'create bob');
    assert.equal(await mustChangePassword('bob'), 1);
  });

  it('--must-change-password=false (and a bare --must-change-password) are honoured', async () => {
    const r = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'carol',
      '--password',
      'carol-pass-1',
      '--email',
      'carol@example.com',
      '--must-change-password=false',
    );
    assertOk(r, 'create carol');
    assert.equal(await mustChangePassword('carol'), 0);
    const d = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'dave',
      '--password',
      'dave-pass-1',
      '--email',
      'dave@example.com',
      '--must-change-password',
    );
    assertOk(d, 'create dave');
    assert.equal(await mustChangePassword('dave'), 1);
    const bad = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'erin',
      '--password',
      'erin-pass-1',
      '--email',
      'erin@example.com',
      '--must-change-password=maybe',
    );
    assertFails(bad, /maybe.*not a boolean/, '--must-change-password=maybe');
    assert.equal(await mustChangePassword('erin'), undefined);
  });

  it('creating the same user again fails with a clear message', async () => {
    const r = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'alice',
      '--password',
      'other-pass-1',
      '--email',
      'other@example.com',
    );
    assertFails(r, /^anvil: .*user already exists \[name: alice\]/m, 'duplicate user');
    assert.equal(r.stdout, '');
    const sameMail = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'alice2',
      '--password',
      'other-pass-1',
      '--email',
      'ALICE@example.com',
    );
    assertFails(sameMail, /e-mail already in use/, 'duplicate e-mail');
  });

  it('refuses reserved and invalid names', async () => {
    const r = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'api',
      '--password',
      'pass-word-1',
      '--email',
      'api@example.com',
    );
    assertFails(r, /^anvil: \[Username\]: name is reserved \[name: api\]/m, 'reserved name');
    const bad = await cli(
      'admin',
      'user',
      'create',
      '--username',
      '-bad',
      '--password',
      'pass-word-1',
      '--email',
      'bad@example.com',
    );
    assertFails(bad, /\[Username\]: name is invalid/, 'invalid name');
    const mail = await cli(
      'admin',
      'user',
      'create',
      '--username',
      'frank',
      '--password',
      'pass-word-1',
      '--email',
      'not-an-email',
    );
    assertFails(mail, /\[Email\]/, 'invalid e-mail');
  });

  it('a missing required flag is a usage error', async () => {
    const r = await cli('admin', 'user', 'create', '--username', 'gina', '--password', 'gina-pass-1');
    assertFails(r, /required option '--email <email>' not specified/, 'missing --email');
    assert.match(r.stderr, /Usage: anvil admin user create/);
    const unknown = await cli('admin', 'user', 'frobnicate');
    assertFails(unknown, /unknown command|error:/, 'unknown command');
  });

  it('admin user list prints a table of the users', async () => {
    const r = await cli('admin', 'user', 'list');
    assertOk(r, 'list');
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID\s+Username\s+Email\s+IsActive\s+IsAdmin$/);
    const rows = lines.slice(1).map((l) => l.split(/\s+/));
    assert.deepEqual(
      rows.map((c) => c[1]),
      ['alice', 'bob', 'carol', 'dave'],
    );
    assert.deepEqual(rows[0]!.slice(2), ['alice@example.com', 'true', 'true']);
    assert.deepEqual(rows[1]!.slice(2), ['bob@example.com', 'true', 'false']);
    const col = lines[0]!.indexOf('Username');
    for (const l of lines.slice(1)) assert.ok(/\S/.test(l[col]!), `columns are aligned: ${l}`);
  });

  it('admin user list --admin lists only administrators', async () => {
    const r = await cli('admin', 'user', 'list', '--admin');
    assertOk(r, 'list --admin');
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 2, r.stdout);
    assert.match(lines[1]!, /^\d+\s+alice\s+alice@example\.com\s+true\s+true$/);
  });

  it('generate-access-token --raw prints only a 40-hex token that works against the server', async () => {
    const r = await cli('admin', 'user', 'generate-access-token', '--username', 'alice', '--raw');
    assertOk(r, 'generate-access-token');
    assert.match(r.stdout, /^[0-9a-f]{40}\n$/);
    tokens['alice'] = r.stdout.trim();

    const w = await ensureWeb();
    console.log(
      `anvil web (--config, ${process.env['ANVIL__DATABASE__DB_TYPE'] ?? 'sqlite3'}): first 200 on /api/v1/version after ${w.startupMs.toFixed(0)} ms`,
    );
    const me = await api<{ login: string; is_admin: boolean }>(w.url, 'GET', '/user', tokens['alice']);
    assert.equal(me.status, 200);
    assert.equal(me.body.login, 'alice');
    assert.equal(me.body.is_admin, true);
    const wrong = await api(w.url, 'GET', '/user', 'f'.repeat(40));
    assert.equal(wrong.status, 401);
  });

  it('anvil web saved a generated SECRET_KEY into the config file, keeping it otherwise', async () => {
    await ensureWeb();
    const text = fs.readFileSync(iniPath, 'utf8');
    assert.ok(text.startsWith('; Anvil CLI test configuration\n'), 'the comment is kept');
    assert.match(text, /^\[security\]\nSECRET_KEY = \S{32,}$/m);
    assert.match(text, /^HTTP_PORT = \d+$/m);
  });

  it('without --raw the token comes with a sentence', async () => {
    const r = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'carol',
      '--token-name',
      'sentence',
    );
    assertOk(r, 'generate-access-token');
    assert.match(r.stdout, /^Access token was successfully created: [0-9a-f]{40}\n$/);
  });

  it('admin user change-password sets a new password, not requiring a change unless asked', async () => {
    const w = await ensureWeb();
    const basic = (password: string) =>
      fetch(`${w.url}/api/v1/user`, {
        headers: { authorization: `Basic ${Buffer.from(`carol:${password}`).toString('base64')}` },
        signal: AbortSignal.timeout(10_000),
      }).then((res) => res.status);
    assert.equal(await basic('carol-pass-1'), 200);
    // A browser signed in before the change is signed out by it.
    const browser = new WebClient(w.url);
    await browser.signIn('carol', 'carol-pass-1');
    const signedIn = async () => (await browser.get('/user/settings/change_password')).status === 200;
    assert.ok(await signedIn(), 'signed in on the web');
    const r = await cli(
      'admin',
      'user',
      'change-password',
      '--username',
      'carol',
      '--password',
      'carol-pass-2',
      '--must-change-password',
    );
    assertOk(r, 'change-password');
    assert.match(r.stdout, /carol's password has been successfully updated!/);
    assert.equal(await signedIn(), false, 'the web session ended with the new password');
    assert.equal(await mustChangePassword('carol'), 1);
    assert.equal(await basic('carol-pass-1'), 401, 'the old password no longer signs in');
    assert.notEqual(await basic('carol-pass-2'), 401, 'the new password does (the account may not act yet)');
    const again = await cli(
      'admin',
      'user',
      'change-password',
      '--username',
      'carol',
      '--password',
      'carol-pass-3',
    );
    assertOk(again, 'change-password');
    assert.equal(await mustChangePassword('carol'), 0);
    assert.equal(await basic('carol-pass-3'), 200);
    const unknown = await cli(
      'admin',
      'user',
      'change-password',
      '--username',
      'nobody',
      '--password',
      'x-pass-1',
    );
    assertFails(unknown, /user does not exist \[name: nobody\]/, 'change-password of an unknown user');
  });

  it('--scopes read:user gives a token that may read but not write', async () => {
    const r = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'carol',
      '--token-name',
      'reader',
      '--scopes',
      'read:user',
      '--raw',
    );
    assertOk(r, 'generate-access-token --scopes');
    const token = r.stdout.trim();
    const w = await ensureWeb();
    const me = await api<{ login: string }>(w.url, 'GET', '/user', token);
    assert.equal(me.status, 200);
    assert.equal(me.body.login, 'carol');
    const write = await api<{ message: string }>(w.url, 'POST', '/orgs', token, { username: 'readers-org' });
    assert.equal(write.status, 403);
    assert.match(write.body.message, /write:organization/);
    const admin = await api(w.url, 'GET', '/admin/users', token);
    assert.equal(admin.status, 403);
  });

  it('an unknown scope is refused', async () => {
    const r = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'carol',
      '--token-name',
      'bogus',
      '--scopes',
      'read:user,delete:everything',
    );
    assertFails(r, /invalid access token scope provided: delete:everything/, 'unknown scope');
    const none = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'carol',
      '--token-name',
      'none',
      '--scopes',
      ' , ',
    );
    assertFails(none, /access token must have a scope/, 'no scope');
  });

  it('a duplicate --token-name fails', async () => {
    const first = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'carol',
      '--token-name',
      'ci',
      '--raw',
    );
    assertOk(first, 'first token named ci');
    const again = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'carol',
      '--token-name',
      'ci',
      '--raw',
    );
    assertFails(again, /access token name has been used already/, 'duplicate token name');
    assert.equal(again.stdout, '');
    const other = await cli(
      'admin',
      'user',
      'generate-access-token',
      '--username',
      'bob',
      '--token-name',
      'ci',
      '--raw',
    );
    assertOk(other, 'another user may use the same token name');
  });

  it('generate-access-token for an unknown user fails', async () => {
    const r = await cli('admin', 'user', 'generate-access-token', '--username', 'nobody', '--raw');
    assertFails(r, /user does not exist \[name: nobody\]/, 'unknown user');
    assert.equal(r.stdout, '');
  });

  it('admin user delete removes a user', async () => {
    const r = await cli('admin', 'user', 'delete', '--username', 'bob');
    assertOk(r, 'delete bob');
    assert.match(r.stdout, /User 'bob' has been deleted\./);
    const list = await cli('admin', 'user', 'list');
    assert.doesNotMatch(list.stdout, /\bbob\b/);
    const w = await ensureWeb();
    const gone = await api(w.url, 'GET', '/users/bob', tokens['alice']);
    assert.equal(gone.status, 404);
  });

  it('admin user delete of an unknown user fails', async () => {
    const r = await cli('admin', 'user', 'delete', '--username', 'nobody');
    assertFails(r, /user does not exist \[name: nobody\]/, 'delete unknown user');
  });

  it('admin user delete refuses the last administrator', async () => {
    const r = await cli('admin', 'user', 'delete', '--username', 'alice');
    assertFails(r, /last administrator/, 'delete last admin');
  });

  it('admin user delete refuses an organization member unless --purge', async () => {
    // dave was created needing a password change: an administrator sets one, which clears that.
    assertOk(
      await cli('admin', 'user', 'change-password', '--username', 'dave', '--password', 'dave-pass-2'),
      'change-password',
    );
    assert.equal(await mustChangePassword('dave'), 0);
    const t = await cli('admin', 'user', 'generate-access-token', '--username', 'dave', '--raw');
    assertOk(t, 'token for dave');
    const w = await ensureWeb();
    const org = await api(w.url, 'POST', '/orgs', t.stdout.trim(), { username: 'daves-org' });
    assert.equal(org.status, 201);

    const refused = await cli('admin', 'user', 'delete', '--username', 'dave');
    assertFails(refused, /member of at least one organization.*purge/, 'delete org member');
    assert.equal((await api(w.url, 'GET', '/orgs/daves-org', tokens['alice'])).status, 200);

    const purged = await cli('admin', 'user', 'delete', '--username', 'dave', '--purge');
    assertOk(purged, 'delete --purge');
    assert.equal((await api(w.url, 'GET', '/users/dave', tokens['alice'])).status, 404);
    assert.equal(
      (await api(w.url, 'GET', '/orgs/daves-org', tokens['alice'])).status,
      404,
      'the org dave alone owned is gone',
    );
    const list = await cli('admin', 'user', 'list');
    assert.doesNotMatch(list.stdout, /dave/);
  });

  it('admin commands fail cleanly on an invalid configuration', async () => {
    const bad = path.join(dir, 'bad.ini');
    fs.writeFileSync(bad, '[database]\nDB_TYPE = mssql\n');
    const r = await run(['admin', 'user', 'list', '--config', bad], { cwd: dir });
    assertFails(r, /^anvil: \[database\] DB_TYPE: "mssql"/m, 'invalid DB_TYPE');
    const missing = await run(['admin', 'user', 'list', '--config', path.join(dir, 'missing.ini')], {
      cwd: dir,
    });
    assertFails(missing, /missing\.ini does not exist/, 'missing config file');
  });

  it('anvil web with HTTP_PORT=abc exits non-zero naming HTTP_PORT', async () => {
    const bad = path.join(dir, 'bad-port.ini');
    fs.writeFileSync(bad, `[server]\nAPP_DATA_PATH = ${path.join(dir, 'bad-data')}\nHTTP_PORT = abc\n`);
    const r = await run(['web', '--config', bad], { cwd: dir });
    assertFails(r, /^anvil: \[server\] HTTP_PORT: "abc"/m, 'web with HTTP_PORT=abc');
    assert.equal(fs.existsSync(path.join(dir, 'bad-data')), false, 'nothing was created');
  });

  it('anvil web stops on SIGTERM', async () => {
    const w = await ensureWeb();
    const exited = new Promise<number | null>((resolve) => w.child.once('exit', (code) => resolve(code)));
    w.child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000)),
    ]);
    assert.equal(code, 0, `exit after SIGTERM:\n${w.output()}`);
    web = undefined;
  });

  it('anvil web exits by GRACEFUL_HAMMER_TIME with a request under way and its log output unread, then gone', async () => {
    const w = await startWeb(['--config', iniPath], {
      cwd: dir,
      port,
      env: cleanEnv({ ANVIL__SERVER__GRACEFUL_HAMMER_TIME: '2s', ANVIL__LOG__LEVEL: 'info' }),
    });
    const exited = new Promise<number | null>((resolve) => w.child.once('exit', (code) => resolve(code)));
    // Its signal handlers are set once it has said where it listens.
    while (!/listening on/.test(w.output())) await new Promise((r) => setTimeout(r, 50));
    // A request whose body stops coming half-way.
    const req = http.request(`${w.url}/api/v1/markdown`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(1 << 20) },
    });
    req.on('error', () => undefined);
    req.write(`{"Text": "${'a'.repeat(1000)}`);
    // The log output is no longer read: the pipe fills up with request lines (long URLs).
    w.child.stdout!.pause();
    const long = `${w.url}/api/v1/version?${'x'.repeat(6000)}`;
    for (let i = 0; i < 8; i++) {
      await Promise.all(Array.from({ length: 10 }, () => fetch(long).then((r) => r.arrayBuffer())));
    }
    w.child.kill('SIGTERM');
    // The process reading the log output goes away after the deadline has passed.
    await new Promise((r) => setTimeout(r, 3000));
    w.child.stdout!.destroy();
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 30_000)),
    ]);
    req.destroy();
    assert.equal(code, 1, 'the deadline ended the process');
  });
});

describe('npm start contract: `anvil web` in a fresh directory without configuration', () => {
  let cwd: string;
  let w: Web | undefined;

  before(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-start-'));
  });
  after(async () => {
    if (w) await stop(w.child);
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('makes the first administrator and a token from the CLI before any `anvil web` (no SECRET_KEY yet)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cli-first-'));
    try {
      const env = cleanEnv({ ANVIL__LOG__LEVEL: 'warn' });
      const args = ['--username', 'first', '--password', 'pw-12345678', '--email', 'f@x.io', '--admin'];
      assertOk(await run(['admin', 'user', 'create', ...args], { cwd: dir, env }), 'admin user create');
      const token = await run(['admin', 'user', 'generate-access-token', '--username', 'first', '--raw'], {
        cwd: dir,
        env,
      });
      assertOk(token, 'generate-access-token');
      assert.match(token.stdout.trim(), /^[0-9a-f]{40}$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves on ANVIL__SERVER__HTTP_PORT and creates ./data/anvil.db and ./data/app.ini with a SECRET_KEY', async () => {
    const port = await freePort();
    // `npm start` runs `node bin/anvil.js web`; bin/anvil.js only builds first, so the bundled
    // CLI is spawned here with `web`, from the fresh directory, configured by one variable.
    w = await startWeb([], {
      cwd,
      port,
      env: cleanEnv({ ANVIL__SERVER__HTTP_PORT: String(port), ANVIL__LOG__LEVEL: 'warn' }),
    });
    console.log(
      `npm start contract (sqlite3, no config): first 200 on /api/v1/version after ${w.startupMs.toFixed(0)} ms`,
    );
    const version = await api<{ version: string }>(w.url, 'GET', '/version');
    assert.equal(version.status, 200);
    assert.match(version.body.version, /\+gitea-[0-9.]+-anvil-/);
    assert.ok(fs.existsSync(path.join(cwd, 'data', 'anvil.db')), './data/anvil.db');
    const ini = fs.readFileSync(path.join(cwd, 'data', 'app.ini'), 'utf8');
    const key = /^SECRET_KEY = (\S+)$/m.exec(ini)?.[1];
    assert.ok(key && key.length >= 32, `./data/app.ini has a SECRET_KEY:\n${ini}`);
    assert.equal(loadConfig({ env: {}, cwd }).security.secretKey, key, 'the next start reads the same key');
  });

  it('serves git pushes (the bundled pre-receive hook) and the API description', async () => {
    assert.ok(w, 'the server of the previous test is running');
    const env = cleanEnv({ ANVIL__LOG__LEVEL: 'warn' });
    assertOk(
      await run(
        [
          'admin',
          'user',
          'create',
          '--username',
          'root',
          '--password',
          'pw-12345678',
          '--email',
          'r@x.io',
          '--admin',
        ],
        { cwd, env },
      ),
      'admin user create',
    );
    const token = (
      await run(['admin', 'user', 'generate-access-token', '--username', 'root', '--raw'], { cwd, env })
    ).stdout.trim();
    assert.equal((await api(w.url, 'POST', '/user/repos', token, { name: 'demo' })).status, 201);
    const git = new GitClient();
    try {
      const wt = await git.workTree('main');
      const oid = await git.commit(wt, 'README.md', '# demo\n');
      await git.git(['push', repoUrl(w.url, 'root', 'demo', ['root', token]), 'main'], wt);
      assert.equal(
        (await git.lsRemote(repoUrl(w.url, 'root', 'demo', ['root', token]))).get('refs/heads/main'),
        oid,
      );
      // The hook asks the server, which refuses a push to a protected branch.
      await git.commit(wt, 'README.md', '# demo\nmore\n');
      await git.git(['push', repoUrl(w.url, 'root', 'demo', ['root', token]), 'main:locked'], wt);
      const protect = await api(w.url, 'POST', '/repos/root/demo/branch_protections', token, {
        rule_name: 'locked',
        enable_push: false,
      });
      assert.equal(protect.status, 201);
      await git.commit(wt, 'README.md', '# demo\nagain\n');
      const refused = await git.tryGit(
        ['push', repoUrl(w.url, 'root', 'demo', ['root', token]), 'main:locked'],
        wt,
      );
      assert.equal(refused.ok, false, 'push to a protected branch is refused');
      assert.match(refused.out, /protected/i);
    } finally {
      git.cleanup();
    }
    const doc = await fetch(`${w.url}/swagger.v1.json`);
    assert.equal(doc.status, 200);
    assert.ok(((await doc.json()) as { paths: Record<string, unknown> }).paths['/users/{username}']);
    const page = await fetch(`${w.url}/api/swagger/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /swagger/i);
  });
});

describe('anvil web --port', () => {
  let cwd: string;
  let w: Web | undefined;

  before(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-port-'));
  });
  after(async () => {
    if (w) await stop(w.child);
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('refuses a port that is not a number, before creating anything', async () => {
    for (const bad of ['abc', '70000', '-1']) {
      const r = await run(['web', '--port', bad], { cwd, env: cleanEnv({ ANVIL__LOG__LEVEL: 'warn' }) });
      assertFails(r, /--port/, `web --port ${bad}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    assert.deepEqual(fs.readdirSync(cwd), []);
  });

  it('serves on --port over [server] HTTP_PORT, and the default ROOT_URL follows it', async () => {
    const [port, other] = [await freePort(), await freePort()];
    w = await startWeb(['--port', String(port)], {
      cwd,
      port,
      env: cleanEnv({ ANVIL__SERVER__HTTP_PORT: String(other), ANVIL__LOG__LEVEL: 'warn' }),
    });
    const missing = await api<{ url: string }>(w.url, 'GET', '/no/such/route');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.url, `http://localhost:${port}/api/swagger`);
  });
});
