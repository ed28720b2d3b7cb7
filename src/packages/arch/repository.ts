// The database of an Arch repository for one architecture (alpm-repo-db), as pacman reads it: a
// gzip'd tar with a directory `{name}-{version}/` and its `desc` file (alpm-repo-desc) per package,
// the newest upload of each name, packages of architecture `any` in every architecture's
// database. It is built when asked for, from the stored files alone (same files, same bytes: the
// members are dated by the packages' uploads), so that `{repo}.db.sig`, the owner's detached
// OpenPGP signature of it, always matches the `{repo}.db` served next to it.
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { loadOpenpgp } from '../../signing/openpgp.js';
import type { ArchPackage } from './archive.js';
import type { ArchFileRow } from './store.js';

function section(title: string, values: Array<string | undefined>): string {
  const kept = values.filter((v): v is string => !!v);
  return kept.length ? `%${title}%\n${kept.join('\n')}\n\n` : '';
}

/** A package's desc file. */
export function descOf(f: ArchFileRow, p: ArchPackage): string {
  let out =
    section('FILENAME', [f.name]) +
    section('NAME', [p.name]) +
    section('BASE', [p.base]) +
    section('VERSION', [p.version]) +
    section('DESC', [p.description]) +
    section('CSIZE', [String(f.size)]) +
    section('ISIZE', [p.size]) +
    section('MD5SUM', [f.hash_md5]) +
    section('SHA256SUM', [f.hash_sha256]) +
    section('PGPSIG', [f.signature ?? undefined]) +
    section('URL', [p.url]) +
    section('ARCH', [p.architecture]) +
    section('BUILDDATE', [p.builddate]) +
    section('PACKAGER', [p.packager]);
  for (const [title, values] of Object.entries(p.lists)) out += section(title, values);
  return out;
}

/** The database of the repository for `architecture`; undefined when it has no package. */
export async function buildDatabase(files: ArchFileRow[], architecture: string): Promise<Buffer | undefined> {
  const newest = new Map<string, { f: ArchFileRow; p: ArchPackage }>();
  for (const f of files) {
    if (!f.desc || (f.architecture !== architecture && f.architecture !== 'any')) continue;
    const p = JSON.parse(f.desc) as ArchPackage;
    newest.set(`${p.name}\0${p.architecture}`, { f, p });
  }
  if (!newest.size) return undefined;
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on('data', (c: unknown) => chunks.push(c as Buffer));
    pack.on('end', resolve);
    pack.on('error', reject);
  });
  const entries = [...newest.values()].sort((a, b) =>
    a.p.name < b.p.name ? -1 : a.p.name > b.p.name ? 1 : 0,
  );
  for (const { f, p } of entries) {
    const mtime = new Date(f.created_unix * 1000);
    const dir = `${p.name}-${p.version}`;
    pack.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime });
    pack.entry({ name: `${dir}/desc`, mode: 0o644, mtime }, descOf(f, p));
  }
  pack.finalize();
  await done;
  return zlib.gzipSync(Buffer.concat(chunks), { level: 9 });
}

/** A detached, binary OpenPGP signature of `data` with the armored private key. */
export async function signDetached(privateKey: string, data: Uint8Array): Promise<Buffer> {
  const openpgp = await loadOpenpgp();
  const signingKeys = await openpgp.readPrivateKey({ armoredKey: privateKey });
  const signature = await openpgp.sign({
    message: await openpgp.createMessage({ binary: data }),
    signingKeys,
    detached: true,
    format: 'binary',
  });
  return Buffer.from(signature as Uint8Array);
}

/** The same of a stream's bytes (a stored package), read once without holding them. */
export async function signDetachedStream(privateKey: string, data: Readable): Promise<Buffer> {
  const openpgp = await loadOpenpgp();
  const signingKeys = await openpgp.readPrivateKey({ armoredKey: privateKey });
  const signature = await openpgp.sign({
    message: await openpgp.createMessage({ binary: Readable.toWeb(data) as ReadableStream<Uint8Array> }),
    signingKeys,
    detached: true,
    format: 'binary',
  });
  return Buffer.from(await new Response(signature as unknown as ReadableStream<Uint8Array>).arrayBuffer());
}
