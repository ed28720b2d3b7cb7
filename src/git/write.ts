// Writing to a bare repository without a work tree: blobs (hash-object), trees through a temporary
// index (read-tree, update-index, write-tree, or git apply --cached), commits (commit-tree) and
// annotated tags (mktag). Refs are moved with data.ts updateRef.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, ZERO_OID } from './git.js';

export interface Ident {
  name: string;
  email: string;
  /** Unix seconds and zone, as git takes them ("1700000000 +0000"); now when absent. */
  date?: string | undefined;
}

/** Stores `content` as a blob; returns its id. */
export async function hashBlob(dir: string, content: Buffer): Promise<string> {
  return (await git(['hash-object', '-w', '--stdin'], { gitDir: dir, input: content })).stdout
    .toString('utf8')
    .trim();
}

export type TreeChange = { path: string; mode: string; oid: string } | { path: string; remove: true };

/**
 * The tree `base` (or an empty one) with `changes` applied, written through a temporary index
 * file (GIT_INDEX_FILE): read-tree, update-index --index-info, write-tree.
 */
export async function writeTree(dir: string, base: string | null, changes: TreeChange[]): Promise<string> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-index-'));
  const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  try {
    if (base) await git(['read-tree', base], { gitDir: dir, env });
    const input = changes
      .map((c) => ('remove' in c ? `0 ${ZERO_OID}\t${c.path}\0` : `${c.mode} ${c.oid}\t${c.path}\0`))
      .join('');
    await git(['update-index', '-z', '--index-info'], { gitDir: dir, env, input });
    return (await git(['write-tree'], { gitDir: dir, env })).stdout.toString('utf8').trim();
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The tree `base` with the unified diff `patch` applied (`git apply --cached`, three-way where the
 * blobs allow, as Forgejo does) through a temporary index; `{ error }` when it does not apply.
 */
export async function applyPatch(
  dir: string,
  base: string,
  patch: string,
): Promise<{ tree: string } | { error: string }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-index-'));
  const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
  try {
    await git(['read-tree', base], { gitDir: dir, env });
    const args = ['apply', '--cached', '--recount', '--binary', '--3way', '-'];
    // An empty directory of our own as the work tree: --3way may write there, never elsewhere.
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    const r = await git(args, {
      gitDir: dir,
      cwd: work,
      env: { ...env, GIT_WORK_TREE: work },
      input: patch,
      okCodes: [1, 128],
    });
    if (r.code !== 0) return { error: r.stderr.trim().split('\n').filter(Boolean).pop() ?? 'patch failed' };
    return { tree: (await git(['write-tree'], { gitDir: dir, env })).stdout.toString('utf8').trim() };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export function identEnv(author: Ident, committer: Ident): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    GIT_AUTHOR_NAME: author.name,
    GIT_AUTHOR_EMAIL: author.email,
    GIT_COMMITTER_NAME: committer.name,
    GIT_COMMITTER_EMAIL: committer.email,
  };
  if (author.date) env['GIT_AUTHOR_DATE'] = author.date;
  if (committer.date) env['GIT_COMMITTER_DATE'] = committer.date;
  return env;
}

/** A commit of `tree` with `parents`; returns its id. */
export async function commitTree(
  dir: string,
  tree: string,
  parents: string[],
  message: string,
  author: Ident,
  committer: Ident,
): Promise<string> {
  const args = ['commit-tree', ...parents.flatMap((p) => ['-p', p]), '-F', '-', tree];
  const input = message.endsWith('\n') ? message : `${message}\n`;
  return (await git(args, { gitDir: dir, env: identEnv(author, committer), input })).stdout
    .toString('utf8')
    .trim();
}

/** An annotated tag object named `name` on commit `target`; returns its id. */
export async function makeTag(
  dir: string,
  name: string,
  target: string,
  message: string,
  tagger: Ident,
): Promise<string> {
  const when = tagger.date ?? `${Math.floor(Date.now() / 1000)} +0000`;
  const body = message.endsWith('\n') ? message : `${message}\n`;
  const input = `object ${target}\ntype commit\ntag ${name}\ntagger ${tagger.name} <${tagger.email}> ${when}\n\n${body}`;
  return (await git(['mktag'], { gitDir: dir, input })).stdout.toString('utf8').trim();
}
