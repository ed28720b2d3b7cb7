// The signed index of an Alpine repository for one architecture, as apk reads it
// (APKINDEX.tar.gz): a gzip'd signature segment, a tar of one member
// `.SIGN.RSA.{owner}@{fingerprint}.rsa.pub` cut before the tar's end blocks, holding the owner's
// RSA (PKCS#1 v1.5, SHA-1) signature of the gzip'd index that follows, a tar of one member
// `APKINDEX` with a paragraph per package (Forgejo's fields, in its order). It is built when asked
// for from the stored files alone, with fixed dates, so the same packages give the same bytes.
// The owner's key pair is RSA 4096 as Forgejo's; its fingerprint is the SHA-256 of the public
// key's DER, and names the key file apk looks for in its keys directory.
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import type { AlpineFileMetadata, AlpineVersionMetadata } from './archive.js';

/** A package file of the index. */
export interface IndexedPackage {
  name: string;
  version: string;
  /** The file's size. */
  size: number;
  versionMetadata: AlpineVersionMetadata;
  fileMetadata: AlpineFileMetadata;
}

const generate = promisify(crypto.generateKeyPair);

/** A new key pair: PKCS#1 private key and SubjectPublicKeyInfo public key, PEM. */
export async function generateKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = await generate('rsa', {
    modulusLength: 4096,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

/** `{owner}@{fingerprint}.rsa.pub`: the name apk gives the key file (the signature names it). */
export function keyFileName(ownerLowerName: string, publicKey: string): string {
  const der = crypto.createPublicKey(publicKey).export({ type: 'spki', format: 'der' });
  return `${ownerLowerName}@${crypto.createHash('sha256').update(der).digest('hex')}.rsa.pub`;
}

/** The APKINDEX text: a paragraph per package, `A:` the index's architecture. */
export function indexText(packages: IndexedPackage[], architecture: string): string {
  let out = '';
  for (const p of packages) {
    const v = p.versionMetadata;
    const f = p.fileMetadata;
    const lines: Array<[string, string | number | undefined]> = [
      ['C', f.checksum],
      ['P', p.name],
      ['V', p.version],
      ['A', architecture],
      ['T', v.description || undefined],
      ['U', v.project_url || undefined],
      ['L', v.license || undefined],
      ['S', p.size],
      ['I', f.size ?? 0],
      ['o', f.origin ?? ''],
      ['m', v.maintainer ?? ''],
      ['t', f.build_date ?? 0],
      ['c', f.commit_hash || undefined],
      ['D', f.dependencies?.length ? f.dependencies.join(' ') : undefined],
      ['p', f.provides?.length ? f.provides.join(' ') : undefined],
      ['i', f.install_if || undefined],
      ['k', f.provider_priority && f.provider_priority > 0 ? f.provider_priority : undefined],
    ];
    for (const [key, value] of lines) if (value !== undefined) out += `${key}:${value}\n`;
    out += '\n';
  }
  return out;
}

/** A tar of one member, gzip'd; `cut` leaves the tar's end blocks out (a signature segment). */
async function gzipTar(name: string, content: Buffer, cut: boolean): Promise<Buffer> {
  const pack = tar.pack();
  pack.entry({ name, mode: 0o600, mtime: new Date(0), uname: 'root', gname: 'root' }, content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  const whole = Buffer.concat(chunks);
  return zlib.gzipSync(cut ? whole.subarray(0, whole.length - 1024) : whole);
}

/** The signed APKINDEX.tar.gz of `packages` for `architecture`. */
export async function signedIndex(
  packages: IndexedPackage[],
  architecture: string,
  key: { privateKey: string; fileName: string },
): Promise<Buffer> {
  const index = await gzipTar('APKINDEX', Buffer.from(indexText(packages, architecture)), false);
  const signature = crypto.sign('sha1', index, key.privateKey);
  return Buffer.concat([await gzipTar(`.SIGN.RSA.${key.fileName}`, signature, true), index]);
}
