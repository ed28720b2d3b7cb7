// Starts a real Anvil server on a free port against a fresh SQLite file (or, with
// ANVIL__DATABASE__DB_TYPE=postgres or mysql, a fresh PostgreSQL or MariaDB/MySQL database), and
// talks HTTP to it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createContext, type AppContext } from '../../src/app/context.js';
import { buildServer, type ServerOptions } from '../../src/app/server.js';
import { DataLock } from '../../src/cluster/datalock.js';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { postgresConnection } from '../../src/db/database.js';
import { createDatabaseSql, mysqlConnection } from '../../src/db/mysql.js';
import mysql from 'mysql2/promise';
import { copyTemplate } from './template.js';

export interface Reply<T = unknown> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface Auth {
  token?: string;
  basic?: [string, string];
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  config: Config;
  ctx: AppContext;
  app: FastifyInstance;
  dataDir: string;
  /** Environment that points the CLI at this server's configuration. */
  env: NodeJS.ProcessEnv;
  /** The data lock this server holds, as `anvil web` does (releasing it plays the server's death). */
  dataLock: DataLock;
  admin: { name: string; password: string; token: string };
  api<T = unknown>(
    method: string,
    path: string,
    opts?: Auth & { body?: unknown; raw?: string },
  ): Promise<Reply<T>>;
  /** Creates a user through the admin API and a token with `scopes` for it. */
  createUser(
    name: string,
    opts?: { scopes?: string[]; admin?: boolean },
  ): Promise<{ name: string; password: string; token: string; id: number }>;
  close(): Promise<void>;
}

/**
 * A port nothing listens on, for a server that listens on it a little later. Taken below the
 * kernel's ephemeral range (32768 and up): a port from that range (what listen(0) hands out) can
 * be taken meanwhile by any outgoing connection of the machine, and a test server then failed
 * with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + crypto.randomInt(12_000);
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/**
 * For PostgreSQL runs: a database of its own for this server, dropped at close; empty, or with
 * `migrated`, a copy of the run's migrated template when there is one (see template.ts).
 */
