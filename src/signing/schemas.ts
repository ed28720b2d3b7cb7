// Forgejo's GPG key JSON (GPGKey, GPGKeyEmail) and option objects, and the row-to-JSON conversion.
import { Type, type Static } from 'typebox';
import type { GpgKeyRow } from './tables.js';
import type { GpgKeyFull } from './store.js';

export const GPGKeyEmail = Type.Object(
  { email: Type.String(), verified: Type.Boolean() },
  { title: 'GPGKeyEmail', description: 'GPGKeyEmail an email attached to a GPGKey' },
);

const keyFields = {
  id: Type.Integer(),
  primary_key_id: Type.String(),
  key_id: Type.String(),
  public_key: Type.String(),
  emails: Type.Array(GPGKeyEmail),
  can_sign: Type.Boolean(),
  can_encrypt_comms: Type.Boolean(),
  can_encrypt_storage: Type.Boolean(),
  can_certify: Type.Boolean(),
  verified: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time' }),
};

const GPGSubKey = Type.Object({ ...keyFields, subkeys: Type.Array(Type.Unknown()) }, { title: 'GPGSubKey' });

export const GPGKey = Type.Object(
  { ...keyFields, subkeys: Type.Array(GPGSubKey) },
  { title: 'GPGKey', description: 'GPGKey a user GPG key to sign commit and tag in repository' },
);
export type GPGKeyJson = Static<typeof GPGKey>;

export const CreateGPGKeyOption = Type.Object(
  {
    armored_public_key: Type.String({ description: 'An armored GPG key to add' }),
    armored_signature: Type.Optional(Type.String()),
  },
  { title: 'CreateGPGKeyOption', description: 'CreateGPGKeyOption options create user GPG key' },
);

export const VerifyGPGKeyOption = Type.Object(
  {
    key_id: Type.String({ description: 'An Signature for a GPG key token' }),
    armored_signature: Type.String(),
  },
  { title: 'VerifyGPGKeyOption', description: 'VerifyGPGKeyOption options verifies user GPG key' },
);

/** Unix seconds as RFC 3339; 0 (never) as Go's zero time, as Forgejo shows it. */
const time = (unix: number) =>
  unix > 0 ? new Date(unix * 1000).toISOString().replace(/\.000Z$/, 'Z') : '0001-01-01T00:00:00Z';

function keyJson(k: GpgKeyRow, emails: Array<{ email: string; verified: boolean }>) {
  return {
    id: k.id,
    primary_key_id: k.primary_key_id,
    key_id: k.key_id,
    public_key: k.content,
    emails,
    can_sign: k.can_sign === 1,
    can_encrypt_comms: k.can_encrypt_comms === 1,
    can_encrypt_storage: k.can_encrypt_storage === 1,
    can_certify: k.can_certify === 1,
    verified: k.verified === 1,
    created_at: time(k.created_unix),
    expires_at: time(k.expired_unix),
  };
}

/** A key as Forgejo shows it; `activated`: the owner's activated addresses, lower-cased. */
export function toGpgKeyJson(k: GpgKeyFull, activated: Set<string>): GPGKeyJson {
  return {
    ...keyJson(
      k,
      k.emails.map((email) => ({ email, verified: activated.has(email.toLowerCase()) })),
    ),
    subkeys: k.subkeys.map((s) => ({ ...keyJson(s, []), subkeys: [] })),
  };
}
