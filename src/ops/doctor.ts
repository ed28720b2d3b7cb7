// `anvil doctor`: named checks of a site's consistency, in the manner of `forgejo doctor check`
// (Forgejo's names where a check is the same idea: `synchronize-repo-heads`, `storages`,
// `check-db-consistency`). Each check looks and reports; with --fix it also corrects what it can
// (its `fix` says what that is) and reports what it could not. The command exits 1 while problems
// remain.
//
// Everything is streamed: repositories and rows are read a page at a time by id, blob stores are
// listed lazily and their keys checked against the rows a batch at a time, so a site of millions
// of rows or blobs is never held in memory.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { transaction, type Db, type Tx } from '../db/database.js';
import { invalid } from '../errors.js';
import { blobKey as attachmentKey } from '../attachments/service.js';
import { blobKey as lfsKey } from '../lfs/service.js';
import { blobKey as packageKey, SUBJECT as PACKAGES } from '../packages/service.js';
import { recordUsage } from '../quota/usage.js';
import type { LeafSubject } from '../quota/subjects.js';
import { STALE_INTENT_SECONDS } from '../repos/recovery.js';
import * as repoStore from '../repos/store.js';
import * as opsStore from './store.js';
import type { Scope } from './store.js';
import type { ListedBlob, Storage } from '../storage/storage.js';
import type { BlobReferences, Sweeper } from '../storage/sweep.js';
import type { QuotaService } from '../quota/service.js';
import type { RefRecovery } from '../repos/recovery.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { WikiService } from '../wiki/service.js';

export interface DoctorOptions {
  /** Correct what can be corrected. */
  fix: boolean;
  /** `git-fsck`: a full fsck (every object read and hashed) rather than connectivity only. */
  full: boolean;
  /**
   * When no other process used the data (no other on this machine, cluster/datalock.ts, and no
   * other node alive), the moment that was known (ms): whatever is older and unfinished was left
   * by a process that died, however young. Without it, only what is older than the grace period
   * (an hour) counts, since a running server may be in the middle of it.
   */
  aloneSince?: number;
}

/** What a leftover must be older than to count as one (ms since the epoch). */
function leftoverBefore(ctx: DoctorContext, opts: DoctorOptions): number {
  return opts.aloneSince ?? Date.now() - ctx.sweeper.graceMs;
}

/** The sweep's bounds for the same. */
function sweepBounds(opts: DoctorOptions) {
  return opts.aloneSince === undefined ? {} : { graceMs: 0, now: opts.aloneSince };
}

/** Where a check says what it found. */
export interface DoctorReport {
  /** A problem that remains (found without --fix, or one --fix could not correct). */
  problem(line: string): void;
  /** A problem --fix corrected. */
  fixed(line: string): void;
}

/** What the checks use: the domains' own parts, named by whoever runs them (`anvil doctor`). */
export interface DoctorContext {
  db: Db;
  storage: Storage;
  /** [repository] ROOT. */
  repoRoot: string;
  repos: Pick<RepoService, 'reconcile' | 'pathOf'>;
  wiki: Pick<WikiService, 'pathOf'>;
  recovery: Pick<RefRecovery, 'recover'>;
  sweeper: Pick<Sweeper, 'sweep' | 'graceMs'>;
  quota: Pick<QuotaService, 'reconcile' | 'drift'>;
  users: Pick<UserService, 'getByIds'>;
  /** What each domain's rows reference in the blob stores. */
  blobReferences: readonly BlobReferences[];
}

export interface DoctorCheck {
  /** The name `--run` takes. */
  name: string;
  /** What is checked. */
  title: string;
  /** What --fix does about it. */
  fix: string;
  /** Run without `--run` or `--all` (the expensive checks are not). */
  isDefault: boolean;
  run(ctx: DoctorContext, opts: DoctorOptions, report: DoctorReport): Promise<void>;
}

