// Repositories prepared before their row exists (forks, templates, adoptions, migrations): made in a
// scratch directory under ROOT/.tmp, on the same file system as their final place, and moved into
// place by the transaction that inserts the row (RepoService.createPrepared and the like).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { git, installHooks } from '../git/git.js';

/** Makes a bare repository that git created (clone) behave like one Anvil created (initBare). */
export async function adoptBareRepository(dir: string): Promise<void> {
  await git(['config', '--remove-section', 'remote.origin'], { gitDir: dir, okCodes: [128, 1] });
  await git(['config', 'uploadpack.allowFilter', 'true'], { gitDir: dir });
  await git(['config', 'uploadpack.allowAnySHA1InWant', 'true'], { gitDir: dir });
  await git(['config', 'receive.denyNonFastForwards', 'false'], { gitDir: dir });
  installHooks(dir);
}

/** A scratch directory for a repository being prepared, on the same file system as its final place. */
export function scratchDir(root: string, kind: string): string {
  const tmp = path.join(root, '.tmp');
  fs.mkdirSync(tmp, { recursive: true });
  return path.join(tmp, `${kind}-${crypto.randomBytes(8).toString('hex')}.git`);
}
