// Pure signature work, no database and no git: reading a raw commit object's signature (gpgsig
// header) and payload, OpenPGP detached signatures (openpgp), and git's SSH signatures (the SSHSIG
// armored format of ssh-keygen -Y sign, parsed here; keys read with ssh2, checked with node:crypto).
import crypto from 'node:crypto';
import type * as openpgp from 'openpgp';
import { loadOpenpgp } from './openpgp.js';
import { ssh2 } from '../ssh/lib.js';

// Commits

export interface SignedCommitParts {
  /** The commit object without its signature header: what was signed. */
  payload: Buffer;
  /** The armored signature ('' when the commit is not signed). */
  signature: string;
  committerName: string;
  committerEmail: string;
}

/** Splits a raw commit object (as `git cat-file commit` prints it) into payload and signature. */
export function parseCommitObject(raw: Buffer): SignedCommitParts {
  const text = raw.toString('latin1');
  const end = text.indexOf('\n\n');
  const headerEnd = end < 0 ? text.length : end;
  const lines = text.slice(0, headerEnd).split('\n');
  const kept: string[] = [];
  const sig: string[] = [];
  let committerName = '';
  let committerEmail = '';
  let inSig = false;
  for (const line of lines) {
    if (inSig && line.startsWith(' ')) {
      sig.push(line.slice(1));
      continue;
    }
    inSig = false;
    if (line.startsWith('gpgsig ')) {
      inSig = true;
      sig.push(line.slice('gpgsig '.length));
      continue;
    }
    if (line.startsWith('committer ')) {
      const m = /^committer (.*?) ?<([^>]*)>/.exec(Buffer.from(line, 'latin1').toString('utf8'));
      if (m) [committerName, committerEmail] = [m[1]!, m[2]!];
    }
    kept.push(line);
  }
  const payload = Buffer.concat([Buffer.from(kept.join('\n'), 'latin1'), raw.subarray(headerEnd)]);
  const signature = sig.length ? Buffer.from(sig.join('\n') + '\n', 'latin1').toString('utf8') : '';
  return { payload, signature, committerName, committerEmail };
}

export const isSshSignature = (armored: string) => armored.startsWith('-----BEGIN SSH SIGNATURE-----');

// OpenPGP

/** A detached OpenPGP signature and the key ids (upper-case hex) it names as its issuer. */
export async function readGpgSignature(
  armored: string,
): Promise<{ signature: openpgp.Signature; keyIds: string[] } | undefined> {
  try {
    const signature = await (await loadOpenpgp()).readSignature({ armoredSignature: armored });
    const keyIds = [...signature.getSigningKeyIDs()].map((k) => k.toHex().toUpperCase());
    return { signature, keyIds: keyIds.filter((k) => !/^0+$/.test(k)) };
  } catch {
    return undefined;
  }
}

/** The id of the key (primary or subkey) of `keys` whose signature over `payload` holds, else undefined. */
export async function verifyGpg(
  signature: openpgp.Signature,
  payload: Uint8Array,
  keys: openpgp.PublicKey[],
): Promise<string | undefined> {
  if (keys.length === 0) return undefined;
  try {
    const message = await (await loadOpenpgp()).createMessage({ binary: payload });
    const r = await (await loadOpenpgp()).verify({ message, signature, verificationKeys: keys });
    for (const s of r.signatures) {
      try {
        if (await s.verified) return s.keyID.toHex().toUpperCase();
      } catch {
        // not this one
      }
    }
  } catch {
    // unreadable or unsupported: not verified
  }
  return undefined;
}

// SSH signatures (PROTOCOL.sshsig)

export interface SshSignature {
  /** The signer's public key in SSH wire format. */
  publicKey: Buffer;
  keyType: string;
  namespace: string;
  reserved: Buffer;
  hashAlgorithm: string;
  sigFormat: string;
  sig: Buffer;
}

const MAGIC = Buffer.from('SSHSIG');

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  bytes(n: number): Buffer {
    if (this.pos + n > this.buf.length) throw new Error('truncated SSH signature');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  u32(): number {
    return this.bytes(4).readUInt32BE(0);
  }
  string(): Buffer {
    return this.bytes(this.u32());
  }
  get done(): boolean {
    return this.pos === this.buf.length;
  }
}

const sshString = (b: Buffer | string) => {
  const data = typeof b === 'string' ? Buffer.from(b) : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, data]);
};

