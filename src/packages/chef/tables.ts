// Tables of the Chef registry (see db/migrations/0077_package_chef_key.ts).
import type { Generated, Selectable } from 'kysely';

/** An account's public key for Chef's signed requests (PEM, SubjectPublicKeyInfo). */
export interface PackageChefKeyTable {
  id: Generated<number>;
  owner_id: number;
  public_pem: string;
  created_unix: number;
}

export interface ChefTables {
  package_chef_key: PackageChefKeyTable;
}

export type ChefKeyRow = Selectable<PackageChefKeyTable>;
