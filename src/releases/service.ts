// Releases: one per tag. Publishing a release whose tag does not exist yet creates the tag (a
// lightweight one, with the system git) at its target, like a push of that tag; a draft creates
// none until it is published. Assets are attachments (see attachments/service.ts); deleting a
// release deletes them and keeps the tag. Generated source archives are never stored or counted.
import type { Logger } from 'pino';
import type { Identity } from '../auth/identity.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { conflict, forbidden, invalid, invalidField, notFound } from '../errors.js';
import type { EventBus, RefUpdate } from '../events/bus.js';
import { isValidRefName, resolveRef, updateRef } from '../git/data.js';
import { ZERO_OID } from '../git/git.js';
import type { Page } from '../http/pagination.js';
import { AccessMode } from '../orgs/tables.js';
import type { RefChanges } from '../repos/ref-changes.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import type { RepoRow } from '../repos/tables.js';
import { hasScope } from '../tokens/scopes.js';
import type { AfterCommit } from '../users/owned.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { ReleaseRow } from './tables.js';

export type { ReleaseRow } from './tables.js';

export interface CreateReleaseInput {
  tagName: string;
  target?: string | undefined;
  title?: string | undefined;
  note?: string | undefined;
  isDraft?: boolean | undefined;
  isPrerelease?: boolean | undefined;
  hideArchiveLinks?: boolean | undefined;
}

export type EditReleaseInput = Partial<CreateReleaseInput> & {
  /** The web form's content replaces the notes even when empty (the API's empty string keeps them). */
  noteAsGiven?: boolean | undefined;
};

export interface ReleaseFilter {
  draft?: boolean | undefined;
  prerelease?: boolean | undefined;
  keyword?: string | undefined;
}

const b = (v: boolean | undefined) => (v ? 1 : 0);

function checkTagName(tag: string): void {
  if (!isValidRefName(tag) || tag.length > 255) {
    throw invalidField('tag_name', `invalid tag name [name: ${tag}]`);
  }
}

function checkTarget(target: string): void {
  if (!isValidRefName(target)) {
    throw invalidField('target_commitish', `invalid branch, tag or commit [target: ${target}]`);
  }
}

/** What other domains keep per release (its attachments) and must follow on its deletion. */
export interface ReleaseHooks {
  /** Before a release row is deleted: drop rows; return work for after commit (files). */
  beforeDelete?(tx: Tx, release: ReleaseRow): Promise<AfterCommit | void>;
}

/** The push rules a tag created for a release must pass (the protection domain's). */
export interface TagRules {
  refusalFor(repo: RepoRow, pusher: UserRow, updates: RefUpdate[]): Promise<string | null>;
}

export interface ReleaseServiceDeps {
  db: Db;
  events: EventBus;
  log: Logger;
  repos: Pick<RepoService, 'pathOf'>;
  refChanges: Pick<RefChanges, 'beginIntent' | 'dropIntent' | 'afterPush'>;
  protection: TagRules;
}

export class ReleaseService {
  private readonly db: Db;
  private readonly hooks: ReleaseHooks[] = [];

  constructor(private readonly deps: ReleaseServiceDeps) {
    this.db = deps.db;
  }

  /** Registers what another domain keeps per release. */
  addHooks(hooks: ReleaseHooks): void {
    this.hooks.push(hooks);
  }

  /** The Repository JSON's release_counter of several repositories at once. */
  countsOf(repoIds: number[]): Promise<Map<number, number>> {
    return store.countsOf(this.db, repoIds);
  }

  // Access

  /**
   * Whether a caller may change releases and see drafts: write access to the repository's
   * releases, and for a token the write:repository scope (a read-only token sees no drafts).
   */
  canWrite(access: RepoAccess, identity: Identity | null): boolean {
    if (!identity || (access.units.get('repo.releases') ?? 0) < AccessMode.write) return false;
    return identity.method !== 'token' || hasScope(identity.scopes, 'repository', 'write');
  }

  /** 404 when the repository has its releases unit switched off. */
  assertEnabled(repo: RepoRow): void {
    if (!repo.has_releases) throw notFound('releases are disabled for this repository');
  }

  /** 403 for changes to an archived repository. */
  assertWritable(repo: RepoRow): void {
    if (repo.is_archived) throw forbidden('repo is archived');
  }

  // Reading

