// `npm test` on a machine without a tool the suite drives: the prerequisite check stops at once with
// one message naming the missing tools and their Debian packages (here git-lfs and twine are
// shadowed by stand-ins that fail, and installing is turned off), and passes when all are there.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../scripts/prerequisites.js', import.meta.url));

function check(env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

describe('npm test prerequisites', () => {
  const shadow = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-prereq-'));
  after(() => fs.rmSync(shadow, { recursive: true, force: true }));

  it('names the missing tools and their packages, and stops at once', async () => {
    for (const tool of ['git-lfs', 'twine']) {
      fs.writeFileSync(path.join(shadow, tool), '#!/bin/sh\nexit 127\n', { mode: 0o755 });
    }
    // An apt-get that leaves a mark: with ANVIL_INSTALL_PREREQUISITES=0 nothing is installed.
    const installed = path.join(shadow, 'apt-get-ran');
    fs.writeFileSync(path.join(shadow, 'apt-get'), `#!/bin/sh\ntouch '${installed}'\n`, { mode: 0o755 });
    const r = await check({
      ...process.env,
      PATH: `${shadow}${path.delimiter}${process.env['PATH'] ?? ''}`,
      ANVIL_INSTALL_PREREQUISITES: '0',
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /npm test needs git-lfs, twine, which are not installed/);
    assert.match(r.out, /apt-get install git-lfs twine/);
    assert.equal(r.out.trim().split('\n').length, 1, 'one message');
    assert.ok(!fs.existsSync(installed), 'apt-get was not run');
  });

  it('passes when every tool runs', async () => {
    const r = await check({ ...process.env, ANVIL_INSTALL_PREREQUISITES: '0' });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /every system tool the tests use is installed/);
  });
});
