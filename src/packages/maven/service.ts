// The Maven format: uploads in the repository layout (a version's files are added one PUT at a
// time; a POM is the version's lead file and its metadata; checksum files are compared with the
// stored file, never stored), downloads with computed checksums, the generated artifact-level
// maven-metadata.xml, and SNAPSHOTs (their files, the client's version-level maven-metadata.xml
// among them, may be replaced; a plain `-SNAPSHOT` file name finds the newest timestamped build).
// The package is named `groupId:artifactId`, keeping case, as in Forgejo.
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type { Identity } from '../../auth/identity.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import * as store from '../store.js';
import type { Db } from '../../db/database.js';
import type { PackageService } from '../service.js';
import type { FileWithBlob, PackageRow, VersionRow } from '../tables.js';
import { readZipDirectory } from '../zip.js';
import {
  isSnapshot,
  packageName,
  parsePom,
  renderMetadata,
  snapshotPattern,
  type Checksum,
  type MavenPath,
} from './metadata.js';

/** The largest POM read into memory to be parsed. */
const POM_MAX = 16 << 20;
/** The largest checksum file body (a SHA-512 is 128 hex digits). */
const CHECKSUM_MAX = 1024;

const digestOf = (f: FileWithBlob, c: Checksum): string =>
  ({ md5: f.hash_md5, sha1: f.hash_sha1, sha256: f.hash_sha256, sha512: f.hash_sha512 })[c];

