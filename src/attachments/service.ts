// Attachments of issues, comments and releases: one table and one blob store (`storage.attachments`,
// keyed by uuid). Uploads stream into storage through the size and type checks, then the row and
// the quota usage of the repository's owner (never the uploader) are written in one transaction;
// deletions subtract it again. Domains that hold attachments (releases, issues) use the methods
// below with a `Holder`; their routes stay thin.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db, type Tx } from '../db/database.js';
import { AppError, badRequest, invalid, notFound } from '../errors.js';
import { AccessMode } from '../orgs/tables.js';
import { measureRows, recordUsage, type OwnerTotals, type UsageSource } from '../quota/usage.js';
import type { ItemSource } from '../quota/usage.js';
import type { QuotaUsedAttachmentJson } from '../quota/schemas.js';
import type { ItemSources, QuotaService } from '../quota/service.js';
import type { IssueService } from '../issues/service.js';
import type { ReleaseService } from '../releases/service.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import type { BlobStore } from '../storage/storage.js';
import type { BlobReferences } from '../storage/sweep.js';
import type { UserService } from '../users/service.js';
import type { RepoRow } from '../repos/tables.js';
import type { AfterCommit } from '../users/owned.js';
import type { UserRow } from '../users/tables.js';
import * as store from './store.js';
import type { AttachmentRow } from './tables.js';
import { toAttachmentJson } from './schemas.js';
import { UploadGate, sniffType, typeAllowed } from './upload.js';
import { faultPoint } from '../faults.js';

export type { AttachmentRow } from './tables.js';

const ISSUES = 'size:assets:attachments:issues';
const RELEASES = 'size:assets:attachments:releases';
type Subject = typeof ISSUES | typeof RELEASES;

/** What an attachment belongs to. A comment's attachments also name the comment's issue. */
export type Holder =
  | { kind: 'release'; repo: RepoRow; releaseId: number }
  | { kind: 'issue'; repo: RepoRow; issueId: number }
  | { kind: 'comment'; repo: RepoRow; issueId: number; commentId: number };

/** A file in storage that no row refers to yet (see `stage` and `commit`). */
export interface Staged {
  uuid: string;
  size: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Where a blob lives: spread over two directory levels by the first characters of its uuid. */
export function blobKey(uuid: string): string {
  return `${uuid[0]}/${uuid[1]}/${uuid}`;
}

const subjectOf = (a: { release_id: number | null }): Subject => (a.release_id === null ? ISSUES : RELEASES);

export interface AttachmentServiceDeps {
  db: Db;
  log: Logger;
  /** Where the files are (storage.attachments). */
  blobs: BlobStore;
  settings: Config['attachment'];
  rootUrl: string;
  quota: Pick<QuotaService, 'check'>;
  users: Pick<UserService, 'getById'>;
  /** Attachments follow their repository's deletion and transfer. */
  repos: Pick<RepoService, 'addHooks'>;
  /** ...their issue's and comment's deletion; and they are the `assets` of issues and comments. */
  issues: Pick<IssueService, 'addHooks' | 'setAssetsSource' | 'getByIds'>;
  /** ...their release's deletion; a draft release's assets are for its writers. */
  releases: Pick<ReleaseService, 'addHooks' | 'isDraft'>;
  /** Attachment sizes for quota recalculation, /user/quota/attachments, the sweep of blobs. */
  usageSources: UsageSource[];
  quotaItems: ItemSources;
  blobReferences: BlobReferences[];
}

export class AttachmentService {
  private readonly db: Db;
  private readonly settings: Config['attachment'];