/** Parses an armored SSH signature; throws on anything malformed. */
export function parseSshSignature(armored: string): SshSignature {
  const m = /-----BEGIN SSH SIGNATURE-----([\s\S]*?)-----END SSH SIGNATURE-----/.exec(armored);
  if (!m) throw new Error('not an SSH signature');
  const blob = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
  const r = new Reader(blob);
  if (!r.bytes(6).equals(MAGIC)) throw new Error('bad SSH signature magic');
  if (r.u32() !== 1) throw new Error('unsupported SSH signature version');
  const publicKey = Buffer.from(r.string());
  const namespace = r.string().toString('utf8');
  const reserved = Buffer.from(r.string());
  const hashAlgorithm = r.string().toString('utf8');
  const sigBlob = new Reader(r.string());
  if (!r.done) throw new Error('trailing bytes in SSH signature');
  const sigFormat = sigBlob.string().toString('utf8');
  const sig = Buffer.from(sigBlob.string());
  const keyType = new Reader(publicKey).string().toString('utf8');
  return { publicKey, keyType, namespace, reserved, hashAlgorithm, sigFormat, sig };
}

/** OpenSSH's fingerprint of a public key blob: SHA256:<base64, unpadded>. */
export function sshFingerprint(publicKey: Buffer): string {
  return 'SHA256:' + crypto.createHash('sha256').update(publicKey).digest('base64').replace(/=+$/, '');
}

/** A public key in authorized_keys form ("ssh-ed25519 AAAA...") as its wire-format blob, or undefined. */
export function sshPublicKeyBlob(text: string): Buffer | undefined {
  const parsed = ssh2().utils.parseKey(text.trim());
  if (parsed instanceof Error) return undefined;
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return key ? key.getPublicSSH() : undefined;
}

const ECDSA_HASH: Record<string, string> = {
  'ecdsa-sha2-nistp256': 'sha256',
  'ecdsa-sha2-nistp384': 'sha384',
  'ecdsa-sha2-nistp521': 'sha512',
};

/** An SSH mpint pair (r, s) as a DER ECDSA signature. */
function ecdsaDer(sig: Buffer): Buffer {
  const r = new Reader(sig);
  const parts = [r.string(), r.string()].map((n) => {
    let b = n;
    while (b.length > 1 && b[0] === 0 && (b[1]! & 0x80) === 0) b = b.subarray(1);
    return Buffer.concat([Buffer.from([0x02]), derLength(b.length), b]);
  });
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}

const derLength = (n: number) =>
  n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);

/**
 * Whether `s` is a good signature of `message` in `namespace` by the key it carries (the caller
 * decides whether that key is trusted, by its fingerprint).
 */
export function verifySshSignature(s: SshSignature, message: Buffer, namespace = 'git'): boolean {
  if (s.namespace !== namespace) return false;
  if (s.hashAlgorithm !== 'sha512' && s.hashAlgorithm !== 'sha256') return false;
  let key: crypto.KeyObject;
  try {
    const parsed = ssh2().utils.parseKey(`${s.keyType} ${s.publicKey.toString('base64')}`);
    if (parsed instanceof Error) return false;
    const k = Array.isArray(parsed) ? parsed[0] : parsed;
    if (!k) return false;
    key = crypto.createPublicKey(k.getPublicPEM());
  } catch {
    return false;
  }
  const digest = crypto.createHash(s.hashAlgorithm).update(message).digest();
  const signed = Buffer.concat([
    MAGIC,
    sshString(s.namespace),
    sshString(s.reserved),
    sshString(s.hashAlgorithm),
    sshString(digest),
  ]);
  try {
    if (s.keyType === 'ssh-ed25519' && s.sigFormat === 'ssh-ed25519') {
      return crypto.verify(null, signed, key, s.sig);
    }
    if (s.keyType === 'ssh-rsa' && (s.sigFormat === 'rsa-sha2-512' || s.sigFormat === 'rsa-sha2-256')) {
      return crypto.verify(s.sigFormat === 'rsa-sha2-512' ? 'sha512' : 'sha256', signed, key, s.sig);
    }
    const hash = ECDSA_HASH[s.keyType];
    if (hash && s.sigFormat === s.keyType) return crypto.verify(hash, signed, key, ecdsaDer(s.sig));
  } catch {
    return false;
  }
  return false;
}
