// The sweep of leftovers: temporary files of the blob stores, git quarantine directories and
// blobs no row references, each removed only once older than the grace period; and the listing
// of a store it relies on.
import { after, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { LocalBlobStore, localStorage, type ListedBlob, type Storage } from '../../src/storage/storage.js';
import { SWEEP_GRACE_MS, Sweeper, type BlobReferences } from '../../src/storage/sweep.js';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-sweep-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));

const silent = pino({ level: 'silent' });
const HOUR = 3600_000;
const put = (store: LocalBlobStore, key: string, content: string) =>
  store.put(key, Readable.from([Buffer.from(content)]));

/** Sets the modification time of `p` (and, for a directory, of everything in it) `ms` ago. */
function age(p: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  const walk = (q: string) => {
    if (fs.statSync(q).isDirectory()) for (const n of fs.readdirSync(q)) walk(path.join(q, n));
    fs.utimesSync(q, t, t);
  };
  walk(p);
}

async function listAll(store: LocalBlobStore, prefix?: string): Promise<ListedBlob[]> {
  const out: ListedBlob[] = [];
  for await (const b of store.list(prefix)) out.push(b);
  return out;
}

let dir: string;
let storage: Storage;
let repos: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(base, 'case-'));
  storage = localStorage(dir);
  repos = path.join(dir, 'repositories');
  fs.mkdirSync(repos);
});

function sweeper(references: BlobReferences[] = []): Sweeper {
  return new Sweeper({ storage, repoRoot: repos, blobReferences: references, log: silent });
}

/** A contribution for `store` under `prefix` whose rows reference `keys`, counting its calls. */
function referencing(store: keyof Storage, prefix: string, keys: string[]) {
  const held = new Set(keys);
  const calls: string[][] = [];
  const refs: BlobReferences = {
    label: store,
    store,
    prefix,
    referenced: async (batch) => {
      calls.push(batch);
      return new Set(batch.filter((k) => held.has(k)));
    },
  };
  return { refs, calls };
}

describe('LocalBlobStore.list', () => {
  it('lists every blob under a prefix with its size and time, composed ones too, never its own files', async () => {
    const store = storage.artifacts as LocalBlobStore;
    await put(store, 'blobs/1-a.zip', 'plain');
    await put(store, 'blocks/1-x', 'abc');
    await put(store, 'blocks/1-y', 'de');
    await put(store, 'blocks/2-z', 'left');
    await store.compose('blobs/2-b.zip', ['blocks/1-x', 'blocks/1-y']);
    fs.writeFileSync(path.join(dir, 'artifacts', '.tmp', 'partial'), 'xx');

    const all = await listAll(store);
    assert.deepEqual(all.map((b) => [b.key, b.size]).sort(), [
      ['blobs/1-a.zip', 5],
      ['blobs/2-b.zip', 5],
      ['blocks/2-z', 4],
    ]);
    for (const b of all) assert.ok(b.mtime instanceof Date && Date.now() - b.mtime.getTime() < HOUR);
    assert.deepEqual(
      (await listAll(store, 'blobs/')).map((b) => b.key),
      ['blobs/1-a.zip', 'blobs/2-b.zip'],
    );
    assert.deepEqual(
      (await listAll(store, 'blocks/2')).map((b) => b.key),
      ['blocks/2-z'],
    );
    assert.deepEqual(await listAll(store, 'nothing/'), []);
    assert.deepEqual(await listAll(storage.lfs as LocalBlobStore), [], 'an empty store lists nothing');
  });
});

describe('LocalBlobStore.delete', () => {
  it('says whether it removed a blob, and keeps one modified since the time it is given', async () => {
    const store = storage.attachments as LocalBlobStore;
    await put(store, 'a/b/plain', 'x');
    await put(store, 'blocks/1', 'y');
    await store.compose('blobs/composed', ['blocks/1']);
    const anHourAgo = new Date(Date.now() - HOUR);
    assert.equal(await store.delete('a/b/plain', { ifUnmodifiedSince: anHourAgo }), false);
    assert.equal(await store.delete('blobs/composed', { ifUnmodifiedSince: anHourAgo }), false);
    assert.deepEqual(await store.stat('a/b/plain'), { size: 1 });
    assert.deepEqual(await store.stat('blobs/composed'), { size: 1 });
    age(path.join(dir, 'attachments', 'a'), 2 * HOUR);
    age(path.join(dir, 'attachments', '.parts'), 2 * HOUR);
    assert.equal(await store.delete('a/b/plain', { ifUnmodifiedSince: anHourAgo }), true);
    assert.equal(await store.delete('blobs/composed', { ifUnmodifiedSince: anHourAgo }), true);
    assert.equal(await store.stat('a/b/plain'), undefined);
    assert.equal(await store.stat('blobs/composed'), undefined);
    assert.equal(await store.delete('a/b/plain'), false, 'absent: nothing removed, no error');
  });
});