  constructor(private readonly deps: AttachmentServiceDeps) {
    this.db = deps.db;
    this.settings = deps.settings;
    deps.usageSources.push(this.usageSource());
    deps.quotaItems.attachments = this.itemSource();
    deps.blobReferences.push({
      label: 'attachments',
      store: 'attachments',
      prefix: '',
      referenced: async (keys) => {
        // A key not named like an attachment's blob is referenced by nothing.
        const byUuid = new Map<string, string>();
        for (const key of keys) {
          const uuid = key.slice(key.lastIndexOf('/') + 1);
          if (UUID.test(uuid) && blobKey(uuid) === key) byUuid.set(uuid, key);
        }
        const held = await store.existingUuids(deps.db, [...byUuid.keys()]);
        return new Set([...held].map((uuid) => byUuid.get(uuid)!));
      },
    });
    deps.repos.addHooks({
      beforeDelete: (tx, repo) => this.beforeRepoDelete(tx, repo),
      onTransfer: (tx, repo, newOwnerId) => this.onRepoTransfer(tx, repo, newOwnerId),
    });
    // Issues and comments take their attachments (and the usage) along when deleted, and show
    // them as their `assets`.
    deps.issues.addHooks({
      beforeDelete: (tx, issue) => this.deleteOfIssue(tx, issue.id),
      beforeDeleteComment: (tx, comment) => this.deleteOfComment(tx, comment.id),
    });
    // A release takes its attachments (and the usage) along when deleted.
    deps.releases.addHooks({ beforeDelete: (tx, release) => this.deleteOfRelease(tx, release.id) });
    const { rootUrl } = deps;
    const asJson = (m: Map<number, AttachmentRow[]>) =>
      new Map([...m].map(([id, rows]) => [id, rows.map((a) => toAttachmentJson(a, rootUrl))]));
    deps.issues.setAssetsSource({
      issues: async (ids) => asJson(await this.ofIssues(ids)),
      comments: async (ids) => asJson(await this.ofComments(ids)),
    });
  }

  // Uploading

  /**
   * Whether an upload to `holder` may start: attachments enabled (404 otherwise, as Forgejo) and
   * the repository's owner within quota for the kind of attachment (413 otherwise).
   */
  async assertCanUpload(holder: Holder): Promise<void> {
    if (!this.settings.enabled) throw notFound('Attachment is not enabled');
    if (!(await this.deps.quota.check(holder.repo.owner_id, this.subject(holder)))) {
      const owner = await this.deps.users.getById(holder.repo.owner_id);
      throw new AppError('payload_too_large', 'quota exceeded', {
        user_id: holder.repo.owner_id,
        username: owner?.name ?? '',
      });
    }
  }

  /**
   * Streams a file into storage under a new uuid, checking its size (413) and, from its first
   * bytes and its name, its type against the allowed types (400 for a release, 422 for an issue or
   * comment, as Forgejo). Nothing is kept when a check fails.
   */
  async stage(holder: Holder, name: string, data: Readable): Promise<Staged> {
    const allowed =
      holder.kind === 'release' ? this.settings.releaseAllowedTypes : this.settings.allowedTypes;
    const check = async (head: Buffer): Promise<Error | undefined> => {
      const type = await sniffType(head);
      if (typeAllowed(allowed, name, type)) return undefined;
      const message = `This file extension or type is not allowed to be uploaded. Type "${type}"`;
      return holder.kind === 'release' ? badRequest(message) : invalid(message);
    };
    const gate = new UploadGate(this.settings.maxSize, allowed.length ? check : undefined);
    // A failing request stream (a client going away, a malformed body) fails the store's write
    // through `gate`, also when it is only closed before its end.
    data.on('error', (err) => gate.destroy(err));
    data.once('close', () => {
      if (!data.readableEnded) gate.destroy(data.errored ?? new Error('the upload ended early'));
    });
    data.pipe(gate);
    const uuid = crypto.randomUUID();
    const { size } = await this.deps.blobs.put(blobKey(uuid), gate);
    faultPoint('attachment:stored');
    return { uuid, size };
  }

  /** Removes a staged file that will not become an attachment. */
  async discard(staged: Staged): Promise<void> {
    await this.removeBlobs([staged.uuid]);
  }

  /**
   * Records a staged file as an attachment of `holder` and counts it against the repository's
   * owner, in one transaction; the file is removed when that fails.
   */
  async commit(
    holder: Holder,
    uploader: UserRow,
    name: string,
    staged: Staged,
    createdUnix = nowUnix(),
  ): Promise<AttachmentRow> {
    try {
      return await transaction(this.db, async (tx) => {
        // Read again inside the transaction: the repository may have changed owner meanwhile.
        const ownerId = await store.lockedOwnerOf(tx, holder.repo.id);
        if (ownerId === undefined) throw notFound(`repository does not exist [id: ${holder.repo.id}]`);
        const id = await store.insert(tx, {
          uuid: staged.uuid,
          repo_id: holder.repo.id,
          ...this.columnsOf(holder),
          uploader_id: uploader.id,
          name,
          size: staged.size,
          created_unix: createdUnix,
        });
        await recordUsage(tx, ownerId, this.subject(holder), staged.size);
        return (await store.getById(tx, id))!;
      });
    } catch (err) {
      await this.discard(staged);
      throw err;
    }
  }

