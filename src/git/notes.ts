// Git notes of commits (refs/notes/commits, as in Forgejo): read with the notes commit that last
// wrote them, set and removed by a doer.
import { git } from './git.js';
import { readBlob } from './data.js';
import { lastCommitOf } from './trees.js';
import { identEnv, type Ident } from './write.js';

/** The ref git notes live under (git's default, as in Forgejo). */
export const NOTES_REF = 'refs/notes/commits';

/**
 * The note of commit `oid` and the commit of the notes ref that last wrote it (Forgejo's
 * GetNote); undefined when it has none.
 */
export async function readNote(
  dir: string,
  oid: string,
): Promise<{ message: Buffer; commit: string } | undefined> {
  const tip = await git(['rev-parse', '--verify', '--quiet', `${NOTES_REF}^{commit}`], {
    gitDir: dir,
    okCodes: [1],
  });
  if (tip.code !== 0) return undefined;
  const list = await git(['notes', `--ref=${NOTES_REF}`, 'list', oid], { gitDir: dir, okCodes: [1] });
  const blob = list.stdout.toString('utf8').trim();
  if (list.code !== 0 || !blob) return undefined;
  // The note's path in the notes tree (fanned out as aa/bbbb... in large trees).
  const tree = await git(['ls-tree', '-r', '-z', `${NOTES_REF}^{commit}`], { gitDir: dir });
  let notePath = oid;
  for (const rec of tree.stdout.toString('utf8').split('\0')) {
    const tab = rec.indexOf('\t');
    if (tab < 0) continue;
    const p = rec.slice(tab + 1);
    if (p.replace(/\//g, '') === oid) notePath = p;
  }
  const last = await lastCommitOf(dir, NOTES_REF, notePath);
  return { message: await readBlob(dir, blob), commit: last?.oid ?? tip.stdout.toString('utf8').trim() };
}

/** Sets (replaces) the note of commit `oid`, written by `who`; an empty message removes it (git). */
export async function setNote(dir: string, oid: string, message: string, who: Ident): Promise<void> {
  await git(['notes', `--ref=${NOTES_REF}`, 'add', '-f', '-F', '-', oid], {
    gitDir: dir,
    env: identEnv(who, who),
    input: message,
  });
}

/** Removes the note of commit `oid`; false when it had none. */
export async function removeNote(dir: string, oid: string, who: Ident): Promise<boolean> {
  const r = await git(['notes', `--ref=${NOTES_REF}`, 'remove', oid], {
    gitDir: dir,
    env: identEnv(who, who),
    okCodes: [1],
  });
  return r.code === 0;
}