/** Rows read, or blob keys checked, per query. */
const PAGE = 500;
/** Git processes or blob stats run at once. */
const CONCURRENCY = 4;
/** Lines of a failing fsck's output reported. */
const FSCK_LINES = 5;

/** Runs `fn` over `items` with at most `n` at once, in order of start. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/** Repository ids a page at a time. */
async function* repositoryIds(ctx: DoctorContext): AsyncIterable<number[]> {
  let after = 0;
  for (;;) {
    const ids = await repoStore.idPage(ctx.db, after, PAGE);
    if (!ids.length) return;
    yield ids;
    after = ids[ids.length - 1]!;
  }
}

async function readDir(dir: string): Promise<string[]> {
  try {
    return await fs.promises.readdir(dir);
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Repositories

const repoHeads: DoctorCheck = {
  name: 'synchronize-repo-heads',
  title: "Repositories' rows (branches, default branch, emptiness, size) agree with their refs on disk",
  fix: "rewrites the rows from the refs (git's side wins)",
  isDefault: true,
  async run(ctx, opts, report) {
    for await (const ids of repositoryIds(ctx)) {
      for (const id of ids) {
        const lines = await ctx.repos.reconcile(id, opts.fix);
        for (const line of lines) {
          const text = `repository ${id}: ${line}`;
          // A missing directory is reported by reconcile and cannot be repaired from the rows.
          if (opts.fix && !line.startsWith('repository directory is missing')) report.fixed(text);
          else report.problem(text);
        }
      }
    }
  },
};

const unfinishedChanges: DoctorCheck = {
  name: 'unfinished-changes',
  title: 'Ref changes (pushes, merges) a crash left unfinished (with a server running: over an hour ago)',
  fix: 'completes them as start-up recovery does',
  isDefault: true,
  async run(ctx, opts, report) {
    // Changes begun more than an hour ago are not under way any more: a server would have
    // finished them. Younger ones may belong to a running server, unless none runs.
    const before =
      opts.aloneSince !== undefined
        ? Math.floor(opts.aloneSince / 1000) + 1
        : Math.floor(Date.now() / 1000) - STALE_INTENT_SECONDS;
    if (opts.fix) for (const line of await ctx.recovery.recover(before)) report.fixed(line);
    let after = 0;
    for (;;) {
      const batch = await repoStore.intentsBefore(ctx.db, before, after, PAGE);
      for (const i of batch) {
        report.problem(`repository ${i.repo_id}: an unfinished ${i.kind} begun at ${i.created_unix}`);
      }
      if (batch.length < PAGE) break;
      after = batch[batch.length - 1]!.id;
    }
  },
};

const orphanedRepoDirs: DoctorCheck = {
  name: 'orphaned-repo-dirs',
  title: 'Repository directories no repository owns (left by a creation a crash interrupted)',
  fix: 'removes them',
  isDefault: true,
  async run(ctx, opts, report) {
    const root = ctx.repoRoot;
    const entries = (await readDir(root)).sort();
    // Looked up in pages of directory names, never the whole repository table at once.
    for (let i = 0; i < entries.length; i += PAGE) {
      const page = entries
        .slice(i, i + PAGE)
        .map((entry) => ({ entry, m: /^(\d+)(?:\.wiki)?\.git$/.exec(entry) })) // a repository or its wiki
        .filter((x): x is { entry: string; m: RegExpExecArray } => x.m !== null);
      if (!page.length) continue;
      const ids = [...new Set(page.map((x) => Number(x.m[1])))];
      const known = await repoStore.getByIds(ctx.db, ids);
      for (const { entry, m } of page) {
        if (known.has(Number(m[1]))) continue;
        // A creation under way has its directory before its row commits: leave young ones
        // (unless no server runs).
        const full = path.join(root, entry);
        const before = opts.aloneSince ?? Date.now() - STALE_INTENT_SECONDS * 1000;
        if (fs.statSync(full).mtimeMs >= before) continue;
        const text = `${entry}: a repository directory with no repository`;
        if (opts.fix) {
          fs.rmSync(full, { recursive: true, force: true });
          report.fixed(text);
        } else report.problem(text);
      }
    }
  },
};

const leftovers: DoctorCheck = {
  name: 'leftovers',
  title:
    "Leftovers of interrupted work: blob stores' temporary files, git quarantine directories and temporary " +
    'pack files, repositories being prepared (with a server running: those over an hour old)',
  fix:
    'runs the sweep `anvil web` runs hourly: those, and blobs no row references (with no server running, ' +
    'whatever the dead one left)',
  isDefault: true,
  async run(ctx, opts, report) {
    if (opts.fix) {
      const swept = await ctx.sweeper.sweep(sweepBounds(opts));
      for (const t of swept.temporary) report.fixed(`temporary file ${t.store}/${t.name} removed`);
      for (const q of swept.quarantine) report.fixed(`git leftover ${q.name} removed`);
      for (const o of swept.orphans) report.fixed(`unreferenced blob ${o.store}/${o.key} removed`);
      return;
    }
    // Blobs no row references are the `storages` check's (listing every store is expensive).
    const found = await ctx.sweeper.sweep({ ...sweepBounds(opts), dryRun: true, orphans: false });
    for (const t of found.temporary) {
      report.problem(`temporary file left over: ${t.store}/${t.name} (${t.size} bytes)`);
    }
    for (const q of found.quarantine) {
      const what = q.name.startsWith('.tmp/')
        ? 'repository being prepared'
        : q.name.includes('/objects/pack/')
          ? 'temporary pack file'
          : 'git quarantine';
      report.problem(`${what} left over: ${q.name}`);
    }
  },
};

/** `git fsck` of one repository directory; undefined when sound, else what git said. */
function fsck(dir: string, full: boolean): Promise<string | undefined> {
  const args = ['-c', 'safe.directory=*', '--git-dir', dir, 'fsck', '--no-progress', '--no-dangling'];
  if (!full) args.push('--connectivity-only');
  return new Promise((resolve) => {
    execFile(
      'git',
      args,
      { maxBuffer: 16 << 20, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout, stderr) => {
        if (!err) return resolve(undefined);
        const lines = `${stderr}\n${stdout}`
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l && !l.startsWith('notice:'));
        resolve(lines.slice(0, FSCK_LINES).join('; ') || `git fsck failed (${err.code ?? err.message})`);
      },
    );
  });
}

const gitFsck: DoctorCheck = {
  name: 'git-fsck',
  title: 'git fsck of every repository and wiki (connectivity only; --full reads and hashes every object)',
  fix: 'nothing automatic: broken repositories are reported for an administrator to restore',
  isDefault: false,
  async run(ctx, opts, report) {
    for await (const ids of repositoryIds(ctx)) {
      const dirs: Array<{ what: string; dir: string }> = [];
      for (const id of ids) {
        const dir = ctx.repos.pathOf({ id });
        const wiki = ctx.wiki.pathOf({ id });
        if (fs.existsSync(dir)) dirs.push({ what: `repository ${id}`, dir });
        // (a missing repository directory is synchronize-repo-heads' to report)
        if (fs.existsSync(path.join(wiki, 'HEAD')))
          dirs.push({ what: `wiki of repository ${id}`, dir: wiki });
      }
      await eachLimited(dirs, CONCURRENCY, async ({ what, dir }) => {
        const broken = await fsck(dir, opts.full);
        if (broken) report.problem(`${what} (${dir}): ${broken}`);
      });
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Quota

const quotaUsage: DoctorCheck = {
  name: 'quota-usage',
  title: "Recorded quota usage totals agree with what owners' rows add up to",
  fix: 'measures repositories and blobs, corrects recorded sizes and recalculates every total',
  isDefault: true,
  async run(ctx, opts, report) {
    const names = async (ids: number[]) => ctx.users.getByIds([...new Set(ids)]);
    if (opts.fix) {
      const { resized, drift } = await ctx.quota.reconcile();
      for (const r of resized)
        report.fixed(`${r.kind} ${r.name}: recorded size ${r.recorded}, measured ${r.measured}`);
      const who = await names(drift.map((d) => d.ownerId));
      for (const d of drift) {
        report.fixed(
          `quota: ${who.get(d.ownerId)?.name ?? `#${d.ownerId}`} ${d.subject}: recorded ${d.stored}, actual ${d.actual}`,
        );
      }
      return;
    }
    const drift = await ctx.quota.drift();
    const who = await names(drift.map((d) => d.ownerId));
    for (const d of drift) {
      report.problem(
        `quota: ${who.get(d.ownerId)?.name ?? `#${d.ownerId}`} ${d.subject}: recorded ${d.stored}, actual ${d.actual}`,
      );
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Blobs no row references

const storages: DoctorCheck = {
  name: 'storages',
  title: 'Blobs in storage (LFS, attachments, artifacts, packages, avatars) that no row references',
  fix: 'deletes them (a blob written again since the listing is kept)',
  isDefault: false,
  async run(ctx, opts, report) {
    // A blob younger than the sweep's grace period may belong to an upload whose row is coming
    // (unless no server runs).
    const graceBefore = leftoverBefore(ctx, opts);
    for (const refs of ctx.blobReferences) {
      const store = ctx.storage[refs.store];
      const listedAt = new Date();
      const flush = async (batch: ListedBlob[]) => {
        if (!batch.length) return;
        const kept = await refs.referenced(batch.map((b) => b.key));
        for (const b of batch) {
          if (kept.has(b.key)) continue;
          const text = `${refs.store}/${b.key} (${b.size} bytes): no ${refs.label} row references it`;
          if (!opts.fix) report.problem(text);
          else if (await store.delete(b.key, { ifUnmodifiedSince: listedAt })) report.fixed(text);
          else report.problem(`${text}; written again since the listing, kept`);
        }
      };
      let batch: ListedBlob[] = [];
      for await (const b of store.list(refs.prefix)) {
        if (b.mtime.getTime() >= graceBefore) continue;
        batch.push(b);
        if (batch.length >= PAGE) {
          await flush(batch);
          batch = [];
        }
      }
      await flush(batch);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Rows pointing at what is gone (columns without a foreign key, and rows whose blob is missing)

/** The rows a removal took (by id) and the blobs to delete once it has committed. */
/** One kind of orphaned row. */
interface OrphanKind<R extends { id: number }> {
  /** The candidate rows of `scope` (a page by id, or the rows read again before removing them). */
  rows(q: Db | Tx, scope: Scope): Promise<R[]>;
  /** Of candidates, those whose blob is missing (kinds found by their blob; else every candidate is one). */
  blobMissing?(ctx: DoctorContext, rows: R[]): Promise<R[]>;
  describe(row: R): string;
  /** Removes the rows (found orphaned inside the transaction), correcting the usage they counted. */
  remove(tx: Tx, rows: R[]): Promise<void>;
  /** Blobs the removed rows leave behind, deleted after the commit. */
  blobs?(row: R): Array<{ store: keyof Storage; key: string }>;
}

const ATTACHMENT_ISSUES: LeafSubject = 'size:assets:attachments:issues';
const ATTACHMENT_RELEASES: LeafSubject = 'size:assets:attachments:releases';
const LFS: LeafSubject = 'size:git:lfs';

/** The rows whose blob in `store` is missing (stat'ed a few at a time). */
function withoutBlob<R extends { id: number }>(store: keyof Storage, key: (r: R) => string) {
  return async (ctx: DoctorContext, rows: R[]): Promise<R[]> => {
    const missing: R[] = [];
    await eachLimited(rows, CONCURRENCY * 2, async (r) => {
      if (!(await ctx.storage[store].stat(key(r)))) missing.push(r);
    });
    return missing.sort((a, b) => a.id - b.id);
  };
}

async function removeAttachments(tx: Tx, rows: opsStore.AttachmentRef[]): Promise<void> {
  await opsStore.deleteAttachments(
    tx,
    rows.map((r) => r.id),
  );
  for (const r of rows) {
    const subject = r.release_id === null ? ATTACHMENT_ISSUES : ATTACHMENT_RELEASES;
    await recordUsage(tx, r.owner_id, subject, -Number(r.size));
  }
}

const orphanAttachments: OrphanKind<opsStore.AttachmentRef> = {
  rows: (q, scope) => opsStore.attachments(q, scope, 'dangling'),
  describe: (r) => `attachment ${r.uuid}: its issue, comment or release is gone`,
  remove: removeAttachments,
  blobs: (r) => [{ store: 'attachments', key: attachmentKey(r.uuid) }],
};

const attachmentsWithoutBlob: OrphanKind<opsStore.AttachmentRef> = {
  rows: (q, scope) => opsStore.attachments(q, scope, 'stored'),
  blobMissing: withoutBlob('attachments', (r) => attachmentKey(r.uuid)),
  describe: (r) => `attachment ${r.uuid}: its blob is missing`,
  remove: removeAttachments,
};

const lfsWithoutBlob: OrphanKind<opsStore.LfsRef> = {
  rows: opsStore.lfsObjects,
  blobMissing: withoutBlob('lfs', (r) => lfsKey(r.oid)),
  describe: (r) => `LFS object ${r.oid} of repository ${r.repository_id}: its blob is missing`,
  async remove(tx, rows) {
    await opsStore.deleteLfsObjects(
      tx,
      rows.map((r) => r.id),
    );
    for (const r of rows) await recordUsage(tx, r.owner_id, LFS, -Number(r.size));
  },
};

const packageBlobsWithoutBlob: OrphanKind<opsStore.PackageBlobRef> = {
  rows: opsStore.packageBlobs,
  blobMissing: withoutBlob('packages', (r) => packageKey(r.hash_sha256)),
  describe: (r) => `package blob ${r.hash_sha256}: its blob is missing (the package files using it go too)`,
  async remove(tx, rows) {
    const files = await opsStore.deletePackageBlobs(
      tx,
      rows.map((r) => r.id),
    );
    for (const f of files) await recordUsage(tx, f.owner_id, PACKAGES, -Number(f.size));
  },
};

const orphanReactions: OrphanKind<opsStore.NamedRef> = {
  rows: opsStore.danglingReactions,
  describe: (r) => `reaction ${r.id} (${r.what}): its comment is gone`,
  remove: (tx, rows) =>
    opsStore.deleteReactions(
      tx,
      rows.map((r) => r.id),
    ),
};

const orphanPackageProperties: OrphanKind<opsStore.NamedRef> = {
  rows: opsStore.danglingPackageProperties,
  describe: (r) => `package property ${r.id} (${r.what}): its package, version or file is gone`,
  remove: (tx, rows) =>
    opsStore.deletePackageProperties(
      tx,
      rows.map((r) => r.id),
    ),
};

const ORPHAN_KINDS = [
  orphanAttachments,
  attachmentsWithoutBlob,
  lfsWithoutBlob,
  packageBlobsWithoutBlob,
  orphanReactions,
  orphanPackageProperties,
] as Array<OrphanKind<never>> as Array<OrphanKind<{ id: number }>>;

const dbConsistency: DoctorCheck = {
  name: 'check-db-consistency',
  title:
    'Rows pointing at what is gone: attachments of deleted issues, comments or releases, reactions to deleted comments, ' +
    'package properties of deleted packages; LFS objects, attachments and package blobs whose blob is missing',
  fix: 'removes those rows in a transaction per page, correcting the quota usage they counted',
  isDefault: true,
  async run(ctx, opts, report) {
    for (const kind of ORPHAN_KINDS) {
      const orphaned = async (candidates: Array<{ id: number }>) =>
        kind.blobMissing ? kind.blobMissing(ctx, candidates) : candidates;
      let after = 0;
      for (;;) {
        const page = await kind.rows(ctx.db, { after, limit: PAGE });
        const rows = await orphaned(page);
        if (rows.length && !opts.fix) {
          for (const r of rows) report.problem(kind.describe(r));
        } else if (rows.length) {
          // Read again inside the transaction: a row that changed meanwhile (its issue back, its
          // blob written) is kept.
          const removed = await transaction(ctx.db, async (tx) => {
            const still = await orphaned(await kind.rows(tx, { ids: rows.map((r) => r.id) }));
            if (still.length) await kind.remove(tx, still);
            return still;
          });
          for (const r of removed) {
            for (const b of kind.blobs?.(r) ?? []) await ctx.storage[b.store].delete(b.key);
          }
          for (const r of removed) report.fixed(kind.describe(r));
        }
        if (page.length < PAGE) break;
        after = page.at(-1)!.id;
      }
    }
  },
};

/** Every check, in the order they run. */
export const CHECKS: readonly DoctorCheck[] = [
  unfinishedChanges,
  repoHeads,
  orphanedRepoDirs,
  leftovers,
  dbConsistency,
  quotaUsage,
  storages,
  gitFsck,
];

/** The checks `--run` names (each once, in CHECKS' order), or with `all` every one, else the default ones. */
export function selectChecks(names: readonly string[], all: boolean): DoctorCheck[] {
  const unknown = names.filter((n) => !CHECKS.some((c) => c.name === n));
  if (unknown.length) {
    throw invalid(`unknown check ${unknown.join(', ')} (anvil doctor --list shows the checks)`);
  }
  if (names.length) return CHECKS.filter((c) => names.includes(c.name));
  return CHECKS.filter((c) => all || c.isDefault);
}

/** `--list`: a line per check, `*` marking those run by default. */
export function listChecks(): string[] {
  const width = Math.max(...CHECKS.map((c) => c.name.length));
  return [
    `Default  ${'Name'.padEnd(width)}  Title`,
    ...CHECKS.map((c) => `${c.isDefault ? '*' : ' '}        ${c.name.padEnd(width)}  ${c.title}`),
  ];
}

/**
 * Runs the checks, writing what each found (and fixed) through `print`; how many problems
 * remain (the command exits 1 when any do).
 */
export async function runDoctor(
  ctx: DoctorContext,
  checks: readonly DoctorCheck[],
  opts: DoctorOptions,
  print: (line: string) => void,
): Promise<number> {
  let remaining = 0;
  let fixedTotal = 0;
  for (const [i, check] of checks.entries()) {
    print(`[${i + 1}] ${check.title} (${check.name})`);
    let problems = 0;
    let fixed = 0;
    try {
      await check.run(ctx, opts, {
        problem: (line) => {
          problems++;
          print(` - ${opts.fix ? 'not fixed' : 'found'}: ${line}`);
        },
        fixed: (line) => {
          fixed++;
          print(` - fixed: ${line}`);
        },
      });
    } catch (err) {
      problems++;
      print(` - failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    remaining += problems;
    fixedTotal += fixed;
    const parts = [fixed ? `${fixed} fixed` : '', problems ? `${problems} problem(s)` : ''].filter(Boolean);
    print(parts.length ? parts.join(', ') : 'OK');
  }
  if (remaining === 0) {
    print(opts.fix ? `Done: ${fixedTotal} problem(s) fixed, none left.` : 'No problems found.');
  } else {
    print(
      opts.fix
        ? `${remaining} problem(s) remain after fixing ${fixedTotal}.`
        : `${remaining} problem(s) found; run with --fix to correct them.`,
    );
  }
  return remaining;
}