  /** Stores a whole upload (`stage` then `commit`). */
  async upload(holder: Holder, uploader: UserRow, name: string, data: Readable): Promise<AttachmentRow> {
    checkName(name);
    await this.assertCanUpload(holder);
    return this.commit(holder, uploader, name, await this.stage(holder, name, data));
  }

  /** A link to a file elsewhere (release assets): no bytes stored, nothing counted. */
  async addExternal(holder: Holder, uploader: UserRow, name: string, url: string): Promise<AttachmentRow> {
    checkName(name);
    const link = checkExternalUrl(url);
    if (!this.settings.enabled) throw notFound('Attachment is not enabled');
    const id = await store.insert(this.db, {
      uuid: crypto.randomUUID(),
      repo_id: holder.repo.id,
      ...this.columnsOf(holder),
      uploader_id: uploader.id,
      name,
      size: 0,
      external_url: link,
      created_unix: nowUnix(),
    });
    return (await store.getById(this.db, id))!;
  }

  // Reading

  /** The attachments of `holder`: a release's by name, an issue's or comment's in upload order. */
  async list(holder: Holder): Promise<AttachmentRow[]> {
    if (holder.kind === 'release') return store.ofReleases(this.db, [holder.releaseId]);
    if (holder.kind === 'comment') return store.ofComments(this.db, [holder.commentId]);
    return store.ofIssues(this.db, [holder.issueId]);
  }

  /** The attachments of many releases at once, by release id (for lists: one query). */
  async ofReleases(ids: number[]): Promise<Map<number, AttachmentRow[]>> {
    return group(ids.length ? await store.ofReleases(this.db, ids) : [], (a) => a.release_id!);
  }

  /** The attachments of many issues (not their comments') at once, by issue id. */
  async ofIssues(ids: number[]): Promise<Map<number, AttachmentRow[]>> {
    return group(ids.length ? await store.ofIssues(this.db, ids) : [], (a) => a.issue_id!);
  }

  /** The attachments of many comments at once, by comment id. */
  async ofComments(ids: number[]): Promise<Map<number, AttachmentRow[]>> {
    return group(ids.length ? await store.ofComments(this.db, ids) : [], (a) => a.comment_id!);
  }

  /** The attachment `id` of `holder`; 404 when there is none (or it belongs to something else). */
  async require(holder: Holder, id: number): Promise<AttachmentRow> {
    const a = await store.getById(this.db, id);
    if (!a || !this.holds(holder, a)) throw notFound(`attachment does not exist [id: ${id}]`);
    return a;
  }

  private holds(holder: Holder, a: AttachmentRow): boolean {
    if (a.repo_id !== holder.repo.id) return false;
    if (holder.kind === 'release') return a.release_id === holder.releaseId;
    if (holder.kind === 'comment') return a.comment_id === holder.commentId;
    return a.issue_id === holder.issueId && a.comment_id === null && a.release_id === null;
  }

  // Editing and deleting

  /**
   * Renames an attachment (the new name must pass the allowed types, 422) or changes the link of
   * an external one (400 for an attachment with stored bytes).
   */
  async edit(
    holder: Holder,
    a: AttachmentRow,
    input: { name?: string | undefined; downloadUrl?: string | undefined },
  ): Promise<AttachmentRow> {
    const patch: { name?: string; external_url?: string } = {};
    if (input.name) {
      const allowed =
        holder.kind === 'release' ? this.settings.releaseAllowedTypes : this.settings.allowedTypes;
      // As Forgejo: the type of a rename is judged by the name alone (no bytes: text/plain).
      if (!a.external_url && !typeAllowed(allowed, input.name, 'text/plain')) {
        throw invalid(`This file extension or type is not allowed to be uploaded. Type "text/plain"`);
      }
      patch.name = input.name;
    }
    if (input.downloadUrl) {
      if (!a.external_url) throw badRequest('existing attachment is not external');
      patch.external_url = checkExternalUrl(input.downloadUrl);
    }
    if (Object.keys(patch).length) await store.update(this.db, a.id, patch);
    return (await store.getById(this.db, a.id)) ?? { ...a, ...patch };
  }

