// Reading SSH public keys as users paste them (authorized_keys lines or RFC 4716 blocks): the
// type, the bits that [ssh.minimum_key_sizes] is about, and the SHA256 fingerprint ssh-keygen shows.
import crypto from 'node:crypto';

export interface ParsedKey {
  /** The algorithm name inside the key: ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ... */
  type: string;
  /** The family [ssh.minimum_key_sizes] names: ed25519, ecdsa, rsa, dsa. */
  family: 'ed25519' | 'ecdsa' | 'rsa' | 'dsa';
  bits: number;
  blob: Buffer;
  /** "type base64", as authorized_keys and the API show it. */
  content: string;
  /** "SHA256:" and the unpadded base64 SHA-256 of the blob. */
  fingerprint: string;
}

export class KeyError extends Error {}

/** Forgejo's [ssh.minimum_key_sizes] defaults; -1 refuses the family. */
export const MINIMUM_KEY_SIZES: Record<ParsedKey['family'], number> = {
  ed25519: 256,
  ecdsa: 256,
  // 3071: a valid 3072-bit key may have a modulus one bit shorter.
  rsa: 3071,
  dsa: -1,
};

export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${crypto.createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  bytes(): Buffer {
    if (this.at + 4 > this.buf.length) throw new KeyError('the key data is truncated');
    const n = this.buf.readUInt32BE(this.at);
    this.at += 4;
    if (n > this.buf.length - this.at) throw new KeyError('the key data is truncated');
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  string(): string {
    return this.bytes().toString('latin1');
  }
  done(): boolean {
    return this.at === this.buf.length;
  }
}

/** Bits of an unsigned big-endian mpint (leading zero bytes ignored). */
function mpintBits(b: Buffer): number {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  if (i === b.length) return 0;
  return (b.length - i - 1) * 8 + (32 - Math.clz32(b[i]!));
}

const ECDSA_BITS: Record<string, number> = { nistp256: 256, nistp384: 384, nistp521: 521 };

/** The base64 blob of an RFC 4716 ("---- BEGIN SSH2 PUBLIC KEY ----") block, if `text` is one. */
function rfc4716(text: string): string | undefined {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  if (!/^---- BEGIN SSH2 PUBLIC KEY ----$/.test(lines[0] ?? '')) return undefined;
  const end = lines.findIndex((l) => l === '---- END SSH2 PUBLIC KEY ----');
  if (end < 0) throw new KeyError('the RFC 4716 key has no END line');
  const body: string[] = [];
  let continued = false;
  for (const l of lines.slice(1, end)) {
    if (continued || /^[\w-]+:/.test(l)) {
      continued = l.endsWith('\\');
      continue;
    }
    body.push(l);
  }
  return body.join('');
}

/** Parses a public key; throws KeyError naming what is wrong. */
export function parsePublicKey(input: string): ParsedKey {
  const text = input.trim();
  if (!text) throw new KeyError('the key is empty');
  let b64 = rfc4716(text);
  let stated: string | undefined;
  if (b64 === undefined) {
    if (text.includes('\n')) throw new KeyError('the key must be one line: "type base64 [comment]"');
    // authorized_keys options before the key are not a key.
    const parts = text.split(/\s+/);
    if (parts.length < 2) throw new KeyError('the key must be "type base64 [comment]"');
    stated = parts[0]!;
    b64 = parts[1]!;
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new KeyError('the key data is not base64');
  const blob = Buffer.from(b64, 'base64');
  const r = new Reader(blob);
  const type = r.string();
  if (stated !== undefined && stated !== type) {
    throw new KeyError(`the key says it is ${stated} but its data is ${type || 'not a key'}`);
  }
  let family: ParsedKey['family'];
  let bits: number;
  if (type === 'ssh-ed25519' || type === 'sk-ssh-ed25519@openssh.com') {
    if (r.bytes().length !== 32) throw new KeyError('an ed25519 key must be 32 bytes');
    if (type.startsWith('sk-')) r.string();
    family = 'ed25519';
    bits = 256;
  } else if (type === 'ssh-rsa') {
    const e = r.bytes();
    const n = r.bytes();
    if (mpintBits(e) === 0 || mpintBits(n) === 0) throw new KeyError('the RSA key is malformed');
    family = 'rsa';
    bits = mpintBits(n);
  } else if (/^(sk-)?ecdsa-sha2-nistp(256|384|521)(@openssh\.com)?$/.test(type)) {
    const curve = r.string();
    if (!type.includes(curve)) throw new KeyError(`the ECDSA key names curve ${curve} but is ${type}`);
    const point = r.bytes();
    const size = ECDSA_BITS[curve]!;
    if (point.length !== 1 + 2 * Math.ceil(size / 8) || point[0] !== 4) {
      throw new KeyError('the ECDSA key point is malformed');
    }
    if (type.startsWith('sk-')) r.string();
    family = 'ecdsa';
    bits = size;
  } else if (type === 'ssh-dss') {
    const p = r.bytes();
    r.bytes();
    r.bytes();
    r.bytes();
    family = 'dsa';
    bits = mpintBits(p);
  } else {
    throw new KeyError(`unsupported key type ${JSON.stringify(type.slice(0, 40))}`);
  }
  if (!r.done()) throw new KeyError('the key data has trailing bytes');
  return {
    type,
    family,
    bits,
    blob,
    content: `${type} ${blob.toString('base64')}`,
    fingerprint: fingerprintOf(blob),
  };
}

/** Refuses a key below [ssh.minimum_key_sizes]; returns it otherwise. */
export function checkKeySize(key: ParsedKey, minimums = MINIMUM_KEY_SIZES): ParsedKey {
  const min = minimums[key.family];
  if (min === -1) throw new KeyError(`${key.family} keys are not allowed`);
  if (key.bits < min) {
    throw new KeyError(`the ${key.family} key is ${key.bits} bits; at least ${min} are required`);
  }
  return key;
}
