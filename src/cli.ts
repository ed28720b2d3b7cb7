#!/usr/bin/env node
// The `anvil` command: `anvil web` serves Anvil; `anvil admin ...` administers it from the shell.
import path from 'node:path';
import { dump, restore, type DumpDeps } from './ops/dump.js';
import { Command, InvalidArgumentError, Option } from 'commander';
import { pino, destination, type Logger } from 'pino';
import { loadConfig, ConfigError, ensureInternalToken, type Config } from './config/config.js';
import { createContext, type AppContext } from './app/context.js';
import { DataLock } from './cluster/datalock.js';
import { armDeadline } from './app/deadline.js';
import { LogOutput } from './app/log-output.js';
import { buildServer } from './app/server.js';
import { AppError } from './errors.js';
import { VERSION } from './version.js';
import { runnerCommand } from './actions/runner-cli.js';
import { listChecks, runDoctor, selectChecks, type DoctorContext } from './ops/doctor.js';
import { CHECK_MS as RECOVERY_CHECK_MS, STALE_INTENT_SECONDS } from './repos/recovery.js';
import { SWEEP_INTERVAL_MS } from './storage/sweep.js';
import { startSshServer, type RunningSshServer } from './ssh/server.js';
import { keysCommand, servCommand } from './ssh/serv.js';
import { kindsOf, migrateStorage, settingsFor } from './storage/migrate.js';

function parseBool(value: string | undefined): boolean {
  if (value === undefined) return true;
  const v = value.toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  throw new InvalidArgumentError(`"${value}" is not a boolean (true or false)`);
}

function parsePort(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError(`"${value}" is not a port number (0 to 65535)`);
  }
  return value;
}

/** The configuration; `overrides` are ANVIL__SECTION__KEY settings that win over the environment. */
function config(opts: { config?: string }, forServer = false, overrides: NodeJS.ProcessEnv = {}): Config {
  return loadConfig({
    configPath: opts.config,
    persistSecretKey: forServer,
    env: { ...process.env, ...overrides },
  });
}

/**
 * Runs an admin command with a context on the configured database, closing it afterwards. The
 * command holds the data lock meanwhile (cluster/datalock.ts); `fn` is told whether no other
 * process used the data, and since when.
 */
async function withContext(
  opts: { config?: string },
  fn: (ctx: AppContext, aloneSince: number | undefined) => Promise<void>,
): Promise<void> {
  const cfg = config(opts);
  const log = pino({ level: 'warn' }, destination(2));
  const lock = DataLock.take(cfg.server.appDataPath);
  try {
    const ctx = await createContext(cfg, log);
    try {
      const alone = lock.alone && (await ctx.cluster.leases.othersAlive()).length === 0;
      await fn(ctx, alone ? lock.at : undefined);
    } finally {
      await ctx.close();
    }
  } finally {
    lock.release();
  }
}

/** What `anvil dump` and `anvil restore` use of the site. */
function dumpDeps(ctx: AppContext): DumpDeps {
  return {
    db: ctx.db,
    dialect: ctx.dialect,
    storage: ctx.storage,
    repoRoot: ctx.config.repository.root,
    configPath: ctx.config.configPath,
    appDataPath: ctx.config.server.appDataPath,
    recovery: ctx.recovery,
    quota: ctx.quota,
  };
}

/** What the checks of `anvil doctor` use of the site. */
function doctorContext(ctx: AppContext): DoctorContext {
  return {
    db: ctx.db,
    storage: ctx.storage,
    repoRoot: ctx.config.repository.root,
    repos: ctx.repos,
    wiki: ctx.wiki,
    recovery: ctx.recovery,
    sweeper: ctx.sweeper,
    quota: ctx.quota,
    users: ctx.users,
    blobReferences: ctx.contributions.blobReferences,
  };
}

/** How long a stopping server waits for its last log lines to be taken by a slow reader. */
const LOG_DRAIN_MS = 500;

export function startLogger(cfg: Config, output: LogOutput): Logger {
  return pino({ level: cfg.log.level }, output);
}

