// What the commands of `anvil` share: the configuration, and a context on the configured database
// for the administration commands.
import { pino, destination } from 'pino';
import { loadConfig, type Config } from '../config/config.js';
import { createContext, type AppContext } from '../app/context.js';
import { DataLock } from '../cluster/datalock.js';

/** The configuration; `overrides` are ANVIL__SECTION__KEY settings that win over the environment. */
export function config(
  opts: { config?: string },
  forServer = false,
  overrides: NodeJS.ProcessEnv = {},
): Config {
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
export async function withContext(
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
