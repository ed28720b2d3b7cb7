// `anvil dump` and `anvil restore`: the whole site in one .tar.gz, taken while the server runs.
//
// The archive holds, in this order: `anvil-dump.json` (the schema's migrations, the tables),
// `database/<table>.jsonl` (every row, read in one snapshot transaction: REPEATABLE READ on
// PostgreSQL, a WAL read transaction on SQLite, so the rows agree with each other), then
// `repositories/...` (each bare repository with its refs copied before its objects, so every ref
// a copy holds names objects the copy has; pushes' quarantines are left out), `blobs/<kind>/<key>`
// (LFS, attachments, artifacts, packages, avatars) and `app.ini` (the configuration in use).
// Repositories and blobs are read after the database: what was written meanwhile is newer than
// the rows. A restore therefore ends as a crash recovery does: each repository's rows are
// reconciled with its refs (repos/recovery.ts), quota totals recalculated, and blobs no row names
// are left for the sweep. The rows are JSON, so a dump of SQLite restores into PostgreSQL and back.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import zlib from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { sql } from 'kysely';
import type { Db, Dialect } from '../db/database.js';
import type { QuotaService } from '../quota/service.js';
import type { RefRecovery } from '../repos/recovery.js';
import type { BlobStore, Storage } from '../storage/storage.js';
import * as store from './store.js';

const MANIFEST = 'anvil-dump.json';
const FORMAT = 1;

interface Manifest {
  format: number;
  created: string;
  dialect: string;
  migrations: string[];
  tables: Array<{ name: string; columns: string[]; rows: number }>;
}

/** Adds the file at `file` (opened first: a file removed meanwhile is skipped) under `name`. */
async function addFile(pack: tar.Pack, name: string, file: string): Promise<boolean> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const { size, mtime } = fs.fstatSync(fd);
  if (size === 0) {
    fs.closeSync(fd);
    await addStream(pack, name, 0, Readable.from([]), mtime);
    return true;
  }
  // The stream owns the descriptor from here (closed when it ends or fails).
  await addStream(pack, name, size, fs.createReadStream('', { fd, end: size - 1 }), mtime);
  return true;
}

async function addStream(pack: tar.Pack, name: string, size: number, data: Readable, mtime = new Date()) {
  let failed: Error | undefined;
  const written = new Promise<void>((resolve, reject) => {
    const entry = pack.entry({ name, size, mtime }, (err) => (err ? reject(err) : resolve()));
    // (tar-stream's entries are streamx streams: written by hand rather than piped into.)
    void (async () => {
      try {
        for await (const chunk of data) {
          if (!entry.write(chunk as Buffer)) await new Promise<void>((r) => entry.once('drain', () => r()));
        }
        (entry as unknown as { end(): void }).end();
      } catch (err) {
        failed = err as Error;
        entry.destroy(failed);
      }
    })();
  });
  await written;
  if (failed) throw failed;
}

