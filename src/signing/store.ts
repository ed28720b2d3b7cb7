// Queries of the gpg_key and gpg_key_email tables.
import type { Db, Tx } from '../db/database.js';
import { paged } from '../db/paged.js';
import type { GpgKeyRow } from './tables.js';

type Q = Db | Tx;

/** A primary key with its subkeys and the addresses it was registered with. */
export interface GpgKeyFull extends GpgKeyRow {
  subkeys: GpgKeyRow[];
  emails: string[];
}

/** Adds subkeys and addresses to primary rows (two queries for any number of keys). */
export async function withParts(q: Q, rows: GpgKeyRow[]): Promise<GpgKeyFull[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.key_id);
  const [subs, emails] = await Promise.all([
    q.selectFrom('gpg_key').selectAll().where('primary_key_id', 'in', ids).orderBy('id').execute(),
    q
      .selectFrom('gpg_key_email')
      .select(['gpg_key_id', 'email'])
      .where(
        'gpg_key_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('id')
      .execute(),
  ]);
  return rows.map((r) => ({
    ...r,
    subkeys: subs.filter((s) => s.primary_key_id === r.key_id),
    emails: emails.filter((e) => e.gpg_key_id === r.id).map((e) => e.email),
  }));
}

/** A page of an owner's primary keys. */
export async function listKeys(
  q: Q,
  ownerId: number,
  limit: number,
  offset: number,
): Promise<[GpgKeyFull[], number]> {
  const [rows, total] = await paged(
    q
      .selectFrom('gpg_key')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('primary_key_id', '=', '')
      .orderBy('id'),
    limit,
    offset,
  );
  return [await withParts(q, rows), total];
}

/** Every primary key of an owner. */
export async function allKeysOf(q: Q, ownerId: number): Promise<GpgKeyFull[]> {
  const rows = await q
    .selectFrom('gpg_key')
    .selectAll()
    .where('owner_id', '=', ownerId)
    .where('primary_key_id', '=', '')
    .orderBy('id')
    .execute();
  return withParts(q, rows);
}

export function keyById(q: Q, id: number): Promise<GpgKeyRow | undefined> {
  return q.selectFrom('gpg_key').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Rows (primary or subkey) whose key id is among `keyIds`. */
export function keysByKeyIds(q: Q, keyIds: string[]): Promise<GpgKeyRow[]> {
  if (keyIds.length === 0) return Promise.resolve([]);
  return q.selectFrom('gpg_key').selectAll().where('key_id', 'in', keyIds).execute();
}

export interface NewKey {
  keyId: string;
  content: string;
  armored: string;
  created: number;
  expires: number;
  verified: boolean;
  canSign: boolean;
  canEncrypt: boolean;
  emails: string[];
  subkeys: Array<{ keyId: string; content: string; created: number; canSign: boolean; canEncrypt: boolean }>;
}

/** Inserts a primary key, its subkeys and addresses (inside the caller's transaction). */
export async function insertKey(tx: Tx, ownerId: number, k: NewKey, now: number): Promise<number> {
  const row = await tx
    .insertInto('gpg_key')
    .values({
      owner_id: ownerId,
      key_id: k.keyId,
      primary_key_id: '',
      content: k.content,
      armored: k.armored,
      created_unix: k.created,
      expired_unix: k.expires,
      added_unix: now,
      verified: k.verified ? 1 : 0,
      can_sign: k.canSign ? 1 : 0,
      can_encrypt_comms: k.canEncrypt ? 1 : 0,
      can_encrypt_storage: k.canEncrypt ? 1 : 0,
      can_certify: k.canSign ? 1 : 0,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (const s of k.subkeys) {
    await tx
      .insertInto('gpg_key')
      .values({
        owner_id: ownerId,
        key_id: s.keyId,
        primary_key_id: k.keyId,
        content: s.content,
        created_unix: s.created,
        expired_unix: k.expires,
        added_unix: now,
        verified: k.verified ? 1 : 0,
        can_sign: s.canSign ? 1 : 0,
        can_encrypt_comms: s.canEncrypt ? 1 : 0,
        can_encrypt_storage: s.canEncrypt ? 1 : 0,
        can_certify: s.canSign ? 1 : 0,
      })
      .execute();
  }
  if (k.emails.length) {
    await tx
      .insertInto('gpg_key_email')
      .values(k.emails.map((e) => ({ gpg_key_id: row.id, email: e, lower_email: e.toLowerCase() })))
      .execute();
  }
  return row.id;
}

/** Deletes a primary key and its subkeys. */
export async function deleteKey(tx: Tx, key: GpgKeyRow): Promise<void> {
  await tx.deleteFrom('gpg_key').where('primary_key_id', '=', key.key_id).execute();
  await tx.deleteFrom('gpg_key').where('id', '=', key.id).execute();
}

/** Marks a primary key and its subkeys verified. */
export async function markVerified(tx: Tx, key: GpgKeyRow): Promise<void> {
  await tx
    .updateTable('gpg_key')
    .set({ verified: 1 })
    .where((eb) => eb.or([eb('id', '=', key.id), eb('primary_key_id', '=', key.key_id)]))
    .execute();
}

/** The lower-cased activated addresses of each of `userIds`. */
export async function activatedEmails(q: Q, userIds: number[]): Promise<Map<number, Set<string>>> {
  const out = new Map<number, Set<string>>();
  if (userIds.length === 0) return out;
  const rows = await q
    .selectFrom('email_address')
    .select(['uid', 'lower_email'])
    .where('uid', 'in', [...new Set(userIds)])
    .where('is_activated', '=', 1)
    .execute();
  for (const r of rows) {
    let s = out.get(r.uid);
    if (!s) out.set(r.uid, (s = new Set()));
    s.add(r.lower_email);
  }
  return out;
}
