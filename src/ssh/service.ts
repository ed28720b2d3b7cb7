// SSH keys and what they open: users' public keys and repositories' deploy keys (checked on
// adding against [ssh.minimum_key_sizes], unique by fingerprint), who a key is when it signs in over
// SSH, and whether that principal may fetch from or push to a repository, with the same rules as
// git over HTTP. Also the short-lived tokens `git-lfs-authenticate` hands out.
import crypto from 'node:crypto';
import type { Config } from '../config/config.js';
import { nowUnix, transaction, type Db } from '../db/database.js';
import { AppError, forbidden, invalid, notFound } from '../errors.js';
import type { Page } from '../http/pagination.js';
import { AccessMode } from '../orgs/tables.js';
import type { RepoAccess, RepoService } from '../repos/service.js';
import * as repoStore from '../repos/store.js';
import type { RepoRow } from '../repos/tables.js';
import { parseScopes } from '../tokens/scopes.js';
import type { UserService } from '../users/service.js';
import type { UserRow } from '../users/tables.js';
import type { Authenticator, Identity } from '../auth/identity.js';
import { KeyError, checkKeySize, parsePublicKey, type ParsedKey } from './keyparse.js';
import * as store from './store.js';
import type { DeployKeyRow, PublicKeyRow } from './tables.js';

/** Who signed in over SSH: a user (by one of their keys) or a repository's deploy key. */
export type SshPrincipal =
  | { kind: 'user'; user: UserRow; key: PublicKeyRow }
  | { kind: 'deploy'; keys: DeployKeyRow[]; fingerprint: string };

/** What a principal may do to a repository, found by `authorize`. */
export interface SshTarget {
  repo: RepoRow;
  /** The account a push is attributed to: the user, or the repository's owner for a deploy key. */
  pusher: UserRow;
  write: boolean;
}

const LFS_TOKEN_PREFIX = 'anvil-lfs.';
/** Seconds a `git-lfs-authenticate` token is valid. */
export const LFS_TOKEN_SECONDS = 600;

export interface SshKeyServiceDeps {
  db: Db;
  /** Takes the `git-lfs-authenticate` tokens this service signs. */
  auth: Pick<Authenticator, 'addTokenResolver'>;
  users: Pick<UserService, 'getById' | 'assertMayAct'>;
  repos: Pick<RepoService, 'requireRepo'>;
  /** [ssh.minimum_key_sizes] */
  minimumKeySizes: Config['ssh']['minimumKeySizes'];
  /** [security] SECRET_KEY, which signs the LFS tokens. */
  secretKey: string;
}

export class SshKeyService {
  private readonly db: Db;
  private readonly keysChangedListeners: Array<() => void> = [];

  constructor(private readonly deps: SshKeyServiceDeps) {
    this.db = deps.db;
    deps.auth.addTokenResolver((token) => this.resolveLfsToken(token));
  }

  /** Registers `listener` for changes of users' keys (signature verification forgets what it knew). */
  onKeysChanged(listener: () => void): void {
    this.keysChangedListeners.push(listener);
  }

  private keysChanged(): void {
    for (const listener of this.keysChangedListeners) listener();
  }

  /** Parses and size-checks a key; 422 naming the problem. */
  parse(text: string): ParsedKey {
    try {
      return checkKeySize(parsePublicKey(text), this.deps.minimumKeySizes);
    } catch (err) {
      if (err instanceof KeyError) throw invalid(`key: ${err.message}`);
      throw err;
    }
  }

  // ---- user keys ----

  listUserKeys(owner: UserRow, page: Page, fingerprint?: string): Promise<[PublicKeyRow[], number]> {
    return store.userKeys(this.db, owner.id, fingerprint, page.limit, page.offset);
  }

  allUserKeys(owner: UserRow): Promise<PublicKeyRow[]> {
    return store.allUserKeys(this.db, owner.id);
  }

  async requireUserKey(owner: UserRow, id: number): Promise<PublicKeyRow> {
    const key = await store.userKey(this.db, owner.id, id);
    if (!key) throw notFound(`public key does not exist [id: ${id}]`);
    return key;
  }

  async addUserKey(owner: UserRow, title: string, text: string): Promise<PublicKeyRow> {
    const name = title.trim();
    if (!name) throw invalid('title: must not be empty');
    if (name.length > 255) throw invalid('title: must be at most 255 characters');
    const key = this.parse(text);
    const added = await transaction(this.db, async (tx) => {
      if (await store.userKeyByFingerprint(tx, key.fingerprint)) {
        throw invalid(`key: this key has already been added to the server [fingerprint: ${key.fingerprint}]`);
      }
      if ((await store.deployKeysByFingerprint(tx, key.fingerprint)).length) {
        throw invalid(`key: this key is already used as a deploy key [fingerprint: ${key.fingerprint}]`);
      }
      const now = nowUnix();
      const id = await store
        .insertUserKey(tx, {
          owner_id: owner.id,
          name,
          fingerprint: key.fingerprint,
          content: key.content,
          created_unix: now,
          updated_unix: now,
        })
        .catch((err: unknown) => {
          throw duplicateOr(err, key.fingerprint);
        });
      return (await store.userKeyById(tx, id))!;
    });
    // Commits signed with this key verify from now on.
    this.keysChanged();
    return added;
  }

