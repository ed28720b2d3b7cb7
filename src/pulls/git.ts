// Git work for pull requests, all on the base repository (bare) with plumbing, or in a temporary
// clone for rebases: never in a repository's own directory with a work tree.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { git, gitText, isAncestor, mergeBase } from '../git/git.js';
import { EMPTY_TREE, isValidRefName } from '../git/data.js';
import { PullStatus } from './tables.js';
import type { CommitSigning } from '../signing/instance.js';

export interface Ident {
  name: string;
  email: string;
}

export interface Mergeability {
  status: number;
  mergeBase: string;
  conflicts: string[];
}

const identEnv = (author: Ident, committer: Ident): NodeJS.ProcessEnv => ({
  GIT_AUTHOR_NAME: author.name,
  GIT_AUTHOR_EMAIL: author.email,
  GIT_COMMITTER_NAME: committer.name,
  GIT_COMMITTER_EMAIL: committer.email,
});

export class MergeConflict extends Error {
  constructor(readonly files: string[]) {
    super(`merge conflicts: ${files.join(', ')}`);
  }
}

/** A three-way merge of `head` into `base` without a work tree: the tree, or the conflicting files. */
export async function mergeTree(
  dir: string,
  base: string,
  head: string,
): Promise<{ tree: string } | { conflicts: string[] }> {
  const r = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', base, head], {
    gitDir: dir,
    okCodes: [1],
  });
  const lines = r.stdout.toString('utf8').split('\n').filter(Boolean);
  if (r.code === 0) return { tree: lines[0]! };
  return { conflicts: [...new Set(lines.slice(1))] };
}

/** Whether `head` merges cleanly into `base`, and their merge base. */
export async function mergeability(dir: string, base: string, head: string): Promise<Mergeability> {
  const mb = await mergeBase(dir, base, head);
  if (!mb) return { status: PullStatus.conflict, mergeBase: '', conflicts: [] };
  if (await isAncestor(dir, head, base))
    return { status: PullStatus.ancestorOf, mergeBase: mb, conflicts: [] };
  const r = await mergeTree(dir, base, head);
  if ('tree' in r) return { status: PullStatus.mergeable, mergeBase: mb, conflicts: [] };
  return { status: PullStatus.conflict, mergeBase: mb, conflicts: r.conflicts };
}

/** The commit a branch of the repository at `dir` points to, or undefined (also for a bad name). */
export async function branchSha(dir: string, branch: string): Promise<string | undefined> {
  if (!isValidRefName(branch)) return undefined;
  const r = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], {
    gitDir: dir,
    okCodes: [1, 128],
  });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : undefined;
}

/** Puts the head commit into the base repository (fetched from a fork), without a ref yet. */
export async function bringHead(baseDir: string, headDir: string, branch: string): Promise<void> {
  if (headDir === baseDir) return;
  await git(['fetch', '--quiet', '--no-tags', headDir, `refs/heads/${branch}`], { gitDir: baseDir });
}

/** The commit a pull request's changes are measured from: its merge base (the empty tree when none). */
export function diffBase(pr: { merge_base: string }): string {
  return pr.merge_base || EMPTY_TREE;
}

/**
 * Whether moving a pull request's head from `from` to `to` changed what it proposes. Forgejo's
 * test: the combined diff of `to` against `from` and the merge base names a file only when `to`
 * differs from both (a rebase that changes nothing of the pull request's own does not count).
 */
export async function contentChanged(
  dir: string,
  from: string,
  to: string,
  mergeBase: string,
): Promise<boolean> {
  if (from === to) return false;
  if (!from || !mergeBase) return true;
  try {
    const r = await git(['diff', '--name-only', '-z', to, from, mergeBase], { gitDir: dir });
    return r.stdout.length > 0;
  } catch {
    return true;
  }
}

export async function commitTree(
  dir: string,
  tree: string,
  parents: string[],
  message: string,
  author: Ident,
  committer: Ident,
  sign?: CommitSigning,
): Promise<string> {
  const args = [...(sign?.config ?? []), 'commit-tree', tree];
  for (const p of parents) args.push('-p', p);
  if (sign) args.push('-S');
  const who = sign?.committer ?? committer;
  return gitText(args, { gitDir: dir, input: message, env: { ...identEnv(author, who), ...sign?.env } });
}

/** A merge commit of `head` into `base` (two parents). */
export async function mergeCommit(
  dir: string,
  base: string,
  head: string,
  message: string,
  doer: Ident,
  sign?: CommitSigning,
): Promise<string> {
  const r = await mergeTree(dir, base, head);
  if (!('tree' in r)) throw new MergeConflict(r.conflicts);
  return commitTree(dir, r.tree, [base, head], message, doer, doer, sign);
}

/** One commit on top of `base` with the changes of `head` (a squash). */
export async function squashCommit(
  dir: string,
  base: string,
  head: string,
  message: string,
  author: Ident,
  committer: Ident,
  sign?: CommitSigning,
): Promise<string> {
  const r = await mergeTree(dir, base, head);
  if (!('tree' in r)) throw new MergeConflict(r.conflicts);
  return commitTree(dir, r.tree, [base], message, author, committer, sign);
}