  list(repo: RepoRow, seeDrafts: boolean, f: ReleaseFilter, page: Page): Promise<[ReleaseRow[], number]> {
    return store.list(this.db, repo.id, { includeDrafts: seeDrafts, ...f }, page.limit, page.offset);
  }

  /** The release `id` of the repository; 404 when there is none or it is a draft the caller may not see. */
  async get(repo: RepoRow, id: number, seeDrafts: boolean): Promise<ReleaseRow> {
    const r = await store.getById(this.db, repo.id, id);
    if (!r || r.is_tag || (r.is_draft && !seeDrafts)) {
      throw notFound(`release does not exist [id: ${id}]`);
    }
    return r;
  }

  async getByTag(repo: RepoRow, tag: string, seeDrafts: boolean): Promise<ReleaseRow> {
    const r = await store.getByTag(this.db, repo.id, tag);
    if (!r || r.is_tag || (r.is_draft && !seeDrafts)) {
      throw notFound(`release does not exist [tag_name: ${tag}]`);
    }
    return r;
  }

  /** The newest published release that is not a pre-release; 404 when there is none. */
  async latest(repo: RepoRow): Promise<ReleaseRow> {
    const r = await store.latest(this.db, repo.id);
    if (!r) throw notFound('release does not exist [latest]');
    return r;
  }

  isDraft(id: number): Promise<boolean> {
    return store.isDraft(this.db, id);
  }

  // Writing

  /**
   * Creates a release for `tagName`. Unless it is a draft, a missing tag is created at `target`
   * (the default branch when empty; 404 when it names no commit). 409 when the tag already has a
   * release, 422 for an empty repository or an invalid name.
   */
  async create(repo: RepoRow, doer: UserRow, input: CreateReleaseInput): Promise<ReleaseRow> {
    this.assertWritable(repo);
    const tag = input.tagName;
    checkTagName(tag);
    const target = input.target || repo.default_branch;
    checkTarget(target);
    if (repo.is_empty) throw invalid('repo is empty');
    const existing = await store.getByTag(this.db, repo.id, tag);
    if (existing && !existing.is_tag) throw conflict('Release is has no Tag');

    const published = input.isDraft ? undefined : await this.ensureTag(repo, doer, tag, target);
    const fields = {
      publisher_id: doer.id,
      tag_name: tag,
      lower_tag_name: tag.toLowerCase(),
      target,
      title: input.title ?? '',
      note: input.note ?? '',
      sha1: published?.sha ?? '',
      is_draft: b(input.isDraft),
      is_prerelease: b(input.isPrerelease),
      is_tag: 0,
      hide_archive_links: b(input.hideArchiveLinks),
      created_unix: nowUnix(),
    };
    let release: ReleaseRow;
    try {
      release = await transaction(this.db, async (tx) => {
        const row = await store.getByTag(tx, repo.id, tag);
        if (row && !row.is_tag) throw conflict('Release is has no Tag');
        let id = row?.id;
        if (id !== undefined) await store.update(tx, id, fields);
        else id = await store.insert(tx, { repo_id: repo.id, ...fields });
        if (id === undefined) throw conflict(`release tag already exists [name: ${tag}]`);
        return (await store.getById(tx, repo.id, id))!;
      });
    } catch (err) {
      if (published?.update) await this.undoTag(repo, published.update, published.intent);
      throw err;
    }
    if (published?.update)
      await this.deps.refChanges.afterPush(repo.id, doer.id, [published.update], published.intent);
    if (!release.is_draft) {
      await this.deps.events.emit('release.published', { repoId: repo.id, doerId: doer.id, release });
    }
    return release;
  }