/** A repository's files (quarantines and locks left out): all but its objects, or only its objects. */
function repositoryFiles(dir: string, objects: boolean): string[] {
  const files = (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => {
    if (f.startsWith('objects') !== objects) return false;
    if (/(^|\/)objects\/(incoming-|tmp_objdir)/.test(f) || f.endsWith('.lock')) return false;
    try {
      return fs.statSync(path.join(dir, f)).isFile();
    } catch {
      return false;
    }
  });
  // HEAD and config, then loose refs, then packed-refs (a ref packed meanwhile is then still
  // found: its loose file read first, or packed-refs read after), then the rest.
  const rank = (f: string) =>
    f === 'HEAD' || f === 'config' ? 0 : f.startsWith('refs') ? 1 : f === 'packed-refs' ? 2 : 3;
  return files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/**
 * Adds a bare repository while pushes may run: its refs first, then its objects as they are
 * listed AFTER the refs were read, so every object a copied ref names is in the listing (a push
 * writes its objects before it moves a ref). Objects never change once written; a repack only
 * adds a pack and then removes what it replaced, so when a listed file is gone by the time it is
 * read, the objects are listed again and what was not yet copied is added.
 */
async function addRepository(pack: tar.Pack, entry: string, dir: string): Promise<void> {
  for (const f of repositoryFiles(dir, false))
    await addFile(pack, `repositories/${entry}/${f}`, path.join(dir, f));
  const copied = new Set<string>();
  for (let round = 0; round < 10; round++) {
    let vanished = false;
    for (const f of repositoryFiles(dir, true)) {
      if (copied.has(f)) continue;
      if (await addFile(pack, `repositories/${entry}/${f}`, path.join(dir, f))) copied.add(f);
      else vanished = true;
    }
    if (!vanished) return;
  }
  throw new Error(`${entry}: its objects kept changing while they were copied`);
}

/** What a dump reads and a restore writes (and reconciles afterwards). */
export interface DumpDeps {
  db: Db;
  dialect: Dialect;
  storage: Storage;
  /** [repository] ROOT. */
  repoRoot: string;
  /** The configuration file in use, dumped beside the data (if any). */
  configPath: string | null;
  /** [server] APP_DATA_PATH, where a restore puts the dumped configuration. */
  appDataPath: string;
  recovery: Pick<RefRecovery, 'checkRepositories'>;
  quota: Pick<QuotaService, 'reconcile'>;
}

export async function dump(deps: DumpDeps, file: string, log: (line: string) => void): Promise<Manifest> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-dump-'));
  try {
    const manifest = await dumpDatabase(deps, work);
    log(
      `database: ${manifest.tables.length} tables, ${manifest.tables.reduce((n, t) => n + t.rows, 0)} rows`,
    );
    const pack = tar.pack();
    const tmp = `${file}.${crypto.randomBytes(4).toString('hex')}.part`;
    const written = pipeline(pack, zlib.createGzip({ level: 6 }), fs.createWriteStream(tmp));
    try {
      const json = Buffer.from(JSON.stringify(manifest, null, 2));
      pack.entry({ name: MANIFEST }, json);
      for (const t of manifest.tables)
        await addFile(pack, `database/${t.name}.jsonl`, path.join(work, `${t.name}.jsonl`));
      const root = deps.repoRoot;
      let repos = 0;
      for (const entry of fs.existsSync(root) ? fs.readdirSync(root).sort() : []) {
        if (!entry.endsWith('.git')) continue;
        await addRepository(pack, entry, path.join(root, entry));
        repos++;
      }
      log(`repositories: ${repos}`);
      for (const [kind, blobs] of Object.entries(deps.storage) as Array<[string, BlobStore]>) {
        let n = 0;
        for await (const b of blobs.list()) {
          const stat = await blobs.stat(b.key);
          if (!stat) continue; // removed meanwhile
          await addStream(pack, `blobs/${kind}/${b.key}`, stat.size, await blobs.open(b.key));
          n++;
        }
        log(`blobs/${kind}: ${n}`);
      }
      if (deps.configPath && fs.existsSync(deps.configPath)) {
        await addFile(pack, 'app.ini', deps.configPath);
      }
      pack.finalize();
      await written;
      fs.renameSync(tmp, file);
    } catch (err) {
      pack.destroy();
      await written.catch(() => undefined);
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    return manifest;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Every table's rows into `<dir>/<table>.jsonl`, from one snapshot. */
async function dumpDatabase(deps: DumpDeps, dir: string): Promise<Manifest> {
  const snapshot = deps.db.transaction();
  const run = deps.dialect === 'sqlite' ? snapshot : snapshot.setIsolationLevel('repeatable read');
  return run.execute(async (trx) => {
    const q = trx as unknown as Db;
    const migrations = await store.appliedMigrations(q);
    const tables = await store.dataTables(q);
    const out: Manifest['tables'] = [];
    for (const t of tables) {
      const stream = fs.createWriteStream(path.join(dir, `${t.name}.jsonl`));
      let rows = 0;
      for await (const page of store.tableRows(q, t.name, t.columns)) {
        const text = page.map((r) => JSON.stringify(r)).join('\n') + '\n';
        if (!stream.write(text)) await new Promise<void>((r) => stream.once('drain', () => r()));
        rows += page.length;
      }
      await new Promise<void>((resolve, reject) =>
        stream.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
      out.push({ name: t.name, columns: t.columns, rows });
    }
    return {
      format: FORMAT,
      created: new Date().toISOString(),
      dialect: deps.dialect,
      migrations,
      tables: out,
    };
  });
}

/** Where an archive path may be written under `root`: never outside it. */
function inside(root: string, rel: string): string {
  const target = path.resolve(root, rel);
  if (rel.includes('\0') || !target.startsWith(path.resolve(root) + path.sep)) {
    throw new Error(`the archive names a path outside its directory: ${rel}`);
  }
  return target;
}

export async function restore(deps: DumpDeps, file: string, log: (line: string) => void): Promise<void> {
  if (await store.hasAccounts(deps.db))
    throw new Error('the database is not empty: restore only into a new site');
  const root = deps.repoRoot;
  if (fs.existsSync(root) && fs.readdirSync(root).some((e) => e.endsWith('.git'))) {
    throw new Error(`${root} already holds repositories: restore only into a new site`);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-restore-'));
  try {
    let manifest: Manifest | undefined;
    const extract = tar.extract();
    const done = pipeline(fs.createReadStream(file), zlib.createGunzip(), extract);
    done.catch(() => undefined); // awaited below; an error in the loop must not leave it unhandled
    for await (const entry of extract) {
      const name = entry.header.name;
      if (entry.header.type !== 'file') {
        entry.resume();
        continue;
      }
      if (name === MANIFEST) {
        let text = '';
        for await (const c of entry) text += c;
        manifest = JSON.parse(text) as Manifest;
        if (manifest.format !== FORMAT) throw new Error(`unknown dump format ${manifest.format}`);
        const mine = await store.appliedMigrations(deps.db);
        if (mine.join() !== manifest.migrations.join()) {
          throw new Error(
            `the dump's schema (${manifest.migrations.at(-1)}) differs from this Anvil's (${mine.at(-1)}): restore it with the same version`,
          );
        }
      } else if (!manifest) {
        throw new Error(`${file} is not an Anvil dump (it does not start with ${MANIFEST})`);
      } else if (name.startsWith('database/')) {
        await pipeline(
          Readable.from(entry),
          fs.createWriteStream(inside(work, name.slice('database/'.length))),
        );
      } else if (name.startsWith('repositories/')) {
        const target = inside(root, name.slice('repositories/'.length));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        await pipeline(Readable.from(entry), fs.createWriteStream(target));
      } else if (name.startsWith('blobs/')) {
        const [, kind, ...key] = name.split('/');
        const blobs = (deps.storage as unknown as Record<string, BlobStore | undefined>)[kind ?? ''];
        if (!blobs) throw new Error(`the dump names an unknown blob store: ${kind}`);
        await blobs.put(key.join('/'), Readable.from(entry));
      } else if (name === 'app.ini') {
        const target = path.join(deps.appDataPath, 'app.ini.from-dump');
        fs.mkdirSync(path.dirname(target), { recursive: true });
        await pipeline(Readable.from(entry), fs.createWriteStream(target));
        log(`the dumped configuration is in ${target} (sealed secrets need its [security] SECRET_KEY)`);
      } else {
        entry.resume();
      }
    }
    await done;
    if (!manifest) throw new Error(`${file} is not an Anvil dump`);
    // The archive holds files only: the directories git needs even when empty are made here.
    for (const entry of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      if (!entry.endsWith('.git')) continue;
      for (const d of ['objects/info', 'objects/pack', 'refs/heads', 'refs/tags']) {
        fs.mkdirSync(path.join(root, entry, d), { recursive: true });
      }
    }
    await restoreDatabase(deps, manifest, work);
    log(`database: ${manifest.tables.reduce((n, t) => n + t.rows, 0)} rows restored`);
    // As after a crash: the rows follow the repositories and the quota totals follow both.
    const fixed = await deps.recovery.checkRepositories(true);
    for (const line of fixed) log(`reconciled: ${line}`);
    await deps.quota.reconcile();
    log('Done.');
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function restoreDatabase(deps: DumpDeps, manifest: Manifest, dir: string): Promise<void> {
  const sqlite = deps.dialect === 'sqlite';
  // Rows go in table by table, so references are checked only once all are in.
  if (sqlite) await sql`PRAGMA foreign_keys = OFF`.execute(deps.db);
  try {
    await deps.db.transaction().execute(async (trx) => {
      const q = trx as unknown as Db;
      if (deps.dialect === 'postgres') await sql`SET LOCAL session_replication_role = replica`.execute(q);
      // MySQL: off for this connection until the end of the transaction (below).
      if (deps.dialect === 'mysql') await sql`SET FOREIGN_KEY_CHECKS = 0`.execute(q);
      for (const t of manifest.tables) {
        // The tables a fresh site fills itself (none but the migrator's, today) start empty.
        await sql`DELETE FROM ${sql.table(t.name)}`.execute(q);
        const file = path.join(dir, `${t.name}.jsonl`);
        if (!fs.existsSync(file)) continue;
        let batch: Record<string, unknown>[] = [];
        const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
        for await (const line of lines) {
          if (!line) continue;
          batch.push(JSON.parse(line) as Record<string, unknown>);
          if (batch.length >= 200) {
            await store.insertRows(q, t.name, batch);
            batch = [];
          }
        }
        await store.insertRows(q, t.name, batch);
      }
      if (sqlite) {
        const broken = await sql<{ table: string }>`PRAGMA foreign_key_check`.execute(q);
        if (broken.rows.length)
          throw new Error(`the dump's rows break references (${broken.rows[0]!.table})`);
      } else if (deps.dialect === 'postgres') {
        await store.resetSequences(q, manifest.tables);
      } else {
        // AUTO_INCREMENT counters have moved past the ids inserted by themselves.
        await sql`SET FOREIGN_KEY_CHECKS = 1`.execute(q);
      }
    });
  } finally {
    if (sqlite) await sql`PRAGMA foreign_keys = ON`.execute(deps.db);
  }
}