/**
 * The commits of `head` not in `base`, replayed on top of `base` (their authors kept, `doer` as
 * committer), in a temporary clone sharing the base repository's objects; the new commits are
 * then fetched into the base repository. Returns the new tip.
 */
export async function rebase(dir: string, base: string, head: string, doer: Ident): Promise<string> {
  if (await isAncestor(dir, base, head)) return head;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-rebase-'));
  try {
    await git(['clone', '--quiet', '--shared', '--no-checkout', dir, tmp]);
    const env = identEnv(doer, doer);
    await git(['checkout', '--quiet', '--detach', head], { cwd: tmp, env });
    const r = await git(['rebase', '--quiet', '--no-autosquash', base], {
      cwd: tmp,
      env,
      okCodes: [1, 128],
    });
    if (r.code !== 0) {
      const status = await gitText(['diff', '--name-only', '--diff-filter=U'], { cwd: tmp });
      throw new MergeConflict(status.split('\n').filter(Boolean));
    }
    const tip = await gitText(['rev-parse', 'HEAD'], { cwd: tmp });
    await git(['update-ref', 'refs/anvil/rebased', tip], { cwd: tmp });
    await git(['fetch', '--quiet', '--no-tags', tmp, 'refs/anvil/rebased'], { gitDir: dir });
    return tip;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

export interface NumStat {
  filename: string;
  previous: string;
  status: string;
  additions: number;
  deletions: number;
}

const STATUS: Record<string, string> = {
  A: 'added',
  D: 'deleted',
  M: 'modified',
  T: 'changed',
  R: 'renamed',
  C: 'copied',
};

/** The files changed between two commits, with their line counts. */
export async function changedFiles(dir: string, from: string, to: string): Promise<NumStat[]> {
  const [names, nums] = await Promise.all([
    git(['diff', '--no-color', '--no-ext-diff', '-M', '--name-status', '-z', from, to, '--'], {
      gitDir: dir,
    }),
    git(['diff', '--no-color', '--no-ext-diff', '-M', '--numstat', '-z', from, to, '--'], { gitDir: dir }),
  ]);
  const out: NumStat[] = [];
  const t = names.stdout.toString('utf8').split('\0');
  for (let i = 0; i < t.length - 1;) {
    const code = t[i]!;
    const letter = code.charAt(0);
    if (letter === 'R' || letter === 'C') {
      out.push({
        filename: t[i + 2]!,
        previous: t[i + 1]!,
        status: STATUS[letter]!,
        additions: 0,
        deletions: 0,
      });
      i += 3;
    } else {
      out.push({
        filename: t[i + 1]!,
        previous: '',
        status: STATUS[letter] ?? 'modified',
        additions: 0,
        deletions: 0,
      });
      i += 2;
    }
  }
  const byName = new Map(out.map((f) => [f.filename, f]));
  const n = nums.stdout.toString('utf8').split('\0');
  for (let i = 0; i < n.length;) {
    const rec = n[i]!.replace(/^\n+/, '');
    if (!rec) {
      i++;
      continue;
    }
    const [a, d, p] = rec.split('\t');
    let name = p ?? '';
    if (name === '') {
      name = n[i + 2] ?? '';
      i += 3;
    } else i++;
    const f = byName.get(name);
    if (f) {
      f.additions = a === '-' ? 0 : Number(a) || 0;
      f.deletions = d === '-' ? 0 : Number(d) || 0;
    }
  }
  return out;
}

/**
 * The unified diff of one file between two commits (`previous`, the file's name before a rename,
 * keeps the rename detected); '' when the file did not change.
 */
/** The files a pull request changes (from its merge base to its head), in its base repository `dir`. */
export function pullFiles(
  dir: string,
  pr: { merge_base: string; head_commit_id: string },
): Promise<NumStat[]> {
  return changedFiles(dir, diffBase(pr), pr.head_commit_id);
}

export async function fileDiff(
  dir: string,
  from: string,
  to: string,
  file: string,
  previous = '',
): Promise<string> {
  const paths = [file, ...(previous && previous !== file ? [previous] : [])].map((p) => `:(literal)${p}`);
  const r = await git(['diff', '--no-color', '--no-ext-diff', '-M', from, to, '--', ...paths], {
    gitDir: dir,
  });
  return r.stdout.toString('utf8');
}

/**
 * The hunk of `diff` holding `line` (positive: a line of the new side, negative: of the old side),
 * from its header through that line; '' when no hunk shows the line.
 */
export function hunkUpTo(diff: string, line: number): string {
  const old = line < 0;
  const target = Math.abs(line);
  const lines = diff.split('\n');
  let header = -1;
  let oldLine = 0;
  let newLine = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(l);
    if (m) {
      header = i;
      oldLine = Number(m[1]);
      newLine = Number(m[2]);
      continue;
    }
    if (header < 0) continue;
    const c = l.charAt(0);
    if (c === ' ' || c === '-' || c === '+') {
      if (old && c !== '+' && oldLine === target) return lines.slice(header, i + 1).join('\n');
      if (!old && c !== '-' && newLine === target) return lines.slice(header, i + 1).join('\n');
      if (c !== '+') oldLine++;
      if (c !== '-') newLine++;
    } else if (c !== '\\') header = -1;
  }
  return '';
}
