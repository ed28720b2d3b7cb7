// Tables of the Alpine registry (see db/migrations/0072_alpine_key.ts).
import type { Generated, Selectable } from 'kysely';

/** An owner's RSA key pair signing its APKINDEX files (PEM). */
export interface PackageAlpineKeyTable {
  id: Generated<number>;
  owner_id: number;
  /** PKCS#1 (`RSA PRIVATE KEY`). */
  private_key: string;
  /** SubjectPublicKeyInfo (`PUBLIC KEY`). */
  public_key: string;
  created_unix: number;
}

export interface AlpineTables {
  package_alpine_key: PackageAlpineKeyTable;
}

export type AlpineKeyRow = Selectable<PackageAlpineKeyTable>;
