// Tables of the ALT Linux registry (see db/migrations/0073_alt_repository.ts): the repository files
// of each group, in the shape of the RPM registry's package_rpm_index (rpm/store.ts serves both).
import type { PackageRpmIndexTable } from '../rpm/tables.js';

export interface AltTables {
  /** `{arch}/base/pkglist.classic`, `.xz`, `release.classic`, `release` of a group. */
  package_alt_index: PackageRpmIndexTable;
}
