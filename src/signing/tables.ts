// Row types of the signing domain's tables (db/migrations/0039_gpg_keys.ts).
import type { Generated, Selectable } from 'kysely';

/** A GPG primary key (primary_key_id '') or subkey (primary_key_id: its primary's key id). */
export interface GpgKeyTable {
  id: Generated<number>;
  owner_id: number;
  /** Long key id, 16 upper-case hex digits. */
  key_id: string;
  primary_key_id: Generated<string>;
  /** The key's public-key packet, base64 (Forgejo's `public_key`). */
  content: string;
  /** The armored key the user gave (primary rows only). */
  armored: Generated<string>;
  created_unix: number;
  /** 0: never expires. */
  expired_unix: Generated<number>;
  added_unix: number;
  verified: Generated<number>;
  can_sign: Generated<number>;
  can_encrypt_comms: Generated<number>;
  can_encrypt_storage: Generated<number>;
  can_certify: Generated<number>;
}

/** An address of the owner's that one of the key's user IDs carried. */
export interface GpgKeyEmailTable {
  id: Generated<number>;
  gpg_key_id: number;
  email: string;
  lower_email: string;
}

export interface SigningTables {
  gpg_key: GpgKeyTable;
  gpg_key_email: GpgKeyEmailTable;
}

export type GpgKeyRow = Selectable<GpgKeyTable>;