  async deleteUserKey(owner: UserRow, id: number): Promise<void> {
    const key = await this.requireUserKey(owner, id);
    await store.deleteUserKey(this.db, key.id);
    this.keysChanged();
  }

  /**
   * Marks the owner's key with `fingerprint` verified when `proves(key)` says its signature of the
   * verification token checks out (the signing domain checks it); 404 for a key not the owner's.
   */
  async verifyUserKey(
    owner: UserRow,
    fingerprint: string,
    proves: (key: PublicKeyRow) => boolean,
  ): Promise<PublicKeyRow> {
    const key = await store.userKeyByFingerprint(this.db, fingerprint.trim());
    if (!key || key.owner_id !== owner.id)
      throw notFound(`public key does not exist [fingerprint: ${fingerprint}]`);
    if (!proves(key)) {
      throw invalid(
        'signature: the signature does not match the key and the token, or the token is out of date',
      );
    }
    await store.markUserKeyVerified(this.db, key.id);
    return (await store.userKeyById(this.db, key.id))!;
  }

  /** Notes that a user key signed in (shown as its last use; written at most once a minute). */
  async markUsed(p: SshPrincipal): Promise<void> {
    if (p.kind !== 'user') return;
    const now = nowUnix();
    if (now - p.key.updated_unix < 60 && p.key.updated_unix > p.key.created_unix) return;
    // Later than its creation even within the same second, so the key reads as used.
    await store.touchUserKey(this.db, p.key.id, Math.max(now, p.key.created_unix + 1));
  }

  // ---- deploy keys ----

  listDeployKeys(
    repo: RepoRow,
    page: Page,
    filter: { id?: number | undefined; fingerprint?: string | undefined },
  ): Promise<[DeployKeyRow[], number]> {
    return store.deployKeys(this.db, repo.id, filter, page.limit, page.offset);
  }

  async requireDeployKey(repo: RepoRow, id: number): Promise<DeployKeyRow> {
    const key = await store.deployKey(this.db, repo.id, id);
    if (!key) throw notFound(`deploy key does not exist [id: ${id}]`);
    return key;
  }

  async addDeployKey(repo: RepoRow, title: string, text: string, readOnly: boolean): Promise<DeployKeyRow> {
    const name = title.trim();
    if (!name) throw invalid('title: must not be empty');
    if (name.length > 255) throw invalid('title: must be at most 255 characters');
    const key = this.parse(text);
    return transaction(this.db, async (tx) => {
      if (await store.userKeyByFingerprint(tx, key.fingerprint)) {
        throw invalid(`key: this key is already a user's key [fingerprint: ${key.fingerprint}]`);
      }
      const existing = await store.deployKeysByFingerprint(tx, key.fingerprint);
      if (existing.some((k) => k.repo_id === repo.id)) {
        throw invalid(`key: this deploy key has already been added [fingerprint: ${key.fingerprint}]`);
      }
      const now = nowUnix();
      const id = await store
        .insertDeployKey(tx, {
          repo_id: repo.id,
          name,
          fingerprint: key.fingerprint,
          content: key.content,
          read_only: readOnly ? 1 : 0,
          created_unix: now,
          updated_unix: now,
        })
        .catch((err: unknown) => {
          throw duplicateOr(err, key.fingerprint);
        });
      return (await store.deployKeyById(tx, id))!;
    });
  }

  async deleteDeployKey(repo: RepoRow, id: number): Promise<void> {
    const key = await this.requireDeployKey(repo, id);
    await store.deleteDeployKey(this.db, key.id);
  }

  // ---- lookups ----

  /** The user key and the deploy keys with this fingerprint ("SHA256:..."). */
  async byFingerprint(fingerprint: string): Promise<{ user?: PublicKeyRow; deploy: DeployKeyRow[] }> {
    const [user, deploy] = await Promise.all([
      store.userKeyByFingerprint(this.db, fingerprint),
      store.deployKeysByFingerprint(this.db, fingerprint),
    ]);
    return user ? { user, deploy } : { deploy };
  }

  /** The principal a key (given by fingerprint) signs in as; undefined when the key is unknown. */
  async principal(fingerprint: string): Promise<SshPrincipal | undefined> {
    const found = await this.byFingerprint(fingerprint);
    if (found.user) {
      const user = await this.deps.users.getById(found.user.owner_id);
      if (!user) return undefined;
      return { kind: 'user', user, key: found.user };
    }
    if (found.deploy.length) return { kind: 'deploy', keys: found.deploy, fingerprint };
    return undefined;
  }

  /** The principal behind `key-<id>` (OpenSSH mode: user keys are `key-N`, deploy keys `deploy-N`). */
  async principalOf(keyId: string): Promise<SshPrincipal | undefined> {
    const m = /^(key|deploy)-(\d{1,15})$/.exec(keyId);
    if (!m) return undefined;
    const id = Number(m[2]);
    if (m[1] === 'key') {
      const key = await store.userKeyById(this.db, id);
      return key && this.principal(key.fingerprint);
    }
    const key = await store.deployKeyById(this.db, id);
    return key && this.principal(key.fingerprint);
  }

