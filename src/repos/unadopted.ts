// Unadopted repositories (site administrators): bare git directories laid out as Forgejo keeps
// them, `<repositories root>/<owner>/<name>.git`, that no repository row refers to (copied in by
// an operator, say). Anvil's own repositories live in `<root>/<id>.git` and are never listed.
// Adopting one makes a repository of it for its (existing) owner: the directory is cloned into a
// scratch directory and handed to RepoService.createPrepared, which moves the clone into place
// and commits the row together; the original goes only after that commit, so a crash at any
// point loses nothing (at worst the original is left behind, and may be deleted here).
// Names are checked as everywhere in Anvil before they come near the file system.
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import type { Db } from '../db/database.js';
import { conflict, notFound } from '../errors.js';
import { git, gitText } from '../git/git.js';
import { checkOwnerName } from '../users/names.js';
import * as userStore from '../users/store.js';
import type { UserRow } from '../users/tables.js';
import { UserType } from '../users/tables.js';
import { checkRepoName } from './names.js';
import { adoptBareRepository, scratchDir } from './scratch.js';
import type { RepoService } from './service.js';
import * as store from './store.js';
import type { RepoRow } from './tables.js';

const valid = (check: () => void): boolean => {
  try {
    check();
    return true;
  } catch {
    return false;
  }
};

/** Whether `dir` looks like a bare git repository. */
function isBareRepo(dir: string): boolean {
  try {
    return (
      fs.statSync(dir).isDirectory() &&
      fs.statSync(path.join(dir, 'HEAD')).isFile() &&
      fs.statSync(path.join(dir, 'objects')).isDirectory() &&
      fs.statSync(path.join(dir, 'refs')).isDirectory()
    );
  } catch {
    return false;
  }
}

export interface UnadoptedServiceDeps {
  db: Db;
  repos: Pick<RepoService, 'createPrepared'>;
  /** [repository] ROOT, where unadopted repositories are looked for. */
  root: string;
}

export class UnadoptedService {
  constructor(private readonly deps: UnadoptedServiceDeps) {}

  private get root(): string {
    return path.resolve(this.deps.root);
  }

  /**
   * The `owner/name` of every unadopted repository, sorted, one page of them, and how many in all.
   * `pattern`: globs over `owner/name` (`owner-glob/name-glob`), or without a slash over either.
   */
  async list(pattern: string, limit: number, offset: number): Promise<[string[], number]> {
    const match = matcherOf(pattern);
    const found: string[] = [];
    const entries = fs.existsSync(this.root) ? fs.readdirSync(this.root, { withFileTypes: true }) : [];
    for (const e of entries) {
      if (!e.isDirectory() || e.name.startsWith('.')) continue;
      if (!valid(() => checkOwnerName(e.name))) continue;
      // As Forgejo: the directories of accounts that do not exist are not listed.
      const owner = await userStore.getByName(this.deps.db, e.name);
      if (!owner) continue;
      const ownerDir = path.join(this.root, e.name);
      for (const r of fs.readdirSync(ownerDir, { withFileTypes: true })) {
        if (!r.isDirectory() || !r.name.toLowerCase().endsWith('.git')) continue;
        const name = r.name.slice(0, -4);
        if (!valid(() => checkRepoName(name)) || !match(e.name, name)) continue;
        if (!isBareRepo(path.join(ownerDir, r.name))) continue;
        if (await store.getByOwnerAndName(this.deps.db, owner.name, name)) continue;
        found.push(`${e.name}/${name}`);
      }
    }
    found.sort();
    return [found.slice(offset, offset + limit), found.length];
  }

  /**
   * The directory of `owner/name` (422 for names Anvil would not accept, 404 when the owner does
   * not exist or there is no such bare repository). Forgejo keeps them in lower case; the exact
   * spelling is tried too.
   */
  private locate(
    ownerName: string,
    name: string,
  ): { owner: Promise<UserRow | undefined>; dir: string | undefined } {
    checkOwnerName(ownerName, 'owner');
    checkRepoName(name, 'repo');
    const candidates = [
      path.join(this.root, ownerName.toLowerCase(), `${name.toLowerCase()}.git`),
      path.join(this.root, ownerName, `${name}.git`),
    ];
    // Names are checked above; this only makes sure, once more, that nothing leaves the root.
    const dir = candidates.find((d) => path.dirname(path.dirname(d)) === this.root && isBareRepo(d));
    return { owner: userStore.getByName(this.deps.db, ownerName), dir };
  }

  private async require(ownerName: string, name: string): Promise<{ owner: UserRow; dir: string }> {
    const { owner, dir } = this.locate(ownerName, name);
    const account = await owner;
    if (!account || (account.type !== UserType.Individual && account.type !== UserType.Organization)) {
      throw notFound(`user does not exist [name: ${ownerName}]`);
    }
    if (!dir) throw notFound(`no unadopted repository [${ownerName}/${name}]`);
    return { owner: account, dir };
  }

  /** Adopts `owner/name`: 409 when the owner already has a repository of that name. */
  async adopt(doer: UserRow, ownerName: string, name: string): Promise<RepoRow> {
    const { owner, dir } = await this.require(ownerName, name);
    if (await store.getByOwnerAndName(this.deps.db, owner.name, name)) {
      throw conflict('The repository with the same name already exists.');
    }
    const scratch = scratchDir(this.deps.root, 'adopt');
    let branch: string;
    try {
      await git(['clone', '--mirror', '--quiet', '--', dir, scratch]);
      await adoptBareRepository(scratch);
      const heads = (
        await gitText(['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { gitDir: scratch })
      )
        .split('\n')
        .filter(Boolean);
      const head = (
        await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], { gitDir: dir, okCodes: [1, 128] })
      ).stdout
        .toString('utf8')
        .trim();
      branch =
        head && (heads.includes(head) || heads.length === 0)
          ? head
          : heads.includes('main')
            ? 'main'
            : (heads.sort()[0] ?? 'main');
      await git(['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { gitDir: scratch });
    } catch (err) {
      fs.rmSync(scratch, { recursive: true, force: true });
      throw err;
    }
    // As Forgejo's API, an adopted repository starts private.
    const repo = await this.deps.repos.createPrepared(
      doer,
      owner,
      { name, description: '', private: true, defaultBranch: branch },
      scratch,
      async () => undefined,
    );
    this.removeDir(dir);
    return repo;
  }

  /** Deletes the directory of `owner/name`. */
  async delete(ownerName: string, name: string): Promise<void> {
    const { dir } = await this.require(ownerName, name);
    this.removeDir(dir);
  }

  private removeDir(dir: string): void {
    fs.rmSync(dir, { recursive: true, force: true });
    // An owner directory left empty goes too.
    const parent = path.dirname(dir);
    try {
      if (parent !== this.root && fs.readdirSync(parent).length === 0) fs.rmdirSync(parent);
    } catch {
      // Someone else is using it: leave it.
    }
  }
}

/** Forgejo's pattern: `owner/name` globs each part; a single glob matches the owner or the name. */
function matcherOf(pattern: string): (owner: string, name: string) => boolean {
  if (!pattern) return () => true;
  const glob = (g: string) => picomatch(g, { nocase: true, dot: true });
  const slash = pattern.indexOf('/');
  if (slash < 0) {
    const m = glob(pattern);
    return (owner, name) => m(owner) || m(name);
  }
  const o = glob(pattern.slice(0, slash) || '*');
  const n = glob(pattern.slice(slash + 1) || '*');
  return (owner, name) => o(owner) && n(name);
}