  /**
   * Changes a release; empty strings leave fields as they are (as Forgejo). Publishing a draft
   * creates its tag when missing and makes it new (its time becomes now).
   */
  async edit(
    repo: RepoRow,
    doer: UserRow,
    release: ReleaseRow,
    input: EditReleaseInput,
  ): Promise<ReleaseRow> {
    this.assertWritable(repo);
    const tag = input.tagName || release.tag_name;
    if (input.tagName) checkTagName(tag);
    const target = input.target || release.target || repo.default_branch;
    if (input.target) checkTarget(target);
    const isDraft = input.isDraft ?? release.is_draft === 1;
    const tagChanged = tag.toLowerCase() !== release.lower_tag_name;
    if (tagChanged) {
      const other = await store.getByTag(this.db, repo.id, tag);
      if (other && other.id !== release.id) throw conflict(`release tag already exists [name: ${tag}]`);
    }
    const published = isDraft ? undefined : await this.ensureTag(repo, doer, tag, target);
    const patch = {
      tag_name: tag,
      lower_tag_name: tag.toLowerCase(),
      target,
      title: input.title || release.title,
      note: input.noteAsGiven ? (input.note ?? release.note) : input.note || release.note,
      sha1: published?.sha ?? (tagChanged ? '' : release.sha1),
      is_draft: b(isDraft),
      is_prerelease: input.isPrerelease === undefined ? release.is_prerelease : b(input.isPrerelease),
      hide_archive_links:
        input.hideArchiveLinks === undefined ? release.hide_archive_links : b(input.hideArchiveLinks),
      ...(release.is_draft && !isDraft ? { created_unix: nowUnix() } : {}),
    };
    let updated: ReleaseRow;
    try {
      updated = await transaction(this.db, async (tx) => {
        const other = tagChanged ? await store.getByTag(tx, repo.id, tag) : undefined;
        if (other && other.id !== release.id) throw conflict(`release tag already exists [name: ${tag}]`);
        await store.update(tx, release.id, patch);
        const row = await store.getById(tx, repo.id, release.id);
        if (!row) throw notFound(`release does not exist [id: ${release.id}]`);
        return row;
      });
    } catch (err) {
      if (published?.update) await this.undoTag(repo, published.update, published.intent);
      throw err;
    }
    if (published?.update)
      await this.deps.refChanges.afterPush(repo.id, doer.id, [published.update], published.intent);
    if (!updated.is_draft) {
      await this.deps.events.emit(release.is_draft ? 'release.published' : 'release.updated', {
        repoId: repo.id,
        doerId: doer.id,
        release: updated,
      });
    }
    return updated;
  }

  /** Deletes a release and its assets (their usage with them); the tag stays. */
  async delete(repo: RepoRow, release: ReleaseRow, doer?: UserRow): Promise<void> {
    this.assertWritable(repo);
    const after = await transaction(this.db, async (tx) => {
      const work: AfterCommit[] = [];
      for (const h of this.hooks) {
        const w = await h.beforeDelete?.(tx, release);
        if (w) work.push(w);
      }
      await store.remove(tx, release.id);
      return work;
    });
    for (const w of after) await w();
    if (!release.is_draft && !release.is_tag) {
      await this.deps.events.emit('release.deleted', {
        repoId: repo.id,
        doerId: doer?.id ?? release.publisher_id,
        release,
      });
    }
  }

  // Tags

  /**
   * The commit of tag `tag`, creating the tag at `target` when it does not exist (then `update`
   * says what changed, for afterPush). Push rules (protection) apply as to a pushed tag: 422.
   */
  private async ensureTag(
    repo: RepoRow,
    doer: UserRow,
    tag: string,
    target: string,
  ): Promise<{ sha: string; update?: RefUpdate; intent?: number }> {
    const dir = this.deps.repos.pathOf(repo);
    const ref = `refs/tags/${tag}`;
    const existing = await resolveRef(dir, ref);
    if (existing) return { sha: existing.oid };
    const commit = await resolveRef(dir, target);
    if (!commit) throw notFound(`target "${target}" not found`);
    const update: RefUpdate = { ref, oldOid: ZERO_OID, newOid: commit.oid };
    const refusal = await this.deps.protection.refusalFor(repo, doer, [update]);
    if (refusal) throw invalid(refusal);
    // Written down first: a crash before the release is recorded still records the tag.
    const intent = await this.deps.refChanges.beginIntent(repo.id, doer.id, [update]);
    if (!(await updateRef(dir, ref, ZERO_OID, commit.oid))) {
      await this.deps.refChanges.dropIntent(intent);
      throw conflict(`tag already exists [name: ${tag}]`);
    }
    return { sha: commit.oid, update, intent };
  }

  /** Removes a tag this service just created when the release could not be recorded. */
  private async undoTag(repo: RepoRow, update: RefUpdate, intent: number | undefined): Promise<void> {
    try {
      await updateRef(this.deps.repos.pathOf(repo), update.ref, update.newOid, ZERO_OID);
      if (intent !== undefined) await this.deps.refChanges.dropIntent(intent);
    } catch (err) {
      this.deps.log.error(
        { err, repoId: repo.id, ref: update.ref },
        'removing a tag after a failed release failed',
      );
    }
  }
}