  /** How a principal is greeted and named in logs. */
  nameOf(p: SshPrincipal): string {
    return p.kind === 'user' ? p.user.name : `deploy key ${p.fingerprint}`;
  }

  /**
   * Whether `principal` may fetch from (or, with `write`, push to) `owner/name`. Refusals are
   * AppErrors whose message git shows; a repository the principal cannot see is "not found".
   */
  async authorize(
    principal: SshPrincipal,
    owner: string,
    name: string,
    write: boolean,
    unit: 'repo.code' | 'repo.wiki' = 'repo.code',
  ): Promise<SshTarget> {
    const repoName = name.replace(/\.git$/i, '');
    const missing = () =>
      notFound(`repository ${owner}/${repoName} does not exist or you do not have access to it`);
    let repo: RepoRow;
    let pusher: UserRow;
    if (principal.kind === 'user') {
      this.deps.users.assertMayAct(principal.user);
      let found: { repo: RepoRow; access: RepoAccess };
      try {
        found = await this.deps.repos.requireRepo(owner, repoName, {
          id: principal.user.id,
          isAdmin: principal.user.is_admin === 1,
          publicOnly: false,
        });
      } catch (err) {
        if (err instanceof AppError && (err.kind === 'not_found' || err.kind === 'moved')) throw missing();
        throw err;
      }
      repo = found.repo;
      pusher = principal.user;
      // The wiki unit may be out of reach where the repository is not (team units).
      if ((found.access.units.get(unit) ?? 0) < AccessMode.read) throw missing();
      if (write && (found.access.units.get(unit) ?? 0) < AccessMode.write) {
        throw forbidden(`${principal.user.name} has no write access to ${owner}/${repoName}`);
      }
    } else {
      // Deploy keys open their own repository only (public or private).
      const plain = /^[\w.-]{1,255}$/;
      const byName =
        plain.test(owner) && plain.test(repoName)
          ? await repoStore.getByOwnerAndName(this.db, owner, repoName)
          : undefined;
      const key = byName && principal.keys.find((k) => k.repo_id === byName.id);
      if (!byName || !key) throw missing();
      repo = byName;
      if (write && key.read_only) {
        throw forbidden(`the deploy key of ${owner}/${repoName} is read-only: pushing is not possible`);
      }
      const owned = await this.deps.users.getById(repo.owner_id);
      if (!owned) throw missing();
      pusher = owned;
    }
    if (write) {
      if (repo.is_archived) throw forbidden(`${owner}/${repoName} is archived: pushing is not possible`);
      if (repo.is_mirror) throw forbidden(`${owner}/${repoName} is a mirror: pushing is not possible`);
    }
    return { repo, pusher, write };
  }

  // ---- git-lfs-authenticate ----

  /** A signed token for the LFS endpoints of one repository, valid LFS_TOKEN_SECONDS. */
  lfsToken(user: UserRow, repo: RepoRow, write: boolean): string {
    const payload = Buffer.from(
      JSON.stringify({ u: user.id, r: repo.id, w: write ? 1 : 0, e: nowUnix() + LFS_TOKEN_SECONDS }),
    ).toString('base64url');
    return `${LFS_TOKEN_PREFIX}${payload}.${this.sign(payload)}`;
  }

  private sign(payload: string): string {
    return crypto
      .createHmac('sha256', `anvil-lfs-ssh:${this.deps.secretKey}`)
      .update(payload)
      .digest('base64url');
  }

  private async resolveLfsToken(token: string): Promise<Identity | undefined> {
    if (!token.startsWith(LFS_TOKEN_PREFIX) || !this.deps.secretKey) return undefined;
    const [payload, mac] = token.slice(LFS_TOKEN_PREFIX.length).split('.');
    if (!payload || !mac) return undefined;
    const want = Buffer.from(this.sign(payload));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !crypto.timingSafeEqual(want, got)) return undefined;
    let claims: { u?: unknown; r?: unknown; w?: unknown; e?: unknown };
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
    } catch {
      return undefined;
    }
    if (typeof claims.e !== 'number' || claims.e < nowUnix()) return undefined;
    if (typeof claims.u !== 'number' || typeof claims.r !== 'number') return undefined;
    const user = await this.deps.users.getById(claims.u);
    if (!user) return undefined;
    return {
      user,
      method: 'token',
      scopes: parseScopes(claims.w === 1 ? 'write:repository' : 'read:repository'),
      repoId: claims.r,
    };
  }
}

/** A unique-constraint violation (two requests adding the same key at once) as the usual 422. */
function duplicateOr(err: unknown, fingerprint: string): unknown {
  const text = err instanceof Error ? err.message : String(err);
  if (/unique|duplicate/i.test(text)) {
    return invalid(`key: this key has already been added to the server [fingerprint: ${fingerprint}]`);
  }
  return err;
}
