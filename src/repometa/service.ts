// What Anvil reads about a repository from its default branch, and the flags administrators set:
// language statistics (computed per commit from one `git ls-tree -r -l`, kept in an LRU cache and
// recomputed lazily after pushes), issue templates and the issue configuration (parsed as Forgejo
// does, see issue-templates.ts), repository flags, and the server-side git hooks Forgejo lists
// (never editable here: Forgejo's default `[security] DISABLE_GIT_HOOKS = true`).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { forbidden, invalidField, notFound } from '../errors.js';
import { transaction, type Db } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import { git } from '../git/git.js';
import * as data from '../git/data.js';
import type { RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import {
  CONFIG_CANDIDATES,
  TEMPLATE_DIRS,
  TemplateError,
  defaultIssueConfig,
  parseIssueConfig,
  parseTemplate,
  templateType,
  type IssueConfig,
  type IssueTemplate,
} from './issue-templates.js';
import {
  LINGUIST_ATTRIBUTES,
  languageStats,
  loadLanguages,
  parseCheckAttr,
  primaryLanguage,
  type LinguistAttributes,
} from './languages.js';
import * as store from './store.js';

/** Template files larger than this are errors (Forgejo's [ui] MAX_DISPLAY_FILE_SIZE). */
const MAX_TEMPLATE_SIZE = 8 * 1024 * 1024;

/** The server-side hooks Forgejo shows for a repository. */
export const GIT_HOOK_NAMES = ['pre-receive', 'update', 'post-receive'] as const;

/**
 * Whether server-side git hooks may be read or edited through the API: never, as Forgejo's
 * default (`[security] DISABLE_GIT_HOOKS = true`) answers every /hooks/git request with 403.
 */
export const GIT_HOOKS_ENABLED = false;
export const GIT_HOOKS_DISABLED_MESSAGE = 'must be allowed to edit Git hooks';

export interface GitHook {
  name: string;
  is_active: boolean;
  content: string;
}

export interface TemplatesResult {
  templates: IssueTemplate[];
  /** Files that could not be parsed, with the reason. */
  errors: Map<string, string>;
}

export interface RepoMetaServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'getById' | 'pathOf'>;
}

export class RepoMetaService {
  /** Language statistics by `repoId:commit`. */
  private readonly stats = new LRUCache<string, Record<string, number>>({ max: 2000 });
  private readonly inflight = new Map<string, Promise<Record<string, number>>>();
  /** The default branch's commit as last seen, per repository; forgotten at every push. */
  private readonly heads = new Map<number, { branch: string; oid: string | null }>();

  private readonly db: Db;
  private readonly log: Logger;
  private readonly repos: RepoMetaServiceDeps['repos'];

  constructor(deps: RepoMetaServiceDeps) {
    this.db = deps.db;
    this.log = deps.log;
    this.repos = deps.repos;
    const { events, repos, log } = deps;
    // A push or deletion on any process makes the head remembered here stale.
    events.onAnyNode('push', (e) => {
      this.heads.delete(e.repoId);
    });
    events.on('push', async (e) => {
      // The statistics of the default branch's new commit are computed after the push, in the
      // background, so that pages and lists find them ready rather than computing them then.
      const repo = await repos.getById(e.repoId);
      const update = repo && e.updates.find((u) => u.ref === `refs/heads/${repo.default_branch}`);
      if (repo && update && !/^0+$/.test(update.newOid)) {
        void this.statsOf(repo, update.newOid).catch((err: unknown) =>
          log.warn({ err, repoId: repo.id }, 'language statistics failed'),
        );
      }
    });
    events.onAnyNode('repository.deleted', (e) => {
      this.heads.delete(e.repoId);
    });
  }

  // The default branch

  private async head(repo: RepoRow, fresh: boolean): Promise<string | null> {
    if (repo.is_empty) return null;
    const known = this.heads.get(repo.id);
    if (!fresh && known && known.branch === repo.default_branch) return known.oid;
    const ref = await data.resolveRef(this.repos.pathOf(repo), `refs/heads/${repo.default_branch}`);
    const oid = ref?.oid ?? null;
    if (this.heads.size > 10_000) this.heads.clear();
    this.heads.set(repo.id, { branch: repo.default_branch, oid });
    return oid;
  }

