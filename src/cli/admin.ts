// What the administration commands of `anvil` do (`admin user ...` but create, `admin quota
// recalculate`, `dump`, `restore`, `doctor`, `admin storage migrate`); cli.ts declares them and
// loads this module only when one of them runs.
import path from 'node:path';
import { pino, destination } from 'pino';
import { createContext, type AppContext } from '../app/context.js';
import { DataLock } from '../cluster/datalock.js';
import { dump, restore, type DumpDeps } from '../ops/dump.js';
import { listChecks, runDoctor, selectChecks, type DoctorContext } from '../ops/doctor.js';
import { kindsOf, migrateStorage, settingsFor } from '../storage/migrate.js';
import { config } from './common.js';

type Opts = { config?: string };

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
    refChanges: ctx.refChanges,
    wiki: ctx.wiki,
    recovery: ctx.recovery,
    sweeper: ctx.sweeper,
    quota: ctx.quota,
    users: ctx.users,
    blobReferences: ctx.contributions.blobReferences,
  };
}

export const userList = (opts: Opts & { admin: boolean }) =>
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
  });

export const userDelete = (opts: Opts & { username: string; purge: boolean }) =>
  withContext(opts, async (ctx) => {
    const u = await ctx.users.requireUser(opts.username);
    await ctx.users.delete(u, { purge: opts.purge });
    console.log(`User '${u.name}' has been deleted.`);
  });

export const userChangePassword = (
  opts: Opts & { username: string; password: string; mustChangePassword?: boolean },
) =>
  withContext(opts, async (ctx) => {
    const u = await ctx.users.requireUser(opts.username);
    await ctx.users.edit(u, {
      password: opts.password,
      mustChangePassword: opts.mustChangePassword ?? false,
    });
    console.log(`${u.name}'s password has been successfully updated!`);
  });

export const userGenerateAccessToken = (
  opts: Opts & { username: string; tokenName: string; scopes: string; raw: boolean },
) =>
  withContext(opts, async (ctx) => {
    const u = await ctx.users.requireUser(opts.username);
    const scopes = opts.scopes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const created = await ctx.tokens.create(u, opts.tokenName, scopes);
    console.log(opts.raw ? created.token : `Access token was successfully created: ${created.token}`);
  });

export const quotaRecalculate = (opts: Opts & { owner?: string }) =>
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
      drift.length ? `${drift.length} total(s) corrected.` : 'No drift: stored usage matches the resources.',
    );
  });

export async function dumpSite(opts: Opts & { file: string }): Promise<void> {
  await withContext(opts, async (ctx) => {
    await dump(dumpDeps(ctx), path.resolve(opts.file), (line) => console.log(line));
    console.log(`Written: ${path.resolve(opts.file)}`);
  });
}

export async function restoreSite(file: string, opts: Opts): Promise<void> {
  await withContext(opts, async (ctx) => {
    await restore(dumpDeps(ctx), path.resolve(file), (line) => console.log(line));
  });
}

export async function doctor(
  opts: Opts & { fix: boolean; list: boolean; run: string[]; all: boolean; full: boolean },
): Promise<void> {
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
}

export async function storageMigrate(opts: Opts & { from: string; to: string; type: string }): Promise<void> {
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
}
