// The Conda format: channels (an optional path before the subdir, part of a package's identity:
// the package is named `{channel}/{name}` as in Forgejo), package file names
// (`{name}-{version}-{build}.tar.bz2` or `.conda`), the metadata of info/index.json and
// info/about.json (read from the stored file, archive.ts), and repodata.json for a channel's
// subdir: {info{subdir}, packages{}, packages.conda{}, removed[], repodata_version}, built in
// one query, with its bzip2 form made by the system `bzip2` and kept in a small cache by content.
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import type { Identity } from '../../auth/identity.js';
import { viewerOf } from '../../auth/identity.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import * as core from '../store.js';
import { PropertyRef } from '../tables.js';
import type { Db } from '../../db/database.js';
import type { RepoService } from '../../repos/service.js';
import type { AddedFile, PackageService } from '../service.js';
import { kindOf, readInfo, type CondaKind, type InfoFiles } from './archive.js';
import * as store from './store.js';

const NAME = /^[a-z0-9_][a-z0-9_.+-]*$/;
const VERSION = /^[A-Za-z0-9_.+!]+$/;
const BUILD = /^[A-Za-z0-9_.+]+$/;
const SUBDIR = /^[a-z0-9]+(?:-[a-z0-9_]+)*$/;
const CHANNEL_PART = /^[a-z0-9_][a-z0-9_.-]*$/;
/** `{name}-{version}-{build}.tar.bz2|.conda`: version and build hold no `-`. */
const FILE = /^(.+)-([^-]+)-([^-]+)\.(tar\.bz2|conda)$/;

/** A channel path as given (`a/b`, or '' for none), lower-cased; 400 when it is not one. */
export function checkChannel(raw: string): string {
  const channel = raw.toLowerCase();
  if (channel === '') return '';
  const parts = channel.split('/');
  if (
    parts.length > 8 ||
    channel.length > 200 ||
    !parts.every((p) => CHANNEL_PART.test(p) && p.length <= 64)
  ) {
    throw badRequest(`invalid channel [channel: ${raw}]`);
  }
  return channel;
}

export function checkSubdir(subdir: string): boolean {
  return SUBDIR.test(subdir) && subdir.length <= 64;
}

export interface FileName {
  name: string;
  version: string;
  build: string;
  kind: CondaKind;
}

/** The parts of a package file's name; 400 when it is not `{name}-{version}-{build}.{ext}`. */
export function parseFileName(filename: string): FileName {
  const m = FILE.exec(filename);
  const kind = kindOf(filename);
  if (!m || !kind || filename.length > 255) {
    throw badRequest(
      `invalid file name [filename: ${filename}]: a Conda package is {name}-{version}-{build}.tar.bz2 or .conda`,
    );
  }
  const [, name, version, build] = m as unknown as [string, string, string, string];
  if (!NAME.test(name)) throw badRequest(`invalid package name [name: ${name}]`);
  if (!VERSION.test(version)) throw badRequest(`invalid package version [version: ${version}]`);
  if (!BUILD.test(build)) throw badRequest(`invalid build string [build: ${build}]`);
  return { name, version, build, kind };
}

/** What repodata.json says of a file, from its info/index.json (plus whether it is a .conda). */
export interface FileMetadata {
  is_conda: boolean;
  name: string;
  build: string;
  build_number: number;
  depends: string[];
  constrains?: string[];
  license?: string;
  license_family?: string;
  subdir: string;
  arch?: string;
  platform?: string;
  noarch?: string;
  timestamp?: number;
  track_features?: string;
  features?: string;
}

/** The version's metadata, from the first file's index.json and about.json (as Forgejo keeps it). */
export interface VersionMetadata {
  description?: string;
  summary?: string;
  project_url?: string;
  repository_url?: string;
  documentation_url?: string;
  license?: string;
  license_family?: string;
}

export interface PackageInfo {
  name: string;
  version: string;
  file: FileMetadata;
  version_metadata: VersionMetadata;
}