  // Languages

  /** Bytes per language of the default branch ({} for an empty repository). */
  async languages(repo: RepoRow): Promise<Record<string, number>> {
    const oid = await this.head(repo, true);
    return oid ? this.statsOf(repo, oid) : {};
  }

  /** The largest language of each repository ('' for none), from the cache where it can. */
  async primaryLanguages(rows: RepoRow[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    // A few git processes at a time: a cold list of many repositories must not fork a crowd.
    const queue = rows.filter((r) => !r.is_empty);
    const worker = async () => {
      for (let r = queue.shift(); r; r = queue.shift()) {
        try {
          const oid = await this.head(r, false);
          out.set(r.id, oid ? primaryLanguage(await this.statsOf(r, oid)) : '');
        } catch (err) {
          this.log.warn({ err, repoId: r.id }, 'language statistics failed');
          out.set(r.id, '');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(4, queue.length) }, worker));
    return out;
  }

  private statsOf(repo: RepoRow, oid: string): Promise<Record<string, number>> {
    const key = `${repo.id}:${oid}`;
    const hit = this.stats.get(key);
    if (hit) return Promise.resolve(hit);
    let running = this.inflight.get(key);
    if (!running) {
      running = this.compute(repo, oid).finally(() => this.inflight.delete(key));
      this.inflight.set(key, running);
    }
    return running;
  }

  private async compute(repo: RepoRow, oid: string): Promise<Record<string, number>> {
    await loadLanguages();
    const out = await git(['ls-tree', '-r', '-l', '-z', '--end-of-options', oid], {
      gitDir: this.repos.pathOf(repo),
    });
    const files = [...regularFiles(out.stdout)];
    const hasAttributes = files.some(
      (f) => f.path === '.gitattributes' || f.path.endsWith('/.gitattributes'),
    );
    const attrs = hasAttributes ? await this.linguistAttributes(repo, oid, files) : undefined;
    const stats = languageStats(files, attrs);
    this.stats.set(`${repo.id}:${oid}`, stats);
    return stats;
  }

  /**
   * The linguist attributes the tree's `.gitattributes` files give its files: `git check-attr
   * --cached` against a temporary index of the tree (a bare repository has no work tree to read them from).
   */
  private async linguistAttributes(
    repo: RepoRow,
    oid: string,
    files: Array<{ path: string }>,
  ): Promise<Map<string, LinguistAttributes>> {
    const gitDir = this.repos.pathOf(repo);
    const index = path.join(os.tmpdir(), `anvil-attr-${crypto.randomUUID()}`);
    const env = { GIT_INDEX_FILE: index };
    try {
      await git(['read-tree', '--end-of-options', oid], { gitDir, env });
      const out = await git(['check-attr', '--cached', '-z', '--stdin', ...LINGUIST_ATTRIBUTES], {
        gitDir,
        env,
        input: files.map((f) => `${f.path}\0`).join(''),
      });
      return parseCheckAttr(out.stdout.toString('utf8'));
    } finally {
      fs.rmSync(index, { force: true });
    }
  }

  // Issue templates and configuration

  /** The templates of the default branch that parse, and the errors of those that do not. */
  async issueTemplates(repo: RepoRow): Promise<TemplatesResult> {
    const files = await this.templateFiles(repo);
    const result: TemplatesResult = { templates: [], errors: new Map() };
    for (const dirName of TEMPLATE_DIRS) {
      for (const f of files.filter((x) => x.dir === dirName && templateType(x.path) !== '')) {
        if (f.content === null) {
          result.errors.set(f.path, `too large: ${f.size} > MaxDisplayFileSize`);
          continue;
        }
        try {
          result.templates.push(parseTemplate(f.path, f.content));
        } catch (err) {
          if (!(err instanceof TemplateError)) throw err;
          result.errors.set(f.path, err.message);
        }
      }
    }
    return result;
  }

  /** The issue configuration of the default branch, and why it is not valid (then the default). */
  async issueConfig(repo: RepoRow): Promise<{ config: IssueConfig; error: string | null }> {
    const files = await this.templateFiles(repo);
    for (const name of CONFIG_CANDIDATES) {
      const f = files.find((x) => x.path === `${name}.yaml`) ?? files.find((x) => x.path === `${name}.yml`);
      if (!f) continue;
      try {
        return { config: parseIssueConfig(f.content ?? ''), error: null };
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        return { config: defaultIssueConfig(), error: err.message };
      }
    }
    return { config: defaultIssueConfig(), error: null };
  }

  /** The blobs directly in the template directories of the default branch, in one ls-tree and one cat-file. */
  private async templateFiles(
    repo: RepoRow,
  ): Promise<Array<{ dir: string; path: string; size: number; content: string | null }>> {
    const oid = await this.head(repo, true);
    if (!oid) return [];
    const dir = this.repos.pathOf(repo);
    const out = await git(
      ['ls-tree', '-l', '-z', '--end-of-options', oid, '--', ...TEMPLATE_DIRS.map((d) => `${d}/`)],
      { gitDir: dir, env: { GIT_LITERAL_PATHSPECS: '1' } },
    );
    const entries = [...regularFiles(out.stdout)].filter(
      (e) => templateType(e.path) !== '' || /\/config\.ya?ml$/.test(e.path),
    );
    const small = entries.filter((e) => e.size <= MAX_TEMPLATE_SIZE);
    const blobs = await data.readBlobs(
      dir,
      small.map((e) => e.oid),
    );
    return entries.map((e) => ({
      dir: e.path.slice(0, e.path.lastIndexOf('/')),
      path: e.path,
      size: e.size,
      content: e.size <= MAX_TEMPLATE_SIZE ? (blobs.get(e.oid)?.toString('utf8') ?? '') : null,
    }));
  }

  // Flags

  listFlags(repo: RepoRow): Promise<string[]> {
    return store.flags(this.db, repo.id);
  }

  async hasFlag(repo: RepoRow, name: string): Promise<boolean> {
    return store.hasFlag(this.db, repo.id, name);
  }

  async addFlag(repo: RepoRow, name: string): Promise<void> {
    await store.addFlag(this.db, repo.id, checkFlag(name, 'flag'));
  }

  async deleteFlag(repo: RepoRow, name: string): Promise<void> {
    await store.deleteFlag(this.db, repo.id, name);
  }

  async replaceFlags(repo: RepoRow, names: string[]): Promise<void> {
    const distinct = [...new Set(names.map((n) => checkFlag(n, 'flags')))];
    await transaction(this.db, (tx) => store.replaceFlags(tx, repo.id, distinct));
  }

  // Git hooks

  /** The repository's server-side hooks: none is active and none has content here. */
  gitHooks(): GitHook[] {
    this.requireGitHooks();
    return GIT_HOOK_NAMES.map((name) => ({ name, is_active: false, content: '' }));
  }

  gitHook(name: string): GitHook {
    const hook = this.gitHooks().find((h) => h.name === name);
    if (!hook) throw notFound();
    return hook;
  }

  /** Editing or deleting a hook: refused while git hooks are disabled (always, here). */
  changeGitHook(): never {
    throw forbidden(GIT_HOOKS_DISABLED_MESSAGE);
  }

  private requireGitHooks(): void {
    if (!GIT_HOOKS_ENABLED) throw forbidden(GIT_HOOKS_DISABLED_MESSAGE);
  }
}

/** A flag is any non-empty string without control characters, at most 255 characters. */
function checkFlag(name: string, field: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (name === '' || name.length > 255 || /[\u0000-\u001f\u007f]/.test(name))
    throw invalidField(field, 'flag names are 1 to 255 characters without control characters');
  return name;
}

/** Regular files (and executables) of `git ls-tree -l -z` output: links and submodules left out. */
function* regularFiles(out: Buffer): Generator<{ path: string; size: number; oid: string }> {
  const text = out.toString('utf8');
  let pos = 0;
  while (pos < text.length) {
    const end = text.indexOf('\0', pos);
    const rec = text.slice(pos, end < 0 ? text.length : end);
    pos = end < 0 ? text.length : end + 1;
    if (!rec.startsWith('100')) continue;
    const tab = rec.indexOf('\t');
    // "<mode> blob <oid> <padded size>"
    const [, , oid, size] = rec.slice(0, tab).split(/ +/);
    yield { path: rec.slice(tab + 1), size: Number(size) || 0, oid: oid ?? '' };
  }
}
