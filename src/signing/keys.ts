// Armored OpenPGP public keys read with openpgp into what the gpg_key rows hold (Forgejo's rules:
// key ids as 16 upper-case hex digits, capabilities from the algorithm, the e-mails of the user IDs
// that are not revoked), and the token a user signs to prove a key is theirs.
import crypto from 'node:crypto';
import type * as openpgp from 'openpgp';
import { loadOpenpgp } from './openpgp.js';
import { invalidField } from '../errors.js';

export interface ParsedSubkey {
  keyId: string;
  content: string;
  created: number;
  canSign: boolean;
  canEncrypt: boolean;
}

export interface ParsedKey extends ParsedSubkey {
  /** 0: never. */
  expires: number;
  emails: string[];
  subkeys: ParsedSubkey[];
  key: openpgp.PublicKey;
}

const SIGNING = new Set(['rsaEncryptSign', 'rsaSign', 'dsa', 'ecdsa', 'eddsaLegacy', 'ed25519', 'ed448']);
const ENCRYPTING = new Set(['rsaEncryptSign', 'rsaEncrypt', 'elgamal', 'ecdh', 'x25519', 'x448']);

const keyIdOf = (k: { getKeyID(): openpgp.KeyID }) => k.getKeyID().toHex().toUpperCase();

/** The public keys of an armored key block (several when concatenated); 422 naming the field else. */
export async function readArmoredKeys(
  text: string,
  field = 'armored_public_key',
): Promise<openpgp.PublicKey[]> {
  let keys: openpgp.Key[];
  try {
    keys = await (await loadOpenpgp()).readKeys({ armoredKeys: text });
  } catch (err) {
    throw invalidField(field, `failed to parse the GPG key: ${(err as Error).message}`);
  }
  if (keys.length === 0) throw invalidField(field, 'no GPG key found');
  if (keys.some((k) => k.isPrivate())) throw invalidField(field, 'a private key: give the public key');
  return keys as openpgp.PublicKey[];
}

export async function parseKey(key: openpgp.PublicKey): Promise<ParsedKey> {
  const algo = (k: { getAlgorithmInfo(): { algorithm: string } }) => k.getAlgorithmInfo().algorithm;
  const expiry = await key.getExpirationTime().catch(() => null);
  const emails: string[] = [];
  for (const u of key.users) {
    if (!u.userID || u.revocationSignatures.length > 0) continue;
    const email = u.userID.email.trim();
    if (email && !emails.some((e) => e.toLowerCase() === email.toLowerCase())) emails.push(email);
  }
  const content = (p: { write(): Uint8Array }) => Buffer.from(p.write()).toString('base64');
  return {
    keyId: keyIdOf(key),
    content: content(key.keyPacket),
    created: Math.floor(key.getCreationTime().getTime() / 1000),
    expires: expiry instanceof Date ? Math.floor(expiry.getTime() / 1000) : 0,
    canSign: SIGNING.has(algo(key)),
    canEncrypt: ENCRYPTING.has(algo(key)),
    emails,
    subkeys: key.subkeys.map((s) => ({
      keyId: keyIdOf(s),
      content: content(s.keyPacket),
      created: Math.floor(s.getCreationTime().getTime() / 1000),
      canSign: SIGNING.has(algo(s)),
      canEncrypt: ENCRYPTING.has(algo(s)),
    })),
    key,
  };
}

/**
 * The token a user signs (gpg --armor --detach-sign) to prove a key is theirs when none of its
 * addresses is an activated address of theirs: the same for a minute, so `minutesAhead` 1 and 0
 * are the current and the previous token.
 */
export function verificationToken(
  user: { id: number; name: string; email: string; created_unix: number },
  secret: string,
  minutesAhead: number,
  now = Date.now(),
): string {
  const minute = Math.floor(now / 60_000) + minutesAhead;
  return crypto
    .createHmac('sha256', secret)
    .update(`${minute}:${user.created_unix}:${user.name}:${user.email}:${user.id}`)
    .digest('hex');
}

/** Whether `signature` (armored, detached) signs `token` (or it with a line end) by one of `keys`. */
export async function signsToken(
  keys: openpgp.PublicKey[],
  token: string,
  signature: string,
): Promise<openpgp.PublicKey | undefined> {
  let sig: openpgp.Signature;
  try {
    sig = await (await loadOpenpgp()).readSignature({ armoredSignature: signature });
  } catch {
    return undefined;
  }
  for (const text of [token, `${token}\n`, `${token}\r\n`, `${token}\n\n`]) {
    for (const key of keys) {
      try {
        const r = await (
          await loadOpenpgp()
        ).verify({
          message: await (await loadOpenpgp()).createMessage({ binary: Buffer.from(text) }),
          signature: sig,
          verificationKeys: key,
        });
        if (await r.signatures[0]?.verified) return key;
      } catch {
        // next
      }
    }
  }
  return undefined;
}