  async delete(a: AttachmentRow): Promise<void> {
    const after = await transaction(this.db, (tx) => this.deleteInTx(tx, [a]));
    await after();
  }

  /**
   * Deletes attachment rows and subtracts their sizes from the current owner of each one's
   * repository, inside `tx`; returns the removal of their blobs, to run once committed.
   */
  async deleteInTx(tx: Tx, rows: AttachmentRow[]): Promise<AfterCommit> {
    if (rows.length === 0) return async () => undefined;
    const owners = new Map<number, number | undefined>();
    for (const repoId of new Set(rows.map((a) => a.repo_id))) {
      owners.set(repoId, await store.lockedOwnerOf(tx, repoId));
    }
    const usage = new Map<string, { ownerId: number; subject: Subject; bytes: number }>();
    for (const a of rows) {
      const ownerId = owners.get(a.repo_id);
      if (ownerId === undefined || !Number(a.size)) continue;
      const key = `${ownerId}:${subjectOf(a)}`;
      const u = usage.get(key) ?? { ownerId, subject: subjectOf(a), bytes: 0 };
      u.bytes += Number(a.size);
      usage.set(key, u);
    }
    await store.removeByIds(
      tx,
      rows.map((a) => a.id),
    );
    for (const u of usage.values()) await recordUsage(tx, u.ownerId, u.subject, -u.bytes);
    const uuids = rows.filter((a) => !a.external_url).map((a) => a.uuid);
    return () => this.removeBlobs(uuids);
  }

  /** Drops a release's attachments inside its deletion's transaction (a release hook). */
  async deleteOfRelease(tx: Tx, releaseId: number): Promise<AfterCommit> {
    return this.deleteInTx(tx, await store.ofReleases(tx, [releaseId]));
  }

  /** For the issues domain: drops an issue's attachments, its comments' included. */
  async deleteOfIssue(tx: Tx, issueId: number): Promise<AfterCommit> {
    return this.deleteInTx(tx, await store.allOfIssue(tx, issueId));
  }

  /** For the issues domain: drops a comment's attachments. */
  async deleteOfComment(tx: Tx, commentId: number): Promise<AfterCommit> {
    return this.deleteInTx(tx, await store.ofComments(tx, [commentId]));
  }

  // Downloading

  /**
   * The attachment `uuid` for a download by a caller with `access` to its repository (see
   * `readable`); 404 when there is none.
   */
  async byUuid(uuid: string): Promise<AttachmentRow | undefined> {
    return UUID.test(uuid) ? store.getByUuid(this.db, uuid) : undefined;
  }

  /**
   * Whether a caller with `access` may download `a`: read access to the repository's issues or
   * releases; for a draft release's assets, write access to releases.
   */
  async readable(a: AttachmentRow, access: RepoAccess): Promise<boolean> {
    const unit = a.release_id === null ? 'repo.issues' : 'repo.releases';
    const mode = access.units.get(unit) ?? 0;
    if (mode < AccessMode.read) return false;
    if (a.release_id !== null && (await this.deps.releases.isDraft(a.release_id))) {
      return mode >= AccessMode.write;
    }
    return true;
  }

  async countDownload(a: AttachmentRow): Promise<void> {
    await store.countDownload(this.db, a.id);
  }

  /** A presigned URL of the file when its store serves downloads directly (SERVE_DIRECT). */
  async directUrl(a: AttachmentRow): Promise<string | undefined> {
    return this.deps.blobs.directUrl?.(blobKey(a.uuid), { filename: a.name });
  }

  open(a: AttachmentRow, range?: { start: number; end: number }): Promise<Readable> {
    return this.deps.blobs.open(blobKey(a.uuid), range);
  }

  // What the repository's life means for attachments

  private async beforeRepoDelete(tx: Tx, repo: RepoRow): Promise<AfterCommit | void> {
    const rows = await store.ofRepo(tx, repo.id);
    if (rows.length) return this.deleteInTx(tx, rows);
  }

  private async onRepoTransfer(tx: Tx, repo: RepoRow, newOwnerId: number): Promise<void> {
    const sizes = await store.sizesOfRepo(tx, repo.id);
    for (const [subject, bytes] of [
      [ISSUES, sizes.issues],
      [RELEASES, sizes.releases],
    ] as const) {
      if (!bytes) continue;
      await recordUsage(tx, repo.owner_id, subject, -bytes);
      await recordUsage(tx, newOwnerId, subject, bytes);
    }
  }