/** Reads a whole (small) body; 400 when it is longer than `max`. */
async function readAll(data: Readable, max: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of data) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += b.length;
    if (size > max) {
      data.destroy();
      throw badRequest(`${what} is larger than ${max} bytes`);
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** What a GET or HEAD of a repository path finds. */
export type Found =
  | { kind: 'file'; file: FileWithBlob; checksum?: Checksum }
  | { kind: 'metadata'; body: Buffer; lastModified: number; checksum?: Checksum };

export interface MavenServiceDeps {
  db: Db;
  packages: PackageService;
}

export class MavenService {
  private readonly db: Db;
  private readonly packages: PackageService;

  constructor(deps: MavenServiceDeps) {
    this.db = deps.db;
    this.packages = deps.packages;
  }

  /**
   * A PUT: 201 for a stored file, 200 for a checksum that matches (400 when not) and for the
   * artifact-level maven-metadata.xml, which is generated rather than stored (as in Forgejo).
   */
  async upload(
    owner: UserRow,
    creator: UserRow,
    p: MavenPath,
    data: Readable,
    announced?: number,
  ): Promise<200 | 201> {
    if (p.version === undefined) {
      data.resume();
      return 200;
    }
    const name = packageName(p.groupId, p.artifactId);
    if (p.checksum) {
      await this.verifyChecksum(owner, name, p.version, p.baseName, p.checksum, data);
      return 200;
    }
    const isPom = p.fileName.toLowerCase().endsWith('.pom');
    // Java archives are zips: their central directory is read before the file is kept (no CRC
    // is checked: a jar's members are not read).
    const isZip = /\.(?:jar|war|ear|aar|zip)$/i.test(p.fileName);
    let metadata: string | undefined;
    if (isPom) {
      const pom = await readAll(data, POM_MAX, 'the POM');
      metadata = JSON.stringify(parsePom(pom));
      data = Readable.from([pom]);
      announced = pom.length;
    }
    await this.packages.addFile(
      {
        owner,
        creator,
        type: 'maven',
        name,
        version: p.version,
        fileName: p.fileName,
        isLead: isPom,
        data,
        newVersionOnly: false,
        // A SNAPSHOT is mutable: its files (and its maven-metadata.xml) may be published again.
        overwrite: isSnapshot(p.version),
        ...(metadata !== undefined ? { metadata } : {}),
        ...(isZip
          ? { verify: async (_d, file) => void (await readZipDirectory(file, `the file ${p.fileName}`)) }
          : {}),
        inTransaction: async (tx, _pkg, version, created) => {
          // A POM published after the jar (Maven's order) describes the existing version.
          if (metadata !== undefined && !created) await store.updateVersionMetadata(tx, version.id, metadata);
        },
      },
      announced,
    );
    return 201;
  }

  private async verifyChecksum(
    owner: UserRow,
    name: string,
    version: string,
    fileName: string,
    checksum: Checksum,
    data: Readable,
  ): Promise<void> {
    const body = (await readAll(data, CHECKSUM_MAX, 'a checksum file')).toString('utf8').trim();
    const pkg = await this.packages.getPackage(owner, 'maven', name);
    const v = pkg && (await store.getVersion(this.db, pkg.id, version.toLowerCase()));
    if (!v) throw notFound(`package version does not exist [name: ${name}, version: ${version}]`);
    const file = await this.packages.requireFile(v.id, fileName);
    // The digest, optionally followed by the file name (`sha1sum` output).
    const claimed = (body.split(/\s+/)[0] ?? '').toLowerCase();
    if (claimed !== digestOf(file, checksum)) {
      throw badRequest(`the ${checksum} of ${fileName} does not match the stored file (hash mismatch)`);
    }
  }

  /** The file, or generated metadata, a GET or HEAD names (404 when none). */
  async find(owner: UserRow, p: MavenPath, identity: Identity | null): Promise<Found> {
    const name = packageName(p.groupId, p.artifactId);
    const checksum = p.checksum ? { checksum: p.checksum } : {};
    if (p.version === undefined) {
      const pkg = await this.packages.requirePackage(owner, 'maven', name, identity);
      const versions = await this.packages.versionsOf(pkg);
      if (versions.length === 0) throw notFound(`package does not exist [name: ${name}]`);
      const { groupId, artifactId } = coordinatesOf(pkg, p);
      const ordered = [...versions].sort((a, b) => a.created_unix - b.created_unix || a.id - b.id);
      const body = Buffer.from(renderMetadata(groupId, artifactId, ordered));
      return { kind: 'metadata', body, lastModified: ordered[ordered.length - 1]!.created_unix, ...checksum };
    }
    const { version } = await this.packages.requireVersion(owner, 'maven', name, p.version, identity);
    const file = await this.fileOf(version, p.artifactId, p.baseName);
    return { kind: 'file', file, ...checksum };
  }

  /** A version's file by name; in a SNAPSHOT, a plain `-SNAPSHOT` name finds the newest build. */
  private async fileOf(version: VersionRow, artifactId: string, fileName: string): Promise<FileWithBlob> {
    const exact = await store.getFile(this.db, version.id, fileName.toLowerCase());
    if (exact) return exact;
    const pattern = snapshotPattern(artifactId, version.version, fileName);
    if (pattern) {
      let best: { file: FileWithBlob; build: number } | undefined;
      for (const file of await this.packages.filesOf([version.id])) {
        const m = pattern.exec(file.name);
        if (!m) continue;
        const build = Number(m[1]);
        if (!best || build > best.build || (build === best.build && file.id > best.file.id)) {
          best = { file, build };
        }
      }
      if (best) return best.file;
    }
    throw notFound(`package file does not exist [name: ${fileName}]`);
  }

  /** The hex digest a checksum file holds. */
  static checksumOf(found: Found, checksum: Checksum): string {
    if (found.kind === 'file') return digestOf(found.file, checksum);
    return crypto.createHash(checksum).update(found.body).digest('hex');
  }
}

/** groupId and artifactId as the package was first published (case kept), else as asked. */
function coordinatesOf(pkg: PackageRow, p: MavenPath): { groupId: string; artifactId: string } {
  const at = pkg.name.lastIndexOf(':');
  if (at < 0) return { groupId: p.groupId, artifactId: p.artifactId };
  return { groupId: pkg.name.slice(0, at), artifactId: pkg.name.slice(at + 1) };
}