describe('Sweeper', () => {
  it('removes temporary files and directories older than the grace period and keeps fresh ones', async () => {
    const tmp = path.join(dir, 'attachments', '.tmp');
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, 'old-upload'), 'x'.repeat(10));
    fs.writeFileSync(path.join(tmp, 'fresh-upload'), 'y');
    fs.mkdirSync(path.join(tmp, 'old-compose'));
    fs.writeFileSync(path.join(tmp, 'old-compose', '00000000'), 'zz');
    fs.mkdirSync(path.join(tmp, 'busy-compose'));
    fs.writeFileSync(path.join(tmp, 'busy-compose', '00000000'), 'w');
    age(path.join(tmp, 'old-upload'), 2 * HOUR);
    age(path.join(tmp, 'old-compose'), 2 * HOUR);
    age(path.join(tmp, 'busy-compose'), 2 * HOUR);
    // A part moved in a moment ago: the directory is still being written.
    fs.writeFileSync(path.join(tmp, 'busy-compose', '00000001'), 'v');

    const report = await sweeper().sweep();
    assert.deepEqual(report.temporary.map((t) => [t.store, t.name, t.size]).sort(), [
      ['attachments', '.tmp/old-compose', 2],
      ['attachments', '.tmp/old-upload', 10],
    ]);
    assert.deepEqual(fs.readdirSync(tmp).sort(), ['busy-compose', 'fresh-upload']);
  });

  it('removes old blobs no row references, in batches, and keeps referenced, fresh and unclaimed ones', async () => {
    const lfs = storage.lfs as LocalBlobStore;
    const artifacts = storage.artifacts as LocalBlobStore;
    await put(lfs, 'aa/bb/orphan', 'orphan');
    await put(lfs, 'aa/bb/kept', 'kept');
    await put(lfs, 'cc/dd/fresh-orphan', 'fresh');
    await put(artifacts, 'blocks/9-a', 'a');
    await put(artifacts, 'blocks/9-b', 'b');
    await artifacts.compose('blobs/9-orphan.zip', ['blocks/9-a', 'blocks/9-b']);
    await put(artifacts, 'blobs/10-kept.zip', 'zip');
    await put(artifacts, 'elsewhere/unclaimed', 'not under the prefix');
    // Many orphans: checked a batch at a time, never one query per key.
    for (let i = 0; i < 600; i++) await put(lfs, `ee/ff/many-${i}`, 'm');
    for (const d of ['aa', 'ee']) age(path.join(dir, 'lfs', d), 2 * HOUR);
    age(path.join(dir, 'artifacts', 'blobs'), 2 * HOUR);
    age(path.join(dir, 'artifacts', '.parts'), 2 * HOUR);
    age(path.join(dir, 'artifacts', 'elsewhere'), 2 * HOUR);

    const l = referencing('lfs', '', ['aa/bb/kept']);
    const a = referencing('artifacts', 'blobs/', ['blobs/10-kept.zip']);
    const report = await sweeper([l.refs, a.refs]).sweep();

    const removed = report.orphans.map((o) => `${o.store}:${o.key}`);
    assert.equal(removed.length, 602);
    assert.ok(removed.includes('lfs:aa/bb/orphan'));
    assert.ok(removed.includes('artifacts:blobs/9-orphan.zip'));
    assert.equal(report.orphans.find((o) => o.key === 'blobs/9-orphan.zip')?.size, 2);
    assert.deepEqual((await listAll(lfs)).map((b) => b.key).sort(), ['aa/bb/kept', 'cc/dd/fresh-orphan']);
    assert.deepEqual((await listAll(artifacts)).map((b) => b.key).sort(), [
      'blobs/10-kept.zip',
      'elsewhere/unclaimed',
    ]);
    assert.equal(await artifacts.stat('blobs/9-orphan.zip'), undefined, 'the composed blob is gone');
    assert.ok(
      l.calls.length >= 2 && l.calls.every((c) => c.length <= 500),
      'keys checked in batches of at most 500',
    );
    assert.equal(
      l.calls.flat().length,
      602,
      'only the blobs older than the grace period are checked, each once',
    );
  });

  it('keeps an old orphan written again after the listing (an upload whose row is coming)', async () => {
    const lfs = storage.lfs as LocalBlobStore;
    await put(lfs, 'aa/bb/again', 'old content');
    await put(lfs, 'aa/bb/gone', 'old content');
    age(path.join(dir, 'lfs', 'aa'), 2 * HOUR);
    const refs: BlobReferences = {
      label: 'lfs',
      store: 'lfs',
      prefix: '',
      referenced: async () => {
        // Between the listing and the removal, an upload stores the same key again.
        await put(lfs, 'aa/bb/again', 'new content');
        return new Set();
      },
    };
    const report = await sweeper([refs]).sweep();
    assert.deepEqual(
      report.orphans.map((o) => o.key),
      ['aa/bb/gone'],
    );
    assert.deepEqual(await lfs.stat('aa/bb/again'), { size: 11 });
  });

  it('sweeps the other domains when one fails', async () => {
    const lfs = storage.lfs as LocalBlobStore;
    const attachments = storage.attachments as LocalBlobStore;
    await put(lfs, 'aa/bb/x', 'x');
    await put(attachments, 'a/b/y', 'y');
    age(path.join(dir, 'lfs', 'aa'), 2 * HOUR);
    age(path.join(dir, 'attachments', 'a'), 2 * HOUR);
    const failing: BlobReferences = {
      label: 'LFS objects',
      store: 'lfs',
      prefix: '',
      referenced: () => Promise.reject(new Error('database went away')),
    };
    const report = await sweeper([failing, referencing('attachments', '', []).refs]).sweep();
    assert.deepEqual(
      report.orphans.map((o) => `${o.store}:${o.key}`),
      ['attachments:a/b/y'],
    );
    assert.deepEqual(await lfs.stat('aa/bb/x'), { size: 1 }, 'nothing removed without an answer');
  });

  it('removes old git quarantine directories and temporary packs, and keeps fresh ones and real objects', async () => {
    const objects = path.join(repos, '7.git', 'objects');
    const make = (rel: string, content = 'data') => {
      fs.mkdirSync(path.dirname(path.join(objects, rel)), { recursive: true });
      fs.writeFileSync(path.join(objects, rel), content);
    };
    make('tmp_objdir-incoming-old1/pack/pack-1.pack', 'p'.repeat(100));
    make('tmp_objdir-incoming-old1/ab/cdef');
    make('incoming-old2/pack/pack-2.pack');
    make('tmp_objdir-incoming-fresh/pack/pack-3.pack');
    make('tmp_objdir-incoming-busy/ab/cdef');
    make('pack/tmp_pack_old');
    make('pack/pack-real.pack');
    make('12/3456');
    for (const n of ['tmp_objdir-incoming-old1', 'incoming-old2', 'tmp_objdir-incoming-busy', 'pack', '12']) {
      age(path.join(objects, n), 2 * HOUR);
    }
    // Still receiving: a file written inside a moment ago.
    make('tmp_objdir-incoming-busy/pack/tmp_pack_now');

    const report = await sweeper().sweep();
    assert.deepEqual(report.quarantine.map((q) => q.name).sort(), [
      '7.git/objects/incoming-old2',
      '7.git/objects/pack/tmp_pack_old',
      '7.git/objects/tmp_objdir-incoming-old1',
    ]);
    assert.equal(report.quarantine.find((q) => q.name.endsWith('old1'))?.size, 104);
    assert.deepEqual(fs.readdirSync(objects).sort(), [
      '12',
      'pack',
      'tmp_objdir-incoming-busy',
      'tmp_objdir-incoming-fresh',
    ]);
    assert.deepEqual(fs.readdirSync(path.join(objects, 'pack')), ['pack-real.pack']);
  });

  it('empties the temporary folders named to it (the web’s uploads) of what is past the grace period', async () => {
    const uploads = path.join(dir, 'tmp', 'uploads');
    fs.mkdirSync(uploads, { recursive: true });
    fs.writeFileSync(path.join(uploads, 'upload-old'), 'abandoned');
    age(path.join(uploads, 'upload-old'), 2 * HOUR);
    fs.writeFileSync(path.join(uploads, 'upload-busy'), 'still arriving');
    const s = new Sweeper({
      storage,
      repoRoot: repos,
      blobReferences: [],
      log: silent,
      temporaryDirs: { uploads, missing: path.join(dir, 'not-there') },
    });
    const report = await s.sweep();
    assert.deepEqual(
      report.temporary.map((t) => [t.store, t.name, t.size]),
      [['uploads', 'upload-old', 9]],
    );
    assert.deepEqual(fs.readdirSync(uploads), ['upload-busy']);
  });

  it('takes its grace period from the sweep, the sweeper, or one hour by default', async () => {
    assert.equal(SWEEP_GRACE_MS, HOUR);
    const tmp = path.join(dir, 'lfs', '.tmp');
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, 'ten-minutes'), 'x');
    age(path.join(tmp, 'ten-minutes'), 10 * 60_000);
    assert.equal((await sweeper().sweep()).temporary.length, 0);
    assert.equal((await sweeper().sweep({ graceMs: 20 * 60_000 })).temporary.length, 0);
    const short = new Sweeper({
      storage,
      repoRoot: repos,
      blobReferences: [],
      log: silent,
      graceMs: 5 * 60_000,
    });
    assert.deepEqual(
      (await short.sweep()).temporary.map((t) => t.name),
      ['.tmp/ten-minutes'],
    );
  });

  it("with no grace, removes everything older than the moment it is given (a dead process's), nothing newer", async () => {
    const tmp = path.join(dir, 'packages', '.tmp');
    const objects = path.join(repos, '3.git', 'objects');
    const scratch = path.join(repos, '.tmp');
    for (const d of [tmp, objects, scratch]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(tmp, 'dead-upload'), 'xx');
    fs.mkdirSync(path.join(objects, 'tmp_objdir-incoming-dead'));
    fs.writeFileSync(path.join(objects, 'tmp_objdir-incoming-dead', 'x'), 'y');
    fs.mkdirSync(path.join(scratch, 'fork-dead.git'));
    fs.writeFileSync(path.join(scratch, 'fork-dead.git', 'HEAD'), 'ref: refs/heads/main\n');
    const orphans = referencing('attachments', '', []);
    await put(storage.attachments as LocalBlobStore, 'a/b/dead', 'orphan');
    // A minute old: an hour's grace keeps all of it.
    for (const p of [tmp, objects, scratch, path.join(dir, 'attachments', 'a')]) age(p, 60_000);
    assert.deepEqual(await sweeper([orphans.refs]).sweep(), { temporary: [], quarantine: [], orphans: [] });
    const at = Date.now() - 1000;
    // Written after that moment: another process's work, kept.
    fs.writeFileSync(path.join(tmp, 'new-upload'), 'z');
    fs.mkdirSync(path.join(scratch, 'fork-new.git'));

    const dry = await sweeper([orphans.refs]).sweep({ graceMs: 0, now: at, dryRun: true });
    const names = (r: typeof dry) => [
      ...r.temporary.map((t) => `${t.store}/${t.name}`),
      ...r.quarantine.map((q) => q.name),
      ...r.orphans.map((o) => `${o.store}/${o.key}`),
    ];
    assert.deepEqual(names(dry).sort(), [
      '.tmp/fork-dead.git',
      '3.git/objects/tmp_objdir-incoming-dead',
      'attachments/a/b/dead',
      'packages/.tmp/dead-upload',
    ]);
    assert.ok(fs.existsSync(path.join(tmp, 'dead-upload')), 'a dry run removes nothing');
    assert.ok(fs.existsSync(path.join(dir, 'attachments', 'a', 'b', 'dead')));
    assert.deepEqual(
      (await sweeper([orphans.refs]).sweep({ graceMs: 0, now: at, dryRun: true, orphans: false })).orphans,
      [],
    );

    const swept = await sweeper([orphans.refs]).sweep({ graceMs: 0, now: at });
    assert.deepEqual(names(swept).sort(), names(dry).sort());
    assert.deepEqual(fs.readdirSync(tmp), ['new-upload']);
    assert.deepEqual(fs.readdirSync(scratch), ['fork-new.git']);
    assert.deepEqual(fs.readdirSync(objects), []);
    assert.equal(await storage.attachments.stat('a/b/dead'), undefined);
  });

  it('sweeps as soon as it is started, and stop() waits for that sweep', async () => {
    const tmp = path.join(dir, 'packages', '.tmp');
    fs.mkdirSync(tmp, { recursive: true });
    fs.writeFileSync(path.join(tmp, 'left-behind'), 'x');
    age(path.join(tmp, 'left-behind'), 2 * HOUR);
    const s = sweeper();
    s.start();
    await s.stop();
    assert.deepEqual(fs.readdirSync(tmp), []);
  });
});