async function web(opts: { config?: string; port?: string }): Promise<void> {
  // --port is [server] HTTP_PORT, set before loading so that a default ROOT_URL follows it.
  const cfg = config(opts, true, opts.port === undefined ? {} : { ANVIL__SERVER__HTTP_PORT: opts.port });
  const output = new LogOutput();
  const log = startLogger(cfg, output);
  for (const warning of cfg.warnings) log.warn(warning);
  // Shared with `anvil serv` (OpenSSH mode) through the data directory unless configured.
  ensureInternalToken(cfg);
  // Held while this process runs: whether another process uses the data on this machine.
  const lock = DataLock.take(cfg.server.appDataPath);
  const ctx = await createContext(cfg, log);
  // Other processes on this database hear this one, and it them (src/cluster).
  await ctx.cluster.start();
  // Alone: no other process on this machine (the lock) and no other node (presence leases).
  // Changes a crash interrupted are completed before the first request is served: all of them
  // when alone, else this process's own and stale ones (the others' may be under way).
  const alone = lock.alone && (await ctx.cluster.leases.othersAlive()).length === 0;
  const now = Math.floor(Date.now() / 1000);
  await ctx.recovery.recover(alone ? now + 1 : now - STALE_INTENT_SECONDS, cfg.cluster.nodeName);
  const app = await buildServer(ctx);
  const address = await app.listen({ host: cfg.server.httpAddr, port: cfg.server.httpPort });
  // The built-in SSH server (its host keys are made on first start, while HTTP already serves);
  // a port already taken is logged, and HTTP goes on.
  let ssh: RunningSshServer | undefined;
  if (cfg.ssh.start) {
    try {
      ssh = await startSshServer(ctx);
    } catch (err) {
      log.error({ err }, `the SSH server cannot listen on ${cfg.ssh.listenHost}:${cfg.ssh.listenPort}`);
    }
  }
  ctx.cron.start();
  // Periodic work runs once per period across processes (a lease per task, src/cluster).
  ctx.cluster.every(
    'recover_unfinished_changes',
    RECOVERY_CHECK_MS,
    () => ctx.recovery.recover(Math.floor(Date.now() / 1000) - STALE_INTENT_SECONDS),
    { track: (w) => ctx.cron.track('recover_unfinished_changes', w) },
  );
  ctx.mirrors.start();
  ctx.webhooks.start();
  // Scheduled merges: those waiting when the last process stopped are checked now.
  ctx.autoMerge.start();
  ctx.artifacts.start();
  ctx.runners.start();
  // Leftovers of interrupted uploads and pushes: swept now, then hourly. Alone, everything older
  // than the moment that was known belonged to a process that died: swept with no grace period.
  let startup = alone;
  ctx.cluster.every(
    'sweep_leftovers',
    SWEEP_INTERVAL_MS,
    () => {
      const bounds = startup ? { graceMs: 0, now: lock.at } : {};
      startup = false;
      return ctx.sweeper.sweep(bounds);
    },
    { firstMs: 0, track: (w) => ctx.cron.track('sweep_leftovers', w) },
  );
  ctx.packageCleanup.start();
  // Where it listens is said at any level but `none`.
  const announce =
    log.isLevelEnabled('info') || log.level === 'silent' ? log : log.child({}, { level: 'info' });
  announce.info(
    `Anvil ${VERSION.anvil} listening on ${address}${ssh ? ` (SSH on ${cfg.ssh.listenHost}:${ssh.port})` : ''}, serving ${cfg.server.rootUrl} (database: ${cfg.database.type})`,
  );
  // Graceful shutdown: stop accepting, let requests and pushes under way finish, stop the
  // background work, close the database. [server] GRACEFUL_HAMMER_TIME is a hard deadline, armed
  // before anything else is done: a request still running then is cut off (what it changed is
  // whole or absent: see repos/recovery.ts) and the process exits whatever else is under way; a
  // second signal exits at once. The log output never holds the process up (app/log-output.ts).
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      announce.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    const hammer = cfg.server.gracefulHammerTime;
    armDeadline(
      hammer * 1000,
      () =>
        announce.warn(`requests still under way after ${hammer} s ([server] GRACEFUL_HAMMER_TIME): exiting`),
      () => output.drained(LOG_DRAIN_MS),
    );
    announce.info(`${signal}: finishing the requests under way (for up to ${hammer} s), then exiting`);
    void (async () => {
      let code = 0;
      try {
        await ssh?.close();
        await app.close();
        await ctx.close();
      } catch (err) {
        log.error({ err }, 'stopping failed');
        code = 1;
      }
      await output.drained(LOG_DRAIN_MS);
      process.exit(code);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const program = new Command('anvil')
  .description('Anvil: a self-hosted code-hosting service with a Forgejo-compatible API')
  .version(VERSION.anvil)
  .showHelpAfterError();

const configOption = () =>
  new Option('-c, --config <path>', 'configuration file (default: ./data/app.ini if present)');

program
  .command('web')
  .description('start the web server')
  .addOption(configOption())
  .option('-p, --port <port>', 'port to listen on (overrides [server] HTTP_PORT)', parsePort)
  .action(web);

const admin = program.command('admin').description('administration commands');
const user = admin.command('user').description('manage users');

user
  .command('create')
  .description('create a user')
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .requiredOption('--password <password>', 'password')
  .requiredOption('--email <email>', 'e-mail address')
  .option('--admin', 'make the user a site administrator', false)
  .option(
    '--must-change-password [bool]',
    'require a password change (default: true, false for the first user)',
    parseBool,
  )
  .action(
    async (opts: {
      config?: string;
      username: string;
      password: string;
      email: string;
      admin: boolean;
      mustChangePassword?: boolean;
    }) =>
      withContext(opts, async (ctx) => {
        const first = (await ctx.users.list({ type: 0 }, { page: 1, limit: 1, offset: 0 }))[1] === 0;
        const created = await ctx.users.create({
          username: opts.username,
          password: opts.password,
          email: opts.email,
          isAdmin: opts.admin,
          mustChangePassword: opts.mustChangePassword ?? !first,
        });
        console.log(`New user '${created.name}' has been successfully created!`);
      }),
  );

user
  .command('list')
  .description('list users')
  .addOption(configOption())
  .option('--admin', 'list only site administrators', false)
  .action(async (opts: { config?: string; admin: boolean }) =>
    withContext(opts, async (ctx) => {
      const rows: string[][] = [['ID', 'Username', 'Email', 'IsActive', 'IsAdmin']];
      const limit = 1000;
      for (let page = 1; ; page++) {
        const [users] = await ctx.users.list({ type: 0 }, { page, limit, offset: (page - 1) * limit });
        for (const u of users) {
          if (opts.admin && !u.is_admin) continue;
          rows.push([String(u.id), u.name, u.email, String(u.is_active === 1), String(u.is_admin === 1)]);
        }
        if (users.length < limit) break;
      }
      const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
      for (const r of rows)
        console.log(
          r
            .map((c, i) => c.padEnd(widths[i]!))
            .join('  ')
            .trimEnd(),
        );
    }),
  );

user
  .command('delete')
  .description('delete a user')
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .option('--purge', 'also delete their repositories, memberships and organizations they alone own', false)
  .action(async (opts: { config?: string; username: string; purge: boolean }) =>
    withContext(opts, async (ctx) => {
      const u = await ctx.users.requireUser(opts.username);
      await ctx.users.delete(u, { purge: opts.purge });
      console.log(`User '${u.name}' has been deleted.`);
    }),
  );

user
  .command('change-password')
  .description("change a user's password")
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .requiredOption('--password <password>', 'new password')
  .option('--must-change-password [bool]', 'require a password change at next sign-in', parseBool)
  .action(
    async (opts: { config?: string; username: string; password: string; mustChangePassword?: boolean }) =>
      withContext(opts, async (ctx) => {
        const u = await ctx.users.requireUser(opts.username);
        await ctx.users.edit(u, {
          password: opts.password,
          mustChangePassword: opts.mustChangePassword ?? false,
        });
        console.log(`${u.name}'s password has been successfully updated!`);
      }),
  );

user
  .command('generate-access-token')
  .description('generate an access token for a user')
  .addOption(configOption())
  .requiredOption('--username <name>', 'user name')
  .option('--token-name <name>', 'token name', 'anvil-admin')
  .option(
    '--scopes <scopes>',
    'comma-separated scopes, for example "all" or "read:user,write:repository"',
    'all',
  )
  .option('--raw', 'print only the token', false)
  .action(
    async (opts: { config?: string; username: string; tokenName: string; scopes: string; raw: boolean }) =>
      withContext(opts, async (ctx) => {
        const u = await ctx.users.requireUser(opts.username);
        const scopes = opts.scopes
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const created = await ctx.tokens.create(u, opts.tokenName, scopes);
        console.log(opts.raw ? created.token : `Access token was successfully created: ${created.token}`);
      }),
  );

const quota = admin.command('quota').description('quota engine');

quota
  .command('recalculate')
  .description(
    'measure repositories on disk and blobs in storage, correct the recorded sizes, recompute quota usage and report any drift',
  )
  .addOption(configOption())
  .option('--owner <name>', 'only this user or organization')
  .action(async (opts: { config?: string; owner?: string }) =>
    withContext(opts, async (ctx) => {
      const owner = opts.owner ? await ctx.users.requireAccount(opts.owner) : undefined;
      const { resized, drift } = await ctx.quota.reconcile(owner?.id);
      for (const r of resized) {
        console.log(`size: ${r.kind} ${r.name}: recorded ${r.recorded}, measured ${r.measured} (fixed)`);
      }
      const names = await ctx.users.getByIds([...new Set(drift.map((d) => d.ownerId))]);
      for (const d of drift) {
        const who = names.get(d.ownerId)?.name ?? `#${d.ownerId}`;
        console.log(`drift: ${who} ${d.subject}: stored ${d.stored}, actual ${d.actual} (fixed)`);
      }
      if (resized.length) console.log(`${resized.length} recorded size(s) corrected.`);
      console.log(
        drift.length
          ? `${drift.length} total(s) corrected.`
          : 'No drift: stored usage matches the resources.',
      );
    }),
  );

program
  .command('dump')
  .description(
    'write the whole site (database rows, repositories, blobs, configuration) into one .tar.gz, consistent while the server runs',
  )
  .addOption(configOption())
  .option(
    '-f, --file <path>',
    'the archive to write',
    `anvil-dump-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}.tar.gz`,
  )
  .action(async (opts: { config?: string; file: string }) => {
    await withContext(opts, async (ctx) => {
      await dump(dumpDeps(ctx), path.resolve(opts.file), (line) => console.log(line));
      console.log(`Written: ${path.resolve(opts.file)}`);
    });
  });

program
  .command('restore')
  .description('restore a dump made by `anvil dump` into a new site (an empty database and repository root)')
  .addOption(configOption())
  .argument('<file>', 'the archive')
  .action(async (file: string, opts: { config?: string }) => {
    await withContext(opts, async (ctx) => {
      await restore(dumpDeps(ctx), path.resolve(file), (line) => console.log(line));
    });
  });

const collect = (value: string, previous: string[]) => [...previous, value];

program
  .command('doctor')
  .description(
    'check the site: repositories against their rows, unfinished changes, leftovers, rows pointing at what is gone, ' +
      'quota usage, and (with --all or --run) blobs no row references and git fsck; exit status 1 while problems remain',
  )
  .addOption(configOption())
  .option('--fix', 'correct what can be corrected', false)
  .option('--list', 'list the checks (* marks those run by default) and exit', false)
  .option('--run <name>', 'run this check (repeatable); default: the default checks', collect, [])
  .option('--all', 'run every check, the expensive ones too', false)
  .option('--full', 'git-fsck: a full fsck (every object read) rather than connectivity only', false)
  .action(
    async (opts: {
      config?: string;
      fix: boolean;
      list: boolean;
      run: string[];
      all: boolean;
      full: boolean;
    }) => {
      if (opts.list) {
        for (const line of listChecks()) console.log(line);
        return;
      }
      const checks = selectChecks(opts.run, opts.all);
      let remaining = 0;
      await withContext(opts, async (ctx, aloneSince) => {
        const options = {
          fix: opts.fix,
          full: opts.full,
          ...(aloneSince !== undefined ? { aloneSince } : {}),
        };
        remaining = await runDoctor(doctorContext(ctx), checks, options, (line) => console.log(line));
      });
      if (remaining) process.exitCode = 1;
    },
  );

admin
  .command('storage')
  .description('blob storage')
  .command('migrate')
  .description(
    'copy every blob from one storage backend to the other (as `forgejo migrate-storage`), checking sizes; ' +
      'the server keeps reading the old one meanwhile, and a rerun copies only what is missing',
  )
  .addOption(configOption())
  .requiredOption('--from <type>', 'local or minio')
  .requiredOption('--to <type>', 'local or minio')
  .option('--type <kind>', 'lfs, attachments, artifacts, packages, avatars or all', 'all')
  .action(async (opts: { config?: string; from: string; to: string; type: string }) => {
    const load = (t?: string) => config(opts, false, t ? { ANVIL__STORAGE__STORAGE_TYPE: t } : {}).storage;
    const reports = await migrateStorage(
      kindsOf(opts.type),
      settingsFor(opts.from, load),
      settingsFor(opts.to, load),
      (line) => console.log(line),
    );
    const failed = reports.reduce((n, r) => n + r.failed.length, 0);
    if (failed) {
      console.log(`${failed} blob(s) not copied; run the command again.`);
      process.exitCode = 1;
    } else console.log('Done: every blob is on the target.');
  });

program.addCommand(runnerCommand());
program.addCommand(keysCommand());
program.addCommand(servCommand());

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof AppError || err instanceof ConfigError) {
    console.error(`anvil: ${err.message}`);
  } else {
    console.error('anvil:', err instanceof Error ? (err.stack ?? err.message) : err);
  }
  process.exit(1);
});