  // Quota

  /**
   * Attachment sizes for quota recalculation: those of each owner's repositories, each row's size
   * checked against its blob's (a row whose blob is missing is left alone).
   */
  usageSource(): UsageSource {
    return {
      subjects: [ISSUES, RELEASES],
      measure: (db, ownerId) =>
        measureRows({
          kind: 'attachment',
          db,
          table: 'attachment',
          page: (after, limit) => store.storedPage(db, after, limit, ownerId),
          measure: async (r) => (await this.deps.blobs.stat(blobKey(r.uuid)))?.size,
          name: (r) => `${r.owner_name}/${r.repo_name} attachment ${r.uuid} (${r.name})`,
        }),
      totals: async (q, ownerId) => {
        const out: OwnerTotals = new Map();
        for (const r of await store.ownerTotals(q, ownerId)) {
          const t = out.get(r.owner_id) ?? {};
          t[r.is_release ? RELEASES : ISSUES] = r.total;
          out.set(r.owner_id, t);
        }
        return out;
      },
    };
  }

  /** /user/quota/attachments and /orgs/{org}/quota/attachments: what counts against the owner. */
  itemSource(): ItemSource<QuotaUsedAttachmentJson> {
    return {
      list: async (q, ownerId, limit, offset, bySize) => {
        const [rows, total] = await store.quotaItems(q, ownerId, limit, offset, bySize);
        const issueIds = rows.filter((r) => r.issue_id !== null).map((r) => r.issue_id!);
        const issues = issueIds.length ? await this.deps.issues.getByIds(issueIds) : new Map<number, never>();
        const root = this.deps.rootUrl;
        return [
          rows.map((r) => {
            const full = `${encodeURIComponent(r.owner_name)}/${encodeURIComponent(r.repo_name)}`;
            const api = `${root}api/v1/repos/${full}`;
            const html = `${root}${full}`;
            let container = { api_url: '', html_url: '' };
            if (r.release_id !== null) {
              container = {
                api_url: `${api}/releases/${r.release_id}`,
                html_url: `${html}/releases/tag/${escapeSegments(r.tag_name ?? '')}`,
              };
            } else if (r.issue_id !== null) {
              const issue = issues.get(r.issue_id);
              const index = issue?.index ?? r.issue_id;
              const issueHtml = `${html}/${issue?.is_pull ? 'pulls' : 'issues'}/${index}`;
              container =
                r.comment_id !== null
                  ? {
                      api_url: `${api}/issues/comments/${r.comment_id}`,
                      html_url: `${issueHtml}#issuecomment-${r.comment_id}`,
                    }
                  : { api_url: `${api}/issues/${index}`, html_url: issueHtml };
            }
            return {
              name: r.name,
              size: Number(r.size),
              api_url: `${container.api_url}/assets/${r.id}`,
              contained_in: container,
            };
          }),
          total,
        ];
      },
    };
  }

  // Helpers

  private subject(holder: Holder): Subject {
    return holder.kind === 'release' ? RELEASES : ISSUES;
  }

  private columnsOf(holder: Holder) {
    return {
      release_id: holder.kind === 'release' ? holder.releaseId : null,
      issue_id: holder.kind === 'release' ? null : holder.issueId,
      comment_id: holder.kind === 'comment' ? holder.commentId : null,
    };
  }

  private async removeBlobs(uuids: string[]): Promise<void> {
    for (const uuid of uuids) {
      try {
        await this.deps.blobs.delete(blobKey(uuid));
      } catch (err) {
        this.deps.log.error({ err, uuid }, 'removing an attachment blob failed');
      }
    }
  }
}

/** A tag or path as a URL path: each segment escaped, the slashes kept. */
export function escapeSegments(s: string): string {
  return s.split('/').map(encodeURIComponent).join('/');
}

function checkName(name: string): void {
  if (!name) throw badRequest("Missing 'name' parameter");
}

function checkExternalUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`invalid external URL [url: ${url}]`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw badRequest('Unsupported external URL scheme');
  }
  return parsed.toString();
}

function group<T>(rows: T[], key: (row: T) => number): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const r of rows) {
    const k = key(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}
