import type { Generated, Selectable } from 'kysely';

/** A user's SSH public key (Forgejo's public_key of type user). */
export interface PublicKeyTable {
  id: Generated<number>;
  owner_id: number;
  /** The title the user gave. */
  name: string;
  /** "SHA256:" and the unpadded base64 SHA-256 of the key blob; unique. */
  fingerprint: string;
  /** The key in authorized_keys form, without a comment: "ssh-ed25519 AAAA...". */
  content: string;
  created_unix: number;
  updated_unix: number;
  /** 1 once the owner signed the verification token with it (Forgejo's `verify_ssh`). */
  verified: Generated<number>;
}

/** A repository's deploy key: one key, one repository, read-only or read-write. */
export interface DeployKeyTable {
  id: Generated<number>;
  repo_id: number;
  name: string;
  fingerprint: string;
  content: string;
  /** 1: fetch only; 0: may also push. */
  read_only: number;
  created_unix: number;
  updated_unix: number;
}

export interface SshTables {
  public_key: PublicKeyTable;
  deploy_key: DeployKeyTable;
}

export type PublicKeyRow = Selectable<PublicKeyTable>;
export type DeployKeyRow = Selectable<DeployKeyTable>;
