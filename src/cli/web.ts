// `anvil web`: serves Anvil (HTTP, the built-in SSH server, the background work) until a signal.
// Loaded by cli.ts only when this command runs.
import { pino, type Logger } from 'pino';
import { ensureInternalToken, type Config } from '../config/config.js';
import { config } from './common.js';
import { createContext } from '../app/context.js';
import { DataLock } from '../cluster/datalock.js';
import { armDeadline } from '../app/deadline.js';
import { LogOutput } from '../app/log-output.js';
import { buildServer } from '../app/server.js';
import { VERSION } from '../version.js';
import { CHECK_MS as RECOVERY_CHECK_MS, STALE_INTENT_SECONDS } from '../repos/recovery.js';
import { SWEEP_INTERVAL_MS } from '../storage/sweep.js';
import { startSshServer, type RunningSshServer } from '../ssh/server.js';

/** How long a stopping server waits for its last log lines to be taken by a slow reader. */
const LOG_DRAIN_MS = 500;

export function startLogger(cfg: Config, output: LogOutput): Logger {
  return pino({ level: cfg.log.level }, output);
}

export async function web(opts: { config?: string; port?: string }): Promise<void> {
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
  // Mail queued before (a restart) and from now on ([mailer] ENABLED).
  ctx.mailQueue.start();
  // Scheduled merges: those waiting when the last process stopped are checked now.
  ctx.autoMerge.start();
  ctx.artifacts.start();
  ctx.runners.start();
  ctx.workflowSchedules.start();
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
