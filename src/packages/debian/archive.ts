// Reading a Debian binary package (deb(5)) from the stored upload: an ar archive whose first
// member is `debian-binary` ("2.0"), then `control.tar` (uncompressed, or .gz, .xz or .zst),
// then `data.tar.*`. The control member is read to its end through tar.ts (its compression's and
// tar's own checks), keeping its `control` file; the data member is only located. Member names
// may end with `/` (GNU ar, since dpkg 1.15.6). Anything else is a 400 naming the problem.
import type { Readable } from 'node:stream';
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar, type Codec } from '../tar.js';

/** Debian policy 5.6.1: lower-case letters, digits, `+ - .`, at least two, starting alphanumeric. */
const NAME = /^[a-z0-9][a-z0-9+.-]+$/;
/** Debian policy 5.6.12: [epoch:]upstream[-revision]. */
const VERSION = /^(?:[0-9]{1,9}:)?[a-zA-Z0-9.+~]+(?:-[a-zA-Z0-9.+~-]+)?$/;
/** An architecture name as dpkg-architecture knows them (amd64, arm64, all, musl-linux-amd64, ...). */
const ARCHITECTURE = /^[a-z0-9][a-z0-9-]{0,63}$/;

const CONTROL_CODECS: Record<string, Codec> = { '': 'none', '.gz': 'gzip', '.xz': 'xz', '.zst': 'zstd' };

/** What a package says of itself, in Forgejo's terms. */
export interface DebianMetadata {
  maintainer?: string;
  project_url?: string;
  description?: string;
  dependencies?: string[];
}

export interface DebianPackage {
  name: string;
  version: string;
  architecture: string;
  /** The control file, trimmed (it opens the package's entry in a Packages index). */
  control: string;
  metadata: DebianMetadata;
}

interface ArMember {
  name: string;
  start: number;
  size: number;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The members of the ar archive (their headers only), 400 when it is none. */
async function arMembers(file: StoredFile, what: string): Promise<ArMember[]> {
  const head = (start: number, length: number) => file.open({ start, end: start + length - 1 }).then(readAll);
  if (file.size < 8 || (await head(0, 8)).toString('latin1') !== '!<arch>\n') {
    throw badRequest(`${what} is not a Debian package (no ar archive)`);
  }
  const members: ArMember[] = [];
  let offset = 8;
  while (offset < file.size) {
    if (offset + 60 > file.size) throw badRequest(`${what} ends inside an ar member header`);
    const h = (await head(offset, 60)).toString('latin1');
    const sizeField = h.slice(48, 58).trim();
    if (h.slice(58, 60) !== '`\n' || !/^\d{1,12}$/.test(sizeField)) {
      throw badRequest(`${what} has a malformed ar member header at byte ${offset}`);
    }
    const size = Number(sizeField);
    const start = offset + 60;
    if (start + size > file.size)
      throw badRequest(`${what} ends inside its ar member ${h.slice(0, 16).trim()}`);
    members.push({ name: h.slice(0, 16).trim().replace(/\/$/, ''), start, size });
    offset = start + size + (size % 2);
    if (members.length > 16) throw badRequest(`${what} has more ar members than a Debian package`);
  }
  return members;
}

/** Name, version, architecture, control file and metadata of the stored .deb (400 when it is not one). */
export async function readDeb(file: StoredFile): Promise<DebianPackage> {
  const what = 'the package';
  const members = await arMembers(file, what);
  const binary = members[0];
  if (binary?.name !== 'debian-binary') throw badRequest(`${what} does not start with debian-binary`);
  const format = (
    await readAll(await file.open({ start: binary.start, end: binary.start + binary.size - 1 }))
  )
    .toString('latin1')
    .trim();
  if (!/^2\.\d+$/.test(format)) throw badRequest(`${what} has an unsupported format ${format.slice(0, 16)}`);
  const control = members.find((m) => m.name.startsWith('control.tar'));
  if (!control) throw badRequest('control file is missing');
  const codec = CONTROL_CODECS[control.name.slice('control.tar'.length)];
  if (!codec) throw badRequest(`unsupported compression algorithm of ${control.name}`);
  if (!members.some((m) => m.name.startsWith('data.tar'))) throw badRequest(`${what} has no data.tar member`);
  const tar = await readTar(
    await file.open({ start: control.start, end: control.start + control.size - 1 }),
    control.size,
    codec,
    `the member ${control.name}`,
    (n) => n === 'control',
  );
  const text = tar.kept.get('control');
  if (!text) throw badRequest('control file is missing');
  return parseControl(text.toString('utf8'));
}

/** A control file's fields (deb-control(5)), checked as Forgejo checks them. */
export function parseControl(text: string): DebianPackage {
  const fields = new Map<string, string>();
  let key = '';
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (key) fields.set(key, `${fields.get(key) ?? ''}\n${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    key = line.slice(0, colon).trim();
    fields.set(key, line.slice(colon + 1).trim());
  }
  const name = fields.get('Package') ?? '';
  const version = fields.get('Version') ?? '';
  const architecture = fields.get('Architecture') ?? '';
  if (!NAME.test(name)) throw badRequest(`package name is invalid [name: ${name.slice(0, 100)}]`);
  if (!VERSION.test(version))
    throw badRequest(`package version is invalid [version: ${version.slice(0, 100)}]`);
  if (!ARCHITECTURE.test(architecture)) {
    throw badRequest(`package architecture is invalid [architecture: ${architecture.slice(0, 100)}]`);
  }
  const metadata: DebianMetadata = {};
  const maintainer = fields.get('Maintainer');
  if (maintainer) metadata.maintainer = /^(.*?)\s*<[^>]*>$/.exec(maintainer)?.[1] || maintainer;
  const homepage = fields.get('Homepage');
  if (homepage && /^https?:\/\/\S+$/.test(homepage)) metadata.project_url = homepage;
  const description = fields.get('Description');
  if (description) metadata.description = description;
  const depends = fields.get('Depends');
  if (depends) {
    metadata.dependencies = depends
      .replace(/\n/g, ' ')
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean);
  }
  return { name, version, architecture, control: text.trim(), metadata };
}
