// Leftovers of interrupted work on a real server: temporary files of the blob stores, git
// quarantine directories and blobs no row references are swept, while everything a row
// references stays usable (the attachment downloads, the LFS object too, the repository clones).
// And `anvil admin quota recalculate` (the service call and the bundled CLI) measures what is on
// disk and in storage rather than adding up the stored size columns.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { runCli, startServer, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';
import { blobKey as lfsKey } from '../../src/lfs/service.js';
import { blobKey as attachmentKey } from '../../src/attachments/service.js';
import { objectsSize } from '../../src/git/git.js';
import type { Storage } from '../../src/storage/storage.js';

const HOUR = 3600_000;
const execGit = promisify(execFile);

interface User {
  name: string;
  password: string;
  token: string;
  id: number;
}

interface UsedJson {
  size: {
    repos: { public: number; private: number };
    git: { LFS: number };
    assets: { attachments: { issues: number; releases: number }; artifacts: number };
  };
}

const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** Sets the modification time of `p` (and, for a directory, of everything in it) `ms` ago. */
function age(p: string, ms = 2 * HOUR): void {
  const t = new Date(Date.now() - ms);
  const walk = (q: string) => {
    if (fs.statSync(q).isDirectory()) for (const n of fs.readdirSync(q)) walk(path.join(q, n));
    fs.utimesSync(q, t, t);
  };
  walk(p);
}

