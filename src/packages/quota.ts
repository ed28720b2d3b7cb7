// The packages' part in quota and account deletion: the bytes each owner's package files take
// (subject size:assets:packages:all), the quota page's list of an owner's package versions, and
// the purge of an owner's packages when the account is deleted.
import type { QuotaUsedPackageJson } from '../quota/schemas.js';
import { recordUsage, type ItemSource, type OwnerTotals, type UsageSource } from '../quota/usage.js';
import type { OwnedResources } from '../users/owned.js';
import type { UserService } from '../users/service.js';
import * as store from './store.js';

export const SUBJECT = 'size:assets:packages:all';

export const packageUsage: UsageSource = {
  subjects: [SUBJECT],
  totals: async (q, ownerId) => {
    const out: OwnerTotals = new Map();
    for (const r of await store.ownerTotals(q, ownerId)) out.set(r.owner_id, { [SUBJECT]: r.total });
    return out;
  },
};

/** An owner's package versions by size or name, linked under `rootUrl`. */
export function packageItems(
  users: Pick<UserService, 'getById'>,
  rootUrl: string,
): ItemSource<QuotaUsedPackageJson> {
  return {
    list: async (q, ownerId, limit, offset, bySize) => {
      const [rows, total] = await store.quotaItems(q, ownerId, limit, offset, bySize);
      const owner = await users.getById(ownerId);
      return [
        rows.map((r) => ({
          name: r.name,
          type: r.type,
          version: r.version,
          size: Number(r.size ?? 0),
          html_url: packageHtmlUrl(rootUrl, owner?.name ?? '', r.type, r.name, r.version),
        })),
        total,
      ];
    },
  };
}

/** Deletes an owner's packages with the account; `removeBlobs` removes the objects no row names after the commit. */
export function ownedPackages(removeBlobs: (shas: string[]) => Promise<void>): OwnedResources {
  return {
    label: 'packages',
    count: async (tx, ownerId) => (await store.packagesOfOwner(tx, ownerId)).length,
    purge: async (tx, ownerId) => {
      const pkgs = await store.packagesOfOwner(tx, ownerId);
      const blobIds: number[] = [];
      let bytes = 0;
      for (const pkg of pkgs) {
        const versions = await store.versionsOf(tx, pkg.id);
        const files = await store.filesOfVersions(
          tx,
          versions.map((v) => v.id),
        );
        for (const f of files) {
          blobIds.push(f.blob_id);
          bytes += Number(f.size);
        }
        await store.deleteFiles(
          tx,
          files.map((f) => f.id),
        );
        for (const v of versions) await store.deleteVersion(tx, v.id);
        await store.deletePackage(tx, pkg.id);
      }
      if (bytes) await recordUsage(tx, ownerId, SUBJECT, -bytes);
      const orphans = await store.removeUnreferencedBlobs(tx, blobIds);
      return () => removeBlobs(orphans);
    },
  };
}

export function packageHtmlUrl(
  root: string,
  owner: string,
  type: string,
  name: string,
  version: string,
): string {
  return `${root}${encodeURIComponent(owner)}/-/packages/${type}/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;
}
