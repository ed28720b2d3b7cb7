// Benchmark for commit signature verification (manual, not a test): a repository of 50 commits each
// signed with gpg by a registered key, and one of 50 unsigned commits; the latency of
//   GET /repos/{o}/{r}/commits?limit=50   signed, verification cold (the cache just emptied by a key change)
//   GET /repos/{o}/{r}/commits?limit=50   signed, verification cached
//   GET /repos/{o}/{r}/commits?limit=50   unsigned
// measured one request at a time, in-process (the test server).
// Run: npm run build && node dist/bench/signing.js
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { percentile } from './common.js';
import { startServer } from '../test/helpers/server.js';
import { GitClient, repoUrl } from '../test/helpers/git.js';

const run = promisify(execFile);
const COMMITS = 50;
const SAMPLES = Number(process.env['BENCH_SAMPLES'] ?? 100);
const COLD = Number(process.env['BENCH_COLD'] ?? 15);

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gpg-'));
  fs.chmodSync(home, 0o700);
  const env = { PATH: process.env['PATH'], GNUPGHOME: home };
  await run(
    'gpg',
    ['--batch', '--passphrase', '', '--quick-gen-key', 'A <alice@example.com>', 'ed25519', 'sign', 'never'],
    { env },
  );
  const armored = (await run('gpg', ['--batch', '--armor', '--export', 'alice@example.com'], { env })).stdout;
  const s = await startServer({ ANVIL__LOG__LEVEL: 'error' });
  class G extends GitClient {
    override env(): NodeJS.ProcessEnv {
      return { ...super.env(), GNUPGHOME: home, GIT_COMMITTER_EMAIL: 'alice@example.com' };
    }
  }
  const g = new G();
  try {
    const alice = await s.createUser('alice');
    for (const [name, signed] of [
      ['signed', true],
      ['plain', false],
    ] as const) {
      await s.api('POST', '/user/repos', { token: alice.token, body: { name } });
      const wt = await g.workTree();
      for (let i = 0; i < COMMITS; i++) {
        fs.writeFileSync(path.join(wt, `f${i}.txt`), `${i}\n`);
        await g.git(['add', '.'], wt);
        await g.git(
          [
            ...(signed ? ['-c', 'user.signingkey=alice@example.com'] : []),
            'commit',
            '-q',
            ...(signed ? ['-S'] : []),
            '-m',
            `c${i}`,
          ],
          wt,
        );
      }
      await g.git(['push', '-q', repoUrl(s.url, 'alice', name, [alice.name, alice.password]), 'main'], wt);
    }
    let key = await s.api<{ id: number }>('POST', '/user/gpg_keys', {
      token: alice.token,
      body: { armored_public_key: armored },
    });
    const get = async (repo: string) => {
      const t0 = performance.now();
      const r = await s.api<Array<{ commit: { verification: { verified: boolean } } }>>(
        'GET',
        `/repos/alice/${repo}/commits?limit=50&stat=false&files=false`,
        { token: alice.token },
      );
      const ms = performance.now() - t0;
      if (r.status !== 200 || r.body.length !== COMMITS)
        throw new Error(`${r.status} ${r.text.slice(0, 200)}`);
      if (repo === 'signed' && !r.body.every((c) => c.commit.verification.verified))
        throw new Error('not verified');
      return ms;
    };
    const cold: number[] = [];
    for (let i = 0; i < COLD; i++) {
      await s.api('DELETE', `/user/gpg_keys/${key.body.id}`, { token: alice.token });
      key = await s.api<{ id: number }>('POST', '/user/gpg_keys', {
        token: alice.token,
        body: { armored_public_key: armored },
      });
      cold.push(await get('signed'));
    }
    const warm: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      warm.push(await get('signed'));
      plain.push(await get('plain'));
    }
    const show = (name: string, v: number[]) =>
      console.log(
        `${name.padEnd(34)} p50 ${percentile(v, 50).toFixed(1)} ms  p99 ${percentile(v, 99).toFixed(1)} ms  (n=${v.length})`,
      );
    show('50 signed commits, cold', cold);
    show('50 signed commits, cached', warm);
    show('50 unsigned commits', plain);
  } finally {
    await s.close();
    g.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

await main();