describe('sweeping leftovers and measuring usage', () => {
  let s: TestServer;
  let alice: User;
  let gitc: GitClient;
  let repoId: number;
  let repoDir: string;
  let attachment: { uuid: string; browser_download_url: string; size: number };
  const attachmentData = crypto.randomBytes(4096);
  const lfsData = crypto.randomBytes(3000);
  const lfsOid = sha256(lfsData);

  const file = (store: keyof Storage, key: string) => path.join(s.dataDir, store, key);
  const used = async () => {
    const r = await s.api<{ used: UsedJson }>('GET', '/user/quota', { token: alice.token });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size;
  };
  const sizeColumn = async () =>
    Number(
      (
        await s.ctx.db
          .selectFrom('repository')
          .select('size')
          .where('id', '=', repoId)
          .executeTakeFirstOrThrow()
      ).size,
    );
  /** Writes `n` random blobs straight into the bare repository, as a push the database never saw. */
  const addObjects = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const tmp = path.join(gitc.home, `blob-${crypto.randomUUID()}`);
      fs.writeFileSync(tmp, crypto.randomBytes(2048));
      await execGit('git', ['--git-dir', repoDir, 'hash-object', '-w', tmp]);
    }
  };

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    gitc = new GitClient();
    const r = await s.api<{ id: number }>('POST', '/user/repos', {
      token: alice.token,
      body: { name: 'proj' },
    });
    assert.equal(r.status, 201, r.text);
    repoId = r.body.id;
    repoDir = s.ctx.repos.pathOf({ id: repoId });

    const wt = await gitc.workTree();
    await gitc.commit(wt, 'README.md', '# proj\n');
    await gitc.commit(wt, 'src/main.txt', crypto.randomBytes(3000).toString('base64'));
    await gitc.git(
      ['push', '--quiet', repoUrl(s.url, 'alice', 'proj', [alice.name, alice.password]), 'main'],
      wt,
    );

    const issue = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'with a file' },
    });
    assert.equal(issue.status, 201, issue.text);
    const form = new FormData();
    form.append('attachment', new Blob([attachmentData]), 'trace.log');
    const up = await fetch(`${s.url}/api/v1/repos/alice/proj/issues/${issue.body.number}/assets`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}` },
      body: form,
    });
    assert.equal(up.status, 201, await up.clone().text());
    attachment = (await up.json()) as typeof attachment;

    const basic = `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`;
    const put = await fetch(`${s.url}/alice/proj.git/info/lfs/objects/${lfsOid}`, {
      method: 'PUT',
      headers: { authorization: basic, 'content-type': 'application/octet-stream' },
      body: lfsData,
    });
    assert.equal(put.status, 200, await put.text());
  });

  after(async () => {
    gitc?.cleanup();
    await s?.close();
  });

  it('removes old temporary files, quarantines and unreferenced blobs, and keeps what rows reference', async () => {
    const sizeBefore = await sizeColumn();
    // What rows reference, made as old as the leftovers: only the references keep them.
    age(file('attachments', attachmentKey(attachment.uuid)));
    age(file('lfs', lfsKey(lfsOid)));

    // Partial uploads of a crashed process.
    const tmpUpload = file('attachments', `.tmp/${crypto.randomUUID()}`);
    fs.writeFileSync(tmpUpload, crypto.randomBytes(1000));
    age(tmpUpload);
    const freshTmp = file('lfs', `.tmp/${crypto.randomUUID()}`);
    fs.mkdirSync(path.dirname(freshTmp), { recursive: true });
    fs.writeFileSync(freshTmp, 'still being written');
    // Quarantines of interrupted pushes (git 2.39's name, and older git's).
    const quarantine = path.join(repoDir, 'objects', 'tmp_objdir-incoming-Ab12Cd');
    fs.mkdirSync(path.join(quarantine, 'pack'), { recursive: true });
    fs.writeFileSync(path.join(quarantine, 'pack', 'pack-1.pack'), crypto.randomBytes(5000));
    age(quarantine);
    const oldQuarantine = path.join(repoDir, 'objects', 'incoming-Xy98Zw');
    fs.mkdirSync(oldQuarantine);
    fs.writeFileSync(path.join(oldQuarantine, 'x'), 'y');
    age(oldQuarantine);
    const freshQuarantine = path.join(repoDir, 'objects', 'tmp_objdir-incoming-NowNow');
    fs.mkdirSync(freshQuarantine);
    // Blobs whose rows were never written, under each kind's keys.
    const orphanOid = sha256(crypto.randomBytes(16));
    const orphanUuid = crypto.randomUUID();
    const orphans: Array<[keyof Storage, string]> = [
      ['lfs', lfsKey(orphanOid)],
      ['attachments', attachmentKey(orphanUuid)],
      ['artifacts', 'blobs/999-orphan.zip'],
      ['artifacts', 'blocks/999-0123abcd'],
    ];
    for (const [store, key] of orphans) {
      await s.ctx.storage[store].put(key, Readable.from([crypto.randomBytes(700)]));
      age(file(store, key));
    }
    // A composed artifact whose row never took it (a crash between compose and the row).
    await s.ctx.storage.artifacts.put('blocks/998-a', Readable.from([Buffer.from('part a')]));
    await s.ctx.storage.artifacts.put('blocks/998-b', Readable.from([Buffer.from('part b')]));
    await s.ctx.storage.artifacts.compose('blobs/998-composed.zip', ['blocks/998-a', 'blocks/998-b']);
    age(path.join(s.dataDir, 'artifacts', '.parts', 'blobs', '998-composed.zip'));
    // A fresh orphan: maybe an upload whose row is about to be written.
    const freshOrphan = attachmentKey(crypto.randomUUID());
    await s.ctx.storage.attachments.put(freshOrphan, Readable.from([Buffer.from('in flight')]));

    const report = await s.ctx.sweeper.sweep();

    assert.deepEqual(
      report.temporary.map((t) => `${t.store}/${t.name}`),
      [`attachments/.tmp/${path.basename(tmpUpload)}`],
    );
    assert.deepEqual(report.quarantine.map((q) => q.name).sort(), [
      `${repoId}.git/objects/incoming-Xy98Zw`,
      `${repoId}.git/objects/tmp_objdir-incoming-Ab12Cd`,
    ]);
    assert.deepEqual(
      report.orphans.map((o) => `${o.store}:${o.key}`).sort(),
      [...orphans.map(([st, k]) => `${st}:${k}`), 'artifacts:blobs/998-composed.zip'].sort(),
    );
    for (const p of [tmpUpload, quarantine, oldQuarantine]) assert.ok(!fs.existsSync(p), `${p} removed`);
    for (const [store, key] of orphans) assert.equal(await s.ctx.storage[store].stat(key), undefined, key);
    assert.equal(await s.ctx.storage.artifacts.stat('blobs/998-composed.zip'), undefined);
    assert.ok(fs.existsSync(freshTmp), 'a fresh temporary file is kept');
    assert.ok(fs.existsSync(freshQuarantine), 'a fresh quarantine is kept');
    assert.ok(await s.ctx.storage.attachments.stat(freshOrphan), 'a fresh blob is kept');

    // The real data is intact.
    const dl = await fetch(attachment.browser_download_url);
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(attachmentData), 'the attachment downloads');
    const lfsGet = await fetch(`${s.url}/alice/proj.git/info/lfs/objects/${lfsOid}`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`,
      },
    });
    assert.equal(lfsGet.status, 200);
    assert.ok(Buffer.from(await lfsGet.arrayBuffer()).equals(lfsData), 'the LFS object downloads');
    const clone = path.join(gitc.home, 'clone');
    await gitc.git([
      'clone',
      '--quiet',
      repoUrl(s.url, 'alice', 'proj', [alice.name, alice.password]),
      clone,
    ]);
    assert.equal(fs.readFileSync(path.join(clone, 'README.md'), 'utf8'), '# proj\n');
    await gitc.git(['fsck', '--no-progress'], clone);
    assert.equal(await sizeColumn(), sizeBefore);

    // Nothing left to remove: a second sweep finds nothing.
    const again = await s.ctx.sweeper.sweep();
    assert.deepEqual([again.temporary, again.quarantine, again.orphans], [[], [], []]);
  });

  it('recalculation measures the repository on disk and the blobs in storage, and fixes rows and usage', async () => {
    const start = await used();
    const recorded = await sizeColumn();
    assert.equal(start.repos.public, recorded, 'usage and the size column agree so far');
    assert.equal(start.git.LFS, lfsData.length);
    assert.equal(start.assets.attachments.issues, attachmentData.length);
    // Objects the database never heard of (an interrupted push), and wrong size columns.
    await addObjects(3);
    const onDisk = objectsSize(repoDir);
    assert.ok(onDisk > recorded + 3 * 2000, `${onDisk} on disk, ${recorded} recorded`);
    await s.ctx.db.updateTable('attachment').set({ size: 1 }).where('uuid', '=', attachment.uuid).execute();
    await s.ctx.db.updateTable('lfs_meta_object').set({ size: 2 }).where('oid', '=', lfsOid).execute();

    const { resized, drift } = await s.ctx.quota.reconcile();

    assert.deepEqual(
      resized.map((r) => [r.kind, r.ownerId, r.recorded, r.measured]).sort(),
      [
        ['attachment', alice.id, 1, attachmentData.length],
        ['lfs', alice.id, 2, lfsData.length],
        ['repository', alice.id, recorded, onDisk],
      ].sort(),
    );
    assert.equal(resized.find((r) => r.kind === 'repository')?.name, 'alice/proj');
    // The totals had counted the right sizes for the blobs; only the repository's had drifted.
    assert.deepEqual(drift, [
      { ownerId: alice.id, subject: 'size:repos:public', stored: recorded, actual: onDisk },
    ]);
    assert.equal(await sizeColumn(), onDisk);
    const now = await used();
    assert.equal(now.repos.public, onDisk);
    assert.equal(now.git.LFS, lfsData.length);
    assert.equal(now.assets.attachments.issues, attachmentData.length);

    const twice = await s.ctx.quota.reconcile();
    assert.deepEqual(twice, { resized: [], drift: [] });
    assert.deepEqual(await s.ctx.quota.recalculate(), [], 'recalculate answers the drift alone');
  });

  it('anvil admin quota recalculate reports and fixes the size column and the usage it finds on disk', async () => {
    const recorded = await sizeColumn();
    await addObjects(2);
    const onDisk = objectsSize(repoDir);
    assert.ok(onDisk > recorded);

    let r = await runCli(s, ['admin', 'quota', 'recalculate', '--owner', 'alice']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(
      r.stdout,
      new RegExp(`^size: repository alice/proj: recorded ${recorded}, measured ${onDisk} \\(fixed\\)$`, 'm'),
    );
    assert.match(
      r.stdout,
      new RegExp(`^drift: alice size:repos:public: stored ${recorded}, actual ${onDisk} \\(fixed\\)$`, 'm'),
    );
    assert.match(r.stdout, /^1 recorded size\(s\) corrected\.$/m);
    assert.match(r.stdout, /^1 total\(s\) corrected\.$/m);
    assert.equal(await sizeColumn(), onDisk);
    assert.equal((await used()).repos.public, onDisk, 'the running server sees the fixed usage');

    r = await runCli(s, ['admin', 'quota', 'recalculate']);
    assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stdout, /No drift/);
    assert.doesNotMatch(r.stdout, /^size:/m);
  });
});
