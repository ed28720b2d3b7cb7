// The Chef format (cookbooks, the Supermarket API that knife's `supermarket` commands use): one
// archive per version, `{version}.tar.gz`; a version that exists is refused (409). The universe,
// the cookbook lists and the metadata answers are built per request from the owner's versions.
// Callers prove who they are with Chef's signed requests (signing.ts), checked against the public
// key the account keeps here (its package settings page makes the key pair).
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import type { Readable } from 'node:stream';
import { ALL_SCOPES } from '../../tokens/scopes.js';
import type { Identity } from '../../auth/identity.js';
import { nowUnix, type Db } from '../../db/database.js';
import { notFound, unauthorized } from '../../errors.js';
import type { UserService } from '../../users/service.js';
import { UserType, type UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import { readCookbook, type ChefMetadata, type Cookbook } from './metadata.js';
import { SignatureError, signedUser, verifySignedRequest, type Headers } from './signing.js';
import * as store from './store.js';
import type { CookbookVersionRow } from './store.js';

/** The size of the key pairs made for accounts (Forgejo's). */
export const KEY_BITS = 4096;

const generateKeyPair = promisify(crypto.generateKeyPair);

export interface ChefServiceDeps {
  db: Db;
  packages: PackageService;
  users: Pick<UserService, 'getByName'>;
  rootUrl: string;
  /** Items of a list page when the client asks none, and the most it may ask. */
  paging: { defaultPagingNum: number; maxResponseItems: number };
  /** Milliseconds since the epoch (the signed requests' timestamps are compared with it). */
  now?: () => number;
}

/** Orders Chef versions (two or three numbers). */
export function compareChefVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const metadataOf = (row: CookbookVersionRow): ChefMetadata => JSON.parse(row.metadata_json) as ChefMetadata;
const iso = (unix: number) => new Date(unix * 1000).toISOString();

export interface ListQuery {
  q?: string | undefined;
  start?: number | undefined;
  items?: number | undefined;
  order?: string | undefined;
}

export class ChefService {
  constructor(private readonly deps: ChefServiceDeps) {}

  /** `{root}api/packages/{owner}/chef/api/v1`. */
  base(owner: UserRow): string {
    return `${this.deps.rootUrl}api/packages/${encodeURIComponent(owner.name)}/chef/api/v1`;
  }

  private cookbookUrl(owner: UserRow, name: string): string {
    return `${this.base(owner)}/cookbooks/${encodeURIComponent(name)}`;
  }

  // Signed requests and keys

  /**
   * The account a signed request comes from (null when the request is not signed: no
   * X-Ops-Userid). 401 when the account does not exist, has no key, or the signature, the
   * timestamp or the headers do not hold up.
   */
  async authenticate(req: { method: string; url: string; headers: Headers }): Promise<Identity | null> {
    const name = signedUser(req.headers);
    if (!name) return null;
    const user = name.length <= 255 ? await this.deps.users.getByName(name) : undefined;
    if (!user || user.type !== UserType.Individual) throw unauthorized('Failed to authenticate user');
    const pem = await store.publicKey(this.deps.db, user.id);
    if (!pem) throw unauthorized('Failed to authenticate user: the account has no Chef key');
    try {
      verifySignedRequest(req, pem, (this.deps.now ?? Date.now)());
    } catch (err) {
      if (err instanceof SignatureError) throw unauthorized(`Failed to authenticate user: ${err.message}`);
      throw err;
    }
    return { user, method: 'signature', scopes: ALL_SCOPES };
  }

  async hasKey(user: UserRow): Promise<boolean> {
    return (await store.publicKey(this.deps.db, user.id)) !== undefined;
  }

  /** Makes the account a new key pair: keeps the public key, returns the private one (PEM, PKCS #1). */
  async regenerateKeyPair(user: UserRow): Promise<string> {
    const { publicKey, privateKey } = await generateKeyPair('rsa', {
      modulusLength: KEY_BITS,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    });
    await store.setPublicKey(this.deps.db, user.id, publicKey, nowUnix());
    return privateKey;
  }

  // Cookbooks

  async upload(owner: UserRow, creator: UserRow, data: Readable): Promise<Cookbook> {
    let cookbook: Cookbook | undefined;
    await this.deps.packages.addFile({
      owner,
      creator,
      type: 'chef',
      isLead: true,
      data,
      newVersionOnly: true,
      describe: async (stored) => {
        cookbook = await readCookbook(stored);
        return {
          name: cookbook.name,
          version: cookbook.version,
          fileName: `${cookbook.version}.tar.gz`.toLowerCase(),
          metadata: JSON.stringify(cookbook.metadata),
        };
      },
    });
    return cookbook!;
  }

  /** Every version of every cookbook with where to download it (what berkshelf reads). */
  async universe(owner: UserRow): Promise<Record<string, Record<string, unknown>>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const row of await store.cookbookVersions(this.deps.db, owner.id)) {
      (out[row.name] ??= {})[row.version] = {
        location_type: 'opscode',
        location_path: this.base(owner),
        download_url: `${this.cookbookUrl(owner, row.name)}/versions/${encodeURIComponent(row.version)}/download`,
        dependencies: metadataOf(row).dependencies ?? {},
      };
    }
    return out;
  }

  /**
   * One page of the owner's cookbooks (each as its newest upload), by name or, with order
   * recently_added or recently_updated, newest first; `q` matches part of the name.
   */
  async list(owner: UserRow, query: ListQuery): Promise<{ start: number; total: number; items: unknown[] }> {
    const { defaultPagingNum, maxResponseItems } = this.deps.paging;
    const start = Math.max(0, Math.floor(query.start ?? 0) || 0);
    let items = Math.floor(query.items ?? 0) || 0;
    if (items <= 0) items = defaultPagingNum;
    items = Math.min(items, maxResponseItems);
    const text = (query.q ?? '').trim().toLowerCase();
    const newest = new Map<string, CookbookVersionRow>();
    for (const row of await store.cookbookVersions(this.deps.db, owner.id)) {
      if (text && !row.lower_name.includes(text)) continue;
      newest.set(row.lower_name, row);
    }
    const all = [...newest.values()];
    const order = (query.order ?? '').trim().toLowerCase();
    if (order === 'recently_added' || order === 'recently_updated') {
      all.sort((a, b) => b.created_unix - a.created_unix || b.version_id - a.version_id);
    }
    return {
      start,
      total: all.length,
      items: all.slice(start, start + items).map((row) => {
        const m = metadataOf(row);
        return {
          cookbook_name: row.name,
          cookbook_maintainer: m.author ?? '',
          cookbook_description: m.description ?? '',
          cookbook: this.cookbookUrl(owner, row.name),
        };
      }),
    };
  }

  /** A cookbook's versions, in version order (404 when it has none). */
  private async versionsOf(owner: UserRow, name: string): Promise<CookbookVersionRow[]> {
    const rows = await store.cookbookVersions(this.deps.db, owner.id, name.toLowerCase());
    if (rows.length === 0) throw notFound(`package does not exist [name: ${name}]`);
    return rows.sort((a, b) => compareChefVersions(a.version, b.version) || a.version_id - b.version_id);
  }

  async cookbook(owner: UserRow, name: string): Promise<Record<string, unknown>> {
    const rows = await this.versionsOf(owner, name);
    const latest = rows[rows.length - 1]!;
    const m = metadataOf(latest);
    const versionsUrl = `${this.cookbookUrl(owner, latest.name)}/versions/`;
    return {
      name: latest.name,
      maintainer: m.author ?? '',
      description: m.description ?? '',
      category: '',
      latest_version: versionsUrl + latest.version,
      source_url: m.repository_url ?? '',
      created_at: iso(latest.created_unix),
      updated_at: iso(latest.created_unix),
      deprecated: false,
      versions: rows.map((r) => versionsUrl + r.version),
    };
  }

  /**
   * The version a path names: `latest` is the highest, and `_` stands for `.` (knife asks
   * `versions/1_0_1`).
   */
  async resolveVersion(owner: UserRow, name: string, version: string): Promise<CookbookVersionRow> {
    const rows = await this.versionsOf(owner, name);
    if (version.toLowerCase() === 'latest') return rows[rows.length - 1]!;
    const wanted = version.replaceAll('_', '.').toLowerCase();
    const row = rows.find((r) => r.version.toLowerCase() === wanted);
    if (!row) throw notFound(`package version does not exist [name: ${name}, version: ${version}]`);
    return row;
  }

  versionJson(owner: UserRow, row: CookbookVersionRow): Record<string, unknown> {
    const m = metadataOf(row);
    const cookbook = this.cookbookUrl(owner, row.name);
    return {
      version: row.version,
      tarball_file_size: row.size,
      published_at: iso(row.created_unix),
      cookbook,
      file: `${cookbook}/versions/${encodeURIComponent(row.version)}/download`,
      license: m.license ?? '',
      dependencies: m.dependencies ?? {},
    };
  }
}