export async function freshPostgresDatabase(
  base: Config['database'],
  migrated = false,
): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `${base.name}_${process.pid}_${crypto.randomBytes(4).toString('hex')}`.toLowerCase();
  if (!(migrated && (await copyTemplate(base, name)))) {
    const admin = new pg.Client(postgresConnection(base, 'postgres'));
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
  }
  return {
    name,
    async drop() {
      const c = new pg.Client(postgresConnection(base, 'postgres'));
      await c.connect();
      try {
        // The pool reports closed before its connections are gone; dropping under a live one
        // would kill it and surface as an uncaught error in the test process.
        for (let i = 0; i < 100; i++) {
          const r = await c.query<{ n: string }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
            [name],
          );
          if (Number(r.rows[0]?.n ?? 0) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** An S3 server for the tests: s3rver in a child process of its own, on a free port. */
export interface S3Server {
  /** host:port, as MINIO_ENDPOINT. */
  endpoint: string;
  /** The ANVIL__STORAGE__* settings that put every store in `bucket` on this server. */
  settings(bucket?: string): Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3rver(): Promise<S3Server> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-s3-'));
  const port = await freePort();
  const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  // s3rver's ListObjectsV2 continuation tokens are DES-encrypted, which OpenSSL 3 has only in
  // its legacy provider.
  const child = spawn(
    process.execPath,
    ['--openssl-legacy-provider', bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '-s'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (up) break;
    if (i > 200 || child.exitCode !== null) throw new Error(`s3rver did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const endpoint = `127.0.0.1:${port}`;
  return {
    endpoint,
    settings: (bucket = 'anvil') => ({
      ANVIL__STORAGE__STORAGE_TYPE: 'minio',
      ANVIL__STORAGE__MINIO_ENDPOINT: endpoint,
      ANVIL__STORAGE__MINIO_ACCESS_KEY_ID: 'S3RVER',
      ANVIL__STORAGE__MINIO_SECRET_ACCESS_KEY: 'S3RVER',
      ANVIL__STORAGE__MINIO_BUCKET: bucket,
    }),
    async stop() {
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** For MySQL runs: as freshPostgresDatabase. */
export async function freshMysqlDatabase(
  base: Config['database'],
  migrated = false,
): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `${base.name}_${process.pid}_${crypto.randomBytes(4).toString('hex')}`.toLowerCase();
  if (!(migrated && (await copyTemplate(base, name)))) {
    const admin = await mysql.createConnection(mysqlConnection(base, null));
    try {
      await admin.query(createDatabaseSql(name, base.charset));
    } finally {
      await admin.end();
    }
  }
  return {
    name,
    async drop() {
      const c = await mysql.createConnection(mysqlConnection(base, null));
      try {
        await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await c.end();
      }
    },
  };
}

/** ANVIL_TEST_STORAGE=minio: every test server keeps its blobs on an s3rver of its own. */
const TEST_STORAGE = process.env['ANVIL_TEST_STORAGE'] ?? 'local';

/**
 * For PostgreSQL and MySQL runs: a database of its own, dropped by drop(); undefined on SQLite.
 * Empty (what a new site starts from), or with `migrated` a copy of the run's template.
 */
export async function freshDatabase(
  base: Config['database'],
  migrated = false,
): Promise<{ name: string; drop(): Promise<void> } | undefined> {
  if (base.type === 'postgres') return freshPostgresDatabase(base, migrated);
  if (base.type === 'mysql') return freshMysqlDatabase(base, migrated);
  return undefined;
}

export async function startServer(
  settings: Record<string, string> = {},
  serverOptions: ServerOptions = {},
): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-test-'));
  const port = await freePort();
  const s3 =
    TEST_STORAGE === 'minio' && settings['ANVIL__STORAGE__STORAGE_TYPE'] === undefined
      ? await startS3rver()
      : undefined;
  const env: NodeJS.ProcessEnv = {
    ...(s3 ? s3.settings() : {}),
    ...process.env,
    ANVIL__SERVER__APP_DATA_PATH: dataDir,
    ANVIL__SERVER__HTTP_ADDR: '127.0.0.1',
    ANVIL__SERVER__HTTP_PORT: String(port),
    ANVIL__SERVER__ROOT_URL: `http://127.0.0.1:${port}/`,
    ANVIL__SECURITY__SECRET_KEY: 'test-secret-key',
    ANVIL__LOG__LEVEL: process.env['ANVIL__LOG__LEVEL'] ?? 'warn',
    // Cheap argon2id (64 KiB, one pass): the suite makes thousands of hashes and checks, which
    // would cost minutes of CPU at the default's 19 MiB and two passes. Servers that tests start
    // as processes of their own (crash, multinode) keep the default.
    ANVIL__SECURITY__PASSWORD_HASH_ALGO: 'argon2$1$64$1$32',
    ...settings,
  };
  let config = loadConfig({ env, cwd: dataDir });
  let dropDb: (() => Promise<void>) | undefined;
  const fresh = await freshDatabase(config.database, true);
  if (fresh) {
    env['ANVIL__DATABASE__NAME'] = fresh.name;
    config = loadConfig({ env, cwd: dataDir });
    dropDb = fresh.drop;
  } else if (config.database.type === 'sqlite3' && !fs.existsSync(config.database.path)) {
    await copyTemplate(config.database, config.database.path);
  }
  const dataLock = DataLock.take(dataDir);
  const ctx = await createContext(config, pino({ level: config.log.level }));
  const app = await buildServer(ctx, serverOptions);
  await app.listen({ host: '127.0.0.1', port });
  const url = `http://127.0.0.1:${port}`;

  const adminPassword = 'admin-password-1';
  const adminUser = await ctx.users.create({
    username: 'root',
    email: 'root@example.com',
    password: adminPassword,
    isAdmin: true,
  });
  const adminToken = (await ctx.tokens.create(adminUser, 'test-admin', ['all'])).token;

  async function api<T>(
    method: string,
    p: string,
    opts: Auth & { body?: unknown; raw?: string } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers['authorization'] = `token ${opts.token}`;
    if (opts.basic)
      headers['authorization'] = `Basic ${Buffer.from(opts.basic.join(':')).toString('base64')}`;
    let body: string | undefined;
    if (opts.raw !== undefined) {
      body = opts.raw;
      headers['content-type'] ??= 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    const full = p.startsWith('/api/') || p.startsWith('/swagger') ? p : `/api/v1${p}`;
    const res = await fetch(url + full, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed as T, text, headers: res.headers };
  }

  const server: TestServer = {
    url,
    config,
    ctx,
    app,
    dataDir,
    env,
    dataLock,
    admin: { name: 'root', password: adminPassword, token: adminToken },
    api,
    async createUser(name, opts = {}) {
      const password = `${name}-password-1`;
      const r = await api<{ id: number }>('POST', '/admin/users', {
        token: adminToken,
        body: { username: name, email: `${name}@example.com`, password, must_change_password: false },
      });
      if (r.status !== 201) throw new Error(`creating ${name}: ${r.status} ${r.text}`);
      if (opts.admin) {
        await api('PATCH', `/admin/users/${name}`, { token: adminToken, body: { admin: true } });
      }
      const t = await api<{ sha1: string }>('POST', `/users/${name}/tokens`, {
        basic: [name, password],
        body: { name: 'test', scopes: opts.scopes ?? ['all'] },
      });
      if (t.status !== 201) throw new Error(`token for ${name}: ${t.status} ${t.text}`);
      return { name, password, token: t.body.sha1, id: r.body.id };
    },
    async close() {
      // Node closes the connections idle when close() begins; one whose response was still
      // finishing then (a stream's end comes after its last bytes reached the client) would
      // hold close() for Fastify's keep-alive timeout of 72 s.
      const closing = app.close();
      const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
      try {
        await closing;
      } finally {
        clearInterval(sweep);
      }
      await ctx.close();
      server.dataLock.release();
      // The database is dropped in the background (about a second on MariaDB, which removes its
      // tables' files one by one): the file's next test goes on meanwhile, and the connection
      // dropping it keeps this process alive until it is gone.
      if (dropDb)
        void dropDb().catch((err: unknown) => console.error(`dropping a test database: ${String(err)}`));
      await s3?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** The bundled CLI, as `anvil` runs it (scripts/build.js makes it before the tests). */
export const CLI = fileURLToPath(new URL('../../bundle/cli.js', import.meta.url));
const CLI_TIMEOUT_MS = 30_000;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the bundled CLI against a test server's configuration (its data directory and database). */
export function runCli(s: Pick<TestServer, 'dataDir' | 'env'>, args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: s.dataDir,
      env: s.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), CLI_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The administrator `createAdminWithToken` makes. */
export const CLI_ADMIN = { name: 'root', password: 'root-password-1', email: 'root@example.com' };

/**
 * Makes the site's first administrator (CLI_ADMIN) and an access token for it with the CLI, as an
 * operator of a new site does, through `cli` (which runs the CLI with these arguments and gives
 * its standard output); the token (the output's last line: libraries may print before it).
 */
export async function createAdminWithToken(cli: (...args: string[]) => Promise<string>): Promise<string> {
  const { name, password, email } = CLI_ADMIN;
  await cli(
    'admin',
    'user',
    'create',
    '--username',
    name,
    '--password',
    password,
    '--email',
    email,
    '--admin',
    '--must-change-password=false',
  );
  const out = await cli('admin', 'user', 'generate-access-token', '--username', name, '--raw');
  return out.trim().split('\n').pop()!.trim();
}