function parseJson(raw: Buffer, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest(`${what} is not JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

const str = (v: unknown, max = 4096) =>
  typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined;
const strings = (v: unknown) =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string').map((s) => s.slice(0, 1024)) : [];
const url = (v: unknown) => {
  const s = str(v, 2048);
  if (!s) return undefined;
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:' ? s : undefined;
  } catch {
    return undefined;
  }
};

/** The metadata of a package file, checked against its file name; 400 when it does not match. */
export function packageInfo(files: InfoFiles, expected: FileName): PackageInfo {
  const index = parseJson(files.index, 'info/index.json');
  const about = files.about ? parseJson(files.about, 'info/about.json') : {};
  const name = index['name'];
  const version = index['version'];
  const build = index['build'];
  if (typeof name !== 'string' || !NAME.test(name) || name.length > 200) {
    throw badRequest(`info/index.json: invalid package name [name: ${String(name)}]`);
  }
  if (typeof version !== 'string' || !VERSION.test(version) || version.length > 200) {
    throw badRequest(`info/index.json: invalid package version [version: ${String(version)}]`);
  }
  if (typeof build !== 'string' || !BUILD.test(build) || build.length > 200) {
    throw badRequest(`info/index.json: invalid build string [build: ${String(build)}]`);
  }
  if (name !== expected.name || version !== expected.version || build !== expected.build) {
    throw badRequest(
      `the file is named for ${expected.name} ${expected.version} (${expected.build}) but its info/index.json is of ${name} ${version} (${build})`,
    );
  }
  let noarch = str(index['noarch'], 64);
  if (index['noarch'] === true) noarch = 'generic';
  const subdir = str(index['subdir'], 64) ?? (noarch ? 'noarch' : undefined);
  if (!subdir || !checkSubdir(subdir)) {
    throw badRequest(`info/index.json: invalid or missing subdir [subdir: ${String(index['subdir'])}]`);
  }
  const buildNumber = index['build_number'];
  const timestamp = index['timestamp'];
  const file: FileMetadata = {
    is_conda: expected.kind === 'conda',
    name,
    build,
    build_number: typeof buildNumber === 'number' && Number.isSafeInteger(buildNumber) ? buildNumber : 0,
    depends: strings(index['depends']),
    subdir,
  };
  const optional: Array<[keyof FileMetadata, string | undefined]> = [
    ['license', str(index['license'], 512)],
    ['license_family', str(index['license_family'], 64)],
    ['arch', str(index['arch'], 64)],
    ['platform', str(index['platform'], 64)],
    ['noarch', noarch],
    ['track_features', str(index['track_features'], 1024)],
    ['features', str(index['features'], 1024)],
  ];
  for (const [k, v] of optional) if (v !== undefined) (file as unknown as Record<string, unknown>)[k] = v;
  if (Array.isArray(index['constrains'])) file.constrains = strings(index['constrains']);
  if (typeof timestamp === 'number' && Number.isSafeInteger(timestamp) && timestamp > 0)
    file.timestamp = timestamp;

  const vm: VersionMetadata = {};
  const vmFields: Array<[keyof VersionMetadata, string | undefined]> = [
    ['description', str(about['description'], 65536)],
    ['summary', str(about['summary'], 4096)],
    ['project_url', url(about['home'])],
    ['repository_url', url(about['dev_url'])],
    ['documentation_url', url(about['doc_url'])],
    ['license', file.license],
    ['license_family', file.license_family],
  ];
  for (const [k, v] of vmFields) if (v !== undefined) vm[k] = v;
  return { name, version, file, version_metadata: vm };
}

/** One entry of repodata.json. */
type RepodataEntry = Record<string, unknown>;

export interface Repodata {
  /** The JSON text. */
  body: string;
  /** Strong entity tag of the JSON text. */
  etag: string;
}

export interface CondaServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'addFile' | 'reposByIds' | 'packageById' | 'assertCanReadPackage'>;
  /** A package linked to a repository is listed to those who may read it. */
  repos: Pick<RepoService, 'accessMany'>;
}

export class CondaService {
  /** bzip2 forms of recent repodata documents, by the SHA-256 of their JSON. */
  private readonly bz2 = new LRUCache<string, Buffer>({
    maxSize: 32 << 20,
    sizeCalculation: (b) => Math.max(1, b.length),
  });

  constructor(private readonly deps: CondaServiceDeps) {}

  /** Streams a package file into the registry; its metadata is read back from what was stored. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    channelPath: string,
    filename: string,
    data: Readable,
    announced: number | undefined,
  ): Promise<AddedFile> {
    const channel = checkChannel(channelPath);
    const expected = parseFileName(filename);
    let info: PackageInfo | undefined;
    const fullName = channel ? `${channel}/${expected.name}` : expected.name;
    return this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'conda',
        name: fullName,
        version: expected.version,
        fileName: filename,
        isLead: true,
        data,
        newVersionOnly: false,
        verify: async (_digests, stored) => {
          info = packageInfo(await readInfo(expected.kind, stored), expected);
        },
        compositeKey: () => info!.file.subdir,
        inTransaction: async (tx, pkg, version, created, fileId) => {
          const i = info!;
          if (created) await core.updateVersionMetadata(tx, version.id, JSON.stringify(i.version_metadata));
          const props = await core.properties(tx, PropertyRef.package, [pkg.id]);
          if (!props.some((p) => p.name === store.PROP_CHANNEL)) {
            await core.addProperty(tx, PropertyRef.package, pkg.id, store.PROP_NAME, i.name);
            await core.addProperty(tx, PropertyRef.package, pkg.id, store.PROP_CHANNEL, channel);
          }
          await core.addProperty(tx, PropertyRef.file, fileId, store.PROP_SUBDIR, i.file.subdir);
          await core.addProperty(tx, PropertyRef.file, fileId, store.PROP_METADATA, JSON.stringify(i.file));
        },
      },
      announced,
    );
  }

  /** repodata.json of the subdir of the channel (empty when it has no package, never 404). */
  async repodata(
    owner: UserRow,
    channelPath: string,
    subdir: string,
    identity: Identity | null,
  ): Promise<Repodata> {
    const channel = checkChannel(channelPath);
    if (!checkSubdir(subdir)) throw notFound(`no such subdir [subdir: ${subdir}]`);
    const rows = await store.repodataRows(this.deps.db, owner.id, channel, subdir);
    const hidden = await this.hiddenRepos(rows, owner, identity);
    const packages: Record<string, RepodataEntry> = {};
    const condas: Record<string, RepodataEntry> = {};
    for (const r of rows) {
      if (r.repo_id !== null && hidden.has(r.repo_id)) continue;
      let m: Partial<FileMetadata> = {};
      try {
        m = JSON.parse(r.metadata ?? '{}') as Partial<FileMetadata>;
      } catch {
        // written by Anvil as JSON; anything else counts as none
      }
      const entry: RepodataEntry = {
        name: m.name ?? '',
        version: r.version,
        build: m.build ?? '',
        build_number: m.build_number ?? 0,
        depends: m.depends ?? [],
      };
      if (m.constrains) entry['constrains'] = m.constrains;
      if (m.license) entry['license'] = m.license;
      if (m.license_family) entry['license_family'] = m.license_family;
      entry['md5'] = r.hash_md5;
      entry['sha256'] = r.hash_sha256;
      entry['size'] = Number(r.size);
      entry['subdir'] = subdir;
      if (m.arch) entry['arch'] = m.arch;
      if (m.platform) entry['platform'] = m.platform;
      if (m.noarch) entry['noarch'] = m.noarch;
      if (m.timestamp) entry['timestamp'] = m.timestamp;
      if (m.track_features) entry['track_features'] = m.track_features;
      if (m.features) entry['features'] = m.features;
      (m.is_conda ? condas : packages)[r.name] = entry;
    }
    const body = JSON.stringify({
      info: { subdir },
      packages,
      'packages.conda': condas,
      removed: [],
      repodata_version: 1,
    });
    const etag = `"${crypto.createHash('sha256').update(body).digest('hex').slice(0, 40)}"`;
    return { body, etag };
  }

  /** Repositories linked to some of these packages that the caller may not read. */
  private async hiddenRepos(
    rows: store.RepodataRow[],
    owner: UserRow,
    identity: Identity | null,
  ): Promise<Set<number>> {
    const ids = [...new Set(rows.map((r) => r.repo_id).filter((id): id is number => id !== null))];
    if (ids.length === 0) return new Set();
    const repos = await this.deps.packages.reposByIds(ids);
    const access = await this.deps.repos.accessMany(
      [...repos.values()],
      viewerOf(identity),
      new Map([[owner.id, owner]]),
    );
    return new Set([...repos.keys()].filter((id) => (access.get(id)?.mode ?? 0) <= 0));
  }

  /** The bzip2 form of a repodata document (compressed once per distinct document). */
  async compressed(doc: Repodata): Promise<Buffer> {
    const hit = this.bz2.get(doc.etag);
    if (hit) return hit;
    const out = await bzip2(Buffer.from(doc.body));
    this.bz2.set(doc.etag, out);
    return out;
  }

  /** A package file of the subdir of the channel, else 404. */
  async requireFile(
    owner: UserRow,
    channelPath: string,
    subdir: string,
    filename: string,
    identity: Identity | null,
  ) {
    const channel = checkChannel(channelPath);
    const file = checkSubdir(subdir)
      ? await store.findFile(this.deps.db, owner.id, channel, subdir, filename.toLowerCase())
      : undefined;
    if (!file) throw notFound(`package file does not exist [name: ${filename}]`);
    if (file.repo_id !== null) {
      const pkg = await this.deps.packages.packageById(file.package_id);
      if (pkg) await this.deps.packages.assertCanReadPackage(pkg, identity);
    }
    return file;
  }
}

/** `data` compressed by the system bzip2. */
function bzip2(data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('bzip2', ['-c', '-9'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(chunks));
      else reject(new Error(`bzip2 exited with ${code}`));
    });
    Readable.from([data]).pipe(child.stdin);
  });
}
