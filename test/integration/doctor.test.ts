// `anvil doctor` as an administrator runs it (the bundled CLI, a child process) against a real
// server's site: a clean site passes every check; a damaged repository, drifted quota usage, blobs
// no row references and rows pointing at what is gone are each reported (exit status 1), and
// --fix corrects what can be corrected while leaving everything still referenced alone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { runCli, startServer, type CliRun, type TestServer } from '../helpers/server.js';
import { GitClient, repoUrl } from '../helpers/git.js';
import { blobKey as lfsKey } from '../../src/lfs/service.js';
import { blobKey as attachmentKey } from '../../src/attachments/service.js';
import type { Storage } from '../../src/storage/storage.js';
import { DataLock } from '../../src/cluster/datalock.js';

const HOUR = 3600_000;
const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

/** Sets the modification time of `p` `ms` ago (blobs younger than the sweep's grace are left alone). */
function age(p: string, ms = 2 * HOUR): void {
  const t = new Date(Date.now() - ms);
  fs.utimesSync(p, t, t);
}

function ok(r: CliRun, what: string): void {
  assert.equal(r.code, 0, `${what} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

function problems(r: CliRun, what: string): void {
  assert.equal(r.code, 1, `${what} should exit 1\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

describe('anvil doctor', () => {
  let s: TestServer;
  let alice: { name: string; password: string; token: string; id: number };
  let gitc: GitClient;
  let projId: number;
  let otherId: number;
  let issueNumber: number;
  let attachmentUuid: string;
  const lfsData = crypto.randomBytes(3000);
  const lfsOid = sha256(lfsData);

  const doctor = (...args: string[]) => runCli(s, ['doctor', ...args]);
  const file = (store: keyof Storage, key: string) => path.join(s.dataDir, store, key);
  const basic = () => `Basic ${Buffer.from(`${alice.name}:${alice.password}`).toString('base64')}`;

  async function putLfs(data: Buffer): Promise<string> {
    const oid = sha256(data);
    const put = await fetch(`${s.url}/alice/proj.git/info/lfs/objects/${oid}`, {
      method: 'PUT',
      headers: { authorization: basic(), 'content-type': 'application/octet-stream' },
      body: new Uint8Array(data),
    });
    assert.equal(put.status, 200, await put.text());
    return oid;
  }

  async function usedLfs(): Promise<number> {
    const r = await s.api<{ used: { size: { git: { LFS: number } } } }>('GET', '/user/quota', {
      token: alice.token,
    });
    assert.equal(r.status, 200, r.text);
    return r.body.used.size.git.LFS;
  }

  async function newRepo(name: string): Promise<number> {
    const r = await s.api<{ id: number }>('POST', '/user/repos', { token: alice.token, body: { name } });
    assert.equal(r.status, 201, r.text);
    const wt = await gitc.workTree();
    await gitc.commit(wt, 'README.md', `# ${name}\n`);
    await gitc.commit(wt, 'src/main.txt', crypto.randomBytes(3000).toString('base64'));
    await gitc.git(
      ['push', '--quiet', repoUrl(s.url, 'alice', name, [alice.name, alice.password]), 'main'],
      wt,
    );
    return r.body.id;
  }

  before(async () => {
    s = await startServer();
    alice = await s.createUser('alice');
    gitc = new GitClient();
    projId = await newRepo('proj');
    otherId = await newRepo('other');
    const issue = await s.api<{ number: number }>('POST', '/repos/alice/proj/issues', {
      token: alice.token,
      body: { title: 'with a file' },
    });
    assert.equal(issue.status, 201, issue.text);
    issueNumber = issue.body.number;
    const form = new FormData();
    form.append('attachment', new Blob([crypto.randomBytes(2048)]), 'trace.log');
    const up = await fetch(`${s.url}/api/v1/repos/alice/proj/issues/${issueNumber}/assets`, {
      method: 'POST',
      headers: { authorization: `token ${alice.token}` },
      body: form,
    });
    assert.equal(up.status, 201, await up.clone().text());
    attachmentUuid = ((await up.json()) as { uuid: string }).uuid;
    await putLfs(lfsData);
    // What rows reference is as old as the orphans made below: only the references keep it.
    age(file('attachments', attachmentKey(attachmentUuid)));
    age(file('lfs', lfsKey(lfsOid)));
  });

  after(async () => {
    gitc?.cleanup();
    await s?.close();
  });

  it('passes every check on a clean site, exit status 0', async () => {
    const r = await doctor('--all');
    ok(r, 'doctor --all');
    for (const name of [
      'synchronize-repo-heads',
      'unfinished-changes',
      'orphaned-repo-dirs',
      'leftovers',
      'check-db-consistency',
      'quota-usage',
      'storages',
      'git-fsck',
    ]) {
      assert.match(r.stdout, new RegExp(`\\(${name}\\)\\nOK\\n`), `${name} passes:\n${r.stdout}`);
    }
    assert.match(r.stdout, /No problems found\./);
    // Without --all the expensive checks are not run.
    const d = await doctor();
    ok(d, 'doctor');
    assert.doesNotMatch(d.stdout, /\(git-fsck\)|\(storages\)/);
    assert.match(d.stdout, /\(check-db-consistency\)/);
  });

  it('--list names the checks and marks the default ones; --run takes only known names', async () => {
    const r = await doctor('--list');
    ok(r, 'doctor --list');
    assert.match(r.stdout, /^\*\s+synchronize-repo-heads\s+\S/m);
    assert.match(r.stdout, /^ \s+git-fsck\s+git fsck/m, 'git-fsck is not a default check');
    assert.match(r.stdout, /^ \s+storages\s+/m);
    const bad = await doctor('--run', 'no-such-check');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown check no-such-check/);
    const two = await doctor('--run', 'quota-usage', '--run', 'orphaned-repo-dirs');
    ok(two, 'two --run');
    assert.deepEqual(
      [...two.stdout.matchAll(/^\[\d\] .*\((\S+)\)$/gm)].map((m) => m[1]),
      ['orphaned-repo-dirs', 'quota-usage'],
    );
  });

  it('git-fsck reports a repository with a missing object (and --fix cannot repair it)', async () => {
    const dir = s.ctx.repos.pathOf({ id: otherId });
    const objects = path.join(dir, 'objects');
    const loose = fs
      .readdirSync(objects)
      .filter((d) => /^[0-9a-f]{2}$/.test(d))
      .flatMap((d) => fs.readdirSync(path.join(objects, d)).map((f) => path.join(objects, d, f)));
    // The push left loose objects (fewer than git's unpack limit); any of them is reachable.
    assert.ok(loose.length > 0, 'the push left loose objects');
    const victim = loose[0]!;
    const saved = fs.readFileSync(victim);
    fs.rmSync(victim);
    try {
      const r = await doctor('--run', 'git-fsck');
      problems(r, 'fsck of a damaged repository');
      assert.match(r.stdout, new RegExp(`found: repository ${otherId} \\(`));
      assert.doesNotMatch(
        r.stdout,
        new RegExp(`repository ${projId} \\(`),
        'the sound repository is not reported',
      );
      const full = await doctor('--run', 'git-fsck', '--full');
      problems(full, 'full fsck');
      const fixed = await doctor('--run', 'git-fsck', '--fix');
      problems(fixed, 'fsck --fix');
      assert.match(fixed.stdout, new RegExp(`not fixed: repository ${otherId} \\(`));
    } finally {
      fs.mkdirSync(path.dirname(victim), { recursive: true });
      fs.writeFileSync(victim, saved, { mode: 0o444 });
    }
    ok(await doctor('--run', 'git-fsck', '--full'), 'fsck after the object is back');
  });

  it('orphaned-repo-dirs reports directories no repository owns and --fix removes them, keeping young ones', async () => {
    const root = s.config.repository.root;
    const old = path.join(root, '987654.git');
    const young = path.join(root, '987655.git');
    for (const d of [old, young]) fs.mkdirSync(path.join(d, 'objects'), { recursive: true });
    age(old);
    const r = await doctor('--run', 'orphaned-repo-dirs');
    problems(r, 'an orphaned directory');
    assert.match(r.stdout, /987654\.git: a repository directory with no repository/);
    assert.doesNotMatch(r.stdout, /987655\.git/, 'a directory of a creation under way is left');
    // Real repositories' directories are not reported.
    assert.doesNotMatch(r.stdout, new RegExp(`\\b${otherId}\\.git`));
    ok(await doctor('--run', 'orphaned-repo-dirs', '--fix'), 'orphaned-repo-dirs --fix');
    assert.equal(fs.existsSync(old), false);
    assert.equal(fs.existsSync(young), true);
    fs.rmSync(young, { recursive: true, force: true });
  });

  it('quota-usage reports drift without --fix and corrects it with --fix', async () => {
    const right = await usedLfs();
    assert.equal(right, lfsData.length);
    await s.ctx.db
      .updateTable('quota_usage')
      .set({ size: right + 12345 })
      .where('owner_id', '=', alice.id)
      .where('subject', '=', 'size:git:lfs')
      .execute();
    const r = await doctor('--run', 'quota-usage');
    problems(r, 'drift');
    assert.match(
      r.stdout,
      new RegExp(`found: quota: alice size:git:lfs: recorded ${right + 12345}, actual ${right}`),
    );
    assert.equal(await usedLfs(), right + 12345, 'a check without --fix changes nothing');
    const fixed = await doctor('--run', 'quota-usage', '--fix');
    ok(fixed, 'drift --fix');
    assert.match(fixed.stdout, /fixed: quota: alice size:git:lfs/);
    assert.equal(await usedLfs(), right);
    ok(await doctor('--run', 'quota-usage'), 'no drift left');
  });

  it('storages reports blobs no row references and --fix deletes them, keeping referenced and young ones', async () => {
    const orphanOid = sha256(crypto.randomBytes(32));
    const orphanUuid = crypto.randomUUID();
    const lfsOrphan = file('lfs', lfsKey(orphanOid));
    const attOrphan = file('attachments', attachmentKey(orphanUuid));
    const young = file('attachments', attachmentKey(crypto.randomUUID()));
    for (const p of [lfsOrphan, attOrphan, young]) {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, crypto.randomBytes(100));
    }
    age(lfsOrphan);
    age(attOrphan);
    const r = await doctor('--run', 'storages');
    problems(r, 'orphaned blobs');
    assert.match(r.stdout, new RegExp(`found: lfs/${lfsKey(orphanOid)} \\(100 bytes\\)`));
    assert.match(r.stdout, new RegExp(`found: attachments/${attachmentKey(orphanUuid)} `));
    assert.doesNotMatch(r.stdout, new RegExp(lfsOid), 'the referenced LFS blob is not reported');
    assert.doesNotMatch(r.stdout, new RegExp(attachmentUuid), 'the referenced attachment is not reported');
    assert.doesNotMatch(
      r.stdout,
      new RegExp(path.basename(young)),
      'a young blob may be an upload under way',
    );
    assert.ok(fs.existsSync(lfsOrphan), 'a check without --fix deletes nothing');

    const fixed = await doctor('--run', 'storages', '--fix');
    ok(fixed, 'storages --fix');
    assert.equal(fs.existsSync(lfsOrphan), false);
    assert.equal(fs.existsSync(attOrphan), false);
    assert.ok(fs.existsSync(young), 'the young blob stays');
    assert.ok(fs.existsSync(file('lfs', lfsKey(lfsOid))), 'the referenced LFS blob stays');
    assert.ok(
      fs.existsSync(file('attachments', attachmentKey(attachmentUuid))),
      'the referenced attachment stays',
    );
    const get = await fetch(`${s.url}/alice/proj.git/info/lfs/objects/${lfsOid}`, {
      headers: { authorization: basic() },
    });
    assert.equal(get.status, 200);
    assert.ok(Buffer.from(await get.arrayBuffer()).equals(lfsData), 'the LFS object still downloads');
    ok(await doctor('--run', 'storages'), 'no orphan left');
    fs.rmSync(young);
  });

  it('check-db-consistency reports rows pointing at what is gone and --fix removes them, quota kept right', async () => {
    // An LFS object whose blob has vanished from storage (its size counted in quota).
    const lostData = crypto.randomBytes(1500);
    const lostOid = await putLfs(lostData);
    assert.equal(await usedLfs(), lfsData.length + lostData.length);
    fs.rmSync(file('lfs', lfsKey(lostOid)));
    // A reaction to a comment that no longer exists (reaction.comment_id has no foreign key).
    const issue = await s.ctx.db
      .selectFrom('issue')
      .select('id')
      .where('repo_id', '=', projId)
      .where('index', '=', issueNumber)
      .executeTakeFirstOrThrow();
    await s.ctx.db
      .insertInto('reaction')
      .values({
        type: 'heart',
        issue_id: issue.id,
        comment_id: 987654321,
        user_id: alice.id,
        created_unix: Math.floor(Date.now() / 1000),
      })
      .execute();
    // An issue reaction (comment_id 0) is not an orphan.
    const fine = await s.api('POST', `/repos/alice/proj/issues/${issueNumber}/reactions`, {
      token: alice.token,
      body: { content: '+1' },
    });
    assert.equal(fine.status, 201, fine.text);

    const r = await doctor('--run', 'check-db-consistency');
    problems(r, 'orphaned rows');
    assert.match(
      r.stdout,
      new RegExp(`found: LFS object ${lostOid} of repository ${projId}: its blob is missing`),
    );
    assert.match(r.stdout, /found: reaction \d+ \(heart\): its comment is gone/);
    assert.doesNotMatch(r.stdout, /\+1/);
    assert.doesNotMatch(r.stdout, new RegExp(`LFS object ${lfsOid}`), 'an object with its blob is fine');
    assert.equal(r.stdout.match(/ - found: /g)?.length, 2, r.stdout);

    const fixed = await doctor('--run', 'check-db-consistency', '--fix');
    ok(fixed, 'check-db-consistency --fix');
    assert.equal(fixed.stdout.match(/ - fixed: /g)?.length, 2, fixed.stdout);
    // The usage the lost object counted went with its row, in the same transaction.
    assert.equal(await usedLfs(), lfsData.length);
    ok(await doctor('--run', 'check-db-consistency', '--run', 'quota-usage'), 'nothing left, no drift');
    const reactions = await s.api<unknown[]>('GET', `/repos/alice/proj/issues/${issueNumber}/reactions`, {
      token: alice.token,
    });
    assert.equal(reactions.body.length, 1, 'the issue reaction stays');
  });

  it('leftovers: with the server alive only old ones count; once it is gone, whatever it left, however young', async () => {
    const root = s.config.repository.root;
    /** A file at `p`; with `agedFrom`, it and its directories up to that one made two hours old. */
    const put = (p: string, agedFrom?: string) => {
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, crypto.randomBytes(100));
      if (agedFrom) {
        for (let q = p; q.startsWith(agedFrom); q = path.dirname(q)) age(q);
      }
      return p;
    };
    const objects = path.join(s.ctx.repos.pathOf({ id: projId }), 'objects');
    const oldDir = path.join(objects, 'tmp_objdir-incoming-old1');
    put(path.join(oldDir, 'pack', 'x.pack'), oldDir);
    const youngQuarantine = put(path.join(objects, 'tmp_objdir-incoming-young', 'pack', 'x.pack'));
    const youngTmp = put(path.join(s.dataDir, 'packages', '.tmp', 'young-upload'));
    const youngScratch = put(path.join(root, '.tmp', 'fork-0123456789abcdef.git', 'HEAD'));
    const orphanUuid = crypto.randomUUID();
    const youngOrphan = put(file('attachments', attachmentKey(orphanUuid)));

    // A server is running (it holds the data lock): young leftovers may be its work under way.
    const alive = await doctor('--run', 'leftovers');
    problems(alive, 'an old quarantine');
    assert.match(
      alive.stdout,
      /found: git quarantine left over: \d+\.git\/objects\/tmp_objdir-incoming-old1/,
    );
    assert.doesNotMatch(alive.stdout, /young|fork-0123/, 'nothing young is reported');
    assert.match((await doctor('--run', 'storages')).stdout, /\(storages\)\nOK\n/);
    ok(await doctor('--run', 'leftovers', '--fix'), 'leftovers --fix');
    assert.equal(fs.existsSync(oldDir), false, 'the old quarantine is removed');
    for (const p of [youngQuarantine, youngTmp, youngScratch, youngOrphan]) {
      assert.ok(fs.existsSync(p), `${p} is left to the running server`);
    }

    // The server is gone: nothing else uses the data, and what is there was left by it.
    s.dataLock.release();
    try {
      const dead = await doctor();
      problems(dead, "a dead server's leftovers");
      assert.match(
        dead.stdout,
        /found: git quarantine left over: \d+\.git\/objects\/tmp_objdir-incoming-young/,
      );
      assert.match(
        dead.stdout,
        /found: temporary file left over: packages\/\.tmp\/young-upload \(100 bytes\)/,
      );
      assert.match(
        dead.stdout,
        /found: repository being prepared left over: \.tmp\/fork-0123456789abcdef\.git/,
      );
      assert.doesNotMatch(dead.stdout, /No problems found/);
      const orphans = await doctor('--run', 'storages');
      problems(orphans, "a dead server's orphaned blob");
      assert.match(
        orphans.stdout,
        new RegExp(`found: attachments/${attachmentKey(orphanUuid)} \\(100 bytes\\)`),
      );
      const fixed = await doctor('--run', 'leftovers', '--fix');
      ok(fixed, 'leftovers --fix');
      for (const p of [youngQuarantine, youngTmp, youngScratch, youngOrphan]) {
        assert.equal(fs.existsSync(p), false, `${p} is removed`);
      }
      assert.ok(fs.existsSync(file('attachments', attachmentKey(attachmentUuid))), 'a referenced blob stays');
      ok(await doctor('--run', 'leftovers', '--run', 'storages'), 'nothing left');
    } finally {
      s.dataLock = DataLock.take(s.dataDir);
    }
  });

  it('ends clean after the fixes', async () => {
    ok(await doctor('--all'), 'doctor --all');
  });
});
